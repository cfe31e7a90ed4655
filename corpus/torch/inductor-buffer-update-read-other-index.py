"""torch.compile with Inductor (the default backend) on the CPU: a model that updates a buffer
in place, then reads the new buffer twice, at two indices, gives a wrong value (4.5 for 3.5)
on torch 2.6. `p = buf + cat([a, a])` after `buf.copy_(buf + y)`, and `cat([p[..., :1],
p[..., :1]])`: element 1 of the result takes p[0] computed again from a buffer already
updated, so y is added twice. Found by flatcheck's torch campaign on torch 2.6 (seed 122 case
48, path compile.inductor, judged by its float64 witness: Inductor 1.3e22 where eager and the
float64 run give 9.03e11), shrunk from 77 to 11 nodes by `flatcheck shrink`, written by hand
from the shrink; a second shape (Outer: an outer product of the new value) from seed 123 case
63 on 2.6, and the smallest (Transposed) from case 64; docs/found-bugs.md 70. torch 2.14.1 is
right on all three (2.7 to 2.13 not run). The campaign found them with Inductor's scalar
kernels (Debian's torch without Sleef preloaded builds no vector ones); at these sizes its
vector kernels are right, so the three run with scalar kernels (cpp.simdlen = 1). With the
default (vector) kernels Transposed is wrong from 17 x 17 on: Transposed17.
    python3 corpus/torch/inductor-buffer-update-read-other-index.py   # exit 1 while present
"""
import sys

import torch

FIXED_IN = (2, 14)  # torch2_test.sh: 2.14.1 exits 0; 2.7 to 2.13 not run


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("buf", torch.full((1, 1, 2), 0.5))

    def forward(self, x, y):
        self.buf.copy_(self.buf + y)  # buf: 1.5
        a = x[..., :1]
        p = self.buf + torch.cat([a, a], dim=2)  # 2.5
        b = p[..., :1]
        return y + torch.cat([b, b], dim=2), p + 0.5  # 3.5, 3.0


class Outer(torch.nn.Module):
    """The same with an outer product (seed 123 case 63, shrunk 33 -> 12 nodes): a @ a.t() of
    the buffer's new value, which Inductor computes in the loop that stores it."""
    def __init__(self):
        super().__init__()
        self.register_buffer("buf", torch.full((2, 1), 0.5))

    def forward(self, g):
        a = self.buf + g.reshape(2, 1)  # [1.5, 2.5]
        self.buf.copy_(a)
        return (a @ a.t(),)  # [[2.25, 3.75], [3.75, 6.25]]


class Transposed(torch.nn.Module):
    """The smallest shape (seed 123 case 64, shrunk 244 -> 4 nodes): the buffer's old value read
    transposed after the update; element [1, 0] reads buf[0, 1] after its store."""
    def __init__(self, n=2):
        super().__init__()
        self.register_buffer("buf", torch.arange(float(n * n)).reshape(n, n))

    def forward(self, x):
        old = self.buf.clone()
        self.buf.copy_(old + x)
        return (x + old.t(),)  # [[1, 3], [2, 4]]


def Transposed17():
    """Transposed at 17 x 17, with Inductor's default kernels (vector ones where it can build
    them): 16 elements wrong on 2.6 (16 x 16 and smaller are right)."""
    return Transposed(17)


def run(build, inputs, compiled):
    torch._dynamo.reset()
    model = build()
    call = torch.compile(model, backend="inductor", fullgraph=True) if compiled else model
    outs = call(*[t.clone() for t in inputs])
    return [t.flatten().tolist() for t in outs] + [model.buf.flatten().tolist()]


def main():
    import torch._inductor.config
    torch._inductor.config.compile_threads = 1  # no worker processes (the repro runner forks)
    wrong = 0
    for build, inputs, simdlen in ((Model, (torch.ones(1, 1, 2), torch.ones(1, 1, 2)), 1),
                                   (Outer, (torch.tensor([1.0, 2.0]),), 1),
                                   (Transposed, (torch.ones(2, 2),), 1),
                                   (Transposed17, (torch.ones(17, 17),), None)):
        want = run(build, inputs, False)
        with torch._inductor.config.patch({"cpp.simdlen": simdlen}):
            got = run(build, inputs, True)
        if got != want:
            bad = sum(g != w for gs, ws in zip(got, want) for g, w in zip(gs, ws))
            print(f"torch {torch.__version__}: {build.__name__}, "
                  f"{'scalar' if simdlen else 'default'} kernels: Inductor's outputs and buffer "
                  f"differ from eager's at {bad} elements: {got[0][:4]} for {want[0][:4]} "
                  "(first elements of the first output)")
            wrong += 1
    if wrong:
        return 1
    print(f"torch {torch.__version__}: Inductor agrees with eager on the four models")
    return 0


if __name__ == "__main__":
    sys.exit(main())
