"""torch.export._swap._swap_modules (the module swap of an exported program, experimental,
behind TorchRec's unlift_and_swap) calls a swapped module with None for an argument the graph
computes only for a result of the module that nothing reads: the swapped module, which does
read it, raises (`TypeError`). Found by flatcheck's torch campaign (seed 74, torch 2.14.1, path
export.strict.swap_modules); written by hand.

_swap_modules runs eliminate_dead_code on ep.module()'s graph before it swaps; the module's
unused result and the value only it reads are removed, and _construct_inputs passes None for an
input whose node is gone ("For unused inputs"). The graph kept whole, the swap agrees. The same
shape as entry 31 of docs/found-bugs.md (unflatten's dead-code elimination, the preserved
module swapped in the unflattened module), here in _swap_modules' own. torch 2.6 and 2.14.1.
    python3 corpus/torch/swap-modules-dead-input-none.py   # exit 1 while present
"""
import sys

import torch
from torch.export._swap import _swap_modules


class Inner(torch.nn.Module):
    def forward(self, x, y):
        return x + 1.0, y * 2.0


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = Inner()

    def forward(self, x):
        y = torch.relu(x)  # read only for inner's second result, which nothing reads
        return self.inner(x, y)[0]


def main():
    x = torch.tensor([1.0, -2.0, 3.0])
    want = Model()(x)
    ep = torch.export.export(Model(), (x,), preserve_module_call_signature=("inner",))
    same = torch.equal(ep.module()(x), want)
    try:
        got = _swap_modules(ep, {"inner": Inner()})(x)
        result = "agrees" if torch.equal(got, want) else f"DIFFERS: {got.tolist()}"
    except Exception as e:  # noqa: BLE001 - the bug's crash
        result = f"raises {type(e).__name__}: {str(e).splitlines()[0][:80]}"
    print("torch", torch.__version__, "| ep.module()", "agrees" if same else "DIFFERS",
          "| _swap_modules:", result)
    return 0 if same and result == "agrees" else 1


if __name__ == "__main__":
    sys.exit(main())
