"""torch.export.unflatten of a model with a submodule whose name contains '@' (an nn.ModuleDict
key such as "a@1"): unflatten reads '@' as its own call-index separator, and the module runs
another module's graph or weights (docs/found-bugs.md 90; silent wrong result, torch 2.6 and
2.14.1).

nn.Module.add_module refuses '.' in a name, not '@'. torch.export.unflatten names the graphs
of a module's later calls `base@1`, `base@2`, ... and parses those names back everywhere: it
splits FQNs and nn_module_stack keys at '@' to find the call index, drops every FQN with an '@'
from its list of modules, and puts the call variants of `a` under `a@1`. A module the user named
`a@1` is taken for the second call of `a`. Here `layers.a` multiplies by 2 and `layers["a@1"]` by
5, each called once: strict export then unflatten gives 22 for eager's 52 (`a@1` ran with `a`'s
weight); with `layers.a`'s call signature preserved, non-strict and strict give 102 and 42.
Without the '@' (a key "a_1") all agree. Found by probing unflatten's name lookups by hand while
tracing entry 89; flatcheck's IR refuses '@' in module names (it names call variants so too), so
its generator does not make such a model.
    python3 corpus/torch/unflatten-module-name-with-call-index-sign.py  # exit 1 if present
"""
import sys

import torch


class Scale(torch.nn.Module):
    def __init__(self, w):
        super().__init__()
        self.w = torch.nn.Parameter(torch.tensor([w]))

    def forward(self, x):
        return x * self.w


class Model(torch.nn.Module):
    def __init__(self, key="a@1"):
        super().__init__()
        self.key = key
        self.layers = torch.nn.ModuleDict({"a": Scale(2.0), key: Scale(5.0)})

    def forward(self, x):
        return self.layers[self.key](x) * 10 + self.layers["a"](x)


X = torch.tensor([1.0])
WAYS = ((True, ()), (False, ("layers.a",)), (True, ("layers.a",)))


def unflattened(key, strict, preserve):
    ep = torch.export.export(Model(key), (X,), strict=strict,
                             preserve_module_call_signature=preserve)
    return torch.export.unflatten(ep)(X)


def main():
    print("torch", torch.__version__)
    want = Model()(X)
    print("  eager:", want.tolist())
    ok = True
    for strict, preserve in WAYS:
        got = unflattened("a@1", strict, preserve)
        print(f"  unflatten (strict={strict}, preserve={preserve}):", got.tolist())
        ok = ok and torch.equal(got, want)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
