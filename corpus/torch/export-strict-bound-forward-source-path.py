"""torch.export.export with strict=True records the module path of a module that its parent's
forward reaches through a wrapper's closure as the source expression dynamo followed, not as
the module's name, and torch.export.unflatten then raises AttributeError ("`forward` is not an
nn.Module") (found by flatcheck's torch campaign, path export.strict.hooked; torch 2.14.1;
torch 2.6 records `a.a` and unflattens).

Here `a`'s forward is replaced by a wrapper bound to `a` that calls the original forward held
in its closure, as library hooks do. Tracing the wrapper, dynamo reaches `a.a` through that
closure, and strict export records the node of `a.a` under the path
`a.forward.__func__.__closure__[...].cell_contents.__self__.a`. unflatten takes the path as a
chain of attributes, reaches `a.forward`, and fails. No module under two names is needed
(docs/found-bugs.md 30; entry 29 is non-strict export's wrong path with one). The same
wrapper put on the module's class records `a.a`, and unflatten agrees.
    python3 corpus/torch/export-strict-bound-forward-source-path.py   # exit 1 while present
"""
import sys
from types import MethodType

import torch

# torch 2.6 records `a.a` (exit 0); 2.7 to 2.10 not run; 2.11 and 2.14.1 have it
PRESENT_FROM = (2, 11)


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


def hook(module):
    """Replaces `module`'s forward by a wrapper bound to it, the original in its closure."""
    original = module.forward
    module.forward = MethodType(lambda self, *args: original(*args), module)


def main():
    x = torch.ones(2)
    model = Model()
    hook(model.a)
    ep = torch.export.export(model, (x,), strict=True)
    paths = [path for n in ep.graph.nodes if n.op == "call_function"
             for path, _ in n.meta["nn_module_stack"].values()]
    try:
        got = torch.export.unflatten(ep)(x)
    except AttributeError as e:
        print("torch", torch.__version__, "module paths:", paths, "unflatten: AttributeError:", e)
        return 1
    print("torch", torch.__version__, "module paths:", paths, "unflatten:", got.tolist(),
          "eager:", Model()(x).tolist())
    return 0 if torch.equal(got, Model()(x)) else 1


if __name__ == "__main__":
    sys.exit(main())
