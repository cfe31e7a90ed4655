"""torch.export.unflatten of a program that preserves the call signature of a module called
twice (`mid.leaf`), below a module whose call signature it does not preserve and whose two
calls differ (`mid`, called with two flags): the second variant of `mid` calls `leaf@1`, which
unflatten removed when it made `leaf` a dispatcher (`RuntimeError: Node referenced nonexistent
target leaf@1`). Found by flatcheck's torch campaign (seed 96 case 262, torch 2.14.1, path
export.strict.decomp_preserve, where the decomposition's dead values leave `a_b.a_buf`
unpreserved); reduced by hand.

UnflattenedModule._dispatch_modules replaces the variants of a preserved module by one
InterpreterModuleDispatcher and renames each `call_module` of `leaf@N` to `leaf`
(elide_call_indices), but finds the calls by a path built from the calling module's own name:
in `mid@1`'s graph that is `mid@1.leaf`, which names no dispatcher, so the call keeps its
`@1`. With those calls renamed too, unflatten agrees. Above a wrapper called twice, the
deduplication of docs/found-bugs.md entry 1 merges the wrapper's calls first: no crash, the
wrong numbers of entry 1, and this crash once entry 1 is fixed. torch 2.6 and 2.14.1, strict
and non-strict export.
    python3 corpus/torch/unflatten-dispatch-misses-call-under-variant.py   # exit 1 while present
"""
import sys

import torch


class Leaf(torch.nn.Module):
    def forward(self, x, flag: bool):
        return -x if flag else x * 1.0


class Mid(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.leaf = Leaf()

    def forward(self, x, flag: bool):
        y = -x if flag else x * 1.0  # the two calls of mid differ
        return self.leaf(y, flag)


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.mid = Mid()

    def forward(self, x):
        return self.mid(x, False), self.mid(x, True)


def main():
    x = torch.tensor([1.0, -2.0])
    want = Model()(x)
    bad = 0
    for strict in (False, True):
        ep = torch.export.export(Model(), (x,), strict=strict,
                                 preserve_module_call_signature=("mid.leaf",))
        try:
            got = torch.export.unflatten(ep)(x)
            ok = all(torch.equal(g, w) for g, w in zip(got, want))
            result = "agrees" if ok else f"DIFFERS: {[g.tolist() for g in got]}"
        except Exception as e:  # noqa: BLE001 - the bug's crash
            ok, result = False, f"raises {type(e).__name__}: {str(e).splitlines()[0][:80]}"
        bad += not ok
        print("torch", torch.__version__, "| strict" if strict else "| non-strict",
              "| unflatten:", result)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
