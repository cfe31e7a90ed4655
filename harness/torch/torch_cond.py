"""The bridge's torch.cond export paths (docs/torch.md), torch >= 2.5:

  export.strict.cond, export.nonstrict.cond
             the program with its branch op (a Python conditional on a flag, which every other
             path sees specialized away) taken by torch.cond on a predicate computed in the
             graph; torch.export.export, torch.export.save / load, then ep.module() and
             torch.export.unflatten called CONFIG["calls"] times; outputs and final state must
             equal torch eager's (the program as written, without torch.cond), bit for bit

Every other path exports a program whose branches are gone: export evaluates `a if flag else b`
and keeps one value. Here each branch whose two values have one shape, dtype, device and layout
(one stride on every dimension longer than 1: torch.cond refuses two layouts) becomes
`torch.cond(pred, lambda a, b: a.clone(), lambda a, b: b.clone(), (a, b))`, `pred` a 0-d tensor
the graph computes (a constant export cannot evaluate, true exactly when the flag holds), so the
exported program holds a higher-order op with two branch graphs (`true_graph_N`,
`false_graph_N`) as attributes of the module that calls it. unflatten must move those graphs to
the module the call is outlined into, and every call of a module shares them or not. The values
are the same as the Python conditional's, bit for bit (a clone), so torch eager of the program
as written is the expectation.

A program with no branch torch.cond can take is skipped. The unflattened module is judged as on
the unflatten path (torch_export.unflatten_path), whose trace knows class 34 of
docs/found-bugs.md (unflatten-cond-dead-first-call: the branch graphs looked up by the FQN of a
dead call's module). An export that fails where a branch taken had two values differing only in
a size-1 dimension's stride, or a value whose strides carry no layout (a size-1 dimension's, an
empty tensor's), is tried again with the branches cloning into contiguous strides;
when that exports, the path goes on from it, and counts class 35
(cond-size-one-stride-rejected) unless it finds worse.
"""
import contextlib

import torch

from torch_compare import judge, run_calls
from torch_export import (available, failure, loaded_module_class, run_family, saved_loader,
                          state_after, unflatten_path, verdict)

PATHS = ("export.strict.cond", "export.nonstrict.cond")
STRIDES = "cond-size-one-stride-rejected"  # docs/found-bugs.md 35
SHARED = "decomp-cond-operands-share-storage"  # docs/found-bugs.md 37
_FORMAT = [torch.preserve_format]  # the branches' clone: strides kept, or recomputed
_UNSHARED = [False]  # the operands cloned before torch.cond takes them (SHARED's cause removed)


def _first(a, b):
    return a.clone(memory_format=_FORMAT[0])


def _second(a, b):
    return b.clone(memory_format=_FORMAT[0])


def same_size(x, y):
    """Two sizes (or strides) torch.cond takes for one: equal ints, or under dynamic shapes the
    same expression. torch.cond merges sizes whose expressions differ into a new unbacked size
    (torch/_higher_order_ops/cond.py, _merge_output), even where the guards make them equal, and
    a later op that must guard on that size fails export; such a branch stays a Python
    conditional."""
    if isinstance(x, int) and isinstance(y, int):
        return x == y

    def expr(v):
        return v.node.expr if isinstance(v, torch.SymInt) else v
    return expr(x) == expr(y)


def same_layout(a, b):
    """One shape, dtype and device, and one stride on every dimension longer than 1 (the stride
    of a dimension of size 1 does not change the layout); under dynamic shapes, the same
    expressions (same_size), every stride included."""
    if not (a.dim() == b.dim() and a.dtype == b.dtype and a.device == b.device):
        return False
    sizes = list(a.shape) + list(b.shape) + list(a.stride()) + list(b.stride())
    if all(isinstance(n, int) for n in sizes):
        return tuple(a.shape) == tuple(b.shape) and \
            all(sa == sb for sa, sb, n in zip(a.stride(), b.stride(), a.shape) if n > 1)
    return all(same_size(x, y) for x, y in zip(a.shape, b.shape)) and \
        all(same_size(sa, sb) for sa, sb in zip(a.stride(), b.stride()))


