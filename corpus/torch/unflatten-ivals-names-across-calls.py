"""torch.export.unflatten of a decomposed program (ExportedProgram.run_decompositions()): a
module called twice that updates its buffer, inside a preserved module, and the buffer updated
again outside it, makes unflatten raise IndexError (found by flatcheck's torch campaign, path
export.strict.decomp_preserve, case-33-118; reduced by hand). Present on torch 2.11 and
2.14.1; torch 2.6 unflattens it and agrees (2.7 to 2.10 not run).

After run_decompositions every buffer update is functional (`copy = aten.copy(rm, add)`). A
preserved module's caller that reads an update made inside it (here the root, reading
`p.inner.rm` after `p`) has unflatten record the update's node name under the module that made
it (`_IVals.read`, keyed by module path, not by call), and later replay the update by putting
`copy_(node.args[0], node)` after every node of that name in the graph of *every* call of the
module (`_IVals.update`). The second call's graph holds the first call's update as a
placeholder of the same name (`copy`): `copy_` of a placeholder's first argument, which it does
not have: `IndexError: tuple index out of range`.
    python3 corpus/torch/unflatten-ivals-names-across-calls.py   # exit 1 while present
"""
import sys

import torch

PRESENT_FROM = (2, 11)  # torch 2.6 agrees (2.7 to 2.10 not run; 2.11 and 2.14.1 have it)


class Inner(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("rm", torch.zeros(2))

    def forward(self, x):
        self.rm.copy_(self.rm + x)
        return self.rm.clone(), x + 1.0


class P(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = Inner()

    def forward(self, x):
        a, b = self.inner(x)
        c, d = self.inner(a)  # the second call reads the first call's update
        return d, c


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.p = P()

    def forward(self, x):
        out = self.p(x)
        self.p.inner.rm.copy_(self.p.inner.rm * 2.0)  # read and update it outside `p`
        return out


def main():
    x = torch.ones(2)
    eager = Model()
    want = eager(x)
    ep = torch.export.export(Model(), (x,), strict=False, preserve_module_call_signature=("p",))
    try:
        unflattened = torch.export.unflatten(ep.run_decompositions())
        got = unflattened(x)
    except Exception as e:  # noqa: BLE001 - the bug's crash
        print("torch", torch.__version__, f"unflatten of the decomposed program raises "
              f"{type(e).__name__}: {str(e).splitlines()[0]}")
        sys.exit(1)
    ok = all(torch.equal(g, w) for g, w in zip(got, want)) and \
        torch.equal(dict(unflattened.named_buffers())["p.inner.rm"], eager.p.inner.rm)
    print("torch", torch.__version__, "unflatten of the decomposed program",
          "agrees with eager" if ok else "DIFFERS from eager")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":  # tests/torch/bridge_units.py imports the model
    main()
