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

A failure (an exception or a mismatch) is traced to a known cause when removing it makes the
path agree:
  cond-vmap-expanded-branch-output (docs/found-bugs.md 79; with --branch cond)
      torch.cond's vmap batch rule, its predicate unbatched, vmaps each branch; a branch whose
      result comes from unbatched operands alone gets it back expanded (batch stride 0), and
      cond's check that both branches' outputs have one stride order refuses the pair (torch
      2.14.1: "The sorted order of strides of the two branches' output doesn't match");
      removed: each vmapped branch's outputs copied densely inside the batch rule
      (materialized_branches)
  cond-vmap-unbatched-operands (docs/found-bugs.md 80; with --branch cond)
      the same batch rule, no operand (nor the predicate) batched, vmaps each branch with every
      in_dims None, which vmap refuses ("vmap: Expected at least one Tensor to vmap over"; torch
      2.6 and 2.14.1): a cond on values of parameters alone cannot run under vmap; removed: such
      a branch run once, its results expanded along the batch (unbatched_branches)
  cond-size-one-stride-rejected (docs/found-bugs.md 35; with --branch cond)
      torch.cond refuses two branch values differing only in the stride of a dimension of
      size 1 (or 0), which a batch dimension that is not the first leaves (torch 2.6 under
      vmap: "Expect branches to return tensors with same metadata"); removed: the branches
      clone into contiguous strides (dense_branches)
Each alone, then each pair, then all. Without a trace that agrees, a class may still be read
from the message (torch_export.KNOWN_ERRORS), as every path does.
"""
import contextlib
import importlib
import itertools

import torch

from torch_compare import outputs_of, tensors_of
from torch_dynamic import eager_at, inputs_of
from torch_export import failure, verdict
from torch_functional import one_per_slot
import torch_cond
import torch_inductor

PATHS = ("func.vmap", "func.vmap.last")
EXPANDED = "cond-vmap-expanded-branch-output"
UNBATCHED = "cond-vmap-unbatched-operands"
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
    inputs, the witness a torch eager run (its branch op as eager_branch gives it, never the
    paths' torch.cond)."""
    with inputs_of(p, inputs), eager_branch(p):
        return torch_inductor.judged(p, outs, state, eager, cache, "vmap")


def eager_branch(p):
    """The branch op as torch eager's own run takes it: in Python, its value cloned where state
    is read as aliases (alias_reads); the bridge's --branch changes the paths' branch op, not
    eager's. A no-op for a program without the branch op."""
    if not hasattr(p, "_branch"):
        return contextlib.nullcontext()
    own = torch_cond.clone_branch if getattr(p, "READS_ALIAS", False) else \
        torch_cond.python_branch
    return torch_cond.branch_by(p, own)


def eager_alone(p, inputs):
    """torch eager's results on one element's inputs, the branch op as eager_branch gives it."""
    with eager_branch(p):
        return eager_at(p, inputs)


def vmap_path(p, eager, cache, last):
    batches = [[t.clone() for t in p.INPUTS]] + [[f(t) for t in p.INPUTS] for f in ELEMENTS]
    outs, finals = vmapped_calls(p, batches, last)
    worst = None
    for k in range(BATCH):
        want = eager if k == 0 else eager_alone(p, batches[k])
        if want is None:
            return {"status": "skipped", "skip": f"vmap: torch eager refuses batch element {k}"}
        status, why = judged(p, batches[k], outs[k], finals[k], want, cache if k == 0 else {})
        if status == "mismatch":
            return verdict(status, f"batch element {k}: {why}")
        if status == "excused" and worst is None:
            worst = f"batch element {k}: {why}"
    return verdict("excused", worst) if worst else verdict("agree", None)


@contextlib.contextmanager
def materialized_branches():
    """torch.cond's vmap batch rule with every branch it vmaps returning dense copies (the
    cause of EXPANDED removed)."""
    def dense(t):  # a copy with the default strides: an empty tensor's too (contiguous()
        # keeps an expanded empty tensor's 0 stride)
        return t.clone(memory_format=torch.contiguous_format)

    def contiguous(fn):
        def run(*args):
            out = fn(*args)
            if isinstance(out, (tuple, list)):
                return type(out)(dense(o) for o in out)
            return dense(out)
        return run

    with batch_rule_vmap(lambda plain, interpreter: lambda fn, *a, **k:
                         contiguous(plain(fn, *a, **k))):
        yield


