"""Non-strict torch.export.export runs an in-place update of a plain tensor attribute (a tensor
constant to export: an attribute that is neither a parameter nor a buffer) on the real tensor
while it traces, when every tensor the update reads is such a constant: `self.k.mul_(2.0)`,
`self.k += 1`, `self.k.add_(self.j)`, `self.k.copy_(self.j)`. Export itself then changes the
model's state, and the exported program, which holds that same tensor as its constant, starts
from the changed value: ep.module() silently gives another result than the model gave before
export. Export's own contract is that tracing does not apply a forward's mutations to the module.

Mechanism: non-strict export fakifies the inputs, parameters and buffers but not the constants,
and FakeTensorMode._dispatch_impl runs an op of the `_should_allow_numbers_as_tensors` family
(add, sub, mul, div and their in-place and out= forms) for real when none of its arguments is a
fake tensor (its constant propagation); for an in-place op that writes the real constant. An
update that reads a fake tensor (`self.k.add_(x)`) or an op outside that family (`relu_`,
`clamp_`, `fill_`, a view's `mul_`) is traced on fakes and leaves the model alone. Strict export
(dynamo turns the attribute into a buffer) and the same model with `k` registered as a buffer
are the controls.

Found by flatcheck's probe of plain tensor attributes as a state form (by hand, before the
generator emits them), torch 2.6 and 2.14.1.

    python3 corpus/torch/export-nonstrict-runs-constant-update.py   # exit 1 while present
"""
import sys
import warnings

import torch

warnings.simplefilter("ignore")


class Model(torch.nn.Module):
    def __init__(self, as_buffer):
        super().__init__()
        k = torch.full((2,), 3.0)
        if as_buffer:
            self.register_buffer("k", k)
        else:
            self.k = k  # a plain tensor attribute: a constant to export

    def forward(self, x):
        self.k.mul_(2.0)  # reads no input: every tensor it reads is the constant
        return x + self.k


def exported(as_buffer, strict, x):
    """(ep.module()'s output on x, whether export changed the model's k)."""
    model = Model(as_buffer)
    before = model.k.clone()
    ep = torch.export.export(model, (x,), strict=strict)
    changed = not torch.equal(model.k, before)  # before any run: ep.module() shares the state
    return ep.module()(x.clone()).tolist(), changed


def main():
    if not hasattr(torch, "export"):
        print(f"torch {torch.__version__} has no torch.export: cannot show the bug")
        return 77
    x = torch.zeros(2)
    want = Model(False)(x.clone()).tolist()
    print(f"torch {torch.__version__}; eager (a fresh model): {want}")
    for as_buffer, strict, name in ((True, False, "control: k a buffer, non-strict"),
                                    (False, True, "control: k a constant, strict")):
        got, changed = exported(as_buffer, strict, x)
        if got != want or changed:
            print(f"FAIL: the {name} gives {got} (export changed the model: {changed}): "
                  "not this bug")
            return 2
        print(f"  {name}: as eager, the model unchanged by export")
    got, changed = exported(False, False, x)
    print(f"  k a constant, non-strict: ep.module() gives {got}; export changed the model's k: "
          f"{changed}")
    if got != want or changed:
        print("FAIL: non-strict export ran the constant's in-place update for real (bug present)")
        return 1
    print("ok: non-strict export leaves the constant alone")
    return 0


if __name__ == "__main__":
    sys.exit(main())
