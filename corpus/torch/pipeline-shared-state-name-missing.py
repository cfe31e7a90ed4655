"""torch.distributed.pipelining.pipeline raises AttributeError ("'InterpreterModule' object has
no attribute 'w'") on a model where one parameter is held by two modules and one of those
modules is called twice — no split point needed (found by flatcheck's torch campaign, path
pipeline; torch 2.6 and 2.14.1).

Here `a.w` and `b.w` are one Parameter and `a` runs twice. pipelining rebuilds each stage's
module tree with a call variant per extra call (`a`, `a@1`), then sinks the state into it:
`_sink_params` reads `w` from `a@1` under the name `a.w` (a variant is matched by its base
name). The parameter reaches the stage under one of its names (the one export keeps, `b.w`);
pipelining's aliasing step then sets its other names where a module sits at exactly that path
(`a`), never on the variants (`a@1`), which unflatten's own `_assign_attr` does fill. Untied
(two parameters), or `a` called once, it builds and runs.
    python3 corpus/torch/pipeline-shared-state-name-missing.py   # exit 1 while present
"""
import sys

import torch
from torch.distributed.pipelining import pipeline


class Leaf(torch.nn.Module):
    def __init__(self, w):
        super().__init__()
        self.w = w

    def forward(self, x):
        return x + self.w


class Model(torch.nn.Module):
    def __init__(self, tied=True):
        super().__init__()
        w = torch.nn.Parameter(torch.ones(2))
        self.a = Leaf(w)
        self.b = Leaf(w if tied else torch.nn.Parameter(torch.ones(2)))

    def forward(self, x):
        return self.b(self.a(self.a(x)))


def main():
    x = torch.zeros(2)
    want = Model()(x)
    untied = pipeline(Model(tied=False), mb_args=(x,))(x)[0]  # builds: the tie is the cause
    try:
        got = pipeline(Model(), mb_args=(x,))(x)[0]
    except AttributeError as e:
        print("torch", torch.__version__, "eager:", want.tolist(), "untied pipe:",
              untied.tolist(), "tied pipe: AttributeError:", e)
        return 1
    print("torch", torch.__version__, "eager:", want.tolist(), "pipe:", got.tolist())
    return 0 if torch.equal(want, got) else 1


if __name__ == "__main__":
    sys.exit(main())
