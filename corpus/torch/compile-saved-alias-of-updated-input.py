"""torch.compile with Inductor of a model that reads a chunk of its input, uses exp of it in an
output, then updates the input in place: Inductor's forward saves the chunk for the backward as
its own alias of the input's storage, which does not share the input's version counter, so the
in-place update changes what the backward reads without autograd's "modified by an inplace
operation" check seeing it; the backward computes exp of the updated values and the gradient is
silently wrong (x.grad 0.406 where eager gives 8.155). aot_eager and aot_eager_decomp_partition
(the same decompositions and partition, eager kernels) give eager's gradient; copying every
saved tensor when it is saved (saved_tensors_hooks) gives it with Inductor too. torch 2.6 and
2.14.1. Found by flatcheck's gradient paths (grad.compile.inductor, seed 171 case 35, emitted
with --update-inputs) and written by hand from its shrunk case.
    python3 corpus/torch/compile-saved-alias-of-updated-input.py   # exit 1 while present
"""
import sys

import torch


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.full((1, 1), 0.5))

    def forward(self, x):
        a, b = torch.chunk(x, 2, dim=1)
        n = -a
        y = n * self.w + torch.exp(b)
        z = n + torch.relu(n + b)
        x.add_(-3)  # the caller's input updated in place, after exp(b) was computed
        return n, z, y


def gradient(backend):
    torch._dynamo.reset()
    model = Model()
    run = model if backend is None else torch.compile(model, backend=backend, fullgraph=True)
    leaf = torch.ones(3, 2, requires_grad=True)
    outs = run(leaf.clone())  # a clone: the input the forward updates is no leaf
    sum(o.sum() * (i + 1) for i, o in enumerate(outs)).backward()
    return leaf.grad


def main():
    want = gradient(None)
    failed = False
    for backend in ("aot_eager", "inductor"):
        got = gradient(backend)
        print(f"torch {torch.__version__}: {backend}: x.grad[:, 1] {got[:, 1].tolist()} (eager "
              f"{want[:, 1].tolist()})")
        failed |= not torch.equal(want, got)
    if failed:
        print("FAIL: a compiled model's gradient is not eager's")
        return 1
    print("ok: every compiled model's gradient is eager's")
    return 0


if __name__ == "__main__":
    sys.exit(main())
