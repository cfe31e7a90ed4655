"""The public common-subexpression pass merges two reads of one view that an in-place update
of its base separates: the second read returns the value from before the update (found by
reading the pass, then by flatcheck's fx.cse_inplace path: docs/found-bugs.md 81).

torch.fx.passes.dialect.common.cse_pass.CSEPass, used as its docstring shows (a make_fx graph,
banned_ops=get_CSE_banned_ops(), whose in-place ops are there for graphs that keep in-place
ops), keys a node by its target and arguments alone. make_fx threads an in-place op's result
into later uses of the tensor it wrote, but not into a view of that tensor taken before the
write: `sigmoid(view)` before `buf.copy_(x)` and `sigmoid(view)` after it are one node to the
pass. Torch 2.6 and 2.14.1.
    python3 corpus/torch/cse-across-write.py   # exit 1 while the pass merges them
"""
import sys

import torch
from torch.fx.experimental.proxy_tensor import make_fx
from torch.fx.passes.dialect.common.cse_pass import CSEPass, get_CSE_banned_ops


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("buf", torch.zeros(3))

    def forward(self, x):
        v = self.buf.view(-1)  # a view of the buffer, taken before its update
        before = v.sigmoid()
        self.buf.copy_(x)  # the update writes what v sees
        after = v.sigmoid()  # the same op on the same view: another value
        return before, after


MODEL = Model()


def f(buf, x):  # the model's forward, its buffer an argument (torch.func.functional_call)
    return torch.func.functional_call(MODEL, {"buf": buf}, (x,))


def main():
    x = torch.tensor([1.0, 2.0, 3.0])
    with torch.no_grad():
        want = f(torch.zeros(3), x)
        gm = make_fx(f)(torch.zeros(3), x)  # the pass's documented input: a make_fx graph
        traced = gm(torch.zeros(3), x)
        csed = CSEPass(banned_ops=get_CSE_banned_ops())(gm).graph_module
        got = csed(torch.zeros(3), x)
    print("torch", torch.__version__, "eager:", [t.tolist() for t in want])
    print("  make_fx graph:", [t.tolist() for t in traced])
    print("  after CSEPass:", [t.tolist() for t in got])
    print(csed.code)
    return 0 if all(torch.equal(g, w) for g, w in zip(got, want)) else 1


if __name__ == "__main__":
    sys.exit(main())
