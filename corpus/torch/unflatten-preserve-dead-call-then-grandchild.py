"""torch.export.unflatten with a preserved call signature crashes (AttributeError: 'InterpreterModule'
object has no attribute 'a_w') when a module's first call is dead and its child is then called
by its path from the root (found by flatcheck's torch campaign: case 161 of seed 1, on both
preserve paths, torch 2.6 and 2.14.1; shrunk by the campaign from 61 nodes to 8 and written by
hand from that).

It is near entries 5 (a child called by its path after a dead first call) and 6 (a preserved
call that has no module) of docs/found-bugs.md, but removing both of their causes (the bridge's
traces) does not make unflatten succeed, so it is kept as its own entry until triaged. Without
preserve_module_call_signature it unflattens and gives eager's result; with the first call's
result used, or without the direct call of `a_b.a_w`, it does too.
    python3 corpus/torch/unflatten-preserve-dead-call-then-grandchild.py   # exit 1 while present
"""
import sys

import torch


class Leaf(torch.nn.Module):
    def forward(self, x):
        return x + 1


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a_w = Leaf()

    def forward(self, x):
        return self.a_w(x) * 2


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a_b = Block()

    def forward(self, x):
        self.a_b(x)  # a dead call: its result is not used
        return self.a_b.a_w(x)  # the grandchild, called by its path from the root


x = torch.ones(2)
want = Model()(x)
ep = torch.export.export(Model(), (x,), strict=False, preserve_module_call_signature=("a_b.a_w",))
try:
    got = torch.export.unflatten(ep)(x)
except AttributeError as e:
    print("torch", torch.__version__, "unflatten preserving ('a_b.a_w',) raises AttributeError:", e)
    sys.exit(1)
print("torch", torch.__version__, "unflatten gives", got.tolist(), "eager", want.tolist())
sys.exit(0 if torch.equal(got, want) else 1)
