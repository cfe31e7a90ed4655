"""torch.export.unflatten fails on a module whose call signature is preserved when the module
returns one of its own buffers or parameters as it is (not computed on): `return self.buf, x
* 2`. The signature's output names the graph's lifted state input (`b_c_buf`), which the
module's own graph holds no node for, and unflatten raises `RuntimeError: Could not find
output node b_c_buf` (non-strict export: torch 2.6 and 2.14.1; strict: 2.14.1), whether the caller
uses the tensor or not; a module returning `self.buf * 1.0` unflattens. Modules that hand out a buffer or
weight (a mask, a positional table, a tied embedding's weight) are this shape. (Found by
flatcheck with the bridge's --reads alias, where a buffer read is the buffer itself: seed 93,
case 1096, whose module returned its child's buffer; reduced by hand.)
    python3 corpus/torch/unflatten-preserve-returned-state.py   # exit 1 while present
"""
import sys

import torch


class Child(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("buf", torch.ones(2))

    def forward(self, x):
        return self.buf, x * 2


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.c = Child()

    def forward(self, x):
        return self.c(x)


def main():
    x = torch.ones(2)
    ep = torch.export.export(Model(), (x,), strict=False, preserve_module_call_signature=("c",))
    try:
        got = torch.export.unflatten(ep)(x)
    except RuntimeError as e:
        print("torch", torch.__version__, "| unflatten raises RuntimeError:",
              str(e).split(". Graph:")[0])
        sys.exit(1)
    want = Model()(x)
    same = all(torch.equal(a, b) for a, b in zip(got, want))
    print("torch", torch.__version__, "| unflatten succeeds; results", "agree" if same else "differ")
    sys.exit(0 if same else 1)


if __name__ == "__main__":
    main()
