"""A submodule compiled on its own (regional compilation, `child.compile()`) whose caller, eager,
updates the caller's input in place after the child returned: the child's compiled graph saves
its own input (a chunk of the caller's input) for the backward and recomputes from it what eager
saved (exp of it), so the caller's update, legal in eager, makes the compiled backward raise
("modified by an inplace operation" on torch 2.6; on 2.14.1 "Output 1 of Split is a view and its
base ... has been modified inplace") where eager's backward runs and gives x.grad. Inductor on
2.6 and 2.14.1; aot_eager saves exp's result and runs. The second model's child returns
abs(v), v * 2 and its caller drops abs(v): eager's backward never reaches abs, whose saved v
the compiled backward (one graph for both results, the dropped one given a zero tangent)
reads; it raises so with aot_eager and Inductor on 2.6 and 2.14.1. Copying every saved
tensor when it is saved (saved_tensors_hooks) gives eager's gradients. Found by flatcheck's
gradient paths (grad.compile.regional, seed 180 case 16, emitted with --update-inputs; its
shrunk case is the second model's) and written by hand from it.
    python3 corpus/torch/compile-region-input-updated-by-caller.py   # exit 1 while present
"""
import sys

import torch


class Child(torch.nn.Module):
    def forward(self, v):
        return torch.exp(v) * 2.0


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.child = Child()

    def forward(self, x):
        a, b = torch.chunk(x, 2)
        y = self.child(b).clone()
        x.add_(1.0)  # the caller's input updated in place, after the child returned
        return y


class DroppingChild(torch.nn.Module):
    def forward(self, v):
        return torch.abs(v), v * 2.0


class DroppingModel(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.child = DroppingChild()

    def forward(self, x):
        a, b = torch.chunk(x, 2)
        y = self.child(b)[1].clone()  # abs(b) dropped
        x.add_(1.0)
        return y


def gradient(backend, keep_saved=False, make=Model):
    torch._dynamo.reset()
    model = make()
    if backend is not None:
        model.child.compile(backend=backend, fullgraph=True)
    leaf = torch.tensor([1.0, 2.0], requires_grad=True)
    if keep_saved:
        with torch.autograd.graph.saved_tensors_hooks(lambda t: t.clone(), lambda t: t):
            model(leaf.clone()).sum().backward()
    else:
        model(leaf.clone()).sum().backward()  # a clone: the input updated is no leaf
    return leaf.grad


def main():
    failed = False
    for make in (Model, DroppingModel):
        want = gradient(None, make=make)
        for backend in ("aot_eager", "inductor"):
            name = f"torch {torch.__version__}: {make.__name__}, {backend}"
            try:
                got = gradient(backend, make=make)
            except RuntimeError as e:
                kept = gradient(backend, keep_saved=True, make=make)
                print(f"{name}: backward raises {str(e)[:110]}... (eager x.grad "
                      f"{want.tolist()}; saved tensors copied when saved: {kept.tolist()})")
                failed = True
                continue
            print(f"{name}: x.grad {got.tolist()} (eager {want.tolist()})")
            failed |= not torch.equal(want, got)
    if failed:
        print("FAIL: a regionally compiled model's backward is not eager's")
        return 1
    print("ok: every regionally compiled model's backward is eager's")
    return 0


if __name__ == "__main__":
    sys.exit(main())
