"""ExportedProgram.run_decompositions() of a program exported with a preserved call signature:
a preserved module that returns a piece of a split (split, chunk, unbind) either makes the
decomposition raise, or gives the module's signature the name of another node, and unflatten
of the decomposed program then fails (found by flatcheck's torch campaign, path
export.nonstrict.decomp_preserve, case-31-25; reduced by hand).

run_decompositions traces the program again and maps each name of ep.module_call_graph's
signatures to the new graph by each new node's provenance (node.meta["from_node"]). The
getitem nodes that unpack a multi-output op carry the op's provenance, not their own: a
signature that names `getitem_2` keeps that name. The new graph numbers its getitems afresh
(from `getitem`), so the old name is missing (SpecViolationError: "Output getitem_2 does not
exist in the graph") or names another piece (here the third for the second), and unflatten
then wires the preserved module to the wrong node.
    python3 corpus/torch/decomp-preserve-getitem-provenance.py   # exit 1 while present
"""
import sys

import torch


class Second(torch.nn.Module):  # returns a piece of a split as it is
    def forward(self, x):
        a, b = x.split(3, dim=1)
        return a * 2.0, b


class Middle(torch.nn.Module):  # returns the middle one of three pieces
    def forward(self, x):
        a, b, c = x.split(2, dim=1)
        return b, a + c


class Model(torch.nn.Module):
    def __init__(self, child):
        super().__init__()
        self.c = child

    def forward(self, x):
        return self.c(x)


x = torch.arange(12.0).reshape(2, 6)
present = False
for child in (Second, Middle):
    model = Model(child())
    want = model(x)
    ep = torch.export.export(model, (x,), strict=False, preserve_module_call_signature=("c",))
    names = [a.name for e in ep.module_call_graph if e.signature for a in e.signature.outputs]
    try:
        decomposed = ep.run_decompositions()
        got = torch.export.unflatten(decomposed)(x)
        ok = all(torch.equal(g, w) for g, w in zip(got, want))
        print(f"{child.__name__}: signature outputs {names}, decomposed "
              f"{[a.name for e in decomposed.module_call_graph if e.signature for a in e.signature.outputs]}:"
              f" unflatten {'agrees' if ok else 'DIFFERS'}")
    except Exception as e:  # noqa: BLE001 - the bug's crash
        ok = False
        print(f"{child.__name__}: signature outputs {names}: raises {type(e).__name__}: "
              f"{str(e).splitlines()[0][:120]}")
    present = present or not ok
print("torch", torch.__version__, "present" if present else "fixed")
sys.exit(1 if present else 0)
