"""torch.export.export with preserve_module_call_signature naming one name of a module that has
two (`self.b = self.a`) raises KeyError when the module is called twice by its other name
(found by flatcheck's torch campaign while preserving one name per module; non-strict export).

`CollectTracepointsPass` names the second call `b@1` (from nn_module_stack: the name it was
called by) and copies the signature recorded for `b` (`self.specs[fqn]`), but only the preserved
name `a` has one: KeyError: 'b'. A single call, or preserving `b`, exports.
    python3 corpus/torch/export-preserve-alias-keyerror.py   # exit 1 while present
"""
import sys

import torch


class Leaf(torch.nn.Module):
    def forward(self, x):
        return x * 2


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = Leaf()
        self.b = self.a  # one module, two names

    def forward(self, x):
        return self.b(x) + self.b(x + 1)


x = torch.ones(2)
try:
    torch.export.export(Model(), (x,), strict=False, preserve_module_call_signature=("a",))
except KeyError as e:
    print("torch", torch.__version__, "export preserving ('a',) raises KeyError:", e)
    sys.exit(1)
print("torch", torch.__version__, "export preserving ('a',) succeeds")
sys.exit(0)
