"""ExportedProgram.run_decompositions() of a program exported with a preserved call signature
whose input or output is the result of a `torch.no_grad()` block fails: `SpecViolationError:
Input getitem does not exist in the graph.` (or `Output getitem_1 ...`). Found by flatcheck's
torch campaign with the generated branch op's value computed under torch.no_grad() (--branch
nograd, seed 63, both decomp_preserve paths, torch 2.14.1); written by hand from the failing
programs.

export records the block as a higher-order op node, `wrap_with_set_grad_enabled`, whose results
are read through `getitem` nodes; a preserved signature that takes or returns such a value names
the getitem. run_decompositions traces the program again, inlining the block, and maps each
signature name to the new graph by the provenance (`from_node`) of the new nodes; no new node
has the getitem's provenance, so the signature keeps the old name, which the new graph lacks,
and the verifier refuses it. Strict and non-strict export; torch 2.6 and 2.14.1.
    python3 corpus/torch/decomp-preserve-grad-region-value.py   # exit 1 while present
"""
import sys

import torch


class Child(torch.nn.Module):
    def forward(self, x):
        with torch.no_grad():
            return x.clone()  # the call's output is the block's result


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.c = Child()

    def forward(self, x):
        with torch.no_grad():
            y = x * 2.0  # the call's input is the block's result
        return self.c(y) + 1.0


def main():
    x = torch.tensor([1.0, 2.0])
    model = Model()
    outcomes = []
    for strict in (False, True):
        ep = torch.export.export(model, (x,), strict=strict,
                                 preserve_module_call_signature=("c",))
        try:
            got = ep.run_decompositions().module()(x)
            outcomes.append("agrees" if torch.equal(got, model(x)) else
                            f"differs: {got.tolist()}")
        except Exception as e:  # noqa: BLE001 - the bug's crash
            outcomes.append(f"raises {type(e).__name__}: {str(e).splitlines()[0][:100]}")
    signature = ep.module_call_graph[1].signature
    print("torch", torch.__version__, "| signature of c:", signature.inputs, signature.outputs,
          "| non-strict:", outcomes[0], "| strict:", outcomes[1])
    return 0 if outcomes == ["agrees", "agrees"] else 1


if __name__ == "__main__":
    sys.exit(main())
