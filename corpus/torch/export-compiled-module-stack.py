"""torch.export.export (non-strict) records a wrong nn_module_stack for the nodes of
a module called from a submodule compiled in place (`Module.compile()`), when the model holds
any module under two names; torch.export.unflatten then builds the module tree from it and
computes a wrong result without an error (found by flatcheck's torch campaign, path
export.nonstrict.hooked with the hook kind `compile`; torch 2.14.1; torch 2.6's non-strict export
refuses a compiled module, "not supported at the moment"). The compile form of
docs/found-bugs.md 29.

Here `a` is compiled (`a.compile()`: its calls run torch.compile of its bound `_call_impl`) and
also held as `b`. With a module under two names, the non-strict tracer names submodules by
following attribute access from the root through its proxies; the compiled call runs `a`'s
forward with the module itself as `self`, not its proxy, so `self.a` inside it is named by the
bare attribute, `a`: the multiplication of `a.a` is recorded in module `a`, one level up, beside
`a`'s own addition. unflatten outlines `a` from those nodes and returns the product, not the
sum: 1 where eager gives 2. Without the second name, or without compile, the stack is right and
unflatten agrees. No library is involved: Module.compile is torch's own API. (The backend is
dynamo's eager one here only to need no C++ compiler; the default one gives the same.)
    python3 corpus/torch/export-compiled-module-stack.py   # exit 1 while present
"""
import sys

import torch

PRESENT_FROM = (2, 11)  # 2.6 refuses the export (exit 0); 2.7 to 2.11 not run


class Leaf(torch.nn.Module):
    def forward(self, x):
        return x * 3


class Mid(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = Leaf()

    def forward(self, x):
        return self.a(x) + 1


class Model(torch.nn.Module):
    def __init__(self, shared=True):
        super().__init__()
        self.a = Mid()
        if shared:
            self.b = self.a  # one module under two names

    def forward(self, x):
        return self.a(x) - 2


def main():
    x = torch.ones(2)
    want = Model()(x)
    model = Model()
    model.a.compile(backend="eager")
    try:
        ep = torch.export.export(model, (x,), strict=False)
    except RuntimeError as e:
        print("torch", torch.__version__, "non-strict export refuses the compiled module:", e)
        return 0
    stack = {n.name: [path for path, _ in n.meta["nn_module_stack"].values()]
             for n in ep.graph.nodes if n.op == "call_function"}
    got = torch.export.unflatten(ep)(x)
    print("torch", torch.__version__, "module stacks:", stack, "unflatten:", got.tolist(),
          "eager:", want.tolist())
    return 0 if torch.equal(got, want) else 1


if __name__ == "__main__":
    sys.exit(main())
