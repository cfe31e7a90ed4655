"""torch.export.unflatten with a preserved call signature passes None for an argument of the
preserved module whose value only the module's unused result needs: the unflattened module runs,
but the module swapped in for it, as preserve_module_call_signature is for, gets None and fails
(found by flatcheck's swap paths, export.strict.swap and export.nonstrict.swap: 4 of the first
200 programs of seed 56 in each mode, torch 2.14.1; torch 2.6 too).

unflatten calls `_remove_effect_tokens(ep)`, which ends in `ep.graph.eliminate_dead_code()`.
`x - 1` has one reader in the exported graph, the module's `y * 2`, whose result the caller
drops; both are removed. unflatten then finds no node for the call's second argument and passes
None (`input_nodes.append(None)` in `_ModuleFrame`), where eager passes the tensor. (The same
dead-code elimination changes the ExportedProgram in place: corpus/torch/
unflatten-mutates-exported-program.py. Copying the program first would not fix this one.)
    python3 corpus/torch/unflatten-preserve-dead-input-none.py   # exit 1 while present
"""
import sys

import torch


class Leaf(torch.nn.Module):
    def forward(self, x, y):
        return x + 1, y * 2


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.leaf = Leaf()

    def forward(self, x):
        a, _ = self.leaf(x, x - 1)  # the second result is unused
        return a


def main():
    x = torch.ones(2)
    ep = torch.export.export(Model(), (x,), preserve_module_call_signature=("leaf",))
    unflattened = torch.export.unflatten(ep)
    seen = []
    unflattened.leaf = Leaf()  # the swap a preserved signature is for
    unflattened.leaf.register_forward_pre_hook(lambda module, args: seen.append(args))
    try:
        got = unflattened(x)
        outcome = "agrees" if torch.equal(got, Model()(x)) else f"differs: {got}"
    except Exception as e:  # noqa: BLE001 - the failure is what this reports
        outcome = f"raises {type(e).__name__}: {e}".splitlines()[0]
    args = ", ".join("None" if a is None else "a tensor" for a in seen[0]) if seen else "never"
    print("torch", torch.__version__, "| the swapped module is called with:", args,
          "(eager: a tensor, a tensor) | the swapped model", outcome)
    return 0 if outcome == "agrees" and seen and None not in seen[0] else 1


if __name__ == "__main__":  # tests/torch/bridge_units.py imports the model
    sys.exit(main())
