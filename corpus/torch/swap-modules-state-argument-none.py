"""torch.export._swap._swap_modules (the module swap of an exported program, experimental,
behind TorchRec's unlift_and_swap) calls a swapped module with None for an argument that is
one of the model's buffers or parameters passed as it is (`self.inner(self.buf, x)`, the shape
of a mask or a table a model hands its layers): the swapped module raises (`TypeError`).
Found by flatcheck's torch campaign (seed 98 case 220, torch 2.14.1, path
export.nonstrict.swap_modules, state read as aliases); written by hand.

The preserved signature names the argument by the exported graph's lifted input (`b_buf`);
_swap_modules swaps in ep.module(), where that input is a get_attr node named otherwise
(`buf`), so _construct_inputs does not find the name and passes None, as for an unused input.
With the argument given the module's get_attr node, the swap agrees. torch 2.6 and 2.14.1,
strict and non-strict export.
    python3 corpus/torch/swap-modules-state-argument-none.py   # exit 1 while present
"""
import sys

import torch
from torch.export._swap import _swap_modules


class Inner(torch.nn.Module):
    def forward(self, b, x):
        return x - b


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("buf", torch.tensor([1.0, 2.0, 3.0]))
        self.inner = Inner()

    def forward(self, x):
        return self.inner(self.buf, x)  # the buffer itself is the argument


def main():
    x = torch.tensor([0.5, 0.25, 2.0])
    want = Model()(x)
    bad = 0
    for strict in (False, True):
        ep = torch.export.export(Model(), (x,), strict=strict,
                                 preserve_module_call_signature=("inner",))
        same = torch.equal(ep.module()(x), want)
        try:
            got = _swap_modules(ep, {"inner": Inner()})(x)
            result = "agrees" if torch.equal(got, want) else f"DIFFERS: {got.tolist()}"
        except Exception as e:  # noqa: BLE001 - the bug's crash
            result = f"raises {type(e).__name__}: {str(e).splitlines()[0][:80]}"
        bad += not (same and result == "agrees")
        print("torch", torch.__version__, "| strict" if strict else "| non-strict",
              "| ep.module()", "agrees" if same else "DIFFERS", "| _swap_modules:", result)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
