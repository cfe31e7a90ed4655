"""torch.fx's CapabilityBasedPartitioner (fuse_by_partitions) places a fused partition whose
values nothing outside it reads after the graph's output node, where it never runs. In a graph
that updates a buffer in place (the module of an exported program that updates a buffer, as
Torch-TensorRT partitions it), a partition holding only that update and dead nodes is lost:
the partitioned module runs, returns the right outputs, and leaves the buffer as it was. No
error; graph.lint() passes. (Found by flatcheck's partition.capability path: 1 of 300
programs of seed 31, 1 of 60 of seed 5.)

insert_subgm appends the call_module node at the end of the graph, after the output node, and
legalize_graph's topological sort keeps it there: it has no users. torch 2.11 raises instead
(AssertionError: last_output_node is None, in insert_subgm): the same partition, now refused
loudly; the repro counts both as present. torch 2.14.1 (Debian sid) places the partition
before the output and the buffer is updated: fixed (2.12 and 2.13 not run).
    python3 corpus/torch/capability-partition-after-output.py   # exit 1 while present
"""
import sys

import torch

FIXED_IN = (2, 14)  # tests/torch/torch2_test.sh: exit 0 expected from this torch on
from torch.fx.passes.infra.partitioner import CapabilityBasedPartitioner
from torch.fx.passes.operator_support import OperatorSupportBase


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("buf", torch.zeros(2))

    def forward(self, x):
        y = x * 2  # a partition that the output reads
        r = torch.relu(y)  # a fallback op between the two partitions
        self.buf.copy_(self.buf + r)  # a partition that only updates the buffer
        return y


class NotRelu(OperatorSupportBase):
    def is_node_supported(self, submodules, node):
        return node.op == "call_function" and node.target != torch.ops.aten.relu.default


x = torch.tensor([1.0, -2.0])
gm = torch.export.export(Model(), (x,), strict=False).module()
try:
    partitioned = CapabilityBasedPartitioner(gm, NotRelu()).partition_and_fuse()
except AssertionError as e:
    print("torch", torch.__version__, "| partition_and_fuse raises AssertionError:", e,
          "(the partition whose values nothing reads)")
    sys.exit(1)
nodes = [n.op for n in partitioned.graph.nodes]
after = nodes[nodes.index("output") + 1:]
with torch.no_grad():
    partitioned(x.clone())
buf = partitioned.get_buffer("buf")
want = torch.relu(x * 2)
print("torch", torch.__version__, "| nodes after the output node:", after or "none",
      "| buffer after one call:", buf.tolist(), "(expected", want.tolist(), ")")
sys.exit(1 if not torch.equal(buf, want) else 0)
