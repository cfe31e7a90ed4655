"""torch.export.unflatten with a preserved call signature: a module that reads its preserved
child's buffer after the child updated it in place gets a module the root cannot call (found
by flatcheck's torch campaign, paths export.*.preserve_some, seed 99 case 536; reduced by hand).

`leaf` (preserved) updates its buffer in place, `self.buf.copy_(self.buf + x)`. Its caller
`inner` (not preserved) then reads `self.leaf.buf`. In export's graph that read is a use of the
`copy_` node, which `leaf`'s signature does not return. `inner`'s frame gives it a new
placeholder and asks its caller for it; up at the root, unflatten's mutation tracking maps the
update to the buffer itself, an argument that sinking the buffers into their modules removes from
the call again. Running the unflattened module raises `RuntimeError: Expected positional argument
for parameter x, but one was not passed in!`. torch 2.6 unflattens and agrees.
    python3 corpus/torch/unflatten-update-read-outside-preserved-module.py   # exit 1 while present
"""
import sys

import torch

# torch 2.6 unflattens and agrees (exit 0); 2.7 to 2.10 not run; 2.11 and 2.14.1 have it
PRESENT_FROM = (2, 11)


class Leaf(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("buf", torch.full((2,), 0.5))

    def forward(self, x):
        self.buf.copy_(self.buf + x)
        return x * 2.0


class Inner(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.leaf = Leaf()

    def forward(self, x):
        y = self.leaf(x)
        return y + self.leaf.buf.clone()  # the child's buffer as the child updated it


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = Inner()

    def forward(self, x):
        return self.inner(x) + x


def main():
    bad = 0
    for strict in (False, True):
        want = Model()(torch.ones(2))
        ep = torch.export.export(Model(), (torch.ones(2),), strict=strict,
                                 preserve_module_call_signature=("inner.leaf",))
        try:
            got = torch.export.unflatten(ep)(torch.ones(2))
        except Exception as e:  # noqa: BLE001
            print("torch", torch.__version__, "strict" if strict else "non-strict",
                  "unflattened module raises", type(e).__name__, str(e).splitlines()[0])
            bad = 1
            continue
        ok = torch.equal(got, want)
        print("torch", torch.__version__, "strict" if strict else "non-strict", "unflatten",
              "agrees with eager" if ok else f"DIFFERS from eager: {got.tolist()} for {want.tolist()}")
        bad |= not ok
    return int(bad)


if __name__ == "__main__":
    sys.exit(main())
