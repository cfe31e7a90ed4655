"""torch.compile of a model that updates a buffer with a value requiring grad that no output
reads: eager's backward never reaches the update, but AOTAutograd makes the buffer's new value
an output of its graph and gives it a zero tangent, so the update's backward runs; where its
derivative is not finite (sqrt at 0: 0 * inf), the input's gradient becomes NaN where eager
gives a number. torch 2.6 and 2.14.1, aot_eager and inductor alike. pytorch#131794 (open) has
the cause (unused outputs' zero tangents run backward work eager does not); pytorch#194523
("specialize backwards for undefined output tangents") changes it. Found by flatcheck's
gradient paths (grad.compile.aot_eager, seed 171 case 28) and written by hand from its case.
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


def gradient(backend):
    torch._dynamo.reset()
    model = Model()
    run = model if backend is None else torch.compile(model, backend=backend, fullgraph=True)
    x = torch.tensor([0.0, 1.0], requires_grad=True)
    run(x).sum().backward()
    return x.grad


def main():
    want = gradient(None)
    failed = False
    for backend in ("aot_eager", "inductor"):
        got = gradient(backend)
        print(f"torch {torch.__version__}: {backend}: x.grad {got.tolist()} (eager "
              f"{want.tolist()})")
        failed |= not torch.equal(want, got)
    if failed:
        print("FAIL: a compiled model's gradient is not eager's")
        return 1
    print("ok: every compiled model's gradient is eager's")
    return 0


if __name__ == "__main__":
    sys.exit(main())
