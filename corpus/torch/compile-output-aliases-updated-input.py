"""torch.compile with Inductor of a model that returns x * 1.0 and then updates x in place, run
with x requiring grad (training): Inductor's joint-graph pass replaces the no-op x * 1.0 by x
itself, so the compiled model's output shares x's storage and shows x's update: the output is
[1, 2, 3, 4] where eager's is [-0, 1, 2, 3], with no error (the backward then raises that an
output "of CompiledFunction is a view and its base ... has been modified inplace"). With grad off,
and with aot_eager, the output is eager's; x * 2.0 is right. torch 2.14.1 (torch 2.6 gives
eager's output; 2.7 to 2.13 not run). Found by flatcheck's gradient paths (grad.compile.inductor,
seed 172 case 36, emitted with --update-args --hostile-names --update-inputs), shrunk to one
node and written by hand from the shrunk case.
    python3 corpus/torch/compile-output-aliases-updated-input.py   # exit 1 while present
"""
import sys

import torch

PRESENT_FROM = (2, 14)  # torch 2.6 gives eager's output (2.7 to 2.13 not run)


class Model(torch.nn.Module):
    def forward(self, x):
        out = x * 1.0
        x.add_(1.0)  # the caller's input updated in place, after out was computed
        return out


def output(backend):
    torch._dynamo.reset()
    model = Model()
    run = model if backend is None else torch.compile(model, backend=backend, fullgraph=True)
    leaf = torch.tensor([-0.0, 1.0, 2.0, 3.0], requires_grad=True)
    return run(leaf.clone()).detach()  # a clone: the input the forward updates is no leaf


def main():
    want = output(None)
    failed = False
    for backend in ("aot_eager", "inductor"):
        got = output(backend)
        print(f"torch {torch.__version__}: {backend}: output {got.tolist()} (eager "
              f"{want.tolist()})")
        failed |= not torch.equal(want, got)
    if failed:
        print("FAIL: a compiled model's output, with grad on, is not eager's")
        return 1
    print("ok: every compiled model's output is eager's")
    return 0


if __name__ == "__main__":
    sys.exit(main())
