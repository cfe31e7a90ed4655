"""Strict torch.export.export of a torch.cond whose two operands become one node of the traced
graph fails: `SyntaxError: duplicate argument 'mul' in function definition`. Found by
flatcheck's torch campaign with the branch op taken by torch.cond (--branch cond, seed 62,
cases 2 and 11, torch 2.14.1; paths export.strict.preserve, export.strict.decomp_preserve and
export.strict.swap): there a preserved module returns its input twice, and the branch's two
operands are the input and that second output. Shrunk to 6 nodes; written by hand from it, with
an op that returns its input unchanged (`contiguous()` of a contiguous tensor) as the simplest
way in.

Dynamo sees two values (`y` and `y.contiguous()`), but the aten-level trace maps both to the
node of `y`, so the cond node's operand tuple holds one node twice. export's placeholder naming
pass (`_name_hoo_subgraph_placeholders`) then names each branch graph's placeholders after the
cond's operands, gives two placeholders one name, and recompiling the branch graph fails.
Non-strict export, and strict export of `(y, y)` or of `(y, y.clone())`, succeed. torch 2.6 and
2.14.1 (pytorch/pytorch#138229 is the same failure for two symbolic-int operands).
    python3 corpus/torch/export-strict-cond-duplicate-operand.py   # exit 1 while present
"""
import sys

import torch


def first(a, b):
    return a.clone()


def second(a, b):
    return b.clone()


class Model(torch.nn.Module):
    def forward(self, x):
        y = x * 2.0
        return torch.cond(y.sum() > 0, first, second, (y, y.contiguous()))


x = torch.tensor([1.0, -2.0, 4.0])
model = Model()
try:
    ep = torch.export.export(model, (x,), strict=True)
except SyntaxError as e:  # the bug
    print("torch", torch.__version__, f"strict export raises SyntaxError: {e.msg}")
    sys.exit(1)
got = ep.module()(x)
print("torch", torch.__version__, "exported:", got.tolist(), "eager:", model(x).tolist())
sys.exit(0 if torch.equal(got, model(x)) else 1)
