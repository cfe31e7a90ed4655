"""torch.distributed.pipelining's pipeline() cannot split a model whose two stages share a
non-persistent buffer: after splitting, Pipe._from_traced assigns each shared tensor to the
stages under the FQNs of the model's state dict, which leaves non-persistent buffers out, so
the second stage's module lacks the buffer and unflatten's _sink_params raises AttributeError
('InterpreterModule' object has no attribute 'buf'). The controls (the buffer persistent; two
non-persistent buffers that share nothing) build and give eager's numbers. Found by flatcheck:
generated programs emitted with non-persistent buffers (seed 216), path pipeline, torch 2.14.1.

    python3 corpus/torch/pipeline-drops-non-persistent-buffer.py   # exit 1 while present
"""
import importlib
import sys
import warnings

import torch

warnings.simplefilter("ignore")


class Add(torch.nn.Module):
    def __init__(self, buf, persistent):
        super().__init__()
        self.register_buffer("buf", buf, persistent=persistent)

    def forward(self, x):
        return x + self.buf


class Model(torch.nn.Module):
    def __init__(self, persistent, shared):
        super().__init__()
        buf = torch.ones(2)
        self.a = Add(buf, persistent)
        self.b = Add(buf if shared else torch.ones(2), persistent)

    def forward(self, x):
        return self.b(self.a(x))


def piped(persistent, shared, x):
    """The model split before `b` into two stages and run; or the error."""
    from torch.distributed.pipelining import SplitPoint, pipeline  # noqa: PLC0415
    try:
        pipe = pipeline(Model(persistent, shared), mb_args=(x,),
                        split_spec={"b": SplitPoint.BEGINNING})
        return pipe(x)[0]
    except Exception as e:  # noqa: BLE001 - the bug shown
        return e


def main():
    try:
        importlib.import_module("torch.distributed.pipelining")
    except ImportError:
        print(f"torch {torch.__version__} has no torch.distributed.pipelining: cannot show the bug")
        return 77
    x = torch.ones(2)
    want = Model(False, True)(x)
    print(f"torch {torch.__version__}: eager {want.tolist()}")
    for persistent, shared, name in ((True, True, "control: persistent, shared"),
                                     (False, False, "control: non-persistent, not shared")):
        got = piped(persistent, shared, x)
        if isinstance(got, Exception) or not torch.equal(got, want):
            print(f"FAIL: the {name} gives {got!r}: not this bug")
            return 2
        print(f"  {name}: as eager")
    got = piped(False, True, x)
    print("  non-persistent, shared: " + (f"{type(got).__name__}: {got}"
                                          if isinstance(got, Exception) else str(got.tolist())))
    if isinstance(got, Exception) or not torch.equal(got, want):
        print("FAIL: pipelining loses the shared non-persistent buffer (bug present)")
        return 1
    print("ok: the pipe holds the shared buffer and gives eager's result")
    return 0


if __name__ == "__main__":
    sys.exit(main())