@contextlib.contextmanager
def batch_rule_vmap(make):
    """torch.cond's vmap batch rule with the torch.vmap it calls replaced by make(torch.vmap,
    interpreter) while it runs. Inert where this torch has no such rule."""
    cond = importlib.import_module("torch._higher_order_ops.cond")
    table = getattr(getattr(cond, "cond_op", None), "functorch_table", {})
    key = torch._C._functorch.TransformType.Vmap
    rule = table.get(key)
    if rule is None:
        yield
        return

    def patched(interpreter, pred, true_fn, false_fn, inputs):
        plain = torch.vmap
        torch.vmap = make(plain, interpreter)
        try:
            return rule(interpreter, pred, true_fn, false_fn, inputs)
        finally:
            torch.vmap = plain

    table[key] = patched
    try:
        yield
    finally:
        table[key] = rule


@contextlib.contextmanager
def unbatched_branches():
    """torch.cond's vmap batch rule running a branch whose operands are all unbatched once,
    its results expanded along the batch (the cause of UNBATCHED removed: vmap refuses a
    function none of whose arguments it maps)."""
    def make(plain, interpreter):
        def vmap(fn, in_dims=0, *a, **k):
            dims = in_dims if isinstance(in_dims, tuple) else None
            if dims is None or any(d is not None for d in dims):
                return plain(fn, in_dims, *a, **k)

            def run(*args):
                out = fn(*args)
                many = isinstance(out, (tuple, list))
                size = interpreter.batch_size()
                got = [o.unsqueeze(0).expand(size, *o.shape).clone(
                    memory_format=torch.contiguous_format) for o in (out if many else (out,))]
                return type(out)(got) if many else got[0]
            return run
        return vmap

    with batch_rule_vmap(make):
        yield


@contextlib.contextmanager
def dense_branches():
    """The bridge's torch.cond branches cloning their value in contiguous strides (the cause of
    torch_cond.STRIDES removed: values differing only in a size-1 or empty dimension's stride,
    as vmap's batch dimension can leave them)."""
    torch_cond._FORMAT[0] = torch.contiguous_format
    try:
        yield
    finally:
        torch_cond._FORMAT[0] = torch.preserve_format


REMOVE = {torch_cond.STRIDES: dense_branches, EXPANDED: materialized_branches,
          UNBATCHED: unbatched_branches}
REMOVALS = tuple(c for k in (1, 2, 3) for c in itertools.combinations(REMOVE, k))


def reset():
    """dynamo's caches emptied: eager torch.cond compiles its branches with dynamo, and a cond
    compiled under a removal (or by the other path) must not stand in for the next run."""
    dynamo = getattr(torch, "_dynamo", None)
    if dynamo is not None:
        dynamo.reset()


def traced(p, eager, cache, last, r):
    """The result `r` of a failing path, or known_torch_issue with the classes (REMOVALS: each
    alone, then each pair, then all) whose causes removed make the path agree; only where the
    program takes its branch op by torch.cond (--branch cond), where the causes live."""
    if getattr(p, "_branch", None) is not torch_cond.cond_branch:
        return r
    for classes in REMOVALS:
        reset()
        try:
            with contextlib.ExitStack() as stack:
                for cls in classes:
                    stack.enter_context(REMOVE[cls]())
                again = vmap_path(p, eager, cache, last)
        except Exception:  # noqa: BLE001 - the causes removed, the path still fails
            continue
        finally:
            reset()
        if again["status"] in ("agree", "excused"):
            return {"status": "known_torch_issue", "known_torch_issue": "+".join(classes),
                    "stage": r.get("stage", "vmap"),
                    "detail": (r.get("first_mismatch") or r.get("detail") or "")[:300]}
    return r


def run_vmap(p, eager, paths, cache):
    """Every requested vmap path of one program: {path: result}."""
    why = available()
    results = {}
    for path in PATHS:
        if path not in paths:
            continue
        if why:
            results[path] = {"status": "skipped", "skip": why}
            continue
        last = path.endswith(".last")
        reset()
        try:
            r = vmap_path(p, eager, cache, last)
        except Exception as e:  # noqa: BLE001 - torch refusing the program: traced, else one
            # path's error or a class read from the message
            r = traced(p, eager, cache, last, {"status": "error", "stage": path,
                                                "first_mismatch": f"{type(e).__name__}: {e}"})
            r = failure(e, path) if r["status"] == "error" else r
        if r["status"] == "mismatch":
            r = traced(p, eager, cache, last, r)
        results[path] = r
    return results
