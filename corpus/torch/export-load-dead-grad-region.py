"""torch.export.save / torch.export.load of a program with a `torch.no_grad()` block whose
result nothing reads: the load fails, `SpecViolationError: Node.meta wrap_with_set_grad_enabled
is missing val field.` Found by flatcheck's torch campaign with the generated branch op's value
computed under torch.no_grad() (--branch nograd), on the unflatten paths (stage "load", strict
and non-strict, torch 2.14.1: case 10 of seed 60); written by hand from the failing program.

export (strict or not) records the block as a higher-order op node, `wrap_with_set_grad_enabled`,
whose value is the empty tuple when none of the block's results is read; `ep.module()` runs.
The saved program's node comes back without a value, and the loaded program's verifier refuses
it. With the block's result used, save and load work. torch 2.6 and 2.14.1.
    python3 corpus/torch/export-load-dead-grad-region.py   # exit 1 while present
"""
import io
import sys

import torch


class Model(torch.nn.Module):
    def forward(self, x):
        y = x * 2.0
        with torch.no_grad():
            unused = y.clone()  # noqa: F841 - a result nothing reads
        return y + 1.0


x = torch.tensor([1.0, 2.0])
model = Model()
ep = torch.export.export(model, (x,), strict=False)
region = [(n.name, n.meta.get("val")) for n in ep.graph.nodes
          if "wrap_with_set_grad_enabled" in str(n.target)]
buffer = io.BytesIO()
torch.export.save(ep, buffer)
try:
    loaded = torch.export.load(io.BytesIO(buffer.getvalue()))
except Exception as e:  # noqa: BLE001 - the bug's crash
    print("torch", torch.__version__, "the region's node and value:", region,
          f"; torch.export.load raises {type(e).__name__}:", str(e).splitlines()[0])
    sys.exit(1)
got = loaded.module()(x)
print("torch", torch.__version__, "loaded:", got.tolist(), "eager:", model(x).tolist())
sys.exit(0 if torch.equal(got, model(x)) else 1)
