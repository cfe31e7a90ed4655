"""torch.fx.subgraph_rewriter.replace_pattern with a pattern of several results writes a graph
that uses a value before making it — the rewritten module cannot run (a graph lint error;
calling it raises UnboundLocalError). Found by flatcheck's torch campaign (path fx.rewrite: each
pattern drawn from a traced model replaced by an identical copy of itself); written by hand.

replace_pattern inserts the replacement's nodes before the first user of any of the match's
results. With several results, one of them may be read before a value that another result is
computed from is made; the matcher accepts such a match (the matched nodes form no cycle), and
the replacement, put before that first read, reads the value before the graph makes it. Here the
pattern returns `r = relu(p)` and `add(r, q)`; `relu(x)` is read by `u` before `b`, the `q` of
the match, is made. torch 2.6 and 2.14.1.
    python3 corpus/torch/rewrite-input-after-first-user.py   # exit 1 while present
"""
import sys

import torch
import torch.fx
from torch.fx import subgraph_rewriter


class Model(torch.nn.Module):
    def forward(self, x, y):
        a = torch.relu(x)
        u = a * 1.5          # the first user of a
        b = y * 3.0          # made after it, from another input
        c = torch.add(a, b)
        return u, c


def pattern(p, q):
    r = torch.relu(p)
    return r, torch.add(r, q)


def main():
    x, y = torch.full((3,), -1.0), torch.ones(3)
    want = Model()(x, y)
    gm = torch.fx.symbolic_trace(Model())
    subgraph_rewriter.replace_pattern(gm, pattern, pattern)  # the pattern by itself
    try:
        gm.graph.lint()
        got = gm(x, y)
    except Exception as e:  # noqa: BLE001 - the failure shown
        print(f"torch {torch.__version__}: the rewritten module fails: {type(e).__name__}: "
              f"{str(e).splitlines()[0]}\n{gm.code}")
        return 1
    if not all(torch.equal(g, w) for g, w in zip(got, want)):
        print(f"torch {torch.__version__}: the rewritten module gave {got}, want {want}")
        return 1
    print(f"torch {torch.__version__}: the rewritten module runs and gives eager's results")
    return 0


if __name__ == "__main__":
    sys.exit(main())
