"""torch.compile of a model that updates a buffer in place with a value requiring grad: the first
call makes the buffer require grad (its copy_ joins the autograd graph, as in eager), but torch
2.6's dynamo does not guard on the buffer's requires_grad, so the second call runs the graph
compiled for a buffer that needed no gradient, and the gradient that flows through the buffer
into the first call's input is dropped. A silent wrong gradient: x.grad is [2, 2] where eager
gives [4, 4] (aot_eager and inductor alike; one compiled graph where 2.14.1 compiles two).
pytorch#140707 (open) reports a buffer mutated to change its requires_grad-ness. Found by
flatcheck's gradient paths on torch 2.6 (grad.compile.aot_eager, seed 169, cases 1, 17, 18) and
written by hand from what they showed. On torch 2.14.1 the second call recompiles and the
script exits 0.
    python3 corpus/torch/compile-buffer-grad-unguarded.py   # exit 1 while present
"""
import sys

import torch

FIXED_IN = (2, 14)  # torch2_test.sh: 2.14.1 exits 0 (this model); 2.7 to 2.13 not run


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("buf", torch.zeros(2))

    def forward(self, x):
        before = self.buf.clone()
        self.buf.copy_(x * 2)
        return before + x


def gradient(compiled):
    torch._dynamo.reset()
    model = Model()
    run = torch.compile(model, backend="aot_eager", fullgraph=True) if compiled else model
    x = torch.ones(2, requires_grad=True)
    # the second call reads the buffer the first one wrote: d/dx = 1 + (2 + 1)
    (run(x).sum() + run(x).sum()).backward()
    return x.grad


def main():
    want, got = gradient(False), gradient(True)
    print(f"torch {torch.__version__}: x.grad eager {want.tolist()}, compiled {got.tolist()}")
    if not torch.equal(want, got):
        print("FAIL: the compiled model dropped the gradient through the updated buffer")
        return 1
    print("ok: the compiled model's gradient is eager's")
    return 0


if __name__ == "__main__":
    sys.exit(main())
