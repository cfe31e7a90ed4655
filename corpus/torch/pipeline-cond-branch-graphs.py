"""torch.distributed.pipelining.pipeline fails on a model whose modules call torch.cond, with or
without split points: torch 2.14.1 raises `RuntimeError: Unable to find nn_module_stack for node
add` (a node of a branch graph); torch 2.6 `RuntimeError: Expected positional argument for
parameter false_graph_0` (no split point) or `AttributeError: 'InterpreterModule' object has no
attribute 'true_graph_0'` (one). Found by a probe beside flatcheck's bridge that ran every path
on the generated programs with their branch op taken by torch.cond (torch 2.14.1, case 10 of
seed 60); written by hand.

split_module leaves each torch.cond's branch graphs (`true_graph_0`, `false_graph_0`) as
children of the split module, where pipelining takes every GraphModule child for a stage and
outlines its graph by module stacks, which the branch graphs' nodes do not carry (2.14.1). With
those children skipped, the stages still take the branch graphs as inputs nobody passes, the
failure torch 2.6 shows first.
    python3 corpus/torch/pipeline-cond-branch-graphs.py   # exit 1 while present
"""
import sys

import torch
from torch.distributed.pipelining import SplitPoint, pipeline


def plus_one(a):
    return a + 1


def minus_one(a):
    return a - 1


class Leaf(torch.nn.Module):
    def forward(self, x):
        return torch.cond(x.sum() > 0, plus_one, minus_one, (x,))


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = Leaf()
        self.b = Leaf()

    def forward(self, x):
        return self.b(self.a(x) * 2)


def main():
    x = torch.tensor([1.0, -2.0])
    want = Model()(x)
    outcomes = []
    for spec in ({}, {"b": SplitPoint.BEGINNING}):
        try:
            got = pipeline(Model(), mb_args=(x,), split_spec=spec)(x)[0]
            outcomes.append("agrees" if torch.equal(got, want) else f"differs: {got.tolist()}")
        except Exception as e:  # noqa: BLE001 - the failure is what this reports
            outcomes.append(f"raises {type(e).__name__}: {str(e).splitlines()[0][:100]}")
    print("torch", torch.__version__, "| eager", want.tolist(), "| no split point:",
          outcomes[0], "| split at b:", outcomes[1])
    return 0 if outcomes == ["agrees", "agrees"] else 1


if __name__ == "__main__":
    sys.exit(main())
