"""torch.export of a model with a submodule named as an attribute of the modules export builds
(`graph`, `code`, `meta`, `ivals`, `adapted`, `graph_signature`, ...): `ep.module()` or
`torch.export.unflatten` fails (docs/found-bugs.md 91; crash, torch 2.6 and 2.14.1).

nn.Module.add_module refuses a name that is already an attribute of the module it adds to, so
`self.graph = Child()` is legal in a plain nn.Module (which has no `graph`) and the model runs
eagerly and exports. The modules export then builds have such attributes: `ep.module()` is a
torch.fx.GraphModule (`graph`, `code`, `meta`, ... of its own), and unflatten's
UnflattenedModule sets `graph`, `ivals`, `adapted`, `graph_signature`, `module_call_graph`, ...
before it adds the model's submodules. The child's state then has no place: `ep.module()`
raises `Node graph_w target graph.w references nonexistent attribute w of graph`, unflatten
`KeyError: "attribute 'graph' already exists"`. torch.fx.symbolic_trace, whose GraphModule
is the same class, fails alike for `graph`, `code` and `meta` (no export involved). A child
named `layer` (the control) agrees every way. Found by hand, probing names torch's own modules use after entry 90.
    python3 corpus/torch/export-child-named-as-module-attribute.py  # exit 1 if present
"""
import sys

import torch

NAMES = ("graph", "code", "meta", "ivals", "adapted", "graph_signature")
CONTROL = "layer"


class Child(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.full((3,), 2.0))

    def forward(self, x):
        return x * self.w + 1


class Model(torch.nn.Module):
    def __init__(self, name):
        super().__init__()
        self.child_name = name
        self.add_module(name, Child())

    def forward(self, x):
        return getattr(self, self.child_name)(x) * 3


X = torch.arange(3.0)
WAYS = {"ep.module()": lambda ep: ep.module(), "unflatten": torch.export.unflatten}


def outcome(name, strict, way):
    try:
        ep = torch.export.export(Model(name), (X,), strict=strict)
        got = WAYS[way](ep)(X)
    except Exception as e:  # noqa: BLE001 - the failure shown
        return f"{type(e).__name__}: {str(e).splitlines()[0][:90]}"
    return "agrees" if torch.equal(got, Model(name)(X)) else f"wrong: {got.tolist()}"


def traced(name):
    """torch.fx.symbolic_trace (no export): its GraphModule has the same attributes."""
    try:
        got = torch.fx.symbolic_trace(Model(name))(X)
    except Exception as e:  # noqa: BLE001 - the failure shown
        return f"{type(e).__name__}: {str(e).splitlines()[0][:90]}"
    return "agrees" if torch.equal(got, Model(name)(X)) else f"wrong: {got.tolist()}"


def main():
    print("torch", torch.__version__)
    failed = 0
    for name in NAMES + (CONTROL,):
        results = [(f"{'strict' if strict else 'non-strict':10} {way:12}",
                    outcome(name, strict, way)) for strict in (False, True) for way in WAYS]
        results.append((f"{'':10} {'fx trace':12}", traced(name)))
        for how, result in results:
            print(f"  {name:16} {how} {result}")
            if name == CONTROL and result != "agrees":
                print("  the control fails: the repro shows nothing here")
                return 2
            failed += result != "agrees"
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
