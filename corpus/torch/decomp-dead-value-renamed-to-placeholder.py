"""ExportedProgram.run_decompositions() of a program exported with a preserved call signature:
the preserved module returns a value nothing reads, computed from its parameter, and the
decomposed program's signature names the parameter's placeholder as that output; unflatten
then fails (`RuntimeError: Could not find output node p_c_w`). Found by flatcheck's torch
campaign (paths export.strict.decomp_preserve and export.nonstrict.decomp_preserve, case 0 of
seed 62, torch 2.14.1); written by hand from the case's shape.

run_decompositions traces the program again; the new trace drops the dead `maximum`, and gives
the parameter's placeholder the provenance (`meta["from_node"]`) of `maximum`, the node that
read it. `_get_updated_module_call_graph` maps every old name to the new node whose provenance
names it, so the signature's dead output `maximum` becomes `p_c_w`. torch 2.6 keeps the old
name instead and its verifier refuses it (docs/found-bugs.md 19's SpecViolationError): this
repro exits 0 there.
    python3 corpus/torch/decomp-dead-value-renamed-to-placeholder.py   # exit 1 while present
"""
import sys

import torch

# torch 2.6 raises entry 19's error instead (exit 0); 2.7 to 2.10 not run; 2.11 and 2.14.1 have it
PRESENT_FROM = (2, 11)


class C(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.tensor([4.0]), requires_grad=False)

    def forward(self, x):
        return torch.maximum(x, self.w), torch.tanh(x)


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.c = C()

    def forward(self, x):
        _, t = self.c(x)  # the first output: read by nothing
        return t


x = torch.tensor([0.5])
model = Model()
ep = torch.export.export(model, (x,), strict=False, preserve_module_call_signature=("c",))
try:
    dec = ep.run_decompositions()
except Exception as e:  # noqa: BLE001 - docs/found-bugs.md 19, not this bug
    print("torch", torch.__version__, f"run_decompositions raises {type(e).__name__}:",
          str(e).splitlines()[0], "(the dead output's old name kept: not this bug)")
    sys.exit(0)
outputs = [o.name for e in dec.module_call_graph if e.fqn == "c" for o in e.signature.outputs]
placeholders = [n.name for n in dec.graph.nodes if n.op == "placeholder"]
provenance = {n.name: [h.name for h in n.meta.get("from_node", [])] for n in dec.graph.nodes
              if n.op == "placeholder"}
print("torch", torch.__version__, "c's outputs after run_decompositions:", outputs,
      "placeholders' provenance:", provenance)
try:
    got = torch.export.unflatten(dec)(x)
    print("unflattened:", got.tolist(), "eager:", model(x).tolist())
except Exception as e:  # noqa: BLE001 - the crash that follows
    print(f"unflatten raises {type(e).__name__}:", str(e).splitlines()[0])
sys.exit(1 if set(outputs) & set(placeholders) else 0)
