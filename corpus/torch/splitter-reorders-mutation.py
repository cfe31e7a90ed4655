"""torch.fx's _SplitterBase (the base of Torch-TensorRT's fast partitioner) moves a read of a
buffer past a later in-place update of that buffer. The module updates its buffer, reads it
through a fallback op (relu), then updates it again: eager's read sees the first update only.
The splitter groups nodes by data dependencies alone; the read has none on the second update,
so both updates go to one accelerator submodule that runs first and the fallback submodule
reading the buffer runs after it: the read sees the second update too. A silent wrong result
(torch 2.6 and 2.14.1). (Found by flatcheck's partition.splitter path with the bridge's
--reads alias: seed 94, case 1203, where the read is of a view of the buffer.)

The graph the partitioner gets (`ep.module()`, export's in-place `copy_` kept) has the order
copy_, relu(copy_), mul(copy_), copy_. The capability partitioner has the same blindness
(pytorch/pytorch#81244).
    python3 corpus/torch/splitter-reorders-mutation.py   # exit 1 while present
"""
import sys

import torch
from torch.fx.passes.operator_support import OperatorSupportBase
from torch.fx.passes.splitter_base import _SplitterBase, _SplitterSettingBase


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("buf", torch.ones(4))

    def forward(self, x):
        self.buf.copy_(x + 1.0)  # an update
        old = self.buf.relu()  # a read of it (relu: the fallback op)
        self.buf.copy_(self.buf * 3.0)  # a second update, after the read
        return old, self.buf + 0.0


class NotRelu(OperatorSupportBase):  # every call_function but relu runs on the accelerator
    def is_node_supported(self, submodules, node):
        return node.op == "call_function" and getattr(node.target, "_opname", "") != "relu"


def main():
    x = torch.full((4,), 5.0)
    want = Model()(x)
    gm = torch.export.export(Model(), (x,), strict=False).module()
    settings = _SplitterSettingBase(min_acc_module_size=1, allow_non_tensor=True)
    split = _SplitterBase(gm, (x,), NotRelu(), settings, non_acc_submodule_name="_run_on_gpu_")()
    with torch.no_grad():
        gm.buf.fill_(1.0)  # the splitter ran gm once on x while splitting (ShapeProp): reset it
        got = split(x)
    runs = [n.target for n in split.graph.nodes if n.op == "call_module"]
    print("torch", torch.__version__, "| submodules in run order:", runs, "| read of the buffer:",
          got[0].tolist(), "(eager", want[0].tolist(), ")")
    sys.exit(1 if not torch.equal(got[0], want[0]) else 0)


if __name__ == "__main__":
    main()
