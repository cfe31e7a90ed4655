"""Inductor's post-grad pattern that fuses an addition of a matrix product into addmm,
add(mm(a, b), c) or add(c, mm(a, b)) -> addmm(c, a, b), matches an add whose alpha is not 1 and
drops the alpha: torch.add(a @ b, c, alpha=-1) (a @ b - c) runs as a @ b + c, and
torch.add(c, a @ b, alpha=2) as c + a @ b. A silent wrong result on the CPU, torch 2.6 and
2.14.1 (the opposite rewrite, addmm -> add(mm) dropping addmm's own alpha and beta, is upstream
issue pytorch/pytorch#167313). The control, the same product and addend with alpha 1, agrees.
Found by flatcheck: a generated program emitted with `--op-kwargs` (each addition spelled
torch.sub(a, b, alpha=-1), each subtraction torch.add(a, b, alpha=-1)), seed 215 case 11, path
compile.inductor, torch 2.14.1; shrunk with `flatcheck shrink --predicate` from 1,412 nodes to
75, then read in the pass.

    python3 corpus/torch/inductor-addmm-fusion-drops-alpha.py   # exit 1 while present
"""
import sys
import warnings

import torch

warnings.simplefilter("ignore")

CALLS = {
    "torch.add(a @ b, c, alpha=-1)": lambda a, b, c: torch.add(a @ b, c, alpha=-1),
    "torch.add(c, a @ b, alpha=2)": lambda a, b, c: torch.add(c, a @ b, alpha=2),
}
CONTROL = ("torch.add(a @ b, c)", lambda a, b, c: torch.add(a @ b, c))


def compiled(fn, inputs):
    """fn compiled by Inductor (caches off: each compile its own), called on the inputs."""
    import torch._dynamo  # noqa: PLC0415
    import torch._inductor.config  # noqa: PLC0415
    torch._dynamo.reset()
    with torch._inductor.config.patch(force_disable_caches=True):
        return torch.compile(fn, backend="inductor", fullgraph=True)(*inputs)


def main():
    if not hasattr(torch, "compile"):
        print(f"torch {torch.__version__} has no torch.compile: cannot show the bug")
        return 77
    inputs = (torch.tensor([[1.0, 2.0], [3.0, 4.0]]), torch.eye(2), torch.full((2, 2), 10.0))
    print(f"torch {torch.__version__}")
    name, fn = CONTROL
    if not torch.equal(compiled(fn, inputs), fn(*inputs)):
        print(f"FAIL: the control {name} differs from eager: not this bug")
        return 2
    print(f"  control {name}: as eager")
    bad = False
    for name, fn in CALLS.items():
        want, got = fn(*inputs), compiled(fn, inputs)
        same = torch.equal(got, want)
        bad = bad or not same
        print(f"  {name}: " + ("as eager" if same else f"{got.tolist()}, eager {want.tolist()}"))
    if bad:
        print("FAIL: Inductor's addmm fusion drops the add's alpha (bug present)")
        return 1
    print("ok: the compiled adds keep their alpha")
    return 0


if __name__ == "__main__":
    sys.exit(main())
