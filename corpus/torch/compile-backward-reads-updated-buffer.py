"""torch.compile of a model that reads a buffer by a clone, uses the clone in a product, then
updates the buffer in place with a value requiring grad: AOTAutograd's partitioner saves the
buffer itself for the backward (the clone recomputed there) and the compiled forward then
updates that buffer, so backward() raises "one of the variables needed for gradient computation
has been modified by an inplace operation" where eager, which saved its own clone, runs. torch
2.6 raises with inductor (aot_eager runs); torch 2.14.1 with aot_eager and inductor alike.
The same with an input requiring grad that the forward updates in place after a product used
its clone (InputModel): both backends raise on 2.6 and 2.14.1.
pytorch#185497 (open) reports such an error in compiled mode that eager does not raise. Found by
flatcheck's gradient paths (grad.compile.inductor, seed 169 cases 15 and 17; the input form
seed 171 case 9, emit-torch --update-inputs) and written by hand from what they showed.
    python3 corpus/torch/compile-backward-reads-updated-buffer.py   # exit 1 while present
"""
import sys

import torch


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("buf", torch.full((2,), 3.0))

    def forward(self, x):
        before = self.buf.clone()
        y = before * x
        self.buf.copy_(x + 1)
        return y


class InputModel(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.full((2,), 3.0))

    def forward(self, x):
        r = (x.clone() * self.w).clone()
        x.add_(r.sum())
        return r


def gradient(build, backend):
    torch._dynamo.reset()
    model = build()
    run = model if backend is None else torch.compile(model, backend=backend, fullgraph=True)
    leaf = torch.ones(2, requires_grad=True)
    run(leaf.clone()).sum().backward()  # a clone: the input the forward updates is no leaf
    return [leaf.grad] + [t.grad for t in model.parameters()]


def main():
    failed = False
    for build in (Model, InputModel):
        want = gradient(build, None)
        for backend in ("aot_eager", "inductor"):
            try:
                got = gradient(build, backend)
            except RuntimeError as e:
                print(f"torch {torch.__version__}: {build.__name__}, {backend}: backward raises: "
                      f"{str(e)[:110]}")
                failed = True
                continue
            print(f"torch {torch.__version__}: {build.__name__}, {backend}: gradients "
                  f"{[g.tolist() for g in got]} (eager {[g.tolist() for g in want]})")
            failed |= not all(torch.equal(w, g) for w, g in zip(want, got))
    if failed:
        print("FAIL: a compiled model's backward is not eager's")
        return 1
    print("ok: every compiled model's backward is eager's")
    return 0


if __name__ == "__main__":
    sys.exit(main())
