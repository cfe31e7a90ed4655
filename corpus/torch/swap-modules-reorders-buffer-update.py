"""torch.export._swap._swap_modules (the module swap of an exported program, experimental,
behind TorchRec's unlift_and_swap) sorts the graph of ep.module() with legalize_graph, a
topological sort that is not stable and sees data dependencies only. A buffer's in-place update
(`aten.copy_` of the buffer's get_attr, which ep.module() puts at the end of the graph) depends
on no read of the buffer, so the sort can run it before a read that came first: the read then
sees the new value — a silent wrong result, with any module swapped or none. Found by
flatcheck's torch campaign (torch 2.14.1, paths export.strict.swap_modules and
export.nonstrict.swap_modules); written by hand.

A topological sort that keeps each update after the reads of the buffer that came before it makes
the swap agree (torch's stable_topological_sort alone does not: the swap appends the module's call
at the graph's end, and the reads that depend on it move past the update). torch 2.6 and 2.14.1.
    python3 corpus/torch/swap-modules-reorders-buffer-update.py   # exit 1 while present
"""
import sys

import torch
from torch.export._swap import _swap_modules


class Inner(torch.nn.Module):
    def forward(self, x):
        return x * 2.0


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("b", torch.ones(3))
        self.inner = Inner()

    def forward(self, x):
        y = torch.relu(torch.relu(torch.relu(self.inner(x)))) + self.b  # reads b deep down
        self.b.copy_(x + 1.0)  # then updates it from x
        return y


def main():
    x = torch.tensor([1.0, -2.0, 3.0])
    m = Model()
    want = m(x)
    ep = torch.export.export(Model(), (x,), preserve_module_call_signature=("inner",))
    same = torch.equal(ep.module()(x), want)
    swapped = _swap_modules(ep, {"inner": Inner()})
    order = [n.name for n in swapped.graph.nodes if n.op == "call_function" and
             getattr(n.target, "__name__", "") in ("copy_.default", "add.Tensor")]
    got = swapped(x)
    ok = torch.equal(got, want) and torch.equal(swapped.b, m.b)
    print("torch", torch.__version__, "| ep.module()", "agrees" if same else "DIFFERS",
          "| order after the swap", order, "| _swap_modules:",
          "agrees" if ok else f"DIFFERS: {got.tolist()}, eager {want.tolist()}")
    return 0 if same and ok else 1


if __name__ == "__main__":
    sys.exit(main())