def cond_branch(flag, a, b):
    """flatcheck's branch op taken by torch.cond, where the two values can be its operands:
    torch.cond requires its branches' results to have one layout (documented: a transposed
    value against a contiguous one is refused), so two values of different layouts stay a
    Python conditional."""
    if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)) or \
            not same_layout(a, b):
        return a if flag else b
    pred = a.new_ones(()).sum() > (0.5 if flag else 1.5)
    return torch.cond(pred, _first, _second, (a.clone(), b.clone()) if _UNSHARED[0] else (a, b))


def python_branch(flag, a, b):
    """The branch op as the program writes it: a Python conditional."""
    return a if flag else b


def clone_branch(flag, a, b):
    """nograd_branch without torch.no_grad(): the value taken, cloned (the block removed, the
    same ops and values kept; --reads alias's branch op)."""
    value = a if flag else b
    # An fx Proxy is a tensor being traced (symbolic_trace gives the branch proxies).
    return value.clone() if isinstance(value, (torch.Tensor, torch.fx.Proxy)) else value


def nograd_branch(flag, a, b):
    """flatcheck's branch op with the value it takes computed again under torch.no_grad() (a
    clone: the same bits), as modules compute statistics and buffer updates without grad.
    export records the region as a higher-order op (`wrap_with_set_grad_enabled`, its body a
    graph attribute of the module that runs it), which every later pass must keep; a program
    that exports its branches away still holds the region. A value that is no tensor is
    taken as it is."""
    value = a if flag else b
    if not isinstance(value, torch.Tensor):
        return value
    with torch.no_grad():
        return value.clone()


BRANCHES = {"cond": cond_branch, "nograd": nograd_branch}  # the bridge's --branch


@contextlib.contextmanager
def branch_by(p, fn):
    """The program `p` with its branch op `fn(flag, a, b)` inside, its own put back after."""
    saved = p._branch
    p._branch = fn
    try:
        yield p
    finally:
        p._branch = saved


@contextlib.contextmanager
def with_cond(p, fmt=torch.preserve_format):
    """The program `p` with its branch op taken by torch.cond inside, its branches cloning
    their value in memory format `fmt`."""
    _FORMAT[0] = fmt
    try:
        with branch_by(p, cond_branch):
            yield p
    finally:
        _FORMAT[0] = torch.preserve_format


@contextlib.contextmanager
def operands_unshared(p):
    """The program `p` with its branch op taken by torch.cond inside, each operand a clone of
    its value (the same bits; no operand shares a storage with another or with anything)."""
    _UNSHARED[0] = True
    try:
        with branch_by(p, cond_branch):
            yield p
    finally:
        _UNSHARED[0] = False


def shared_operands(p):
    """Whether a branch torch.cond takes has two operands that share a storage (pieces of one
    tensor, a chunk's or a split's; a value and a view of it, a reshape), in an eager run of a
    fresh model, read as size_one_strides reads its strides."""
    seen = []

    def probe(flag, a, b):
        if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and same_layout(a, b) \
                and a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr() != 0:
            seen.append(True)
        return a if flag else b

    with branch_by(p, probe), torch.no_grad():
        p.build()(*(t.clone() for t in p.INPUTS))
    return bool(seen)


def conds(ep):
    return sum(1 for n in ep.graph.nodes
               if n.op == "call_function" and "cond" in str(n.target))


def cond_export(p, mode, fmt=torch.preserve_format):
    with with_cond(p, fmt):
        return torch.export.export(p.build(), tuple(t.clone() for t in p.INPUTS),
                                   strict=(mode == "strict"))


def idle_strides(t):
    """Whether `t`'s strides are not the row-major ones of its shape where that does not change
    its layout (`is_contiguous()` holds): a dimension of size 1 with another stride, or a tensor
    with no element (any strides). A branch's clone (preserve format) keeps them."""
    return t.is_contiguous() and t.stride() != torch.empty(t.shape, device="meta").stride()


