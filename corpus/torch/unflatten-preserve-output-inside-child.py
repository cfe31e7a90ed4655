"""torch.export.unflatten with a preserved call signature: a preserved module whose result
nothing reads, returning a value its (not preserved) child computes and uses itself, makes
unflatten raise (found by flatcheck's torch campaign, path export.nonstrict.decomp_preserve,
case-34-29, whose program the path exports again with part of its module tree left
unpreserved; reduced by hand). No decomposition is needed: plain export, then unflatten.

`mid` is preserved and returns `old`, a clone of `mid.inner`'s buffer that `mid.inner` computes
and reads itself (it updates the buffer from it). Nothing reads `mid`'s result. unflatten
outlines `mid.inner` (not preserved) with the outputs its callers read in the flat graph, and
no node outside `mid.inner` reads `old`: only `mid`'s preserved signature names it. `mid`'s
graph then lacks the node its signature returns: RuntimeError "Could not find output node
clone". Preserving `mid.inner` too, or reading `mid`'s result, avoids it.
    python3 corpus/torch/unflatten-preserve-output-inside-child.py   # exit 1 while present
"""
import sys

import torch


class Inner(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("buf", torch.full((1,), 0.5))

    def forward(self, x):
        old = self.buf.clone()
        self.buf.copy_(old + x)  # the child reads the value it returns
        return old, -x


class Mid(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = Inner()

    def forward(self, x):
        return self.inner(x)[0]


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.mid = Mid()

    def forward(self, x):
        self.mid(x)  # its result unused
        return x * 2.0


def main():
    x = torch.ones(1)
    eager = Model()
    want = eager(x)
    ep = torch.export.export(Model(), (x,), strict=False,
                             preserve_module_call_signature=("mid",))
    try:
        unflattened = torch.export.unflatten(ep)
        got = unflattened(x)
    except RuntimeError as e:
        print("torch", torch.__version__, "unflatten raises RuntimeError:",
              str(e).splitlines()[0])
        return 1
    ok = torch.equal(got, want) and \
        torch.equal(dict(unflattened.named_buffers())["mid.inner.buf"], eager.mid.inner.buf)
    print("torch", torch.__version__, "unflatten",
          "agrees with eager" if ok else "DIFFERS from eager")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
