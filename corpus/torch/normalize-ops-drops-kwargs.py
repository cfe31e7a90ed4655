"""The public operator-normalizing pass drops the keyword arguments of the calls it rewrites:
torch.sub(x, y, alpha=-1) runs as x - y, torch.div(x, y, rounding_mode="floor") as x / y
(docs/found-bugs.md 85; silent wrong result, torch 1.13, 2.6 and 2.14.1).

torch.fx.experimental.normalize.NormalizeOperators maps torch.add, torch.sub, torch.mul,
torch.div and the comparison functions to the Python operators of their magic methods
(operator.add, ...) whenever a call has two positional arguments, and builds the new call with
kwargs={}: alpha (add, sub), rounding_mode (div) and out are lost. Found by flatcheck's bridge
(path fx.normalize_ops) on programs emitted with emit-torch --op-kwargs, which spell an addition
torch.sub(a, b, alpha=-1): 115 of 150 programs of seed 165.
    python3 corpus/torch/normalize-ops-drops-kwargs.py   # exit 1 while present
"""
import sys

import torch
import torch.fx
from torch.fx.experimental.normalize import NormalizeOperators


class Model(torch.nn.Module):
    def forward(self, x, y):
        return (torch.sub(x, y, alpha=-1),  # x + y
                torch.add(x, y, alpha=2),
                torch.div(x, y, rounding_mode="floor"))


INPUTS = [torch.tensor([7.0, -7.5]), torch.tensor([2.0, 2.0])]


def main():
    model = Model()
    print("torch", torch.__version__)
    normalized = NormalizeOperators(torch.fx.symbolic_trace(model)).transform()
    want = model(*INPUTS)
    got = normalized(*INPUTS)
    print("  eager:", [t.tolist() for t in want])
    print("  after NormalizeOperators:", [t.tolist() for t in got])
    print(normalized.code)
    return 0 if all(torch.equal(g, w) for g, w in zip(got, want)) else 1


if __name__ == "__main__":
    sys.exit(main())
