"""ExportedProgram.run_decompositions() of a program exported with a preserved call signature:
a call of the preserved module whose result nothing reads makes the decomposition raise
(found by flatcheck's torch campaign, path export.nonstrict.decomp_preserve, case-31-10;
reduced by hand).

torch.export keeps the call's nodes (the exported graph has `add` with no users), and the
preserved signature names its output. run_decompositions traces the program again, and that
trace drops dead code: `add` is gone, the signature still names it, and the decomposed
program fails its own verifier (SpecViolationError: "Output add does not exist in the
graph"). A preserved input that only dead code reads fails the same way ("Input ...").
    python3 corpus/torch/decomp-preserve-dead-value.py   # exit 1 while present
"""
import sys

import torch


class C(torch.nn.Module):
    def forward(self, x):
        return x + 1.0


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.c = C()

    def forward(self, x):
        self.c(x)  # a call whose result nothing reads
        return x * 2.0


x = torch.arange(4.0)
model = Model()
ep = torch.export.export(model, (x,), strict=False, preserve_module_call_signature=("c",))
try:
    got = torch.export.unflatten(ep.run_decompositions())(x)
except Exception as e:  # noqa: BLE001 - the bug's crash
    print("torch", torch.__version__, f"run_decompositions raises {type(e).__name__}:",
          str(e).splitlines()[0])
    sys.exit(1)
print("torch", torch.__version__, "decomposed and unflattened:", got.tolist())
sys.exit(0 if torch.equal(got, model(x)) else 1)
