"""torch.export.unflatten: a module called twice, each call's result read at another index,
runs the first call's child for both (found by flatcheck's torch campaign, case-1-561, shrunk).

Each call of `outer` gets its own graph, and so does each call of `inner`: pruned to the output
read, `inner` returns -y and `inner@1` returns y. The two `outer` graphs differ only in which of
them they call, and _check_graph_equivalence blanks call_module targets, so the second call of
`outer` is deduplicated into the first and runs `inner`: a silent wrong result.
    python3 corpus/torch/unflatten-merges-calls-reading-other-outputs.py   # exit 1 while present
"""
import sys

import torch

class Inner(torch.nn.Module):
    def forward(self, x):
        y = x - 0.125
        return y, -y

class Outer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = Inner()

    def forward(self, x):
        return self.inner(x)

class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.outer = Outer()

    def forward(self, x):
        return self.outer(x)[1], self.outer(x)[0]

x = torch.ones(1)
model = Model()
want = model(x)
got = torch.export.unflatten(torch.export.export(model, (x,)))(x)
print("torch", torch.__version__, "eager", [t.tolist() for t in want], "unflatten", [t.tolist() for t in got])
sys.exit(0 if all(torch.equal(a, b) for a, b in zip(want, got)) else 1)
