"""torch.export.unflatten drops the shape guards of a program exported with dynamic shapes: the
unflattened module runs inputs that ep.module() refuses ("Guard failed"), and where the model's
code branches on a size, it silently runs the branch export traced for other sizes. Found by
flatcheck's dynamic paths (export.strict.dynamic, export.nonstrict.dynamic: 77 of 600 programs
of seed 59 in each mode on torch 2.14.1, their guards from torch.chunk, their numbers right);
this model, written by hand, shows what a dropped guard does where the code branches on a size.

Export keeps two kinds of condition on the symbolic sizes: range constraints (each symbol's
bounds) and the guards the trace took (here `x.size()[0] % 2 == 0`). ep.module() checks both
(its `_guards_fn`); UnflattenedModule.forward checks the range constraints only
(`_check_input_constraints_for_graph`), so a size within the ranges that fails a guard runs a
graph that was never valid for it. On torch 2.6 ep.module() checks no such guard either.
    python3 corpus/torch/unflatten-drops-shape-guards.py   # exit 1 while present
"""
import sys

import torch


class Block(torch.nn.Module):
    def forward(self, x):
        return x * 2 if x.shape[0] % 2 == 0 else x + 1


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.block = Block()

    def forward(self, x):
        return self.block(x)


def main():
    dims = ({0: torch.export.Dim.AUTO},)
    ep = torch.export.export(Model(), (torch.ones(4),), dynamic_shapes=dims)
    x = torch.full((5,), 3.0)  # odd: within the range constraints, not the guard
    want = Model()(x)
    try:
        module = "gives " + str(ep.module()(x).tolist())
    except Exception as e:  # noqa: BLE001 - refusing the input is right
        module = f"refuses it ({type(e).__name__}: {e})".splitlines()[0]
    got = torch.export.unflatten(ep)(x)
    print("torch", torch.__version__, "| ranges", dict(ep.range_constraints), "| eager",
          want.tolist(), "| ep.module()", module, "| unflattened", got.tolist())
    return 0 if torch.equal(got, want) else 1


if __name__ == "__main__":  # tests/torch/bridge_units.py imports the model
    sys.exit(main())
