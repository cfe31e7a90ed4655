"""torch.export.unflatten of a decomposed program that updates a user input in place: the
unflattened module returns the input's new value besides its outputs, and its call fails
(`ValueError: treespec.unflatten(leaves): leaves has length 2 but the spec refers to a pytree
that holds 1 items`). torch 2.6's `_inplace_buffer_mutations` turns the buffer mutations of the
functional graph back into copy_ nodes and drops them from the outputs, not the user input
mutations; without run_decompositions() the graph keeps the in-place op and it works. Strict and
non-strict alike. Found by flatcheck's torch campaign on torch 2.6 (seed 116, programs emitted
with --update-inputs, paths export.*.decomp); docs/found-bugs.md 68. torch 2.14.1 agrees:
pytorch/pytorch#149206 (March 2025) made the pass handle input mutations too.
    python3 corpus/torch/unflatten-decomp-input-update-outputs.py   # exit 1 while present
"""
import sys

import torch

FIXED_IN = (2, 11)  # torch2_test.sh: 2.14.1 exits 0; 2.7 to 2.11 not run (the fix's date)


class Scale(torch.nn.Module):
    def forward(self, x):
        return x * 2.0


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = Scale()

    def forward(self, x):
        y = self.scale(x)
        x.add_(1.0)  # the caller's tensor, updated in place
        return y


def main():
    x = torch.ones(2)
    want = Model()(x)
    want_x = x
    failed = 0
    for strict in (False, True):
        ep = torch.export.export(Model(), (torch.ones(2),), strict=strict)
        x = torch.ones(2)
        try:
            got = torch.export.unflatten(ep.run_decompositions())(x)
        except Exception as e:  # noqa: BLE001 - the failure this repro shows
            print(f"torch {torch.__version__}, strict={strict}: the unflattened module raised "
                  f"{type(e).__name__}: {e}")
            failed = 1
            continue
        if not (torch.equal(got, want) and torch.equal(x, want_x)):
            print(f"torch {torch.__version__}, strict={strict}: got {got.tolist()} and the input "
                  f"{x.tolist()}, want {want.tolist()} and {want_x.tolist()}")
            failed = 1
            continue
        print(f"torch {torch.__version__}, strict={strict}: the unflattened module agrees")
    return failed


if __name__ == "__main__":
    sys.exit(main())
