"""Strict torch.export.export with preserve_module_call_signature raises KeyError for a module
whose name is not an identifier ("0", added with add_module) when it is called twice (found by
flatcheck's torch campaign on torch 2.11 and 2.14: the export.strict.preserve path, programs with
numerically named children; reduced by hand on torch 2.14.1).

`CollectTracepointsPass` names the second call `0@1` and copies the signature recorded for the
module's FQN, but for this call nn_module_stack holds dynamo's source name,
`getattr(L['self'], '0')`, not the FQN `0`: KeyError: "getattr(L['self'], '0')". One call, a
child named `a`, or non-strict export exports. torch 2.6 exports it.
    python3 corpus/torch/export-strict-preserve-numeric-name-keyerror.py   # exit 1 while present
"""
import sys

import torch

PRESENT_FROM = (2, 11)  # torch 2.6 exports it (2.7 to 2.10 not run)


class Leaf(torch.nn.Module):
    def forward(self, x):
        return x + 1


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.add_module("0", Leaf())

    def forward(self, x):
        child = getattr(self, "0")
        return child(child(x))


x = torch.ones(2)
try:
    ep = torch.export.export(Model(), (x,), strict=True, preserve_module_call_signature=("0",))
except KeyError as e:
    print("torch", torch.__version__, "strict export preserving ('0',) raises KeyError:", e)
    sys.exit(1)
got = torch.export.unflatten(ep)(x)
print("torch", torch.__version__, "strict export preserving ('0',) succeeds; unflatten gives",
      got.tolist(), "(eager", Model()(x).tolist(), ")")
sys.exit(0)
