"""torch.export.unflatten with preserve_module_call_signature: a buffer shared by a module and
its preserved child (one tensor under two names), updated by both, loses the parent's update —
a silent wrong result (found by flatcheck's torch campaign, path export.<mode>.preserve, cases
42 and 229 of seed 21; both export modes).

export traces the parent's in-place update as an update of the value the child's update
produced (the same tensor). That value is made inside the preserved child and is not one of its
outputs, so unflatten carries it out of the child as an intermediate value: the child copies it
into a side tensor (`__ival__add_`) and the parent updates that tensor instead of the buffer.
Without preserving `c`, or with two separate buffers, unflatten agrees with eager.
    python3 corpus/torch/unflatten-preserve-tied-buffer-update.py   # exit 1 while present
Fixed by torch 2.11 (2.11.0+cu130 gives eager's buffers; 2.7 to 2.10 not run).
"""
import sys

import torch

FIXED_IN = (2, 11)  # tests/torch/torch2_test.sh: exit 0 expected from this torch on


class Child(torch.nn.Module):
    def __init__(self, t):
        super().__init__()
        self.register_buffer("buf", t)

    def forward(self, x):
        self.buf.add_(x)
        return x * 2


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        t = torch.zeros(2)
        self.register_buffer("total", t)  # the same tensor as c.buf
        self.c = Child(t)

    def forward(self, x):
        y = self.c(x)
        self.total.add_(y)
        return self.total.clone()


x = torch.ones(2)
eager = Model()
u = torch.export.unflatten(
    torch.export.export(Model(), (x,), preserve_module_call_signature=("c",)))
same = True
for call in range(2):
    want, got = eager(x), u(x)
    same &= torch.equal(want, got)
    print("torch", torch.__version__, f"call {call}: eager", want.tolist(), "unflatten",
          got.tolist())
state = {k: v.tolist() for k, v in u.named_buffers(remove_duplicate=False)}
print("buffers: eager", {k: v.tolist() for k, v in eager.named_buffers(remove_duplicate=False)},
      "unflatten", state)
sys.exit(0 if same else 1)
