"""torch.export.export of an unflattened module, then torch.export.unflatten: a child whose two
calls differ, in a module called twice, makes the second unflatten build a graph that calls a
module it never created (found by flatcheck's torch campaign, path export.nonstrict.reexport,
case-21-17; reduced by hand).

unflatten names the second call variant of `w.c` `w.c@1`. Exporting the unflattened module
again keys every call in nn_module_stack as `path@n` for the n-th call of `path` (torch.fx's
`Tracer.call_module`): the second call of `w` then keys its first call of `w.c` `w.c@1`, the key
the first call of `w` gave the module at path `w.c@1`. The keys collide, and unflatten reads "@"
in a path as a call suffix: the program it builds has `w` call `c@1@1`, which it never creates,
and running it raises RuntimeError ("Node referenced nonexistent target c@1@1").
    python3 corpus/torch/reexport-variant-call-keys-collide.py   # exit 1 while present
"""
import sys

import torch


class C(torch.nn.Module):
    def forward(self, x, s: float):
        return x * s


class W(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.c = C()

    def forward(self, x):
        return self.c(self.c(x, 2.0), 3.0)  # two calls, two graphs: unflatten makes c and c@1


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = W()

    def forward(self, x):
        return self.w(self.w(x) + 1.0)


x = torch.arange(4.0)
model = Model()
want = model(x)
unflattened = torch.export.unflatten(torch.export.export(model, (x,), strict=False))
assert torch.equal(unflattened(x), want), "the first unflatten is right"
again = torch.export.export(unflattened, (x,), strict=False)
try:
    got = torch.export.unflatten(again)(x)
except RuntimeError as e:
    print("torch", torch.__version__, "eager", want.tolist(),
          "unflatten of the re-export raises RuntimeError:", str(e).splitlines()[0])
    sys.exit(1)
print("torch", torch.__version__, "eager", want.tolist(), "unflatten of the re-export", got.tolist())
sys.exit(0 if torch.equal(want, got) else 1)
