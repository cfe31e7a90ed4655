"""torch.export.unflatten: a module whose flag is only passed on to its child, called with two
flags, runs the first call's child for both (found by flatcheck's torch campaign, case-1-453).

Export specializes `inner` per flag, so unflatten makes `inner` (x + x) and `inner@1` (-x). The
two `outer` graphs differ only in which of them they call, and _check_graph_equivalence blanks
call_module targets, so the second `outer` call is deduplicated into the first: wrong numbers.
    python3 corpus/torch/unflatten-merges-calls-of-specialized-children.py  # exit 1 while present
"""
import sys

import torch

class Inner(torch.nn.Module):
    def forward(self, x, flag):
        return -x if flag else x + x

class Outer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = Inner()

    def forward(self, x, flag):
        return self.inner(x, flag)

class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.outer = Outer()

    def forward(self, x):
        return self.outer(x, False), self.outer(x, True)

x = torch.tensor([1.0, 2.0])
model = Model()
want = model(x)
got = torch.export.unflatten(torch.export.export(model, (x,)))(x)
print("torch", torch.__version__, "eager", [t.tolist() for t in want], "unflatten", [t.tolist() for t in got])
sys.exit(0 if all(torch.equal(a, b) for a, b in zip(want, got)) else 1)
