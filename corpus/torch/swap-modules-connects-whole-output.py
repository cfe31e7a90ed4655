"""torch.export._swap._swap_modules (the module swap of an exported program, experimental,
behind TorchRec's unlift_and_swap) passes a swapped module's whole result to the next swapped
module as its one argument when the next module's arguments are the first module's first
results: the second module gets a tuple where it takes a tensor and raises (`TypeError`), or,
for a result its code does not reject, computes with the wrong value. Found by flatcheck's
torch campaign (seed 74, torch 2.14.1, paths export.strict.swap_modules and
export.nonstrict.swap_modules); written by hand.

_remove_extraneous_pytrees (_try_remove_connecting_pytrees) drops the flatten of one module's
results and the unflatten of the next module's arguments between two module calls when each of
the next module's arguments is the first module's result at the same position, and then passes
the first module's call node as the next call's only argument. It checks neither that the next
module takes every result nor that it takes one argument. Keeping the flatten and unflatten
makes the swap agree. torch 2.6 and 2.14.1.
    python3 corpus/torch/swap-modules-connects-whole-output.py   # exit 1 while present
"""
import sys

import torch
from torch.export._swap import _swap_modules


class Pair(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x), torch.neg(x)


class Double(torch.nn.Module):
    def forward(self, x):
        return torch.mul(x, 2.0)


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.pair = Pair()
        self.twice = Double()

    def forward(self, x):
        return self.twice(self.pair(x)[0])


def main():
    x = torch.tensor([1.0, -2.0, 3.0])
    want = Model()(x)
    ep = torch.export.export(Model(), (x,), preserve_module_call_signature=("pair", "twice"))
    same = torch.equal(ep.module()(x), want)
    swapped = _swap_modules(ep, {"pair": Pair(), "twice": Double()})
    calls = [(n.target, [a.name for a in n.args]) for n in swapped.graph.nodes
             if n.op == "call_module" and not n.target.startswith("_")]
    try:
        got = swapped(x)
        result = "agrees" if torch.equal(got, want) else f"DIFFERS: {got}"
    except Exception as e:  # noqa: BLE001 - the bug's crash
        result = f"raises {type(e).__name__}: {str(e).splitlines()[0][:80]}"
    print("torch", torch.__version__, "| ep.module()", "agrees" if same else "DIFFERS",
          "| calls after the swap", calls, "| _swap_modules:", result)
    return 0 if same and result == "agrees" else 1


if __name__ == "__main__":
    sys.exit(main())
