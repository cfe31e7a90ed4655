"""torch.export.unflatten unties a non-persistent buffer that two modules share. Non-persistent
buffers are kept in the exported program's `constants`, and unflatten copies each constant
into the modules it builds through a table meant to clone an aliased constant once
("use id map so we don't double-clone aliased constants"); the table is keyed by the id of the
clone, not of the constant, so each name of a shared tensor gets a clone of its own. The
buffer's update then reaches one module's copy only: the other module keeps the initial value
(its state is wrong after a call, on torch 2.6 and 2.14.1), and on torch 2.14.1 a module whose
call signature export preserved reads its stale copy, a silent wrong result. Persistent buffers
(the control) come from the state dict, where shared tensors stay shared. Found by flatcheck:
generated programs emitted with their buffers non-persistent (seed 216), path
export.nonstrict.unflatten, torch 2.14.1.

    python3 corpus/torch/unflatten-aliased-constant-cloned-twice.py   # exit 1 while present
"""
import sys
import warnings

import torch

warnings.simplefilter("ignore")


class Writer(torch.nn.Module):
    def __init__(self, buf, persistent):
        super().__init__()
        self.register_buffer("buf", buf, persistent=persistent)

    def forward(self, x):
        self.buf.add_(x)
        return x + self.buf


class Reader(torch.nn.Module):
    def __init__(self, buf, persistent):
        super().__init__()
        self.register_buffer("buf", buf, persistent=persistent)

    def forward(self, x):
        return x * self.buf


class Model(torch.nn.Module):
    def __init__(self, persistent):
        super().__init__()
        buf = torch.zeros(2)  # one tensor, a buffer of both children
        self.a = Writer(buf, persistent)
        self.b = Reader(buf, persistent)

    def forward(self, x):
        return self.a(x), self.b(x)


def calls(module, x):
    """Two calls' outputs, then the reader's buffer."""
    outs = [[o.tolist() for o in module(x.clone())] for _ in range(2)]
    return outs, module.b.buf.tolist()


def wrong(persistent, preserve):
    """What unflatten of the non-strict export gets wrong against eager, or None."""
    x = torch.ones(2)
    want = calls(Model(persistent), x)
    ep = torch.export.export(Model(persistent), (x,), strict=False,
                             preserve_module_call_signature=preserve)
    got = calls(torch.export.unflatten(ep), x)
    if got == want:
        return None
    return f"outputs {got[0]}, b.buf {got[1]}; eager: outputs {want[0]}, b.buf {want[1]}"


def main():
    if not hasattr(torch, "export") or not hasattr(torch.export, "unflatten"):
        print(f"torch {torch.__version__} has no torch.export.unflatten: cannot show the bug")
        return 77
    print(f"torch {torch.__version__}")
    bad = False
    for preserve in ((), ("b",)):
        control = wrong(True, preserve)
        if control:
            print(f"FAIL: the control (persistent buffers, preserved {preserve}) is wrong: "
                  f"{control}: not this bug")
            return 2
        got = wrong(False, preserve)
        print(f"  non-persistent, preserved {preserve}: " + (got or "as eager"))
        bad = bad or bool(got)
    if bad:
        print("FAIL: unflatten gives each name of the shared non-persistent buffer its own "
              "clone (bug present)")
        return 1
    print("ok: the shared non-persistent buffer stays shared")
    return 0


if __name__ == "__main__":
    sys.exit(main())
