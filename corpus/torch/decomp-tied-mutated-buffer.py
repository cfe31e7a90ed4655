"""ExportedProgram.run_decompositions() of a non-strict program that updates a buffer in place
whose tensor is registered under a second name: torch.export exports it, and the
decomposition raises (found by flatcheck's torch campaign, path export.nonstrict.decomp,
case-31-20; reduced by hand). Known upstream: pytorch/pytorch#166572 (open), which reports the
torch 2.6 message ("Encountered duplicated inputs that are mutated in the graph you are trying
to export"); torch 2.14.1 raises an AssertionError ("expected compiled_fn to be GraphModule")
instead. Strict export keeps one name per tensor and decomposes.
    python3 corpus/torch/decomp-tied-mutated-buffer.py   # exit 1 while present
"""
import sys

import torch


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        tensor = torch.zeros(3)
        self.register_buffer("a", tensor)
        self.register_buffer("b", tensor)  # the same tensor, a second name

    def forward(self, x):
        self.a.add_(x)
        return x + self.b


x = torch.ones(3)
ep = torch.export.export(Model(), (x,), strict=False)
try:
    ep.run_decompositions()
except Exception as e:  # noqa: BLE001 - the bug's crash
    print("torch", torch.__version__, f"run_decompositions raises {type(e).__name__}:",
          str(e).strip().splitlines()[0][:120])
    sys.exit(1)
print("torch", torch.__version__, "run_decompositions succeeds")
sys.exit(0)
