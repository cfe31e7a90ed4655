"""Strict torch.export.export of a module whose child runs a `torch.no_grad()` block, then
torch.export.unflatten: the unflattened module returns a wrong value (here a 0-d tensor 2.5
where eager gives [2.0]), without an error. Found by flatcheck's torch campaign with the
generated branch op's value computed under torch.no_grad() (--branch nograd, paths
export.strict.unflatten and export.strict.decomp, case 100 of seed 60, torch 2.14.1); shrunk to
6 nodes, then written by hand.

Strict export records the block as a higher-order op node (`wrap_with_set_grad_enabled`) and
gives that node, and the get_attr of its body, the module stack of the *caller* (the root), not
of `layer`, the module that ran it; the nodes before and after it carry `layer`'s stack.
unflatten therefore cuts `layer`'s one call in two pieces around the block, builds one module
`layer` for both, and calls it twice: the first call runs the second piece's graph. Non-strict
export records the block under `layer` and agrees; `ep.module()` agrees. torch 2.6 and 2.14.1.
    python3 corpus/torch/export-strict-grad-region-module-stack.py   # exit 1 while present
"""
import sys

import torch


class Inner(torch.nn.Module):
    def forward(self, b):
        y = b * 2.0
        with torch.no_grad():
            z = y.clone()
        return z + 1.0


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = Inner()

    def forward(self, x):
        return self.layer(x)


x = torch.tensor([0.5])
model = Model()
ep = torch.export.export(model, (x,), strict=True)
stacks = {n.name: [path for path, _ in (n.meta.get("nn_module_stack") or {}).values()]
          for n in ep.graph.nodes if n.op in ("call_function", "get_attr")}
got = torch.export.unflatten(ep)(x)
print("torch", torch.__version__, "module stacks:", stacks)
print("unflattened:", got, "eager:", model(x), "ep.module():", ep.module()(x))
sys.exit(0 if got.shape == model(x).shape and torch.equal(got, model(x)) else 1)
