"""torch.fx.passes.split_module.split_module with keep_original_order=True raises KeyError when
the graph returns a parameter or buffer that no partition reads (found while building
flatcheck's split paths, fx.split_ordered; torch 2.6 and 2.14.1; torch 1.13 splits it).

With keep_original_order=True, split_module adds a get_attr node to the base graph only when a
partition takes the attribute as an input (just in time, before that partition's call). The
output node then looks up every value it returns in the base graph's environment, and an
attribute the graph returns directly was never added: KeyError with the attribute node's name.
The default order adds every placeholder and get_attr node up front and splits the same graph.
    python3 corpus/torch/split-module-ordered-output-attr-keyerror.py   # exit 1 while present
"""
import sys

import torch
from torch.fx.passes.split_module import split_module


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.ones(2))

    def forward(self, x):
        return x + 1, self.w  # the parameter itself is an output


def main():
    x = torch.ones(2)
    want = Model()(x)
    ok = True
    for keep in (False, True):
        gm = torch.fx.symbolic_trace(Model())
        try:
            got = split_module(gm, gm, lambda n: 0, keep_original_order=keep)(x)
            same = all(torch.equal(g, w) for g, w in zip(got, want))
            print("torch", torch.__version__, f"keep_original_order={keep}:",
                  "agrees with eager" if same else "differs from eager")
        except Exception as e:  # noqa: BLE001 - the bug: a crash
            same = False
            print("torch", torch.__version__, f"keep_original_order={keep}:",
                  f"{type(e).__name__}: {e}")
        ok &= same
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