def size_one_strides(p):
    """Whether a branch torch.cond takes has two values differing in a size-1 dimension's
    stride, or a value with strides that carry no layout (idle_strides: a size-1 dimension's,
    an empty tensor's; both values may have the same ones), in an eager run of a fresh model (a
    first call; the branch records it and chooses in Python). Read in eager, not during export:
    strict export's tracer keeps no side effect of a trace that failed."""
    seen = []

    def probe(flag, a, b):
        if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and same_layout(a, b) \
                and (a.stride() != b.stride() or idle_strides(a) or idle_strides(b)):
            seen.append(True)
        return a if flag else b

    with branch_by(p, probe), torch.no_grad():
        p.build()(*(t.clone() for t in p.INPUTS))
    return bool(seen)


def export_traced(p, mode):
    """(the exported program, None), or (the program exported with its branches' values in
    contiguous strides, STRIDES) when the export failed, a branch taken has values differing
    only in a size-1 dimension's stride or with strides that carry no layout
    (size_one_strides), and the export with those strides recomputed succeeds: the clone's
    format is the only difference, so that is the cause
    (found-bugs 35; torch 2.14.1 raises "output stride is not a simple accumulative
    multiplication of sizes", or a KeyError from the same stride merging where the sizes are
    symbolic)."""
    try:
        return cond_export(p, mode), None
    except Exception as e:  # noqa: BLE001 - traced below, or the path's error
        if not size_one_strides(p):
            raise
        try:
            return cond_export(p, mode, torch.contiguous_format), STRIDES
        except Exception:  # noqa: BLE001 - not (only) that cause: the first error stands
            raise e from None


def with_class(r, cls):
    """The result `r` of the rest of the path, the export having needed class `cls` removed."""
    if not cls or r["status"] in ("mismatch", "error"):
        return r
    if r["status"] == "known_torch_issue":
        return {**r, "known_torch_issue": cls + "+" + r["known_torch_issue"]}
    return {"status": "known_torch_issue", "known_torch_issue": cls, "stage": "export",
            "detail": "torch.cond refuses branches whose values have strides that carry no "
                      "layout (a size-1 dimension's, an empty tensor's); with them cloned in "
                      "contiguous strides the path "
                      f"{'agrees' if r['status'] == 'agree' else 'is excused'}"}


def cond_path(p, mode, eager, cache):
    if "branch" not in p.OPS:
        return {"status": "skipped", "skip": "the program has no branch op"}
    stage = "export"
    try:
        ep, cls = export_traced(p, mode)
        n = conds(ep)
        if not n:
            return {"status": "skipped",
                    "skip": "no branch torch.cond can take (its values differ in shape, "
                            "dtype or layout, or no branch is traced)"}
        stage = "save"
        load = saved_loader(ep)
        stage = "module"
        m = load().module()
        status, why = judge(p, run_calls(m, p), state_after(m), eager, cache)
        if status == "mismatch":
            known = loaded_module_class(p, load, eager, cache)
            if known:
                return {"status": "known_torch_issue", "known_torch_issue": known,
                        "stage": "module", "detail": why, "conds": n}
            return {**verdict(status, why), "stage": "module", "conds": n}
        stage = "unflatten"
        # the trace's export without save/load re-exports the program, as exported here
        with with_cond(p, torch.contiguous_format if cls else torch.preserve_format):
            r = with_class(unflatten_path(p, mode, load(), load, eager, cache), cls)
    except Exception as e:  # noqa: BLE001 - torch refusing the program, traced where it can be
        return {**failure(e, stage), "conds": n} if stage != "export" else failure(e, stage)
    return {**r, "conds": n}


def run_cond(p, eager, paths, cache):
    """The cond paths of one program, when asked for: {path: result}."""
    return run_family(PATHS, paths, lambda path: cond_path(p, path.split(".")[1], eager, cache),
                      available())
