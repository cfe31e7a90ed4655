"""torch.func.vmap of a model that takes a torch.cond on an unbatched predicate raises when one
branch's result comes from unbatched values alone (a parameter) and the other's from the batched
input (torch 2.14.1): `RuntimeError: The sorted order of strides of the two branches' output
doesn't match ... True branch has stride (0, 1) but false branch has stride (3, 1)`. cond's vmap
batch rule vmaps each branch; vmap returns the unbatched result expanded along the batch (stride
0), and cond's merge of the two branches' output strides refuses the pair, though both branches
return new dense tensors. torch 2.6 runs it and gives the right values. Found by flatcheck's
bridge (the func.vmap paths with --branch cond: case 12 of `generate --seed 158 --count 40
--max-nodes 20`, an unbatched empty tensor against a batched one, and 1 of 150 programs of seed
158 at --max-nodes 30 on func.vmap.last); written by hand from that shape.

The batch rule with each vmapped branch's outputs copied densely (clone(memory_format=
torch.contiguous_format)) runs and agrees (the bridge's trace, torch_vmap.materialized_branches).
    python3 corpus/torch/cond-vmap-expanded-branch-output.py   # exit 1 while present
"""
import sys

import torch

PRESENT_FROM = (2, 14)  # torch 2.6 runs it (exit 0); 2.7 to 2.13 not run; 2.14.1 has it


def from_weight(w, x):
    return w * 2


def from_input(w, x):
    return x + w


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.tensor([1.0, -2.0, 3.0]), requires_grad=False)

    def forward(self, x):
        return torch.cond(self.w.sum() > 0, from_weight, from_input, (self.w, x))


def main():
    model = Model()
    xs = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    want = torch.stack([model(x) for x in xs])  # one sample at a time: the weight doubled
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
