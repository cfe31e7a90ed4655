"""torch.export._swap._swap_modules (the module swap of an exported program, experimental,
behind TorchRec's unlift_and_swap) calls a swapped module with None for each argument the
preserved signature records as a constant (a Python float, int or bool the caller passes): the
swapped module raises (a TypeError: `x * None`), or, for a flag it tests, silently takes the
other branch. Found by flatcheck's torch campaign (seed 72, torch 2.14.1, paths
export.strict.swap_modules and export.nonstrict.swap_modules); written by hand.

_construct_inputs builds the call's arguments from the signature's inputs: a ConstantArgument
whose value is None is passed as None, and so is every other input whose name is not a node of
the graph, and a constant's name is "". Passing each ConstantArgument's value makes the swap
agree. torch 2.6 and 2.14.1.
    python3 corpus/torch/swap-modules-constant-argument-none.py   # exit 1 while present
"""
import sys

import torch
from torch.export._swap import _swap_modules


class Scale(torch.nn.Module):
    def forward(self, x, scale):
        return x * scale


class Gate(torch.nn.Module):
    def forward(self, x, flag):
        return torch.relu(x) if flag else torch.neg(x)


def model(child, constant):
    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = child()

        def forward(self, x):
            return self.inner(x, constant)
    return Model()


def swap(child, constant, x):
    """(ep.module() agrees, what the swap gives), the call's constant argument `constant`."""
    want = model(child, constant)(x)
    ep = torch.export.export(model(child, constant), (x,),
                             preserve_module_call_signature=("inner",))
    same = torch.equal(ep.module()(x), want)
    try:
        got = _swap_modules(ep, {"inner": child()})(x)
        result = "agrees" if torch.equal(got, want) else \
            f"DIFFERS: {got.tolist()}, eager {want.tolist()}"
    except Exception as e:  # noqa: BLE001 - the bug's crash
        result = f"raises {type(e).__name__}: {str(e).splitlines()[0][:70]}"
    return same, result


def main():
    x = torch.tensor([1.0, -2.0, 3.0])
    results = [swap(Scale, 2.0, x), swap(Gate, True, x)]
    print("torch", torch.__version__, "| ep.module()",
          "agrees" if all(r[0] for r in results) else "DIFFERS",
          "| _swap_modules, inner(x, 2.0):", results[0][1], "| inner(x, True):", results[1][1])
    return 0 if all(r == (True, "agrees") for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
