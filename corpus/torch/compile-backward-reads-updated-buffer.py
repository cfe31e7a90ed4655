"""torch.compile of a model that reads a buffer by a clone, uses the clone in a product, then
updates the buffer in place with a value requiring grad: AOTAutograd's partitioner saves the
buffer itself for the backward (the clone recomputed there) and the compiled forward then
updates that buffer, so backward() raises "one of the variables needed for gradient computation
has been modified by an inplace operation" where eager, which saved its own clone, runs. torch
2.6 raises with inductor (aot_eager runs); torch 2.14.1 with aot_eager and inductor alike.
pytorch#185497 (open) reports such an error in compiled mode that eager does not raise. Found by
flatcheck's gradient paths (grad.compile.inductor, seed 169 cases 15 and 17) and written by hand
from what they showed.
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


def gradient(backend):
    torch._dynamo.reset()
    model = Model()
    run = model if backend is None else torch.compile(model, backend=backend, fullgraph=True)
    x = torch.ones(2, requires_grad=True)
    run(x).sum().backward()
    return x.grad


def main():
    want = gradient(None)
    failed = False
    for backend in ("aot_eager", "inductor"):
        try:
            got = gradient(backend)
        except RuntimeError as e:
            print(f"torch {torch.__version__}: {backend}: backward raises: {str(e)[:110]}")
            failed = True
            continue
        print(f"torch {torch.__version__}: {backend}: x.grad {got.tolist()} (eager "
              f"{want.tolist()})")
        failed |= not torch.equal(want, got)
    if failed:
        print("FAIL: a compiled model's backward is not eager's")
        return 1
    print("ok: every compiled model's backward is eager's")
    return 0


if __name__ == "__main__":
    sys.exit(main())
