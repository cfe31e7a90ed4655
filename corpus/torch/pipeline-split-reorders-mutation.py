"""torch.distributed.pipelining.pipeline runs a stage that updates a buffer in place before an
earlier, independent stage that reads the buffer — a silent wrong result (found by flatcheck's
torch campaign, path pipeline, seed 95 case 159 with state read as aliases; reduced by hand;
torch 2.6 and 2.14.1).

`r` reads `u.buf`, then `u` adds its input into `u.buf`; both take `a` from the first stage and
neither reads the other's result. Split points at the beginnings of `r` and `u` make three
stages. pipelining splits the exported graph with `split_module` in its default order
(keep_original_order=False), which orders the stages by their data dependencies only and takes
the ready ones last in, first out: the root graph runs stage 2 (`u`, the update) before stage 1
(`r`, the read), so the read sees the updated buffer. This is docs/found-bugs.md 22
(`split_module`'s default order), reached through pipelining.
    python3 corpus/torch/pipeline-split-reorders-mutation.py   # exit 1 while present
"""
import sys

import torch
from torch.distributed.pipelining import SplitPoint, pipeline


class Reader(torch.nn.Module):
    def forward(self, a, buf):
        return buf * a


class Updater(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("buf", torch.ones(2))

    def forward(self, a):
        self.buf.add_(a)
        return a * 2.0


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.r = Reader()
        self.u = Updater()

    def forward(self, x):
        a = x + 1.0
        b = self.r(a, self.u.buf)  # reads the buffer before the update
        c = self.u(a)  # updates it in place
        return b, c


def main():
    x = torch.ones(2)
    want = Model()(x)
    pipe = pipeline(Model(), mb_args=(x,),
                    split_spec={"r": SplitPoint.BEGINNING, "u": SplitPoint.BEGINNING})
    got = pipe(x)
    order = [n.target for n in pipe.split_gm.graph.nodes if n.op == "call_module"]
    ok = all(torch.equal(g, w) for g, w in zip(got, want))
    print("torch", torch.__version__, "the pipe runs", order, "eager", [t.tolist() for t in want],
          "pipe", [t.tolist() for t in got])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
