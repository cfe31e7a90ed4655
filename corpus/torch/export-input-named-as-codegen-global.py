"""torch.export names a user input's placeholder after the forward's parameter even when the name
is a global torch.fx's generated code reads (pytree, fx_pytree, torch): the exported module's
code then asks the tensor for the module's functions (docs/found-bugs.md 87; crash, torch 2.6
and 2.14.1).

ep.module()'s code begins `pytree, = fx_pytree.tree_flatten_spec(([pytree], {}), self._in_spec)`
and ends `return pytree.tree_unflatten((add,), self._out_spec)`: torch.fx's namespace would
have renamed a placeholder so named (symbolic_trace calls it pytree_1), but export's placeholder
naming sets the user's name. A parameter named fx_pytree breaks the first line, one named
torch every op. Found by flatcheck's bridge (export, partition and pipeline paths) on programs
emitted with emit-torch --hostile-names.
    python3 corpus/torch/export-input-named-as-codegen-global.py   # exit 1 while present
"""
import sys

import torch

X = torch.tensor([1.0, -2.0, 3.0])


def model(name):
    """A module whose forward's one parameter is called `name`."""
    scope = {}
    exec(f"def forward(self, {name}):\n    return ({name} * 2.0).relu() + 1.0\n", scope)
    return type("Model", (torch.nn.Module,), {"forward": scope["forward"]})()


def main():
    print("torch", torch.__version__)
    failed = 0
    for name in ("x", "pytree", "fx_pytree", "torch"):
        m = model(name)
        try:
            got = torch.export.export(m, (X,)).module()(X)
            result = "agrees" if torch.equal(got, m(X)) else "DIFFERS"
        except Exception as e:  # noqa: BLE001 - the failure shown
            result = f"{type(e).__name__}: {e}"
        failed += result != "agrees"
        print(f"  input named {name!r}: {result}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
