"""torch.export.export with strict=True records the module path of a child whose name is no
identifier (`0`, as `add_module("0", m)` or a GraphModule of a Sequential names it) as the
source expression dynamo followed, `getattr(L['self'], '0')`, and torch.export.unflatten makes
the child's module under that text: the model's own name `0` is left an empty nn.Module, so
the unflattened module's outputs are right but swapping the child (what unflatten is for)
silently changes nothing, and the child under its name cannot be called (found by flatcheck's
torch campaign, the structure check of the unflatten paths; torch 2.14.1; torch 2.6 records
`0` and unflattens it as the model holds it; non-strict export records `0` on both). The
control reads the paths back as FQNs after torch's normalization (`_normalize_nn_module_stack`,
as 2.6 read them), and the swap takes.

    python3 corpus/torch/unflatten-strict-source-path-module.py   # exit 1 while present
"""
import contextlib
import re
import sys

import torch
import torch.export._trace

# torch 2.6 records `0` (exit 0); 2.7 to 2.13 not run; 2.14.1 has it
PRESENT_FROM = (2, 14)


class Leaf(torch.nn.Module):
    def forward(self, x):
        return x * 2 + 1


class Triple(torch.nn.Module):
    def forward(self, x):
        return x * 3


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.add_module("0", Leaf())

    def forward(self, x):
        return getattr(self, "0")(x) - 1


def read_back(path):
    """`getattr(L['self'], '0')` -> `0` (what torch 2.6's normalization did, by evaluating it)."""
    m = re.fullmatch(r"getattr\((.+), '([^']+)'\)", path)
    if not m:
        return path[len("L['self'].") if path.startswith("L['self'].") else 0:]
    base = "" if m.group(1) == "L['self']" else read_back(m.group(1))
    return f"{base}.{m.group(2)}" if base else m.group(2)


@contextlib.contextmanager
def paths_read_back():
    """strict export with each module-stack path read back as an FQN after torch normalized it:
    the control (the unflattened child under `0`, swapped as the model's)."""
    trace = torch.export._trace
    original = trace._normalize_nn_module_stack

    def normalize(gm, root_cls):
        original(gm, root_cls)
        for node in (n for g in gm.modules() if isinstance(g, torch.fx.GraphModule)
                     for n in g.graph.nodes):
            stack = node.meta.get("nn_module_stack") or {}
            for key, (path, kind) in list(stack.items()):
                if path.startswith("getattr("):
                    stack[key] = (read_back(path), kind)
    trace._normalize_nn_module_stack = normalize
    try:
        yield
    finally:
        trace._normalize_nn_module_stack = original


def swapped_run(x, context):
    """(module-stack paths, unflattened module names, the output with the child swapped)."""
    with context():
        ep = torch.export.export(Model(), (x,), strict=True)
    paths = sorted({path for n in ep.graph.nodes if n.op == "call_function"
                    for path, _ in n.meta["nn_module_stack"].values()})
    u = torch.export.unflatten(ep)
    names = [name for name, _ in u.named_modules()]
    u.add_module("0", Triple())  # the child swapped, as unflatten's users do
    return paths, names, u(x)


def main():
    x = torch.full((2,), 2.0)
    paths, names, got = swapped_run(x, contextlib.nullcontext)
    swapped = Model()
    swapped.add_module("0", Triple())
    want = swapped(x)
    print("torch", torch.__version__, "module paths:", paths, "unflattened modules:", names,
          "with the child swapped:", got.tolist(), "eager:", want.tolist())
    _, names, control = swapped_run(x, paths_read_back)
    print("control, the paths read back as FQNs: unflattened modules:", names,
          "with the child swapped:", control.tolist())
    return 0 if torch.equal(got, want) else 1


if __name__ == "__main__":
    sys.exit(main())
