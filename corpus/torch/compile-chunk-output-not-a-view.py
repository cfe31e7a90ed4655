"""torch.compile with Inductor returns a chunk of its input (an output of a multi-output view:
chunk, split) as a tensor that shares the input's storage but is not an autograd view of it
(`_base` None), where eager and aot_eager return a view. Two consequences, torch 2.6 and 2.14.1:

1. A graph break after the chunk, then an in-place update of the input: the graph after the
   break is given the chunk and the input, which share storage but are not differentiable views
   of each other, and Inductor's compile raises "aot_autograd() does not yet handle
   non-differentiable view input mutations"; eager and aot_eager run (x.grad [[1, 0]]).
2. The chunk returned, the input then updated in place by the caller and the chunk used in a
   product: eager and aot_eager refuse the backward ("Output 0 of Split is a view and its base
   ... has been modified inplace"); Inductor's backward runs and gives x.grad [[4, 0]], which
   leaves out the update's factor (the chunk is 2x afterwards: d(a*a)/dx is 8): a silent wrong
   gradient where eager raises.
Found by flatcheck's gradient paths (grad.compile.breaks_inductor, seed 180 case 21, emitted
with --update-inputs; shrunk to 2 nodes) and written by hand from it.
    python3 corpus/torch/compile-chunk-output-not-a-view.py   # exit 1 while present
"""
import sys

import torch


def broken(x):
    a, b = torch.chunk(x, 2, dim=1)
    torch._dynamo.graph_break()
    out = a.clone()
    x.add_(out.sum())
    return out


def chunk(x):
    a, b = torch.chunk(x, 2, dim=1)
    return a


def grad_after_break(backend):
    torch._dynamo.reset()
    fn = broken if backend is None else torch.compile(broken, backend=backend)
    leaf = torch.ones(1, 2, requires_grad=True)
    fn(leaf.clone()).sum().backward()  # a clone: the input updated is no leaf
    return leaf.grad.tolist()


def grad_after_update(backend):
    torch._dynamo.reset()
    fn = chunk if backend is None else torch.compile(chunk, backend=backend, fullgraph=True)
    leaf = torch.ones(1, 2, requires_grad=True)
    x = leaf.clone()
    a = fn(x)
    x.mul_(2.0)  # the caller updates the input; eager's chunk, a view, sees it and its version
    (a * a).sum().backward()
    return leaf.grad.tolist()


def outcome(run, backend):
    try:
        return run(backend)
    except Exception as e:  # noqa: BLE001 - eager's own refusal is an outcome here
        lines = [line for line in str(e).splitlines() if line.strip()]
        return f"raises {type(e).__name__}: {' '.join(lines[:2])[:160]}"


def main():
    failed = False
    for run in (grad_after_break, grad_after_update):
        want = outcome(run, None)
        for backend in ("aot_eager", "inductor"):
            got = outcome(run, backend)
            print(f"torch {torch.__version__}: {run.__name__}, {backend}: {got} (eager {want})")
            failed |= (isinstance(got, str)) != (isinstance(want, str)) or (
                not isinstance(got, str) and got != want)
    if failed:
        print("FAIL: a compiled chunk of an input does not act as eager's view")
        return 1
    print("ok: every compiled chunk acts as eager's view")
    return 0


if __name__ == "__main__":
    sys.exit(main())
