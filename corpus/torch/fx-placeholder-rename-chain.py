"""torch.fx's generated code reads a renamed parameter through the name of another: a forward
`(self, sum, sum_1)` runs with `sum` twice (docs/found-bugs.md 88; silent wrong result, torch
1.13, 2.6 and 2.14.1).

symbolic_trace names each placeholder after its parameter, through the graph's namespace: `sum`
is a builtin, so its placeholder is `sum_1`, and the parameter `sum_1` then gets `sum_2`. The
code generator keeps the parameters' own names in the signature and writes one line per
renamed placeholder, in order: `sum_1 = sum`, then `sum_2 = sum_1`, which reads the line
before, not the argument. torch.export's `ep.module()` writes the same lines. Found by
flatcheck's bridge (every path whose module runs torch.fx's code: fx, export, partition) on
programs emitted with emit-torch --hostile-names; the generator names placeholders `sum` and
`sum_1` on purpose (a builtin and the name its renaming skips).
    python3 corpus/torch/fx-placeholder-rename-chain.py   # exit 1 while present
"""
import sys

import torch
import torch.fx


class Model(torch.nn.Module):
    def forward(self, sum, sum_1):  # noqa: A002 - the names are the bug
        return sum - 2 * sum_1


INPUTS = (torch.tensor([1.0]), torch.tensor([10.0]))


def main():
    print("torch", torch.__version__)
    want = Model()(*INPUTS)
    traced = torch.fx.symbolic_trace(Model())
    got = {"symbolic_trace": traced(*INPUTS)}
    if hasattr(torch, "export"):
        got["export"] = torch.export.export(Model(), INPUTS).module()(*INPUTS)
    print("  eager:", want.tolist())
    for name, value in got.items():
        print(f"  {name}:", value.tolist())
    print(traced.code)
    return 0 if all(torch.equal(v, want) for v in got.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
