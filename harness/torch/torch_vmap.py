"""The bridge's vmap paths (docs/torch.md): torch.func.vmap over a batch of the program's inputs,
each element of the batch judged against torch eager of the program run on that element alone.

  func.vmap        a batch of BATCH inputs stacked along dimension 0: the program's own, then each
                   made by ELEMENTS (x + 1, x * 2); torch.func.functional_call runs the model with
                   every buffer replaced by BATCH stacked copies of it (so that each element has
                   its own state to update in place), parameters left as they are (unbatched,
                   shared by every element, as vmap over data is used); the calls, each one vmap
                   of the whole forward, the stacked buffers carried from call to call
  func.vmap.last   the same with the batch dimension last in every input and buffer (in_dims
                   their rank), so each batching rule meets a batch dimension that is not the
                   first and tensors whose strides vmap must read

Expectation: element k of every output and buffer, after each call, must be what torch eager
gives on element k's inputs (a fresh model each, its calls in order). vmap turns a matmul into a
batched one and a reduction over a dimension into one over a stacked tensor, whose kernels may
sum in another order: an element that is not bit-identical is judged by the float64 witness
(torch_inductor.witness, on that element's inputs), so rounding is excused and a wrong value
(another element's, a stale buffer) is a mismatch naming the element.
"""
import torch

from torch_compare import outputs_of, tensors_of
from torch_dynamic import eager_at, inputs_of
from torch_export import failure, verdict
from torch_functional import one_per_slot
import torch_inductor

PATHS = ("func.vmap", "func.vmap.last")
ELEMENTS = (lambda v: v + 1, lambda v: v * 2)  # the batch's elements after the program's own
BATCH = 1 + len(ELEMENTS)


def available():
    """None where torch.func.vmap can run here; else why not."""
    if not hasattr(torch, "func") or not hasattr(torch.func, "functional_call"):
        return f"torch {torch.__version__} has no torch.func.vmap with functional_call (>= 2.0)"
    return None


def batch_dim(t, last):
    """The dimension a tensor's batch goes in: 0, or its rank (last)."""
    return t.dim() if last else 0


def stacked(tensors, last):
    """The tensors (one per element) stacked along their batch dimension."""
    return torch.stack(tensors, dim=batch_dim(tensors[0], last)).contiguous()


def element(t, k, dim):
    return t.select(dim, k).clone()


def vmapped_calls(p, batches, last):
    """(outputs per element per call, state per element) of one model run under vmap: the
    calls, each on fresh stacks of the batch's inputs. Every buffer's every name is given its
    one stack, once per (module object, attribute) with tie_weights=False: functional_call's
    tie_weights swaps a module held under two paths twice and leaves the given tensor in it
    (pytorch/pytorch#164759, the bridge's functional-call-shared-module-restore), which splits
    the ties of the next call."""
    model = p.build()
    own = tensors_of(model, params=False)
    stacks = {}
    for t in own.values():
        if id(t) not in stacks:
            stacks[id(t)] = stacked([t.detach().clone() for _ in range(BATCH)], last)
    state = one_per_slot(model, {fqn: stacks[id(t)] for fqn, t in own.items()})
    state_dims = {fqn: batch_dim(own[fqn], last) for fqn in state}

    def forward(buffers, *xs):
        return torch.func.functional_call(model, buffers, xs, tie_weights=False)

    outs = [[] for _ in range(BATCH)]
    with torch.no_grad():
        for _ in range(p.CONFIG["calls"]):
            xs = [stacked([b[i].clone() for b in batches], last) for i in range(len(p.INPUTS))]
            dims = tuple(x.dim() - 1 if last else 0 for x in xs)
            got = outputs_of(torch.func.vmap(forward, in_dims=(state_dims, *dims),
                                             out_dims=0)(state, *xs))
            for k in range(BATCH):
                after = [element(x, k, d) for x, d in zip(xs, dims)] \
                    if p.CONFIG.get("update_inputs") else []
                outs[k].append([o[k].clone() for o in got] + after)
    finals = [{fqn: element(stacks[id(t)], k, batch_dim(t, last)) for fqn, t in own.items()}
              for k in range(BATCH)]
    return outs, finals


def judged(p, inputs, outs, state, eager, cache):
    """One element's verdict: bit for bit, else rounding against the float64 witness on its
    inputs."""
    with inputs_of(p, inputs):
        return torch_inductor.judged(p, outs, state, eager, cache, "vmap")


def vmap_path(p, eager, cache, last):
    batches = [[t.clone() for t in p.INPUTS]] + [[f(t) for t in p.INPUTS] for f in ELEMENTS]
    outs, finals = vmapped_calls(p, batches, last)
    worst = None
    for k in range(BATCH):
        want = eager if k == 0 else eager_at(p, batches[k])
        if want is None:
            return {"status": "skipped", "skip": f"vmap: torch eager refuses batch element {k}"}
        status, why = judged(p, batches[k], outs[k], finals[k], want, cache if k == 0 else {})
        if status == "mismatch":
            return verdict(status, f"batch element {k}: {why}")
        if status == "excused" and worst is None:
            worst = f"batch element {k}: {why}"
    return verdict("excused", worst) if worst else verdict("agree", None)


def run_vmap(p, eager, paths, cache):
    why = available()
    results = {}
    for path in PATHS:
        if path not in paths:
            continue
        if why:
            results[path] = {"status": "skipped", "skip": why}
            continue
        try:
            results[path] = vmap_path(p, eager, cache, last=path.endswith(".last"))
        except Exception as e:  # noqa: BLE001 - torch refusing the program: one path's error
            results[path] = failure(e, path)
    return results
