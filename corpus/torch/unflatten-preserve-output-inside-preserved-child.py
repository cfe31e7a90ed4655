"""torch.export.unflatten fails on a program whose preserved module returns its preserved
child's buffer as the child updated it: `c` calls `self.g(x)`, where `g` does
`self.buf.copy_(x + 1)` and returns `x * 2`, then returns `self.g.buf, y`. Exported with the
call signatures of both `c` and `c.g` preserved, the value `c` returns is `g`'s in-place update
(`copy_`), which `g`'s signature does not return, so `c`'s graph, which holds `g` as one call,
has no node for it: `RuntimeError: Could not find output node copy_` (strict and non-strict,
one call or two; torch 2.6 and 2.14.1). Preserving `c` alone unflattens and agrees. (Found by
flatcheck's export.*.preserve paths with the bridge's --reads alias, where a buffer read is
the buffer itself: seed 95, cases 442 and 502; reduced by hand.)
    python3 corpus/torch/unflatten-preserve-output-inside-preserved-child.py   # exit 1 while present
"""
import sys

import torch


class G(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("buf", torch.ones(2))

    def forward(self, x):
        self.buf.copy_(x + 1)
        return x * 2


class C(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.g = G()

    def forward(self, x):
        y = self.g(x)
        return self.g.buf, y


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.c = C()

    def forward(self, x):
        a, b = self.c(x)
        return a + b


def main():
    x = torch.ones(2)
    ep = torch.export.export(Model(), (x,), strict=False,
                             preserve_module_call_signature=("c", "c.g"))
    try:
        u = torch.export.unflatten(ep)
    except Exception as e:  # noqa: BLE001 - the class's RuntimeError
        print("torch", torch.__version__, "| unflatten raises", type(e).__name__ + ":",
              str(e).split(". Graph")[0])
        sys.exit(1)
    same = torch.equal(u(x), Model()(x))
    print("torch", torch.__version__, "| unflattens; results", "agree" if same else "differ")
    sys.exit(0 if same else 1)


if __name__ == "__main__":
    main()
