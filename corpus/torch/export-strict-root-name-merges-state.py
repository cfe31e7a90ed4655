"""torch.export.export with strict=True wraps the model in a module under the attribute
`_export_root` and afterwards deletes every `_export_root` component from the FQNs it records,
not only its wrapper's (the cause of docs/found-bugs.md 104). Below a child the model itself
names `_export_root`, a parameter's or buffer's FQN then becomes another's:
`n._export_root.w` becomes `n.w`, the parameter of `n` itself. Export lifts the two as one, and
ep.module() reads (and updates) `n.w` where the model reads `n._export_root.w`: a silent wrong
result, and the exported state lacks `n._export_root.w` (found by flatcheck's torch campaign,
seed 190 case 144, programs emitted with --hostile-child-names, on the path
export.strict.module; torch 2.14.1; torch 2.6 and non-strict export give eager's numbers).

    python3 corpus/torch/export-strict-root-name-merges-state.py   # exit 1 while present
"""
import contextlib
import sys

import torch

# torch 2.6 lifts both parameters (exit 0); 2.7 to 2.13 not run
PRESENT_FROM = (2, 14)


class Inner(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.full((2,), 10.0))
        self.register_buffer("count", torch.zeros(2))

    def forward(self, x):
        self.count.add_(1.0)
        return x + self.w + self.count


class Mid(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.full((2,), 2.0))
        self.register_buffer("count", torch.zeros(2))
        self.add_module("_export_root", Inner())

    def forward(self, x):
        return getattr(self, "_export_root")(x) * self.w + self.count


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.n = Mid()

    def forward(self, x):
        return self.n(x) - 1


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


def exported_run(x, context):
    """(the lifted parameters and buffers, ep.module()'s output, its state after the call)."""
    with context():
        ep = torch.export.export(Model(), (x,), strict=True)
    m = ep.module()
    got = m(x)
    lifted = sorted(ep.graph_signature.parameters) + sorted(ep.graph_signature.buffers)
    return lifted, got, {k: v.tolist() for k, v in m.state_dict().items()}


def main():
    x = torch.zeros(2)
    model = Model()
    want = model(x)
    state = {k: v.tolist() for k, v in model.state_dict().items()}
    lifted, got, got_state = exported_run(x, contextlib.nullcontext)
    print("torch", torch.__version__, "lifted:", lifted, "ep.module():", got.tolist(),
          "eager:", want.tolist())
    print("state after the call:", got_state, "eager's:", state)
    lifted, control, _ = exported_run(x, wrapper_component_only)
    print("control, only the wrapper's component deleted: lifted:", lifted, "ep.module():",
          control.tolist())
    return 0 if torch.equal(got, want) and got_state == state else 1


if __name__ == "__main__":
    sys.exit(main())
