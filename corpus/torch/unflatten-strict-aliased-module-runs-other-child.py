"""torch.export.unflatten after strict export: one module under two names, each call reading
another output of its child, runs one call's child for both (flatcheck torch campaign, case-7-149).
Strict export keys nn_module_stack by module object (`L__self___a` for calls through `b` too);
unflatten takes the key for identity, `b` shares `a`'s `_modules`, and b's per-call child `inner`
replaces a's. Non-strict is right. Exit 1 while present.
"""
import sys
import torch

class Inner(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.full((2,), 0.5))

    def forward(self, x):
        return x + x, x + self.w

class Mid(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = Inner()

    def forward(self, x):
        return self.inner(x)

class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = Mid()
        self.b = self.a  # one module under two names

    def forward(self, x):
        return self.a(x)[1] + self.b(x)[0]

x = torch.ones(2)
model = Model()
want = model(x)
got = torch.export.unflatten(torch.export.export(model, (x,), strict=True))(x)
print("torch", torch.__version__, "eager", want.tolist(), "unflatten (strict)", got.tolist())
sys.exit(0 if torch.equal(want, got) else 1)
