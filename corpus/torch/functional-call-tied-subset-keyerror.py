"""torch.func.functional_call (tie_weights=True, the default) raises KeyError when two or more,
but not all, names of one tied tensor are given. Found by flatcheck's torch campaign (seed 77,
torch 2.14.1, paths export.nonstrict.functional_call and export.strict.functional_call: the
eager model's state run through functional_call on its unflattened module, whose call variants
`n@1` hold the module's tensors under names the eager model does not have); written by hand.

functional_call is documented to accept several names of a tied tensor when they are given the
same value, and to give that value to every name of the tensor. _untie_named_tensors_map
(torch/nn/utils/stateless.py) checks that the given names of a tied tensor hold one value by
looking up every name of the tensor among the given ones; a name not given raises KeyError.
With every name given, the call gives what eager gives. torch 2.6 and 2.14.1.
    python3 corpus/torch/functional-call-tied-subset-keyerror.py   # exit 1 while present
"""
import sys

import torch


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.ones(2))
        self.u = self.w  # the same parameter under a second name
        self.v = self.w  # and a third

    def forward(self, x):
        return x * self.w + self.u * self.v


def main():
    model = Model()
    new = torch.full((2,), 2.0)
    x = torch.ones(2)
    want = x * new + new * new  # every name of the tensor holds `new`
    try:
        got = torch.func.functional_call(model, {"w": new, "u": new}, (x,))
    except KeyError as e:
        print(f"torch {torch.__version__}: functional_call with two of the three names of a "
              f"tied parameter raised KeyError: {e}")
        return 1
    if not torch.equal(got, want):
        print(f"torch {torch.__version__}: functional_call gave {got.tolist()}, want "
              f"{want.tolist()}")
        return 1
    print(f"torch {torch.__version__}: functional_call gave every name of the tied parameter "
          f"the new value")
    return 0


if __name__ == "__main__":
    sys.exit(main())
