"""torch.export.export (non-strict) records a wrong nn_module_stack for the nodes of a module
called from a forward that was replaced by a wrapper bound to the module, when the model holds
any module under two names; torch.export.unflatten then builds the module tree from it and
computes a wrong result without an error (found by flatcheck's torch campaign, path pipeline,
case 364 of seed 55, where pipelining's split points install such wrappers; torch 2.14.1).
torch 2.6 records the same wrong stack, but its unflatten ignores module types and outlines
both nodes into `a`: the numbers agree there and `a.a` is left without a graph. (torch 2.6's
default export is strict, which records the right stack: the export here asks for non-strict.)

Here `a`'s forward is replaced as a library hook does (`a.forward = MethodType(wrapper, a)`,
the wrapper calling the original bound forward), and `a` is also held as `b`. With a module
under two names, the non-strict tracer (`_ModuleStackTracer`) names submodules by following
attribute access from the root through its proxies (`AttrProxy`); the wrapper's `self` is the
module itself, not its proxy, so `self.a` inside it is named by the bare attribute, `a`: the
multiplication of `a.a` is recorded in module `a` (type Leaf), one level up, beside `a`'s own
addition. unflatten outlines `a` from those nodes and returns the product, not the sum: 1
where eager gives 2. Without the second name, or without the wrapper, the stack is right and
unflatten agrees. Exit 1 when the recorded stack or the result is wrong.
    python3 corpus/torch/export-bound-forward-module-stack.py   # exit 1 while present
"""
import sys
from types import MethodType

import torch


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


def hooked(self, *args):
    return self._orig_forward(*args)


def wrap(model):
    """Replaces `a`'s forward by a wrapper bound to `a` (as hooks and split points do)."""
    model.a._orig_forward = model.a.forward
    model.a.forward = MethodType(hooked, model.a)
    return model


def main():
    x = torch.ones(2)
    want = Model()(x)
    ep = torch.export.export(wrap(Model()), (x,), strict=False)
    stack = {n.name: [path for path, _ in n.meta["nn_module_stack"].values()]
             for n in ep.graph.nodes if n.op == "call_function"}
    got = torch.export.unflatten(ep)(x)
    plain = torch.export.unflatten(torch.export.export(wrap(Model(shared=False)), (x,),
                                                       strict=False))(x)
    print("torch", torch.__version__, "eager:", want.tolist(), "unshared:", plain.tolist(),
          "shared:", got.tolist(), "module stacks:", stack)
    return 0 if torch.equal(want, got) and "a.a" in stack["mul"] else 1


if __name__ == "__main__":
    sys.exit(main())
