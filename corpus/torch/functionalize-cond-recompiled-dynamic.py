"""torch.func.functionalize of a function that calls torch.cond with two operands crashes when
the cond is met a second time at another size: `AssertionError: Expected FakeTensor, got <class
'torch.Tensor'>`. Eager torch.cond compiles its branches with dynamo; the second size makes dynamo
recompile the cond with symbolic sizes (automatic dynamic shapes), and under functionalization
that compile finds a real tensor where its bookkeeping of symbolic sizes wants a fake one. The
same cond at one size, the same calls without functionalize, and the same calls with
torch._dynamo.config.automatic_dynamic_shapes = False all run (each checked below). make_fx of
functionalize (AOTAutograd's trace, and the documented input of torch.fx's reinplace and CSE
passes) raises it too, from any program whose conds come at two sizes. torch 2.14.1 (torch 2.6
runs it; 2.7 to 2.13 not run). Found by flatcheck's bridge (paths fx.make_fx, fx.reinplace and
fx.cse with --branch cond: seed 183 case 10), written by hand.
    python3 corpus/torch/functionalize-cond-recompiled-dynamic.py   # exit 1 while present
"""
import sys

import torch

PRESENT_FROM = (2, 14)  # torch 2.6 runs it (2.7 to 2.13 not run)


def first(a, b):
    return a.clone()


def second(a, b):
    return b.clone()


def f(x):
    return torch.cond(x.sum() > 0, first, second, (x, -x))


def calls(fn, automatic_dynamic=True):
    """fn at size (1, 2), then at (4, 2), from a fresh dynamo cache: None, or the error."""
    torch._dynamo.reset()
    try:
        with torch._dynamo.config.patch(automatic_dynamic_shapes=automatic_dynamic):
            for rows in (1, 4):
                x = torch.ones(rows, 2)
                got = fn(x)
                if not torch.equal(got, x):
                    return f"wrong result at {rows} rows: {got.tolist()}"
    except Exception as e:  # noqa: BLE001 - the finding, reported below
        return f"{type(e).__name__}: {str(e).splitlines()[0]}"
    return None


def main():
    controls = {"without functionalize": calls(f),
                "functionalize, automatic dynamic shapes off": calls(
                    torch.func.functionalize(f), automatic_dynamic=False)}
    for name, error in controls.items():
        print(f"torch {torch.__version__}: {name}: {error or 'ok'}")
        if error:
            print("the repro's controls fail: it shows nothing here")
            return 2
    error = calls(torch.func.functionalize(f))
    print(f"torch {torch.__version__}: functionalize: {error or 'ok'}")
    if error:
        print(f"FAIL: torch.func.functionalize of torch.cond at a second size raises ({error})")
        return 1
    print("ok: functionalize runs torch.cond at both sizes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
