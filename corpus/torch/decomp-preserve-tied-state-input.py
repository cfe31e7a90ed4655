"""ExportedProgram.run_decompositions() of a strict export whose preserved call signature takes a
buffer registered under two names (a module added under two names) fails verification:
SpecViolationError: Input b_c_buf does not exist in the graph (found by flatcheck's torch
campaign on torch 2.14.1, programs emitted with `emit-torch --update-args`: path
export.strict.decomp_preserve_some, case-107-7; reduced by hand).

Strict export names the buffer's placeholder after its first name (`b_c_buf`) but records its
last name as the target (`target='d.buf'`): torch/export/_trace.py's _get_param_buffer_mapping
keeps the first name of a parameter ("to guarantee parity of original and traced module") and
the last of a buffer. run_decompositions names the new placeholder after the target
(`b_d_buf`), while the preserved signature of `c` still names `b_c_buf`. With the target set to
`c.buf` before run_decompositions it succeeds and the unflattened module agrees with eager.
Non-strict export names and targets the buffer alike and decomposes; so does a program that does
not preserve `c`. On torch 2.6 a tied parameter fails the same way (`p_c_w`); 2.14.1 keeps a
parameter's first name.
    python3 corpus/torch/decomp-preserve-tied-state-input.py   # exit 1 while present
"""
import sys

import torch


class Inner(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("buf", torch.zeros(2))

    def forward(self, x, buf):
        return torch.relu(buf + x)


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        inner = Inner()
        self.add_module("c", inner)
        self.add_module("d", inner)  # the same module, a second name: its buffer has two

    def forward(self, x):
        return self.c(x, self.c.buf)  # the buffer itself is an argument of the preserved call


x = torch.ones(2)
ep = torch.export.export(Model(), (x,), strict=True, preserve_module_call_signature=("c",))
spec = ep.graph_signature.input_specs[0]
print("torch", torch.__version__, f"placeholder {spec.arg.name}, target {spec.target!r}")
try:
    ep.run_decompositions()
except Exception as e:  # noqa: BLE001 - the bug's crash
    print(f"run_decompositions raises {type(e).__name__}:", str(e).strip().splitlines()[0][:120])
    sys.exit(1)
print("run_decompositions succeeds")
sys.exit(0)
