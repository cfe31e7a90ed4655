"""torch.export.unflatten fails on a module called twice whose first call's result is unused when
its child runs torch.cond: `AssertionError: Attribute 'wrap' not found in model` (torch 2.14.1;
an AssertionError without a message on 2.6). Found by a probe beside flatcheck's bridge that
rewrote the generated programs' branch op into torch.cond (seed 59: 4 of the first 40 programs,
strict and non-strict); reduced by flatcheck's shrinker (57 -> 15 nodes), then by hand.

unflatten moves each torch.cond's branch graphs (`true_graph_1`, ...) to the module that holds
the call (`_copy_graph_attrs`), looked up by the FQN the call was outlined under. With the first
call of `wrap` dead, that FQN is `wrap.leaf@1`, but there is no module `wrap`: the live call is
held under `wrap@1`. With the first call's result used, or the cond in `wrap` itself, it agrees.
    python3 corpus/torch/unflatten-cond-dead-first-call.py   # exit 1 while present
"""
import sys

import torch


class Leaf(torch.nn.Module):
    def forward(self, x):
        return torch.cond(x.sum() > 0, lambda a: a + 1, lambda a: a - 1, (x,))


class Wrap(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.leaf = Leaf()

    def forward(self, x):
        return self.leaf(x)


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.wrap = Wrap()

    def forward(self, x):
        self.wrap(x)  # the first call's result is unused
        return self.wrap(-x)


def main():
    x = torch.tensor([1.0, 2.0])
    want = Model()(x)
    try:
        got = torch.export.unflatten(torch.export.export(Model(), (x,)))(x)
        outcome = "agrees" if torch.equal(got, want) else f"differs: {got.tolist()}"
    except Exception as e:  # noqa: BLE001 - the failure is what this reports
        outcome = f"raises {type(e).__name__}: {e}".splitlines()[0]
    print("torch", torch.__version__, "| eager", want.tolist(), "| unflatten", outcome)
    return 0 if outcome == "agrees" else 1


if __name__ == "__main__":
    sys.exit(main())
