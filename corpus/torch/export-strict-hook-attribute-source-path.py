"""torch.export.export with strict=True records the module path of a module that its parent's
forward reaches through an attribute holding the original forward, as accelerate's
add_hook_to_module installs it, as the source expression dynamo followed; torch.export.unflatten
then builds modules under those names and leaves the real one without a graph, with no error and
the right numbers (found by flatcheck's torch campaign, path export.strict.hooked with the hook
kind `partial`; torch 2.14.1; the form of docs/found-bugs.md 30 that does not raise).

Here `a`'s forward is replaced the way accelerate's add_hook_to_module does it: the original
bound forward kept as `a._old_forward`, and `a.forward` a functools.partial of a function that
takes the module and calls `module._old_forward`. Tracing it, dynamo reaches `a.a` through that
attribute, and strict export records the node of `a.a` under the path
`a._old_forward.__self__.a`. Each step of that path is an attribute that resolves, so unflatten
makes modules `a._old_forward`, `a._old_forward.__self__` and `a._old_forward.__self__.a`,
puts the multiplication there, and `a`'s graph calls it; the model's own `a.a` is left an empty
Module. The numbers agree, but a module a user swaps in at `a.a` (what unflatten's module tree
is for) is never called. The same wrapper put on the module's class records `a.a`.
    python3 corpus/torch/export-strict-hook-attribute-source-path.py   # exit 1 while present
"""
import functools
import sys

import torch

PRESENT_FROM = (2, 11)  # 2.6 records `a.a` (exit 0); 2.7 to 2.11 not run


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
    def __init__(self):
        super().__init__()
        self.a = Mid()

    def forward(self, x):
        return self.a(x) - 2


def add_hook(module):
    """The form of accelerate.hooks.add_hook_to_module (with a hook that changes nothing)."""
    module._old_forward = module.forward

    def new_forward(module, *args, **kwargs):
        return module._old_forward(*args, **kwargs)
    module.forward = functools.update_wrapper(functools.partial(new_forward, module),
                                              module._old_forward)


def main():
    x = torch.ones(2)
    model = Model()
    add_hook(model.a)
    ep = torch.export.export(model, (x,), strict=True)
    paths = [path for n in ep.graph.nodes if n.op == "call_function"
             for path, _ in n.meta["nn_module_stack"].values()]
    u = torch.export.unflatten(ep)
    got = u(x)
    names = [name for name, _ in u.named_modules()]
    extra = [name for name in names if name not in ("", "a", "a.a")]
    graphless = not hasattr(u.a.a, "graph")
    print("torch", torch.__version__, "module paths:", paths, "unflattened modules:", names,
          "a.a has a graph:", not graphless, "unflatten:", got.tolist(), "eager:",
          Model()(x).tolist())
    return 1 if extra or graphless or not torch.equal(got, Model()(x)) else 0


if __name__ == "__main__":
    sys.exit(main())
