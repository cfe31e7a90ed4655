"""torch.distributed.pipelining.pipeline gives a wrong result, without an error, for a model
that holds a module under two names and has a split point on a module with children (found
by flatcheck's torch campaign, path pipeline, case 364 of seed 55, shrunk and reduced by hand;
torch 2.14.1; torch 2.6 agrees).

pipelining marks a split point by replacing the module's forward with a wrapper bound to the
module object (`annotate_split_points`: `mod.forward = MethodType(_split_after_forward, mod)`).
export's non-strict tracer, once the model holds a module under two names, names submodules by
following attribute access through its proxies; the wrapper calls the original forward with
the module itself as `self`, so its child `a.a` is named `a`. The multiplication of `a.a` is
recorded in module `a`, and the stage built from that returns the product, not the sum: 1 where
eager gives 2. The cause is export's (docs/found-bugs.md 29,
corpus/torch/export-bound-forward-module-stack.py); a split point put on the module's class
instead (so the tracer's proxy is `self`) agrees, and so does the model without the second
name.
    python3 corpus/torch/pipeline-bound-forward-module-stack.py   # exit 1 while present
"""
import sys

import torch
from torch.distributed.pipelining import SplitPoint, pipeline

PRESENT_FROM = (2, 11)  # torch 2.6 agrees (exit 0); 2.7 to 2.10 not run; 2.11 and 2.14.1 have it


class Leaf(torch.nn.Module):
    def forward(self, x):
        return x * 3


class Mid(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = Leaf()

    def forward(self, x):
        return self.a(x) + 1


class Model(torch.nn.Module):
    def __init__(self, shared=True):
        super().__init__()
        self.a = Mid()
        if shared:
            self.b = self.a  # one module under two names

    def forward(self, x):
        return self.a(x) - 2


def main():
    x = torch.ones(2)
    want = Model()(x)
    at_end = {"a": SplitPoint.END}
    unshared = pipeline(Model(shared=False), mb_args=(x,), split_spec=at_end)(x)[0]
    got = pipeline(Model(), mb_args=(x,), split_spec=at_end)(x)[0]
    print("torch", torch.__version__, "eager:", want.tolist(), "unshared pipe:",
          unshared.tolist(), "pipe:", got.tolist())
    return 0 if torch.equal(want, got) else 1


if __name__ == "__main__":
    sys.exit(main())
