"""torch.cond raises, in eager mode and in export, when its two branches return tensors of one
shape that differ only in the stride of a dimension of size 1, a layout torch itself counts as
contiguous: `RuntimeError: It seems one of cond's output stride is not a simple accumulative
multiplication of sizes ... Hint: can call t.contiguous()` (torch 2.14.1). The hint cannot help:
`t.contiguous()` returns such a tensor unchanged (it is contiguous), and `t.clone()` keeps its
strides. torch 2.6 runs and exports it. Found by flatcheck's bridge (the export.*.cond paths,
the generated programs' branch op taken by torch.cond): 12 of 200 programs of seed 60 on
2.14.1, strict and non-strict; written by hand from the failing programs' shape (a piece of a
chunk of a chunk, size [1, 1] and stride (2, 1), against a new [1, 1] tensor).

A branch result cloned with memory_format=torch.contiguous_format (strides recomputed) runs.
    python3 corpus/torch/cond-size-one-stride-rejected.py   # exit 1 while present
"""
import sys

import torch

PRESENT_FROM = (2, 11)  # torch 2.6 runs it (exit 0); 2.7 to 2.10 not run; 2.11 and 2.14.1 have it


def first(a, b):
    return a.clone()


def second(a, b):
    return b.clone()


class Model(torch.nn.Module):
    def forward(self, x):
        a = torch.chunk(torch.chunk(x, 2, dim=0)[0], 2, dim=1)[0]  # [1, 1], stride (2, 1)
        b = a + 1  # [1, 1], stride (1, 1)
        return torch.cond(x.sum() > 0, first, second, (a, b))


def main():
    x = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    want = torch.chunk(torch.chunk(x, 2, dim=0)[0], 2, dim=1)[0].clone()  # x.sum() > 0
    outcomes = []
    for what, run in (("eager", lambda: Model()(x)),
                      ("export", lambda: torch.export.export(Model(), (x,)).module()(x))):
        try:
            got = run()
            outcomes.append(f"{what} agrees" if torch.equal(got, want) else
                            f"{what} differs: {got.tolist()}")
        except Exception as e:  # noqa: BLE001 - the failure is what this reports
            outcomes.append(f"{what} raises {type(e).__name__}: "
                            f"{str(e).splitlines()[0][:120]}")
    print("torch", torch.__version__, "|", " | ".join(outcomes))
    return 0 if all(o.endswith("agrees") for o in outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
