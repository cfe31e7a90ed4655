"""ExportedProgram.run_decompositions() raises `RuntimeError: cond_true might be aliasing the input
or the output!` on a program whose torch.cond takes two operands that are views of one tensor
(the two pieces of a torch.chunk), though each branch returns a clone and export itself accepted
the program (torch 2.14.1; torch 2.6 decomposes it and agrees). torch.compile with an AOT backend
(aot_eager here) raises the same error on 2.14.1 (2.6 compiles it), and so does make_fx of
torch.func.functionalize of the model (2.6 traces it; make_fx without functionalize traces it on
both). Found by flatcheck's bridge run with --branch cond (the generated programs' branch op
taken by torch.cond) on the decomposition paths: 1 of the first 7 programs of seed 61, strict and
non-strict; written by hand. The functional trace's form: seed 184 case 126 on fx.make_fx,
fx.reinplace and fx.cse.

The functionalization of the branch graphs checks its inputs for aliasing one another
(`has_potential_input_alias_or_mutation`: an input-input alias counts as "aliasing the input or
the output") and the two chunk pieces share a storage. With operands that do not (a piece and a
new tensor, or one piece alone) it agrees.
    python3 corpus/torch/decomp-cond-operands-share-storage.py   # exit 1 while present
"""
import re
import sys

import torch

# torch 2.6 decomposes it and agrees (exit 0); 2.7 to 2.10 not run; 2.11 and 2.14.1 have it
PRESENT_FROM = (2, 11)


def first(a, b):
    return a.clone()


def second(a, b):
    return b.clone()


class Model(torch.nn.Module):
    def forward(self, x):
        a, b = torch.chunk(x, 2, dim=0)  # two views of x
        return torch.cond(x.sum() > 0, first, second, (a, b))


def main():
    x = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    want = Model()(x)
    ep = torch.export.export(Model(), (x,))
    outcomes = ["export agrees" if torch.equal(ep.module()(x), want) else "export differs"]
    try:
        got = ep.run_decompositions().module()(x)
        outcomes.append("decomposed agrees" if torch.equal(got, want) else
                        f"decomposed differs: {got.tolist()}")
    except Exception as e:  # noqa: BLE001 - the failure is what this reports
        outcomes.append(f"run_decompositions raises {type(e).__name__}: "
                        f"{str(e).splitlines()[0][:100]}")
    try:  # torch.compile's AOT backends functionalize the branches the same way
        got = torch.compile(Model(), backend="aot_eager", fullgraph=True)(x)
        outcomes.append("compiled agrees" if torch.equal(got, want) else
                        f"compiled differs: {got.tolist()}")
    except Exception as e:  # noqa: BLE001
        lines = str(e).strip().splitlines()  # the backend's own error on its second line
        outcomes.append(f"torch.compile raises {type(e).__name__}: "
                        f"{next((x for x in lines if 'Error: ' in x), lines[0])[:100]}")
    try:  # make_fx of functionalize (as AOTAutograd traces) checks the branches the same way
        from torch.fx.experimental.proxy_tensor import make_fx
        got = make_fx(torch.func.functionalize(Model()))(x)(x)
        outcomes.append("functional trace agrees" if torch.equal(got, want) else
                        f"functional trace differs: {got.tolist()}")
    except Exception as e:  # noqa: BLE001
        inner = re.search(r"cond_\w+ might be aliasing the input or the output!", str(e))
        outcomes.append(f"make_fx(functionalize) raises {type(e).__name__}: " +
                        (f"(RuntimeError) {inner.group(0)}" if inner else
                         str(e).strip().splitlines()[0][:100]))
    print("torch", torch.__version__, "| eager", want.tolist(), "|", " | ".join(outcomes))
    return 0 if outcomes == ["export agrees", "decomposed agrees", "compiled agrees",
                             "functional trace agrees"] else 1


if __name__ == "__main__":
    sys.exit(main())
