"""torch.distributed.pipelining.pipeline of a model that computes a value under
`torch.no_grad()` fails, with or without split points: torch 2.14.1 raises `RuntimeError:
Expected positional argument for parameter x` (no split point; a one-module model: `Node
submod_1 target submod_1 references nonexistent attribute submod_1`), or `AttributeError:
'InterpreterModule' object has no attribute 'submod_1'` (one); torch 2.6 an `AssertionError` in
unflatten's `_ModuleFrame` (no message). Found by flatcheck's torch
campaign with the generated branch op's value computed under torch.no_grad() (--branch nograd,
seed 63, path `pipeline`, torch 2.14.1); written by hand.

export records the block as a higher-order op node, `wrap_with_set_grad_enabled`, whose body is
a graph attribute (`submod_1`) of the exported module, as torch.cond's branch graphs are
(docs/found-bugs.md 36, the same cause): the stages pipelining builds do not get the attribute.
Without the block the same pipes build and agree.
    python3 corpus/torch/pipeline-grad-region-body.py   # exit 1 while present
"""
import sys

import torch
from torch.distributed.pipelining import SplitPoint, pipeline


class Leaf(torch.nn.Module):
    def forward(self, x):
        with torch.no_grad():
            y = x.clone()
        return y + 1.0


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = Leaf()
        self.b = Leaf()

    def forward(self, x):
        return self.b(self.a(x) * 2.0)


def main():
    x = torch.tensor([1.0, -2.0])
    want = Model()(x)
    outcomes = []
    for spec in ({}, {"b": SplitPoint.BEGINNING}):
        try:
            got = pipeline(Model(), mb_args=(x,), split_spec=spec)(x)[0]
            outcomes.append("agrees" if torch.equal(got, want) else f"differs: {got.tolist()}")
        except Exception as e:  # noqa: BLE001 - the failure is what this reports
            outcomes.append(f"raises {type(e).__name__}: {(str(e) or '(no message)').splitlines()[0][:100]}")
    print("torch", torch.__version__, "| eager", want.tolist(), "| no split point:",
          outcomes[0], "| split at b:", outcomes[1])
    return 0 if outcomes == ["agrees", "agrees"] else 1


if __name__ == "__main__":
    sys.exit(main())
