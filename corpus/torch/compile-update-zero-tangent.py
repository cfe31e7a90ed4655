"""torch.compile of a model that updates a buffer with a value requiring grad that no output
reads: eager's backward never reaches the update, but AOTAutograd makes the buffer's new value
an output of its graph and gives it a zero tangent, so the update's backward runs; where its
derivative is not finite (sqrt at 0: 0 * inf), the input's gradient becomes NaN where eager
gives a number. torch 2.6 and 2.14.1, aot_eager and inductor alike. pytorch#131794 (open) has
the cause (unused outputs' zero tangents run backward work eager does not); pytorch#194523
("specialize backwards for undefined output tangents") changes it. Found by flatcheck's
gradient paths (grad.compile.aot_eager, seed 171 case 28) and written by hand from its case.

The same cause without a buffer update, wherever a model runs as several compiled graphs: a
graph's outputs are what crosses its end, read by the loss or not. A submodule compiled on its
own (regional compilation, `child.compile()`) whose second result its caller drops, or a value
that crosses a graph break and is read after it only detached, gets a zero tangent, and
`0 * d sqrt(x)/dx` at 0 is NaN again. Found by the gradient paths grad.compile.regional and
grad.compile.breaks (seed 179 cases 13, 17 and 34, torch 2.6 and 2.14.1).
    python3 corpus/torch/compile-update-zero-tangent.py   # exit 1 while present
"""
import sys

import torch


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("root", torch.zeros(2))

    def forward(self, x):
        self.root.copy_(torch.sqrt(x))  # a statistic kept without detach; nothing reads it
        return x * 2


class Child(torch.nn.Module):
    def forward(self, x):
        return x * 2, torch.sqrt(x)


class Regions(torch.nn.Module):  # the caller drops the child's second result
    def __init__(self):
        super().__init__()
        self.child = Child()

    def forward(self, x):
        doubled, _ = self.child(x)
        return doubled


def broken(x):  # sqrt(x) crosses the graph break and is read after it only detached
    doubled, root = x * 2, torch.sqrt(x)
    torch._dynamo.graph_break()
    return doubled + root.detach() * 0


def gradient(backend, form="update"):
    torch._dynamo.reset()
    x = torch.tensor([0.0, 1.0], requires_grad=True)
    if form == "update":
        model = Model()
        run = model if backend is None else torch.compile(model, backend=backend,
                                                          fullgraph=True)
    elif form == "regional":
        run = Regions()
        if backend is not None:
            run.child.compile(backend=backend, fullgraph=True)
    else:
        run = broken if backend is None else torch.compile(broken, backend=backend)
    run(x).sum().backward()
    return x.grad


def main():
    failed = False
    for form in ("update", "regional", "graph break"):
        want = gradient(None, form)
        for backend in ("aot_eager", "inductor"):
            got = gradient(backend, form)
            print(f"torch {torch.__version__}: {form}, {backend}: x.grad {got.tolist()} (eager "
                  f"{want.tolist()})")
            failed |= not torch.equal(want, got)
    if failed:
        print("FAIL: a compiled model's gradient is not eager's")
        return 1
    print("ok: every compiled model's gradient is eager's")
    return 0


if __name__ == "__main__":
    sys.exit(main())
