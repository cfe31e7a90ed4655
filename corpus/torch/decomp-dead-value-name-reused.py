"""ExportedProgram.run_decompositions() of a program exported with a preserved call signature:
the preserved module `c` returns a value nothing reads, and an in-place op (a step counter's
`self.n.add_(1)`, as BatchNorm's num_batches_tracked) comes before it in the graph. The
decomposed program's signature of `c` still names the dead value's old name, which the new
trace has given to another node, so the verifier passes and `torch.export.unflatten` takes
that node for `c`'s output: the unflattened `c` returns its input where it should return
`x + 1.0` (a silent wrong result of the preserved module; where that other node lies outside
`c`, unflatten raises `Could not find output node` instead). Found by flatcheck's torch
campaign (emit-torch --step-counters, case 4 of seed 222, paths export.strict.decomp_preserve
and export.nonstrict.decomp_preserve, torch 2.6 and 2.14.1: `Could not find output node
add_2`); written by hand from the case's shape.

export names `c`'s dead `x + 1.0` add_1 (the counter's in-place op is add_, the caller's
`x + 2.0` add). run_decompositions traces again: the in-place op becomes the functional add,
named add, which moves the caller's `x + 2.0` to add_1, and dead code elimination drops
`x + 1.0`. `_get_updated_module_call_graph` keeps the signature's name it cannot map (the
mechanism of docs/found-bugs.md 19), and add_1 is now `c`'s input. Without the in-place op, the
old name names nothing, and the verifier refuses it (entry 19's SpecViolationError): the
control below.
    python3 corpus/torch/decomp-dead-value-name-reused.py   # exit 1 while present
"""
import sys

import torch


class C(torch.nn.Module):
    def forward(self, x):
        return x + 1.0, x.relu()


class Model(torch.nn.Module):
    def __init__(self, count=True):
        super().__init__()
        self.c = C()
        self.count = count
        self.register_buffer("n", torch.zeros((), dtype=torch.int64))

    def forward(self, x):
        if self.count:
            self.n.add_(1)
        return self.c(x + 2.0)[1] + 3.0  # c's first output: read by nothing


def decomposed(count):
    x = torch.tensor([0.5, -1.0])
    ep = torch.export.export(Model(count), (x,), strict=False,
                             preserve_module_call_signature=("c",))
    return ep.run_decompositions()


try:
    decomposed(count=False)
    print("control (no in-place op): run_decompositions succeeds")
except Exception as e:  # noqa: BLE001 - entry 19's error, the control's expected outcome
    print(f"control (no in-place op): run_decompositions raises {type(e).__name__} (entry 19):",
          str(e).splitlines()[0])
dec = decomposed(count=True)
outputs = [o.name for e in dec.module_call_graph if e.fqn == "c" for o in e.signature.outputs]
print("torch", torch.__version__, "c's outputs after run_decompositions:", outputs)
y = torch.tensor([0.25, 2.0])
want = C()(y)
try:
    got = torch.export.unflatten(dec).c(y)
except Exception as e:  # noqa: BLE001 - the other symptom: the node lies outside c
    print(f"unflatten raises {type(e).__name__}:", str(e).splitlines()[0])
    sys.exit(1)
print("unflattened c(y):", [t.tolist() for t in got], " eager C()(y):", [t.tolist() for t in want])
sys.exit(0 if all(torch.equal(g, w) for g, w in zip(got, want)) else 1)
