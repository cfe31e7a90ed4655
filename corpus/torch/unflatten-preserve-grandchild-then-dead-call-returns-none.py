"""torch.export.unflatten with a preserved call signature returns None for an output, without an
error, when the root first calls a module's child by its path, then calls the module once with
its result unused, then twice more (found by flatcheck's torch campaign on torch 2.14.1: case 146
of seed 3 at --max-nodes 8, both preserve paths as an AttributeError on 'layer0@1'; shrunk by
`flatcheck shrink --predicate` from 52 nodes to 13 and written by hand from that, where the
crash became a silent None). Torch 2.6 does the same, strict and non-strict export.

Near entries 6 (a preserved call that has no module), 14 and 15 (a dead call and a child called
by its path) of docs/found-bugs.md; the bridge's class-6 trace (entries without a module
dropped) does not make it agree. Without the dead call it agrees; without the call of the child
by its path it is entry 6 (AttributeError), which the trace fixes; preserving only the child's
signature, or none, it agrees.
    python3 corpus/torch/unflatten-preserve-grandchild-then-dead-call-returns-none.py
    (exit 1 while present)
"""
import sys

import torch


class Leaf(torch.nn.Module):
    def forward(self, x, y):
        return y, x, y + 10.0


class N(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.leaf = Leaf()

    def forward(self, x):
        return -x, x + 10.0


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.n = N()

    def forward(self, x):
        a = self.n.leaf(x, x)  # the child, called by its path from the root
        self.n(x)  # a dead call: its result is not used
        b = self.n(a[1])
        c = self.n(b[1])
        return c[0], a[2]


x = torch.tensor([[1.0, 2.0]])
want = Model()(x)
ep = torch.export.export(Model(), (x,), strict=False, preserve_module_call_signature=("n",))
got = torch.export.unflatten(ep)(x)
print("torch", torch.__version__, "unflatten preserving ('n',) gives",
      [None if g is None else g.tolist() for g in got], "eager", [w.tolist() for w in want])
sys.exit(0 if all(g is not None and torch.equal(g, w) for g, w in zip(got, want)) else 1)
