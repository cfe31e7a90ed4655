"""torch.export.unflatten crashes (RuntimeError: Node layer_conv_block_2 target Layer.convBlock@1
references nonexistent attribute convBlock@1) when a module's first call is dead, a second call
is live, and its child is then called by its path from the root. No preserved signature is
needed, and strict and non-strict export both do it. Found by flatcheck's torch campaign on
torch 2.14.1 (case 389 of seed 1, both unflatten paths; torch 2.6 too), shrunk with `flatcheck
shrink --predicate` (the bridge as the test) from 14 nodes to 5, and written by hand from that.

Near entries 5 and 14 of docs/found-bugs.md (a dead first call, then a child called by its
path), but the bridge's trace of entry 5's cause does not make it unflatten. With the first
call's result used, it unflattens and gives eager's result.
    python3 corpus/torch/unflatten-dead-call-then-grandchild-variant.py   # exit 1 while present
"""
import sys

import torch


class ConvBlock(torch.nn.Module):
    def forward(self, x):
        return x.transpose(0, 1)


class Layer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.convBlock = ConvBlock()

    def forward(self, x):
        return self.convBlock(x)


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.Layer = Layer()

    def forward(self, g, x):
        self.Layer(x)  # a dead call
        second = self.Layer(x)
        return self.Layer.convBlock(g), second  # the grandchild, by its path


g, x = torch.ones(3, 2), torch.ones(2, 3)
want = Model()(g, x)
ep = torch.export.export(Model(), (g, x), strict=False)
try:
    got = torch.export.unflatten(ep)(g, x)
except RuntimeError as e:
    print("torch", torch.__version__, "unflatten raises RuntimeError:", str(e).splitlines()[0])
    sys.exit(1)
same = all(torch.equal(a, b) for a, b in zip(got, want))
print("torch", torch.__version__, "unflatten runs;", "same as eager" if same else "DIFFERENT")
sys.exit(0 if same else 1)
