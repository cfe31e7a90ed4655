"""torch.export.unflatten: a child called by its dotted path from the parent is dropped when the
first call of its module does nothing the program uses (found by flatcheck's torch campaign,
case-1-1501, shrunk; both export modes).

The first call of `c` is dead, so the first call of `c` unflatten builds is `c@1`. The call of
`c.w` from the root then creates a placeholder module `c` to hold `w`. The frame of the next
call of `c` reuses that placeholder and replaces its children with those of the first frame,
`c@1` (`self.module._modules = base_module_frame.module._modules`), which has none: `w` is gone
and unflatten raises AttributeError.
    python3 corpus/torch/unflatten-variant-drops-children.py   # exit 1 while present
"""
import sys

import torch

class W(torch.nn.Module):
    def forward(self, x):
        return -x

class C(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = W()

    def forward(self, x):
        return x + 1.0

class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.c = C()

    def forward(self, x):
        self.c(x)  # result unused
        return self.c(self.c.w(self.c(x)))

x = torch.ones(2)
model = Model()
want = model(x)
try:
    got = torch.export.unflatten(torch.export.export(model, (x,)))(x)
except AttributeError as e:
    print("torch", torch.__version__, "eager", want.tolist(), "unflatten raises AttributeError:", e)
    sys.exit(1)
print("torch", torch.__version__, "eager", want.tolist(), "unflatten", got.tolist())
sys.exit(0 if torch.equal(want, got) else 1)
