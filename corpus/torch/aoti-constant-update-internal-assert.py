"""AOTInductor (`torch._inductor.aoti_compile_and_package`) of an exported program whose forward
updates a tensor constant in place: a module's plain tensor attribute (`self.k`, neither a
parameter nor a buffer), which torch.export accepts and lifts as a CONSTANT_TENSOR input, its
in-place update kept in the graph. AOTInductor fails with AOTAutograd's own assertion
(`aot_autograd expected to have an entirely functional graph`, an update from numbers alone)
or, where the update reads a traced value, functionalization's `INTERNAL ASSERT FAILED ...
please report a bug to PyTorch` (`mutating a non-functional tensor with a functional tensor`).
`ExportedProgram.run_decompositions()` refuses the same program in words: `Constant k is
mutated in the forward method. Pls register it as buffer` (torch 2.14.1; 2.6 raises the same
assertion there too). Registered as a buffer, the program compiles and agrees: the control
below. Found by flatcheck's torch campaign (emit-torch --step-counters --tensor-constants
--inplace-updates, every one of the first 8 programs of seed 223, paths aoti and aoti.dynamic,
torch 2.6 and 2.14.1); written by hand from the cause.
    python3 corpus/torch/aoti-constant-update-internal-assert.py   # exit 1 while present
"""
import os
import sys
import tempfile

import torch


class Model(torch.nn.Module):
    def __init__(self, as_buffer, traced_update):
        super().__init__()
        k = torch.zeros(2)
        if as_buffer:
            self.register_buffer("k", k)
        else:
            self.k = k  # a plain tensor attribute: torch.export lifts it as a constant
        self.traced_update = traced_update

    def forward(self, x):
        if self.traced_update:
            self.k.add_(x)  # an update from a traced value
        else:
            self.k.add_(1.0)  # an update from numbers alone
        return x * 2.0 + self.k


def compiled(as_buffer, traced_update):
    """(the package's results of two calls, eager's) or the error AOTInductor raises."""
    x = torch.tensor([0.5, -1.0])
    ep = torch.export.export(Model(as_buffer, traced_update), (x,), strict=False)
    eager = Model(as_buffer, traced_update)
    want = [eager(x), eager(x)]
    folder = tempfile.mkdtemp()
    try:
        path = torch._inductor.aoti_compile_and_package(
            ep, package_path=os.path.join(folder, "model.pt2"),
            inductor_configs={"always_keep_tensor_constants": True})  # (2.6 inlines k else)
    except Exception as e:  # noqa: BLE001 - the failure this repro shows
        return f"{type(e).__name__}: {str(e).splitlines()[0][:160]}"
    runner = torch._inductor.aoti_load_package(path)
    return [runner(x), runner(x)], want


print("torch", torch.__version__)
got = compiled(as_buffer=True, traced_update=True)
if isinstance(got, str):
    print("control (k a buffer) fails too, so this repro shows nothing here:", got)
    sys.exit(77)
print("control (k a buffer): compiles; results agree with eager:",
      all(torch.equal(g, w) for g, w in zip(*got)))
failed = False
for traced_update in (False, True):
    got = compiled(as_buffer=False, traced_update=traced_update)
    what = "k.add_(x)" if traced_update else "k.add_(1.0)"
    if isinstance(got, str):
        print(f"k a constant, {what}: aoti_compile_and_package raises {got}")
        failed = True
    else:
        print(f"k a constant, {what}: compiles")
sys.exit(1 if failed else 0)
