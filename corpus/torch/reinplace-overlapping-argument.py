"""torch.fx.passes.reinplace makes an op in-place when another of its arguments is a view of
its first argument: a silent wrong result, or a crash (found while building flatcheck's
fx.reinplace path; torch 2.6 and 2.14.1).

The pass turns `b = op(a, ...)` into `op_(a, ...)` when neither `a` nor an alias of it is used
after the node. It refuses the node when `a` is passed twice (`mul(a, a)`), but not when
another argument is a view of `a` (`a - a[:, :1]`, `a + a.t()`): the use of the view is at the
node itself, not after it. The in-place op then writes memory it still reads. Where the kernel
sees the overlap it refuses it (RuntimeError: some elements of the input tensor and the
written-to tensor refer to a single memory location); where it cannot (a strided view) it reads
elements it has already written: `a - a[:, :1]` subtracts each row's first element from the
first element itself first, and the rest of the row then subtracts 0.
    python3 corpus/torch/reinplace-overlapping-argument.py   # exit 1 while present
"""
import sys

import torch
from torch.fx.experimental.proxy_tensor import make_fx
from torch.fx.passes.reinplace import reinplace


class RelativeToFirst(torch.nn.Module):
    def forward(self, x):
        a = x.relu()  # an intermediate, not an input: the pass may write into it
        return a - a[:, :1]  # each row relative to its first element


class PlusTranspose(torch.nn.Module):
    def forward(self, x):
        a = x.relu()
        return a + a.t()


def main():
    x = torch.tensor([[1.0, 2.0, 3.0], [4.0, 6.0, 8.0], [5.0, 7.0, 9.0]])
    ok = True
    for model in (RelativeToFirst(), PlusTranspose()):
        want = model(x.clone())
        gm = make_fx(torch.func.functionalize(model))(x.clone())
        gm = reinplace(gm, x.clone())  # the pass's documented input: make_fx(functionalize(f))
        name = type(model).__name__
        try:
            got = gm(x.clone())
            same = torch.equal(got, want)
            print("torch", torch.__version__, f"{name}:",
                  "agrees with eager" if same else f"differs from eager: {got.tolist()} vs "
                                                   f"{want.tolist()}")
        except RuntimeError as e:  # the crash form
            same = False
            print("torch", torch.__version__, f"{name}: {type(e).__name__}: {e}")
        ok &= same
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
