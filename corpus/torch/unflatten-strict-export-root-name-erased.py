"""torch.export.export with strict=True wraps the model in a module under the attribute
`_export_root` and afterwards deletes every `_export_root` component from the module-stack
paths (and attribute targets) it records, not only its wrapper's: a child the model itself names
`_export_root` (a name `add_module` allows) disappears from its descendants' paths, so
`_export_root.layer0` is recorded as `layer0`. torch.export.unflatten then builds the
grandchild's graph under `layer0`, a name the model does not have, and leaves `_export_root` and
`_export_root.layer0` empty containers: the outputs are right, but swapping
`_export_root.layer0` (what unflatten is for) silently changes nothing (found by flatcheck's
torch campaign, the structure check of the unflatten paths, programs emitted with
--hostile-child-names; torch 2.14.1; torch 2.6 records `_export_root.layer0`; non-strict export
records it on both).

    python3 corpus/torch/unflatten-strict-export-root-name-erased.py   # exit 1 while present
"""
import contextlib
import sys

import torch

# torch 2.6 records the paths as the model names them (exit 0); 2.7 to 2.13 not run
PRESENT_FROM = (2, 14)


class Leaf(torch.nn.Module):
    def forward(self, x):
        return x * 2 + 1


class Triple(torch.nn.Module):
    def forward(self, x):
        return x * 3


class Mid(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layer0 = Leaf()

    def forward(self, x):
        return self.layer0(x) - 1


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.add_module("_export_root", Mid())

    def forward(self, x):
        return getattr(self, "_export_root")(x) * 2


@contextlib.contextmanager
def wrapper_component_only():
    """strict export deleting only its own wrapper's `_export_root` component (the first of
    torch's patterns that matches, once): the control."""
    try:
        import torch._dynamo.functional_export as export  # noqa: PLC0415 - torch 2.14.1's
    except ImportError:  # torch 2.6 has no such cleaning: nothing to change
        yield
        return
    original = export.clean_export_root_string

    def once(text):
        for pattern, replacement in export.EXPORT_ROOT_REPLACEMENTS:
            if pattern in text:
                return text.replace(pattern, replacement, 1)
        return text
    export.clean_export_root_string = once
    try:
        yield
    finally:
        export.clean_export_root_string = original


def swapped_run(x, context):
    """(module-stack paths, unflattened module names, the output with the grandchild swapped)."""
    with context():
        ep = torch.export.export(Model(), (x,), strict=True)
    paths = sorted({path for n in ep.graph.nodes if n.op == "call_function"
                    for path, _ in n.meta["nn_module_stack"].values()})
    u = torch.export.unflatten(ep)
    names = [name for name, _ in u.named_modules()]
    getattr(u, "_export_root").add_module("layer0", Triple())  # swapped, as unflatten's users do
    return paths, names, u(x)


def main():
    x = torch.full((2,), 2.0)
    paths, names, got = swapped_run(x, contextlib.nullcontext)
    swapped = Model()
    getattr(swapped, "_export_root").add_module("layer0", Triple())
    want = swapped(x)
    print("torch", torch.__version__, "module paths:", paths, "unflattened modules:", names,
          "with the grandchild swapped:", got.tolist(), "eager:", want.tolist())
    _, names, control = swapped_run(x, wrapper_component_only)
    print("control, only the wrapper's component deleted: unflattened modules:", names,
          "with the grandchild swapped:", control.tolist())
    return 0 if torch.equal(got, want) else 1


if __name__ == "__main__":
    sys.exit(main())
