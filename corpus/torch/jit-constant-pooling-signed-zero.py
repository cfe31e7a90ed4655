"""TorchScript pools a graph's float constants 0.0 and -0.0 into one: x / 0.0 beside x / -0.0
gives the same infinity twice (found by a flatcheck campaign, docs/found-bugs.md 78; torch
1.13, 2.6 and 2.14.1).

Constant pooling (and CSE) find equal nodes through node_hashing.cpp, which compares double
attributes with ==, and 0.0 == -0.0. torch.jit.script and torch.jit.trace both run it on the
graph they make, so the second constant's uses read the first.
    python3 corpus/torch/jit-constant-pooling-signed-zero.py   # exit 1 while present
"""
import sys

import torch


class Model(torch.nn.Module):
    def forward(self, x):
        return x / 0.0, x / -0.0


def main():
    model, x = Model().eval(), torch.tensor([1.0, -2.0])
    with torch.no_grad():
        want = model(x)
        got = {"torch.jit.trace": torch.jit.trace(model, (x,))(x),
               "torch.jit.script": torch.jit.script(model)(x)}
    print("torch", torch.__version__, "eager:", [t.tolist() for t in want])
    ok = True
    for name, out in got.items():
        same = all(torch.equal(g, w) for g, w in zip(out, want))
        print(f"  {name}:", [t.tolist() for t in out], "agrees" if same else "differs")
        ok = ok and same
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
