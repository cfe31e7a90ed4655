"""torch.export.unflatten changes the ExportedProgram it is given: it removes dead code from
`ep.graph` in place. With preserve_module_call_signature, the signature of a preserved module
can name an output nothing reads; once unflatten has removed that node, `torch.export.save(ep)`
fails (found by flatcheck's torch probe of the preserve paths through save/load: 112 of the
first 150 programs of seed 21 could not be saved after unflatten; both export modes).

unflatten calls `_remove_effect_tokens(ep)`, documented as an in-place modification, which ends
in `ep.graph.eliminate_dead_code()` whether or not the program has effect tokens.
    python3 corpus/torch/unflatten-mutates-exported-program.py   # exit 1 while present
"""
import io
import sys

import torch


class Leaf(torch.nn.Module):
    def forward(self, x):
        return x + 1, x * 2


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.leaf = Leaf()

    def forward(self, x):
        return self.leaf(x)[0]  # the second output of the preserved call is unused


x = torch.ones(2)
ep = torch.export.export(Model(), (x,), preserve_module_call_signature=("leaf",))
before = str(ep.graph)
torch.export.unflatten(ep)
changed = str(ep.graph) != before
try:
    buffer = io.BytesIO()
    torch.export.save(ep, buffer)
    buffer.seek(0)
    torch.export.load(buffer)
    saved = "saves and loads"
except Exception as e:  # noqa: BLE001 - the failure is what this reports
    saved = f"cannot be saved: {type(e).__name__}: {e}"
print("torch", torch.__version__, "unflatten changed ep.graph:", changed, "| ep then", saved)
sys.exit(1 if changed or not saved.startswith("saves") else 0)
