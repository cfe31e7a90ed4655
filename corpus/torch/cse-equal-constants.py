"""Common-subexpression elimination in torch merges two nodes whose constants are equal as
Python floats but are different numbers: x * 0.0 and x * -0.0 become one node, and one result
takes the other's sign (found by a flatcheck campaign, docs/found-bugs.md 77).

Both of torch's CSE passes key a node by hash((args, kwargs)) and confirm a match with ==, and
0.0 == -0.0 in Python (with the same hash):
  - torch.fx.passes.dialect.common.cse_pass.CSEPass, the public pass (torch 2.6 and 2.14.1);
  - torch._functorch.compile_utils.fx_graph_cse, which torch.compile with Inductor's freezing
    runs over the inference graph (torch 2.6; 2.14.1 keys floats by their bits).
Here 1 / (x * 0.0) is +inf and 1 / (x * -0.0) is -inf; merged, both are +inf.
    python3 corpus/torch/cse-equal-constants.py   # exit 1 while either merges
"""
import sys

import torch
from torch.fx.experimental.proxy_tensor import make_fx
from torch.fx.passes.dialect.common.cse_pass import CSEPass, get_CSE_banned_ops


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.tensor([1.0, 2.0, 3.0]))

    def forward(self, x):
        y = x * self.w
        return 1 / (y * 0.0), 1 / (y * -0.0)


def same(got, want):
    return all(torch.equal(g, w) for g, w in zip(got, want))


def main():
    model, x = Model().eval(), torch.tensor([1.0, 0.5, 0.25])
    with torch.no_grad():
        want = model(x)
        gm = make_fx(model)(x)  # the pass's documented input: a make_fx graph
        csed = CSEPass(banned_ops=get_CSE_banned_ops())(gm).graph_module
        got = {"CSEPass": csed(x)}
        import torch._inductor.config as inductor_config
        inductor_config.freezing = True  # fx_graph_cse over the frozen inference graph
        got["torch.compile (Inductor, freezing)"] = torch.compile(model)(x)
    print("torch", torch.__version__, "eager:", [t.tolist() for t in want])
    ok = True
    for name, out in got.items():
        print(f"  {name}:", [t.tolist() for t in out], "agrees" if same(out, want) else "differs")
        ok = ok and same(out, want)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
