"""ExportedProgram.run_decompositions() fails on a program whose preserved call signature
returns a buffer the module updated in place twice (`self.buf.copy_(x + 1);
self.buf.copy_(self.buf * 2); return self.buf, ...`): the signature names the second update's
node (`copy__1`), which the new trace, functional, no longer has. `SpecViolationError: Output
copy__1 does not exist in the graph` (non-strict export; torch 2.6 and 2.14.1). Returning a
value computed from the buffer (`self.buf + 0.0`) decomposes. (Found by flatcheck's
export.*.decomp_preserve paths with the bridge's --reads alias, where a buffer read is the
buffer itself: seed 94, cases 156, 2432, 2724, 2759, 2800; reduced by hand.)
    python3 corpus/torch/decomp-preserve-updated-value.py   # exit 1 while present
"""
import sys

import torch


class Child(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("buf", torch.ones(2))

    def forward(self, x):
        self.buf.copy_(x + 1)
        self.buf.copy_(self.buf * 2)
        return self.buf, x * 2


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.c = Child()

    def forward(self, x):
        a, b = self.c(x)
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
