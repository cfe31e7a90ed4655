"""ExportedProgram.run_decompositions() fails on a program whose preserved call returns a view
of its own buffer (`return self.buf[:1], ...`) that the caller then updates in place
(`self.c.buf.add_(1)`): in eager the view sees the update, so the functional trace computes
the value the caller reads again after the update, and the slice the signature names
(`slice_1`) is no longer in the graph: `SpecViolationError: Output slice_1 does not exist in
the graph` (strict and non-strict export; torch 2.6 and 2.14.1). Without the update, or with
the child returning `self.buf[:1] + 0.0`, it decomposes. A chunk's piece fails the same way.
(Found by flatcheck's export.*.decomp_preserve paths with the bridge's --reads alias, where a
buffer read is the buffer itself: seed 94, case 1203, shrunk to 12 nodes; reduced by hand.)
    python3 corpus/torch/decomp-preserve-view-of-updated-state.py   # exit 1 while present
"""
import sys

import torch


class Child(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("buf", torch.ones(2))

    def forward(self, x):
        return self.buf[:1], x * 2


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.c = Child()

    def forward(self, x):
        a, b = self.c(x)
        self.c.buf.add_(1)
        return a + b


def main():
    x = torch.ones(2)
    ep = torch.export.export(Model(), (x,), strict=False, preserve_module_call_signature=("c",))
    try:
        dec = ep.run_decompositions()
    except Exception as e:  # noqa: BLE001 - the verifier's SpecViolationError
        print("torch", torch.__version__, "| run_decompositions raises", type(e).__name__ + ":",
              str(e).split("\n")[0])
        sys.exit(1)
    got, want = torch.export.unflatten(dec)(x), Model()(x)
    print("torch", torch.__version__, "| decomposes; results", "agree" if torch.equal(got, want)
          else "differ")
    sys.exit(0 if torch.equal(got, want) else 1)


if __name__ == "__main__":
    main()
