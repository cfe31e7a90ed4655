"""torch.compile with Inductor (the default backend) on the CPU, with dynamic shapes: a tensor
whose size along a dimension is an expression of a symbolic size (a chunk's last piece, a
slice), broadcast against a larger one where that expression is 1 at run time, is read as if it
had the larger size. The generated loop reads past its end: wrong values, some of them from
memory outside the tensor. `c = torch.chunk(-x, 2); c[1] + c[0]` with x of 3 elements: eager
gives [c1 + c0[0], c1 + c0[1]], Inductor [c1 + c0[0], c1[1] + c0[1]] with c1[1] the element
after x's end. Found by flatcheck's torch campaign on torch 2.6 and 2.14.1 (seed 124 case 6,
path compile.inductor.dynamic, judged by its float64 witness: Inductor 1.59375 where eager and
the float64 run give 2.15625 at inputs of 6 elements, after 4 and 8 made the size symbolic),
shrunk from 42 to 7 nodes by `flatcheck shrink`, written by hand from the shrink, then the same
class in three other shapes; docs/found-bugs.md 71.
    python3 corpus/torch/inductor-dynamic-size-one-expression-broadcast.py   # exit 1 while present
"""
import sys

import torch


def chunked(x):
    """The shrunk case's shape: the last piece of chunk(2) of 3 elements has 1 element."""
    c = torch.chunk(-x, 2)
    return c[1] + c[0]


def sliced(x):
    """A slice from n // 2 * 2: one element when n is odd, broadcast against n // 2."""
    h = x.relu()
    n = h.shape[0]
    return h[n // 2 * 2:] * h[: n // 2]


def gated(x):
    """A gated unit (a, b = chunk(2) along the features) at an odd width: b has 1 column."""
    a, b = torch.chunk(x.exp(), 2, dim=1)
    return a * b


def same(want, got):
    return want.shape == got.shape and torch.allclose(want, got, rtol=1e-5, atol=0.0)


def compiled(f, xs, dynamic):
    torch._dynamo.reset()
    call = torch.compile(f, backend="inductor", fullgraph=True, dynamic=dynamic)
    return [(x, f(x), call(x)) for x in xs]


def main():
    import torch._inductor.config
    torch._inductor.config.compile_threads = 1  # no worker processes (the repro runner forks)
    runs = [(f"{f.__name__}, dynamic=True", compiled(f, [x], True)) for f, x in (
        (chunked, torch.arange(3.0) + 1),
        (sliced, torch.arange(5.0) + 1),
        (gated, torch.arange(6.0).reshape(2, 3) / 4))]
    # What the campaign did: automatic dynamic shapes (a size that changes compiled again with
    # that size symbolic), 4 elements, then 8, then 6: the last piece of chunk(2) of 3.
    runs.append(("the shrunk case, automatic dynamic shapes at 4, 8, 6 elements",
                 compiled(lambda x: chunked(torch.chunk(x, 2)[1]),
                          [torch.arange(float(n)) + 1 for n in (4, 8, 6)], None)))
    wrong = 0
    for name, results in runs:
        for x, want, got in results:
            if not same(want, got):
                print(f"torch {torch.__version__}: {name}: input {list(x.shape)}: Inductor "
                      f"{got.tolist()}, eager {want.tolist()}")
                wrong += 1
    if wrong:
        return 1
    print(f"torch {torch.__version__}: Inductor agrees with eager on every shape")
    return 0


if __name__ == "__main__":
    sys.exit(main())
