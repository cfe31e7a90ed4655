"""The public matmul-merging pass raises on any model with two right-hand operands each shared
by two or more independent matmuls: `RuntimeError: Attempting to remove matmul_2 from wrong
graph!` (docs/found-bugs.md 82; torch 2.6 and 2.14.1).

torch.fx.experimental.merge_matmul.merge_matmul groups the matmuls by their right-hand operand
and merges one group after another. After each merge it sorts the graph with legalize_graph,
which builds a new Graph and puts it into the module; the matmuls of the next group, collected
before the loop, are nodes of the old Graph, and `gm.graph.erase_node(old)` refuses them (torch 1.13's erase_node does not check, and the next
sort raises `KeyError`). Found
by flatcheck's bridge (path fx.merge_matmul: 2 of 150 programs of seed 163 on 2.6); written by
hand from their shape.
    python3 corpus/torch/merge-matmul-stale-graph.py   # exit 1 while present
"""
import sys

import torch
from torch.fx.experimental.merge_matmul import merge_matmul


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.tensor([[1.0, 2.0], [3.0, 4.0]]))
        self.v = torch.nn.Parameter(torch.tensor([[0.5, -1.0], [2.0, 0.25]]))

    def forward(self, a, b):
        # Two right-hand operands (w, v), each shared by two matmuls that do not depend on
        # each other: two groups to merge.
        return torch.matmul(a, self.w), torch.matmul(b, self.w), \
            torch.matmul(a, self.v), torch.matmul(b, self.v)


INPUTS = [torch.tensor([[1.0, 0.0]]), torch.tensor([[0.0, 1.0], [1.0, 1.0]])]


def main():
    model = Model()
    print("torch", torch.__version__)
    with torch.no_grad():
        want = model(*INPUTS)
        try:
            merged = merge_matmul(model)
        except (RuntimeError, KeyError) as e:  # KeyError on torch 1.13 (below)
            print("  merge_matmul raised:", type(e).__name__, e)
            return 1
        got = merged(*INPUTS)
    print("  merged, the same results:", all(torch.equal(g, w) for g, w in zip(got, want)))
    return 0 if all(torch.equal(g, w) for g, w in zip(got, want)) else 1


if __name__ == "__main__":
    sys.exit(main())
