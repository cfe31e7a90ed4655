"""torch.export._swap._swap_modules, swapping two modules where the second is given a result of
the first that nothing outside the first reads (the second ignores that argument), builds a
graph whose call of the second module reads the first module's erased node: legalize_graph
raises `KeyError`. Found by flatcheck's torch campaign (seed 96 case 958, torch 2.14.1, paths
export.strict.swap_modules and export.nonstrict.swap_modules); written by hand.

_swap_modules maps each swapped module's results to its new call's outputs only for the fused
nodes read outside the module (fuse_as_graphmodule's outputs); node_name_map keeps the old node
for a signature output read only inside the module, and that node is erased with the module's
nodes. The next module's _construct_inputs looks its argument up by name and gets the erased
node. With each of the module's signature outputs mapped to its new call's output, the swap
agrees. torch 2.6 and 2.14.1.
    python3 corpus/torch/swap-modules-input-of-erased-node.py   # exit 1 while present
"""
import sys

import torch
from torch.export._swap import _swap_modules


class First(torch.nn.Module):
    def forward(self, x):
        h = x + 1.0
        return h * 2.0, h  # h is read only here, by the product


class Second(torch.nn.Module):
    def forward(self, h, y):  # h is not read
        return y * 3.0


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.first = First()
        self.second = Second()

    def forward(self, x):
        y, h = self.first(x)
        return self.second(h, y)  # not first's results in order (entry 47 is that shape)


def main():
    x = torch.tensor([1.0, -2.0, 3.0])
    want = Model()(x)
    ep = torch.export.export(Model(), (x,), preserve_module_call_signature=("first", "second"))
    same = torch.equal(ep.module()(x), want)
    try:
        got = _swap_modules(ep, {"first": First(), "second": Second()})(x)
        result = "agrees" if torch.equal(got, want) else f"DIFFERS: {got.tolist()}"
    except Exception as e:  # noqa: BLE001 - the bug's crash
        result = f"raises {type(e).__name__}: {str(e).splitlines()[0][:80]}"
    print("torch", torch.__version__, "| ep.module()", "agrees" if same else "DIFFERS",
          "| _swap_modules:", result)
    return 0 if same and result == "agrees" else 1


if __name__ == "__main__":
    sys.exit(main())
