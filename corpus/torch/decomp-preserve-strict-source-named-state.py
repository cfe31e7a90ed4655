"""ExportedProgram.run_decompositions() of a strict export whose preserved call takes the buffer
of a module with a non-identifier name (`0`, as nn.Sequential names its children): strict export
names the buffer's placeholder after dynamo's source expression (`b_getattr_l__self_____0___buf`,
from `getattr(L['self'], '0').buf`), the decomposition renames it after its FQN (`b_0_buf`), and
the preserved signature still names the old one: `SpecViolationError: Input
b_getattr_l__self_____0___buf does not exist in the graph.` torch 2.6; non-strict export names
it `b_0_buf` and decomposes. Found by flatcheck's torch campaign on torch 2.6 (seed 116, cases 87
and 88, programs emitted with --update-args and --update-inputs, paths
export.strict.decomp_preserve and decomp_preserve_some); docs/found-bugs.md 69. torch 2.14.1
names it `b_0_buf` and decomposes.
    python3 corpus/torch/decomp-preserve-strict-source-named-state.py   # exit 1 while present
"""
import sys

import torch

FIXED_IN = (2, 14)  # tests/torch/torch2_test.sh: 2.14.1 exits 0; 2.7 to 2.13 not run


class Inner(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("buf", torch.ones(2))

    def forward(self, x, buf):
        return torch.relu(buf + x)


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.add_module("0", Inner())

    def forward(self, x):
        inner = getattr(self, "0")
        return inner(x, inner.buf)


def main():
    ep = torch.export.export(Model(), (torch.ones(2),), strict=True,
                             preserve_module_call_signature=("0",))
    names = [s.arg.name for s in ep.graph_signature.input_specs if s.kind.name == "BUFFER"]
    try:
        dec = ep.run_decompositions()
    except Exception as e:  # noqa: BLE001 - the failure this repro shows
        print(f"torch {torch.__version__}: the buffer's placeholder is {names}; "
              f"run_decompositions raised {type(e).__name__}: {e}")
        return 1
    x = torch.tensor([1.0, -3.0])
    got, want = torch.export.unflatten(dec)(x), Model()(x)
    if not torch.equal(got, want):
        print(f"torch {torch.__version__}: the decomposed program gave {got.tolist()}, want "
              f"{want.tolist()}")
        return 1
    print(f"torch {torch.__version__}: the buffer's placeholder is {names}; it decomposes "
          "and agrees")
    return 0


if __name__ == "__main__":
    sys.exit(main())
