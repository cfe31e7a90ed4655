"""torch.fx.passes.reinplace makes an op in-place whose first argument broadcasts to a result
of the same number of elements but another shape: the graph raises (found while building
flatcheck's fx.reinplace path; torch 2.6 and 2.14.1).

Before making `b = op(a, ...)` in-place, the pass compares `a` with `b` by number of elements
and dtype only. `a` of shape [3] plus `y` of shape [1, 3] gives a [1, 3] result of three
elements, so `add(a, y)` becomes `add_(a, y)`, which cannot write a [1, 3] result into a [3]
tensor: RuntimeError: output with shape [3] doesn't match the broadcast shape [1, 3].
    python3 corpus/torch/reinplace-broadcast-self.py   # exit 1 while present
"""
import sys

import torch
from torch.fx.experimental.proxy_tensor import make_fx
from torch.fx.passes.reinplace import reinplace


class Model(torch.nn.Module):
    def forward(self, x, y):
        return x.relu() + y  # [3] + [1, 3] -> [1, 3]


def main():
    x, y = torch.tensor([1.0, -2.0, 3.0]), torch.tensor([[0.5, 0.25, 2.0]])
    want = Model()(x, y)
    gm = make_fx(torch.func.functionalize(Model()))(x, y)
    gm = reinplace(gm, x, y)  # the pass's documented input: make_fx(functionalize(f))
    try:
        got = gm(x, y)
        same = torch.equal(got, want)
        print("torch", torch.__version__, "agrees with eager" if same else
              f"differs from eager: {got.tolist()} vs {want.tolist()}")
    except RuntimeError as e:  # the bug: a crash
        same = False
        print("torch", torch.__version__, f"{type(e).__name__}: {e}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
