"""torch.export._swap._swap_modules sorts the graph of ep.module() with legalize_graph, a
topological sort that sees data dependencies only (docs/found-bugs.md 49). A user input updated
in place after the swapped module's call (`x.add_(...)`, which depends on no read of x) is run
before that call, which then reads the new value — a silent wrong result, in strict and
non-strict export alike; the model's outputs and the caller's inputs are right with ep.module().
Found by flatcheck's torch campaign with programs that update their inputs (torch_campaign.py
--update-inputs, seed 115, case 3, paths export.*.swap_modules, torch 2.14.1); written by hand
from the shrunk case. torch 2.6 and 2.14.1.
    python3 corpus/torch/swap-modules-reorders-input-update.py   # exit 1 while present
"""
import sys

import torch
from torch.export._swap import _swap_modules


class Layer(torch.nn.Module):
    def forward(self, x):
        return torch.matmul(x, x.transpose(0, 1))


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layer0 = Layer()

    def forward(self, x, y):
        out = self.layer0(x)  # reads x
        kept = y.clone()
        x.add_(kept.sum())  # then updates x (and y) in place
        y.add_(kept.sum())
        return kept, out


def inputs():
    return torch.tensor([[1.0, 2.0]]), torch.tensor([[3.0, 4.0]])


def main():
    a = inputs()
    want = Model()(*a)
    ok = True
    for strict in (False, True):
        ep = torch.export.export(Model(), inputs(), strict=strict,
                                 preserve_module_call_signature=("layer0",))
        b = inputs()
        module_ok = all(torch.equal(g, w) for g, w in zip(ep.module()(*b), want))
        c = inputs()
        got = _swap_modules(ep, {"layer0": Layer()})(*c)
        same = all(torch.equal(g, w) for g, w in zip(got, want)) and \
            all(torch.equal(g, w) for g, w in zip(c, a))
        ok = ok and module_ok and same
        print("torch", torch.__version__, "| strict" if strict else "| non-strict",
              "| ep.module()", "agrees" if module_ok else "DIFFERS", "| _swap_modules:",
              "agrees" if same else f"DIFFERS: layer0's result {got[1].tolist()}, eager "
              f"{want[1].tolist()} (it read x after its update)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
