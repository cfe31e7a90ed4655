"""The public matmul-merging pass moves a matmul past an in-place update of its operand: the
first matmul returns the value computed from the updated tensor (docs/found-bugs.md 83; silent
wrong result, torch 2.6 and 2.14.1).

torch.fx.experimental.merge_matmul.merge_matmul merges the matmuls that share a right-hand
operand into one matmul of their left operands concatenated, appended at the graph's end, and
sorts the graph with legalize_graph, which sees data dependencies only. An in-place update of a
left operand between the two matmuls (`a.mul_(10.0)`) now runs before the concatenation that
reads it. Found by reading the pass after flatcheck's bridge (path fx.merge_matmul) showed its
crash (82); the 150 generated programs of seed 163 never update a merged operand in place.
    python3 corpus/torch/merge-matmul-across-update.py   # exit 1 while present
"""
import sys

import torch
from torch.fx.experimental.merge_matmul import merge_matmul


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.tensor([[1.0, 2.0], [3.0, 4.0]]))

    def forward(self, a, b):
        x = torch.matmul(a, self.w)  # reads a before its update
        a.mul_(10.0)
        y = torch.matmul(b, self.w)
        return x, y


INPUTS = [torch.tensor([[1.0, 1.0]]), torch.tensor([[0.0, 1.0]])]


def main():
    model = Model()
    print("torch", torch.__version__)
    with torch.no_grad():
        want = model(*[t.clone() for t in INPUTS])
        merged = merge_matmul(model)
        got = merged(*[t.clone() for t in INPUTS])
    print("  eager:", [t.tolist() for t in want])
    print("  after merge_matmul:", [t.tolist() for t in got])
    print(merged.code)
    return 0 if all(torch.equal(g, w) for g, w in zip(got, want)) else 1


if __name__ == "__main__":
    sys.exit(main())
