"""A preserved call signature whose argument is a user input named after a Python builtin
(`float`), or named as torch.fx renames one (`float_1` beside `float`): the call is rebuilt with
another input, or with None (docs/found-bugs.md 89; silent wrong result from
torch.export._swap._swap_modules, a crash from a module swapped into torch.export.unflatten's
result; torch 2.6 and 2.14.1).

torch.export names a user input's placeholder after the forward's parameter, as it is: `float`
and `float_1`. A preserved call signature names its arguments by those placeholder names. But
unflatten works on a deep copy of the graph and _swap_modules on ep.module()'s, and torch.fx's
namespace refuses a builtin's name in the copy: `float` becomes `float_1`, and the input
`float_1` becomes `float_2`. Both then look the signature's argument `float_1` up by name in
the copy and find the input `float`. _swap_modules gives the swapped child the wrong input
(eager 21, swapped 3). unflatten passes the wrong input in the preserved call's signature slot;
its own child graph reads the right one through a placeholder it prepends to the call's
arguments, so the unflattened module agrees, and a module swapped in for the child, as
preserved signatures are meant for, is called with one argument too many. Inputs named
otherwise agree. (ep.module() of this model is wrong too, for another reason: its code reads
`float_1 = float` then `float_2 = float_1`, docs/found-bugs.md 88; _swap_modules' graph names
its new placeholders otherwise and has no such chain: its wrong value is the lookup's.)
Found by flatcheck's bridge (paths export.*.swap) on programs emitted with emit-torch
--hostile-names.
    python3 corpus/torch/export-signature-input-renamed-by-graph-copy.py  # exit 1 if present
"""
import sys

import torch


class Child(torch.nn.Module):
    def forward(self, x):
        return x * 2


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.c = Child()

    def forward(self, float, float_1):  # noqa: A002 - the builtin's name is the point
        return self.c(float_1) + float


INPUTS = (torch.tensor([1.0]), torch.tensor([10.0]))


def export():
    return torch.export.export(Model(), INPUTS, preserve_module_call_signature=("c",))


def main():
    from torch.export._swap import _swap_modules

    print("torch", torch.__version__)
    want = Model()(*INPUTS)
    print("  eager:", want.tolist())
    ok = True
    swapped = _swap_modules(export(), {"c": Child()})(*INPUTS)
    print("  _swap_modules with c swapped:", swapped.tolist())
    ok = ok and torch.equal(swapped, want)
    unflattened = torch.export.unflatten(export())
    unflattened.c = Child()
    try:
        got = unflattened(*INPUTS)
        print("  unflatten with c swapped:", got.tolist())
        ok = ok and torch.equal(got, want)
    except TypeError as e:
        print("  unflatten with c swapped:", f"{type(e).__name__}: {str(e).splitlines()[0]}")
        ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
