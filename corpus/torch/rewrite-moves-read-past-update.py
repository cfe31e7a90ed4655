"""torch.fx.subgraph_rewriter.replace_pattern moves a replaced computation past an in-place
update of the value it reads — a silent wrong result. Found by flatcheck's torch campaign (path
fx.rewrite: each pattern drawn from a traced model replaced by an identical copy of itself);
written by hand.

replace_pattern (and replace_pattern_with_filters) inserts the replacement's nodes before the
first user of the pattern's results, not where the pattern's nodes were, and then erases them.
When an in-place op runs between the pattern and that user and updates a value the pattern
reads (a graph input here; a buffer read the same way), the replacement reads the updated value.
Here the pattern `a * 2.0` is replaced by the same `a * 2.0`: the graph's `y = x * 2.0` runs
again after `x.add_(z)`. torch 2.6 and 2.14.1.
    python3 corpus/torch/rewrite-moves-read-past-update.py   # exit 1 while present
"""
import sys

import torch
import torch.fx
from torch.fx import subgraph_rewriter


class Model(torch.nn.Module):
    def forward(self, x, z):
        y = x * 2.0   # reads x
        x.add_(z)     # then updates x in place
        return y + z  # the first user of y


def pattern(a):
    return a * 2.0


def replacement(a):
    return a * 2.0  # the same computation


def main():
    x, z = torch.ones(3), torch.full((3,), 5.0)
    want = Model()(x.clone(), z)  # 1 * 2 + 5
    gm = torch.fx.symbolic_trace(Model())
    subgraph_rewriter.replace_pattern(gm, pattern, replacement)
    got = gm(x.clone(), z)
    if not torch.equal(got, want):
        print(f"torch {torch.__version__}: replacing `a * 2.0` by itself gave {got.tolist()}, "
              f"want {want.tolist()}; the rewritten code:\n{gm.code}")
        return 1
    print(f"torch {torch.__version__}: the rewritten module gives eager's result")
    return 0


if __name__ == "__main__":
    sys.exit(main())
