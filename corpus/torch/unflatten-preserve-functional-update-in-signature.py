"""torch.export.unflatten of a decomposed program: a preserved call signature that returns or takes
a buffer's new value loses the value (found by flatcheck's torch campaign, path
export.strict.decomp_preserve, seed 95 case 838; reduced by hand).

After `run_decompositions()` an in-place update is functional: `self.buf.add_(x)` becomes
`add = buf + x`, and the graph returns `add` as the buffer's new value. unflatten turns the
mutation back into `copy_(buf, add)` and moves every reader of `add` to that `copy_`
(`_inplace_buffer_and_input_mutations`; `_inplace_buffer_mutations` on 2.6). A preserved call
signature still names `add`:
- returned: `block` (preserved) returns what `counter` gives, `counter` doing
  `self.buf.add_(x); return self.buf` (a running sum or cache handed back). `counter`'s outlined
  graph returns the `copy_`, and `block`'s graph has no node for `add`: `RuntimeError: Could not
  find output node add`. torch 2.6 and 2.14.1, strict and non-strict alike.
- taken: the root updates its buffer and passes the new value to the preserved `head`. `head`'s
  readers read the `copy_`, which its frame does not have; unflatten takes it for a mutation's
  intermediate value. On 2.14.1 that reads the buffer, the same value (agrees). On 2.6 it reads
  an attribute that nothing writes (the root's graph is not searched for the update), an
  uninitialized tensor: a silent wrong result.
- an input's new value, returned: as the first, with a user input instead of a buffer: `scaler`
  does `x.mul_(2.0); return x` and the preserved `block` returns it
  (`_inplace_buffer_and_input_mutations` moves the readers of an input's new value to its
  `copy_` too): `Could not find output node mul` on 2.14.1 (2.6 fails earlier on this form:
  the unflattened module's outputs do not match the output spec, `treespec.unflatten` raises
  `ValueError`).
Without the decomposition, or with `counter` (`scaler`) preserved too, all unflatten and agree.
    python3 corpus/torch/unflatten-preserve-functional-update-in-signature.py   # exit 1 while present
"""
import sys

import torch


class Counter(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("buf", torch.zeros(2))

    def forward(self, x):
        self.buf.add_(x)
        return self.buf


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.counter = Counter()

    def forward(self, x):
        return self.counter(x)


class Model(torch.nn.Module):  # the returned form
    def __init__(self):
        super().__init__()
        self.block = Block()

    def forward(self, x):
        return self.block(x) * 2.0


class Head(torch.nn.Module):
    def forward(self, v):
        return v * 3.0


class Taker(torch.nn.Module):  # the taken form
    def __init__(self):
        super().__init__()
        self.head = Head()
        self.register_buffer("buf", torch.ones(2))

    def forward(self, x):
        v = self.buf + x
        self.buf.copy_(v)
        return self.head(v) + 1.0


class Scaler(torch.nn.Module):
    def forward(self, x):
        x.mul_(2.0)
        return x


class InBlock(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.scaler = Scaler()

    def forward(self, x):
        return self.scaler(x)


class InModel(torch.nn.Module):  # the input form: a user input updated in place
    def __init__(self):
        super().__init__()
        self.block = InBlock()

    def forward(self, x):
        return self.block(x) * 3.0


def main():
    bad = 0
    x = torch.tensor([1.0, 2.0])
    for build, preserve in ((Model, "block"), (Taker, "head"), (InModel, "block")):
        for strict in (False, True):
            want_x = x.clone()
            want = build()(want_x)
            ep = torch.export.export(build(), (x.clone(),), strict=strict,
                                     preserve_module_call_signature=(preserve,))
            mode = f"{build.__name__}, {'strict' if strict else 'non-strict'}"
            got_x = x.clone()
            try:
                got = torch.export.unflatten(ep.run_decompositions())(got_x)
            except Exception as e:  # noqa: BLE001
                print("torch", torch.__version__, mode, "unflatten of the decomposed program "
                      "raises", type(e).__name__, str(e).splitlines()[0])
                bad = 1
                continue
            ok = torch.equal(got, want) and torch.equal(got_x, want_x)
            print("torch", torch.__version__, mode, "unflatten", "agrees with eager" if ok else
                  f"DIFFERS from eager: {got.tolist()} for {want.tolist()}, input "
                  f"{got_x.tolist()} for {want_x.tolist()}")
            bad |= not ok
    return int(bad)


if __name__ == "__main__":
    sys.exit(main())
