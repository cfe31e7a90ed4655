"""torch.export.unflatten writes a debug line to the program's standard output, "Checking
mutability aten.add_.Tensor True", for each value a preserved module reads that another
module's in-place update made (torch 2.14.1, Debian sid's python3-torch 2.14.1+dfsg-1:
`_IVals.read` in torch/export/unflatten.py calls `print`). A library writing to stdout corrupts
the output of any program that unflattens: flatcheck's bridge, whose stdout is a stream of JSON
records, received such lines among them. torch 2.6 has no such print (exit 0). Found by
flatcheck's torch campaign (seed 139, the export.*.preserve, preserve_some, swap and
decomp_preserve paths, torch 2.14.1); written by hand from the shape those programs share: a
buffer updated in place by one preserved module and read by the next.

    python3 corpus/torch/unflatten-prints-mutability-check.py   # exit 1 while present
"""
import contextlib
import io
import sys

import torch

PRESENT_FROM = (2, 14)  # torch 2.6 prints nothing (exit 0); 2.7 to 2.13 not run


class Update(torch.nn.Module):
    def forward(self, b, x):
        b.add_(x)  # the root's buffer, updated in place through an argument
        return x + 1


class Read(torch.nn.Module):
    def forward(self, b, x):
        return b * x  # reads the updated buffer: an intermediate value of the update


class Root(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("buf", torch.zeros(2))
        self.n0 = Update()
        self.n1 = Read()

    def forward(self, x):
        return self.n1(self.buf, self.n0(self.buf, x))


def main():
    printed = []
    for strict in (False, True):
        ep = torch.export.export(Root(), (torch.ones(2),), strict=strict,
                                 preserve_module_call_signature=("n0", "n1"))
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            torch.export.unflatten(ep)
        if out.getvalue():
            printed.append(f"strict={strict}: {out.getvalue().strip()!r}")
    print("torch", torch.__version__, "|",
          " | ".join(printed) if printed else "unflatten wrote nothing to stdout")
    return 1 if printed else 0


if __name__ == "__main__":
    sys.exit(main())
