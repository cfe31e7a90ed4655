"""torch.compile with Inductor of f(g, x) = torch.cond(pred, g * 2, g * 3) + x, then a backward:
x's gradient is the tangent itself, and the cond's backward branch (tangent * 3) is compiled
as a subgraph that takes the outer backward's donated-input positions for its own, so it writes
its result into the tangent's buffer: x.grad comes back as g's gradient, [3, 30, 300] where eager
gives [1, 10, 100], with no error. With buffer donation off
(torch._functorch.config.donated_buffer = False), and with aot_eager, the gradients are
eager's. torch 2.14.1 (torch 2.6 gives eager's gradients; 2.7 to 2.13 not run). Found by
flatcheck's gradient paths (grad.compile.inductor with --branch cond, seed 176 case 24), shrunk
to three nodes and written by hand from the shrunk case.
    python3 corpus/torch/compile-cond-backward-donated-input.py   # exit 1 while present
"""
import sys

import torch

PRESENT_FROM = (2, 14)  # torch 2.6 gives eager's gradients (2.7 to 2.13 not run)


def twice(a):
    return a * 2.0


def thrice(a):
    return a * 3.0


class Model(torch.nn.Module):
    def forward(self, g, x):
        return torch.cond(g.sum() > 100.0, twice, thrice, (g,)) + x


def gradients(backend):
    torch._dynamo.reset()
    model = Model()
    run = model if backend is None else torch.compile(model, backend=backend, fullgraph=True)
    g = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    x = torch.tensor([4.0, 5.0, 6.0], requires_grad=True)
    run(g, x).backward(torch.tensor([1.0, 10.0, 100.0]))
    return g.grad, x.grad


def main():
    want = gradients(None)
    failed = False
    for backend in ("aot_eager", "inductor"):
        got = gradients(backend)
        print(f"torch {torch.__version__}: {backend}: g.grad {got[0].tolist()}, x.grad "
              f"{got[1].tolist()} (eager {want[0].tolist()}, {want[1].tolist()})")
        failed |= not all(torch.equal(w, h) for w, h in zip(want, got))
    if failed:
        print("FAIL: a compiled model's gradients are not eager's")
        return 1
    print("ok: every compiled model's gradients are eager's")
    return 0


if __name__ == "__main__":
    sys.exit(main())
