"""torch.export.unflatten fails on a program run_decompositions() made, where the program as
exported unflattens and runs right, in two shapes of one cause: the decomposition leaves
nodes without a module stack.
  (a) a buffer set to an input as it is (`self.buf.copy_(x)`): the buffer's new value is the
      placeholder `x`, and the copy_ unflatten makes for it takes the placeholder's metadata:
      `RuntimeError: Unable to find nn_module_stack for node copy_` (torch 2.6;
      `copy__default` on 2.14.1);
  (b) a view of a child's buffer (`self.c.buf.chunk(2, 1)[0]`) returned after an in-place
      update of the buffer (`add_`): the view the decomposition takes again after the update
      has no module stack (2.6: `Unable to find nn_module_stack for node split_with_sizes_1`)
      or an empty one (2.14.1: `ValueError: not enough values to unpack` in
      _fix_nn_module_stacks).
Strict and non-strict export alike. `self.buf.copy_(x + 0)`, or returning `a + b` instead of
the view itself, unflattens. (Found by flatcheck's export.strict.decomp path with the bridge's
--reads alias, where a buffer read is the buffer itself: seed 94, cases 170 and 2816, one
shrunk from 164 to 7 nodes; reduced by hand.)
    python3 corpus/torch/decomp-unflatten-stackless-node.py   # exit 1 while present
"""
import sys

import torch


class SetToInput(torch.nn.Module):  # (a)
    def __init__(self):
        super().__init__()
        self.register_buffer("buf", torch.ones(1, 2))

    def forward(self, x):
        self.buf.copy_(x)
        return x * 2


class Child(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("buf", torch.ones(1, 2))

    def forward(self, x):
        return self.buf.chunk(2, 1)[0], x * 2


class ReturnsView(torch.nn.Module):  # (b)
    def __init__(self):
        super().__init__()
        self.c = Child()

    def forward(self, x):
        a, b = self.c(x)
        self.c.buf.add_(x)
        return a, b


def unflattened_agrees(build, x):
    """(whether unflatten of the decomposed program runs as eager, what it said)."""
    dec = torch.export.export(build(), (x,), strict=False).run_decompositions()
    try:
        u = torch.export.unflatten(dec)
    except Exception as e:  # noqa: BLE001 - the class's error
        return False, f"unflatten raises {type(e).__name__}: {str(e).splitlines()[0][:90]}"
    got, want = u(x), build()(x)
    same = all(torch.equal(g, w) for g, w in zip(torch.utils._pytree.tree_leaves(got),
                                                 torch.utils._pytree.tree_leaves(want)))
    return same, "unflattens; results " + ("agree" if same else "differ")


def main():
    x = torch.full((1, 2), 3.0)
    bad = 0
    for name, build in (("(a) buf.copy_(x)", SetToInput), ("(b) a view returned", ReturnsView)):
        ok, said = unflattened_agrees(build, x)
        print("torch", torch.__version__, "|", name, "|", said)
        bad += not ok
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
