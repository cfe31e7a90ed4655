"""torch.fx.experimental.const_fold.split_const_subgraphs on a graph that updates a buffer in
place — two silent wrong results (found by flatcheck's torch campaign, path fx.const_fold;
torch 2.6 and 2.14.1):

1. It folds a read of the buffer: the subgraph that runs once, on the first call, computes
   `self.buf * 2` and keeps the result, so every later call sees the buffer's first value
   (const-fold-freezes-mutated-buffer). Shown on an exported graph, where the update is an aten
   op that stays.
2. It runs dead code elimination, which counts a method call as pure, so an in-place update
   written as a method (`self.buf.copy_(v)`, as torch.fx traces it) whose result nothing reads
   is dropped: the buffer is never updated (const-fold-drops-inplace-method).
    python3 corpus/torch/const-fold-mutated-buffer.py   # exit 1 while either is present
"""
import sys
import warnings

import torch
from torch.fx.experimental.const_fold import split_const_subgraphs


class Reads(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("buf", torch.ones(2))

    def forward(self, x):
        y = self.buf * 2  # parameters and buffers only: folded, computed once
        self.buf.add_(x)  # the buffer changes on every call
        return y + x


class Drops(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.ones(2))
        self.register_buffer("buf", torch.zeros(2))

    def forward(self, x):
        self.buf.copy_(x * 3)  # its result unused
        return x * (self.w * 2)  # something to fold


def first(value):
    return value[0] if isinstance(value, (tuple, list)) else value


def folded(module):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return split_const_subgraphs(module)


def main():
    x = torch.ones(2)
    eager = Reads()
    fold = folded(torch.export.export(Reads(), (x,), strict=False).module())
    outs = [(eager(x).tolist(), first(fold(x)).tolist()) for _ in range(3)]
    frozen = any(want != got for want, got in outs)
    print("torch", torch.__version__, "1. a folded read of an updated buffer (eager, folded):",
          outs, "->", "stale" if frozen else "agrees")
    eager, fold = Drops(), folded(torch.fx.symbolic_trace(Drops()))
    eager(x), fold(x)
    code = fold.code
    dropped = "copy_" not in code
    print("torch", torch.__version__, "2. buffer after a call: eager", eager.buf.tolist(),
          "; the folded module's code", "has no copy_ (update dropped)" if dropped else
          "keeps the copy_", "and holds buffers", [n for n, _ in fold.named_buffers()])
    return 1 if frozen or dropped else 0


if __name__ == "__main__":
    sys.exit(main())
