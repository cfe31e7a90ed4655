"""torch.export.unflatten with a preserved call signature: an argument the preserved module does
not read, computed by an unpreserved sibling that alone reads it, is taken for a buffer
mutation's intermediate value. On torch 2.14.1 the unflattened module then writes the value
into the input it was computed from, in place: a silent wrong result, and the caller's input
tensor changed (found by flatcheck's torch campaign, paths export.*.preserve_some, seed 99 case
728, where the value is a `cat`'s result and unflatten crashes instead; reduced by hand).

`prod` (not preserved) computes `a = x * 2.0` and returns it with `a + 1.0`; the root passes
`a` to `cons` (preserved), which ignores it. unflatten outlines `prod` with the values nodes
outside it read, and a signature is not a reader, so `prod` does not return `a`. Building
`cons`'s call, the root's frame finds `a` in no frame and hands it to `_IVals.read`, which
assumes a functionalized mutation: it reads `a`'s first argument (`x`) instead, and records
`a` to be written back: `x.copy_(a)` after `a` in `prod`'s graph.
    python3 corpus/torch/unflatten-preserve-unread-argument-read-as-mutation.py   # exit 1 while present
"""
import sys

import torch

# torch 2.6 keeps intermediate values in attributes and agrees (exit 0); 2.7 to 2.10 not run; 2.11
# and 2.14.1 have it
PRESENT_FROM = (2, 11)


class Prod(torch.nn.Module):
    def forward(self, x):
        a = x * 2.0
        return a, a + 1.0


class Cons(torch.nn.Module):
    def forward(self, a, y):
        return y * 3.0  # `a` unused


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.prod = Prod()
        self.cons = Cons()

    def forward(self, x):
        a, b = self.prod(x)
        return self.cons(a, b) + x


def main():
    bad = 0
    for strict in (False, True):
        want = Model()(torch.ones(2))
        ep = torch.export.export(Model(), (torch.ones(2),), strict=strict,
                                 preserve_module_call_signature=("cons",))
        x = torch.ones(2)
        try:
            got = torch.export.unflatten(ep)(x)
        except Exception as e:  # noqa: BLE001
            print("torch", torch.__version__, "strict" if strict else "non-strict",
                  "unflatten raises", type(e).__name__, str(e).splitlines()[0])
            bad = 1
            continue
        ok = torch.equal(got, want) and torch.equal(x, torch.ones(2))
        print("torch", torch.__version__, "strict" if strict else "non-strict", "unflatten",
              "agrees with eager" if ok else
              f"DIFFERS from eager: {got.tolist()} for {want.tolist()}, input now {x.tolist()}")
        bad |= not ok
    return int(bad)


if __name__ == "__main__":
    sys.exit(main())
