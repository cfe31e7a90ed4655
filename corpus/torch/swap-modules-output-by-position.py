"""torch.export._swap._swap_modules (the module swap of an exported program, experimental,
behind TorchRec's unlift_and_swap) wires a swapped module's results by position among the values
the rest of the graph reads, not by the preserved signature: a module whose first result is
unused, or whose results the graph computes in another order than it returns them, has the
wrong result read from it — a silent wrong result; a buffer the module updates, read after the
call, is read from one of its results, or from one past its last (`IndexError`). Found by flatcheck's torch campaign (seed 72,
torch 2.14.1, paths export.strict.swap_modules and export.nonstrict.swap_modules); written by
hand.

_swap_module_helper fuses the swapped module's nodes (fuse_as_graphmodule), whose outputs are
the fused nodes read outside them, in graph order; _deconstruct_outputs then replaces the i-th of
them by output i of the module's call as its preserved out_spec flattens it (ep.module() reads
an updated buffer through the module's `copy_` node, which is among them). Reading each value
from the output of its name in the signature, and an update's value from the buffer, makes the
swap agree. torch 2.6 and 2.14.1.
    python3 corpus/torch/swap-modules-output-by-position.py   # exit 1 while present
"""
import sys

import torch
from torch.export._swap import _swap_modules


class Inner(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x), torch.neg(x)  # the model reads only the second


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = Inner()

    def forward(self, x):
        return self.inner(x)[1] + 1.0


class Counter(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("b", torch.zeros(3))

    def forward(self, x):
        self.b.add_(x)
        return x * 2.0


class ReadsAfter(torch.nn.Module):  # reads the buffer the module updated, after the call
    def __init__(self):
        super().__init__()
        self.inner = Counter()

    def forward(self, x):
        return self.inner(x) - self.inner.b


def swap(model, child, x):
    """(ep.module() agrees, what the swap of `inner` gives)."""
    want = model()(x)
    ep = torch.export.export(model(), (x,), preserve_module_call_signature=("inner",))
    same = torch.equal(ep.module()(x), want)
    swapped = _swap_modules(ep, {"inner": child()})
    try:
        got = swapped(x)
        result = "agrees" if torch.equal(got, want) else \
            f"DIFFERS: {got.tolist()}, eager {want.tolist()}"
    except Exception as e:  # noqa: BLE001 - a crash
        result = f"raises {type(e).__name__}: {str(e).splitlines()[0][:70]}"
    return same, result


def main():
    x = torch.tensor([1.0, -2.0, 3.0])
    results = [swap(Model, Inner, x), swap(ReadsAfter, Counter, x)]
    print("torch", torch.__version__, "| ep.module()",
          "agrees" if all(r[0] for r in results) else "DIFFERS",
          "| _swap_modules, an unused first result:", results[0][1],
          "| a buffer read after the call:", results[1][1])
    return 0 if all(r == (True, "agrees") for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
