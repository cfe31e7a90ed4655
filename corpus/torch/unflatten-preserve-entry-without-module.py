"""torch.export.unflatten with preserve_module_call_signature: a preserved call that unflatten
made no module for makes it crash (found by flatcheck's torch campaign, path
export.<mode>.preserve; both export modes).

export records one module_call_graph entry per call of a preserved module (`leaf`, `leaf@1`).
Two shapes leave an entry without a module: a call whose results are all unused (the call is
dropped from the unflattened graph), and a module under two names (`self.b = self.a`) whose
preserved name is never the one it is called by. `UnflattenedModule._dispatch_modules` looks
every entry up (`_get_attr(self, fqn)`): AttributeError. Dropping entries that have no module
(and renumbering the rest) makes both programs agree with eager.
    python3 corpus/torch/unflatten-preserve-entry-without-module.py   # exit 1 while present
"""
import sys

import torch


class Leaf(torch.nn.Module):
    def forward(self, x):
        return x + 1


class DeadCall(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.leaf = Leaf()

    def forward(self, x):
        y = self.leaf(x)
        self.leaf(x)  # a second call whose result is unused
        return y


class Alias(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = Leaf()
        self.b = self.a  # one module, two names; called as `b`

    def forward(self, x):
        return self.b(x)


x = torch.ones(2)
present = False
for model, preserve in ((DeadCall(), ("leaf",)), (Alias(), ("a",))):
    want = model(x)
    ep = torch.export.export(model, (x,), preserve_module_call_signature=preserve)
    try:
        got = torch.export.unflatten(ep)(x)
    except AttributeError as e:
        print("torch", torch.__version__, type(model).__name__, "preserving", preserve,
              "unflatten raises AttributeError:", e)
        present = True
        continue
    same = torch.equal(want, got)
    present |= not same
    print("torch", torch.__version__, type(model).__name__, "eager", want.tolist(), "unflatten",
          got.tolist())
sys.exit(1 if present else 0)
