"""torch.export.save / load writes an exported program's constants (its non-persistent buffers
among them) each on its own, apart from the state dict: a tensor that a persistent buffer and a
non-persistent one share (two modules holding one tensor, one of them registering it
persistent=False) comes back as two tensors. The loaded program's module() then updates one of
them only: after a call, the persistent buffer, which state_dict() returns, still holds its
initial value (the outputs are right; a checkpoint of the model is not). Without save/load
(ep.module() of the program as exported) and with both buffers persistent (the control), the
state is eager's. Found by flatcheck: generated programs emitted with non-persistent buffers
(seed 216), paths export.nonstrict.cond (the loaded program's module) and
export.nonstrict.unflatten, torch 2.14.1.

    python3 corpus/torch/export-load-unties-aliased-constants.py   # exit 1 while present
"""
import io
import sys
import warnings

import torch

warnings.simplefilter("ignore")


class Writer(torch.nn.Module):
    def __init__(self, buf, persistent):
        super().__init__()
        self.register_buffer("buf", buf, persistent=persistent)

    def forward(self, x):
        self.buf.add_(x)
        return x + self.buf


class Reader(torch.nn.Module):
    def __init__(self, buf, persistent):
        super().__init__()
        self.register_buffer("buf", buf, persistent=persistent)

    def forward(self, x):
        return x * self.buf


class Model(torch.nn.Module):
    def __init__(self, reader_persistent):
        super().__init__()
        buf = torch.zeros(2)  # one tensor: the writer's persistent buffer, the reader's buffer
        self.a = Writer(buf, True)
        self.b = Reader(buf, reader_persistent)

    def forward(self, x):
        return self.a(x), self.b(x)


def after_calls(module, x):
    """The outputs of two calls, then the module's state dict."""
    outs = [[o.tolist() for o in module(x.clone())] for _ in range(2)]
    return outs, {k: v.tolist() for k, v in module.state_dict().items()}


def loaded_module(reader_persistent, x, save):
    ep = torch.export.export(Model(reader_persistent), (x,), strict=False)
    if save:
        data = io.BytesIO()
        torch.export.save(ep, data)
        ep = torch.export.load(io.BytesIO(data.getvalue()))
    return ep.module()


def main():
    if not hasattr(torch, "export") or not hasattr(torch.export, "save"):
        print(f"torch {torch.__version__} has no torch.export.save: cannot show the bug")
        return 77
    x = torch.ones(2)
    print(f"torch {torch.__version__}")
    for reader_persistent, save, name in ((True, True, "control: both persistent, saved"),
                                          (False, False, "control: not saved")):
        want = after_calls(Model(reader_persistent), x)
        got = after_calls(loaded_module(reader_persistent, x, save), x)
        if got != want:
            print(f"FAIL: the {name} gives {got}, eager {want}: not this bug")
            return 2
        print(f"  {name}: as eager")
    want = after_calls(Model(False), x)
    got = after_calls(loaded_module(False, x, True), x)
    print(f"  saved and loaded: outputs {got[0]}, state dict {got[1]}")
    print(f"  eager:            outputs {want[0]}, state dict {want[1]}")
    if got != want:
        print("FAIL: the loaded program holds the shared buffer as two tensors (bug present)")
        return 1
    print("ok: the loaded program keeps the buffer shared")
    return 0


if __name__ == "__main__":
    sys.exit(main())
