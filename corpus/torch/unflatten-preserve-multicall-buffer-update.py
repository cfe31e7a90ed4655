"""torch.export.unflatten with preserve_module_call_signature: a preserved module called twice
that updates a buffer loses the second call's update — a silent wrong result (found by flatcheck's torch campaign, path export.<mode>.preserve;
both export modes).

The pull request that let a preserved module be called more than once (pytorch/pytorch#137999)
says buffers mutated across such calls are not supported yet; neither export nor unflatten says
so to the user. In the unflattened module the first call copies its update into a side tensor
(`__ival__add_`) that the second call reads and updates, but nothing writes the second call's
update back to the buffer: from the second forward on, outputs drift from eager's, and the
dispatcher module that replaces `c` does not even hold the buffer (`named_buffers()` of the
unflattened module is empty). torch 2.14.1 (Debian sid) gives eager's outputs on every call,
but the unflattened module still holds no buffer: its `named_buffers()` and `state_dict()` lack
`c.total`, so the repro still exits 1 there.
    python3 corpus/torch/unflatten-preserve-multicall-buffer-update.py   # exit 1 while present
"""
import sys

import torch


class Counter(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("total", torch.zeros(2))

    def forward(self, x):
        self.total.add_(x)
        return self.total.clone()


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.c = Counter()

    def forward(self, x):
        return self.c(x) + self.c(x)


x = torch.ones(2)
eager = Model()
u = torch.export.unflatten(
    torch.export.export(Model(), (x,), preserve_module_call_signature=("c",)))
same = True
for call in range(3):
    want, got = eager(x), u(x)
    same &= torch.equal(want, got)
    print("torch", torch.__version__, f"call {call}: eager", want.tolist(), "unflatten",
          got.tolist())
state = {k: v.tolist() for k, v in u.named_buffers()}
print("buffers: eager", {k: v.tolist() for k, v in eager.named_buffers()}, "unflatten", state)
same &= state == {k: v.tolist() for k, v in eager.named_buffers()}
sys.exit(0 if same else 1)
