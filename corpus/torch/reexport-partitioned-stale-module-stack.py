"""torch.export.export of a module partitioned by torch's own CapabilityBasedPartitioner (as
Torch-TensorRT's global partitioner drives it), then torch.export.unflatten: a silent wrong
result. Found by a probe beside flatcheck's bridge that became its path
partition.reexport.capability (case 40 of seed 57 on torch 2.14.1: the partitioned module
re-exported and unflattened; shrunk from 25 nodes to 12, then written by hand as this file).

The module of an exported program carries each node's nn_module_stack from that export. The
partitioner moves `leaf`'s `t` and `matmul` into `fused_0`, with the top module's `chunk`,
after `leaf`'s `div`, so the graph now runs `div` (leaf), `chunk` (top), `t`, `matmul`, `sum`
(leaf). export of that module keeps the stacks the nodes carry (on 2.14.1 only those of the top
graph's nodes: the ones inside `fused_0` get the top module's), so one call of `leaf` is two
runs of nodes under one key. unflatten outlines both runs as that call and keeps one run's
graph: the call's result `a` (`x / x`, ones of shape [2, 4]) comes back as the other run's sum.
With the nodes' nn_module_stack removed before the second export, unflatten agrees. (torch 2.6
records the fused nodes under `leaf` too and gives a wrong `a` here as well; on generated
programs it mostly raises "Unable to find nn_module_stack" instead.)
    python3 corpus/torch/reexport-partitioned-stale-module-stack.py   # exit 1 while present
"""
import sys

import torch
from torch.fx.passes.infra.partitioner import CapabilityBasedPartitioner
from torch.fx.passes.operator_support import OperatorSupportBase


class Leaf(torch.nn.Module):
    def forward(self, x):
        a = x / x  # left in the top graph (not supported below)
        t = x @ x.t()  # fused
        return t.sum(-1), a  # sum left in the top graph


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.leaf = Leaf()

    def forward(self, x):
        c = x.chunk(2)[1]  # fused with leaf's matmul
        s, a = self.leaf(x)
        return c, s, a


class NoDivNoSum(OperatorSupportBase):  # the ops the accelerator takes
    def is_node_supported(self, submodules, node):
        return node.op == "call_function" and not any(
            op in str(node.target) for op in ("div", "sum"))


def main():
    x = torch.ones(2, 4)
    ep = torch.export.export(Model(), (x,))
    split = CapabilityBasedPartitioner(ep.module(), NoDivNoSum(),
                                       allows_single_node_partition=True).partition_and_fuse()
    want = Model()(x)
    unflattened = torch.export.unflatten(torch.export.export(split, (x,)))
    got = unflattened(x)
    same = [torch.equal(g, w) for g, w in zip(got, want)]
    print("torch", torch.__version__, "| the partitioned module agrees:",
          all(torch.equal(g, w) for g, w in zip(split(x), want)),
          "| unflatten of its export, outputs equal to eager's:", same)
    print("  a: eager", want[2].tolist(), "unflattened", got[2].tolist())
    return 0 if all(same) else 1


if __name__ == "__main__":
    sys.exit(main())
