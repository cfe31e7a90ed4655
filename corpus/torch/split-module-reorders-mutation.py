"""torch.fx.passes.split_module.split_module, in its default order (keep_original_order=False),
runs a partition that updates a buffer in place before an independent partition that reads the
buffer earlier in the graph — a silent wrong result (found by flatcheck's torch campaign, path
fx.split; torch 2.6 and 2.14.1).

split_module orders the partitions by their data dependencies only, taking the ready ones last
in, first out. Here partition 0 computes `a`, partition 1 reads the buffer (`self.buf * a`) and
partition 2 updates it (`self.buf.add_(a)`); 1 and 2 both depend on 0 alone, so the split module
runs 0, 2, 1: the read sees the updated buffer. The graph's own order (0, 1, 2) is correct, and
keep_original_order=True gives it. Dynamo's DDPOptimizer and torch.distributed.pipelining call
split_module in the default order on graphs that can hold in-place updates.
    python3 corpus/torch/split-module-reorders-mutation.py   # exit 1 while present
"""
import sys

import torch
from torch.fx.passes.split_module import split_module


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("buf", torch.ones(2))

    def forward(self, x):
        a = x + 1
        b = self.buf * a      # reads the buffer before the update
        self.buf.add_(a)      # updates it in place
        return b


def partition(gm):
    """a -> 0, the read -> 1, the update -> 2 (each partition one contiguous run of nodes)."""
    part, k = {}, 0
    for n in gm.graph.nodes:
        if n.op in ("call_function", "call_method"):
            part[n] = k
            k += 1
    return lambda n: part[n]


def main():
    x = torch.ones(2)
    want = Model()(x)
    results = {}
    for keep in (False, True):
        gm = torch.fx.symbolic_trace(Model())
        split = split_module(gm, gm, partition(gm), keep_original_order=keep)
        got = split(x)
        results[keep] = torch.equal(got, want)
        order = [n.target for n in split.graph.nodes if n.op == "call_module"]
        print("torch", torch.__version__, f"keep_original_order={keep}: runs", order, "eager",
              want.tolist(), "split", got.tolist())
    return 0 if results[False] else 1


if __name__ == "__main__":
    sys.exit(main())
