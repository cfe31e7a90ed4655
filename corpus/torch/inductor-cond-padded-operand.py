"""Inductor with stride padding (on by default for GPUs; on the CPU with
torch._inductor.config.disable_padding_cpu = False) pads an intermediate buffer that is then an
operand of torch.cond, but compiles the cond's branch graphs for the operand's unpadded strides:
`f(x) = torch.cond(x.sum() > 0, clone, neg, (-x,))` on x of shape [4, 1030] (-x padded to rows
of 1,056 floats) raises `AssertionError: expected size 4==4, stride 1056==1030 at dim=0` in the
branch graph's input check, and with the C++ wrapper (cpp_wrapper, which has no such check)
returns a wrong result with no error: the branch reads the padded buffer as if its rows were
1,030 floats apart. Without padding both agree with eager. torch 2.6 and 2.14.1 (CPU; a GPU,
where padding is on by default, not run). Found by flatcheck's bridge (path
compile.inductor.padding with --branch cond: seed 183 cases 0, 10 and 16), written by hand.
    python3 corpus/torch/inductor-cond-padded-operand.py   # exit 1 while present
"""
import sys

import torch
import torch._inductor.config


def model(x):
    return torch.cond(x.sum() > 0, lambda a: a.clone(), lambda a: a.neg(), (-x,))


def compiled(x, **settings):
    """model compiled by Inductor under `settings`, from empty caches: its result, or the error."""
    torch._dynamo.reset()
    with torch._inductor.config.patch({"force_disable_caches": True, **settings}):
        try:
            return torch.compile(model, backend="inductor", fullgraph=True)(x)
        except Exception as e:  # noqa: BLE001 - the finding, reported below
            return f"{type(e).__name__}: {str(e).splitlines()[0]}"


def main():
    x = torch.arange(4 * 1030, dtype=torch.float32).reshape(4, 1030) / 1024  # sum > 0
    want = model(x)
    control = compiled(x)
    if not isinstance(control, torch.Tensor) or not torch.equal(control, want):
        print(f"torch {torch.__version__}: without padding: {control!r:.200} (the control "
              "fails: the repro shows nothing here)")
        return 2
    failed = False
    for name, settings in (("padding", {"disable_padding_cpu": False}),
                           ("padding, C++ wrapper", {"disable_padding_cpu": False,
                                                     "cpp_wrapper": True})):
        got = compiled(x, **settings)
        if isinstance(got, str):
            print(f"torch {torch.__version__}: {name}: {got}")
            failed = True
        else:
            wrong = int((got != want).sum())
            print(f"torch {torch.__version__}: {name}: {wrong} of {want.numel()} elements "
                  "differ from eager's")
            failed |= wrong > 0
    if failed:
        print("FAIL: Inductor with padding runs torch.cond on a padded operand as if unpadded")
        return 1
    print("ok: Inductor with padding agrees with eager")
    return 0


if __name__ == "__main__":
    sys.exit(main())
