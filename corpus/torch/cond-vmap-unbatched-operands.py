"""torch.func.vmap of a model that takes a torch.cond on values of its parameters alone (no
operand, and not the predicate, depends on the batched input) raises `ValueError: vmap: Expected
at least one Tensor to vmap over` (torch 2.6 and 2.14.1). Under vmap every torch.cond goes to its
vmap batch rule, which vmaps each branch with the operands' batch dims; here all of them are
None, which torch.vmap refuses, though the cond needs no batching at all: run once, its result
is every sample's. Found by flatcheck's bridge (the func.vmap paths with --branch cond, the
generated programs' branch op taken by torch.cond: 7 of 1,500 programs of seed 158 on torch
2.6, a branch op choosing between two values read from parameters); written by hand from that
shape.

The batch rule running such a branch once and expanding its results along the batch runs and
agrees (the bridge's trace, torch_vmap.unbatched_branches).
    python3 corpus/torch/cond-vmap-unbatched-operands.py   # exit 1 while present
"""
import sys

import torch


def doubled(w):
    return w * 2


def lowered(w):
    return w - 1


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.tensor([1.0, -2.0, 3.0]), requires_grad=False)

    def forward(self, x):
        return x + torch.cond(self.w.sum() > 0, doubled, lowered, (self.w,))


def main():
    model = Model()
    xs = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    want = torch.stack([model(x) for x in xs])  # one sample at a time
    try:
        got = torch.func.vmap(model)(xs)
        outcome = "vmap agrees" if torch.equal(got, want) else f"vmap differs: {got.tolist()}"
    except Exception as e:  # noqa: BLE001 - the failure is what this reports
        while e.__cause__ is not None or e.__context__ is not None:
            e = e.__cause__ or e.__context__
        outcome = f"vmap raises {type(e).__name__}: {str(e).splitlines()[0][:160]}"
    print("torch", torch.__version__, "|", outcome)
    return 0 if outcome == "vmap agrees" else 1


if __name__ == "__main__":
    sys.exit(main())
