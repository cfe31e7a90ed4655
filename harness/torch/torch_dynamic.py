"""The bridge's dynamic-shape export paths (docs/torch.md), torch >= 2.5:

  export.strict.dynamic, export.nonstrict.dynamic
             torch.export.export with every dimension of every input dynamic (Dim.AUTO: export
             keeps a dimension symbolic unless the model specializes it), torch.export.save /
             load, then at the inputs' own sizes and at up to MAX_SIZES other sizes the exported
             program's range constraints admit: ep.module() and torch.export.unflatten called
             CONFIG["calls"] times on inputs of those sizes; outputs and final state must equal
             torch eager's on the same inputs, bit for bit

Every other path runs a program at the one size it was exported at; these run the program torch
exported for a family of sizes at several of them. The sizes are drawn, the same on any machine,
from the program's symbols (each one's value at the inputs' sizes +1, -1, *2, +2, then each
symbol alone +1), kept when every symbol stays within its range constraint and above 1 (export
specializes 0 and 1) and torch eager runs the model on them. An input at a new size holds the
input's own values, repeated (so NaN payloads, infinities and signed zeros stay in play).

A size ep.module() refuses with a failed shape guard (torch 2.14.1 checks the guards export
recorded, not only the range constraints; torch 2.6 only those export put in the graph as runtime
assertions) is one the exported program does not cover: it is not judged, but the unflattened
module must refuse it too. When it runs instead, the path is
`known_torch_issue`:
  unflatten-drops-shape-guards (docs/found-bugs.md 33)
      torch.export.unflatten checks an input against the program's range constraints only, not
      the shape guards ep.module() checks (its _guards_fn); the unflattened module runs the
      graph on inputs export never traced it for, and gives wrong results where the model's
      code depends on the size in a way the ranges cannot say
The unflattened module at a size ep.module() accepts is judged as on the unflatten path
(torch_export.unflatten_path): a mismatch or an exception is traced to a cause of
docs/found-bugs.md, and one no cause explains says whether the program exported at that size
alone, unflattened without save/load, differs too.
"""
import contextlib
import math

import torch

from torch_compare import eager_run, judge, run_calls
from torch_cond import branch_by, cond_branch, python_branch
from torch_export import (available, failure, run_family, saved_loader, state_after,
                          unflatten_path, verdict)

PATHS = ("export.strict.dynamic", "export.nonstrict.dynamic")
GUARDS = "unflatten-drops-shape-guards"  # docs/found-bugs.md 33
MAX_SIZES = 3  # sizes judged besides the inputs' own
STEPS = (lambda v: v + 1, lambda v: v - 1, lambda v: v * 2, lambda v: v + 2)
PINNED = None  # the sizes to judge instead of a draw (the bridge's --draw): a list of shape lists


def dynamic_export(p, mode):
    model = p.build()
    dims = tuple({i: torch.export.Dim.AUTO for i in range(t.dim())} for t in p.INPUTS)
    return torch.export.export(model, tuple(t.clone() for t in p.INPUTS), dynamic_shapes=dims,
                               strict=(mode == "strict"))


def input_shapes(ep):
    """The shapes of the program's user inputs, a symbolic dimension a SymInt."""
    nodes = {n.name: n for n in ep.graph.nodes}
    return [tuple(nodes[s.arg.name].meta["val"].shape) for s in ep.graph_signature.input_specs
            if s.kind.name == "USER_INPUT"]


def symbols(p, shapes):
    """{symbol: its value at the inputs' sizes}; None when a dimension is an expression of
    symbols that no dimension names alone (its value would have to be solved for)."""
    values, exprs = {}, []
    for shape, t in zip(shapes, p.INPUTS):
        for dim, size in zip(shape, t.shape):
            if isinstance(dim, torch.SymInt):
                expr = dim.node.expr
                if expr.is_Symbol:
                    values[expr] = int(size)
                exprs.append(expr)
    if any(not e.free_symbols <= set(values) for e in exprs):
        return None
    return values


def bound(r):
    """(lower, upper) of a range constraint, upper None when unbounded."""
    try:
        upper = int(r.upper)
    except Exception:  # noqa: BLE001 - sympy's infinities (torch's int_oo calls itself finite)
        upper = None
    return int(r.lower), upper


def admitted(ep, values):
    for sym, v in values.items():
        if v < 2:
            return False
        r = ep.range_constraints.get(sym)
        if r is not None:
            lower, upper = bound(r)
            if v < lower or (upper is not None and v > upper):
                return False
    return True


def candidates(values):
    """Assignments of new values to the symbols, in the order they are tried."""
    out = []
    for step in STEPS:
        out.append({s: step(v) for s, v in values.items()})
    if len(values) > 1:
        out += [{**values, s: v + 1} for s, v in sorted(values.items(), key=lambda kv: str(kv[0]))]
    return out


def shapes_at(shapes, values):
    return [[int(d.node.expr.subs(values)) if isinstance(d, torch.SymInt) else int(d) for d in s]
            for s in shapes]


def resized(t, shape):
    """A tensor of `shape` holding `t`'s values in order, repeated as needed."""
    n = math.prod(shape)
    flat = t.reshape(-1)
    if flat.numel() == 0:
        return torch.zeros(shape, dtype=t.dtype, device=t.device)
    return flat.repeat(-(-n // flat.numel()))[:n].reshape(shape).clone()


@contextlib.contextmanager
def inputs_of(p, inputs):
    """The program `p` with `inputs` for INPUTS inside (eager_run, run_calls, judge and the
    unflatten trace read them there)."""
    saved = p.INPUTS
    p.INPUTS = inputs
    try:
        yield p
    finally:
        p.INPUTS = saved


def eager_at(p, inputs):
    """torch eager's results on `inputs`, or None when eager refuses them."""
    with inputs_of(p, inputs):
        try:
            return eager_run(p)
        except Exception:  # noqa: BLE001 - the model's code does not run at that size
            return None


def drawn_sizes(p, ep, shapes, values, prefer=None):
    """Up to MAX_SIZES (input lists, eager results) at sizes the program admits and eager runs,
    besides the inputs' own, those whose assignment of the symbols prefer(assignment) holds for
    first (in draw order otherwise); pinned sizes (PINNED) instead of a draw, each required to
    fit."""
    own = [list(t.shape) for t in p.INPUTS]
    if PINNED is not None:
        wanted = [s for s in PINNED if s != own]
        for s in wanted:
            if len(s) != len(own) or any(len(a) != len(b) for a, b in zip(s, own)):
                raise ValueError(f"a pinned size {s} does not fit the inputs' shapes {own}")
    else:
        wanted, later = [], []
        for assignment in candidates(values):
            if admitted(ep, assignment):
                s = shapes_at(shapes, assignment)
                if s not in wanted and s not in later and s != own:
                    (wanted if prefer is None or prefer(assignment) else later).append(s)
        wanted += later
    out = []
    for shape_list in wanted:
        if len(out) == MAX_SIZES:
            break
        inputs = [resized(t, s) for t, s in zip(p.INPUTS, shape_list)]
        eager = eager_at(p, inputs)
        if eager is not None:
            out.append((inputs, eager))
    return out


def sizes_of(p, ep, eager, cache, prefer=None):
    """([(inputs, eager results, NaN cache) at the inputs' own sizes, then at the sizes
    drawn_sizes(..., prefer) gives], None), or (None, why no size can be drawn)."""
    shapes = input_shapes(ep)
    values = symbols(p, shapes)
    if not values:
        return None, ("export specialized every input dimension" if values is not None
                      else "an input dimension is an expression of symbols no dimension names")
    # the canonical-NaN runs `cache` keeps are at the inputs' own sizes: a new one for others
    return [(list(p.INPUTS), eager, cache)] + [
        (inputs, want, {}) for inputs, want in drawn_sizes(p, ep, shapes, values, prefer)], None


def refused_by_guard(e):
    """ep.module() refusing a size export's guards exclude: its guard function (torch 2.14.1:
    "Guard failed") or a runtime assertion export put in the graph (torch 2.6)."""
    return (isinstance(e, AssertionError) and "Guard failed" in str(e)) or \
        (isinstance(e, RuntimeError) and "Runtime assertion failed for expression" in str(e))


def judge_size(p, mode, load, inputs, eager, cache):
    """The result of ep.module() and the unflattened module at one size (the unflatten path's
    judging and trace, torch_export.unflatten_path); None when both agree, or when ep.module()
    refuses the size and the unflattened module does too."""
    with inputs_of(p, inputs):
        m = load().module()
        try:
            outs = run_calls(m, p)
        except Exception as e:  # noqa: BLE001
            return guards_kept(p, load, inputs, eager, cache, e) if refused_by_guard(e) \
                else failure(e, "module")
        status, why = judge(p, outs, state_after(m), eager, cache)
        if status == "mismatch":
            return {**verdict(status, why), "stage": "module"}
        try:
            r = unflatten_path(p, mode, load(), load, eager, cache)
        except Exception as e:  # noqa: BLE001 - no cause of the trace explains it
            return failure(e, "unflatten")
        return None if r["status"] == "agree" else r


def guards_kept(p, load, inputs, eager, cache, refusal):
    """ep.module() refused a size with a failed shape guard: the unflattened module must too."""
    try:
        u = torch.export.unflatten(load())
        outs = run_calls(u, p)
    except Exception:  # noqa: BLE001 - it refuses (or fails) too: nothing to judge
        return None
    status, why = judge(p, outs, state_after(u), eager, cache)
    agreed = "its results agree with eager here" if status != "mismatch" else \
        f"its results differ from eager's: {why}"
    return {"status": "known_torch_issue", "known_torch_issue": GUARDS, "stage": "guards",
            "detail": f"ep.module() refuses inputs of shapes {[list(t.shape) for t in inputs]} "
                      f"({refusal}); the unflattened module runs them, and {agreed}"[:500]}


RANK = {"error": 4, "mismatch": 4, "known_torch_issue": 3, "excused": 2}


# torch.cond merges a size whose expressions differ between its branches into a new unbacked
# size, and export fails where a later op must guard on it. The bridge takes a branch by
# torch.cond only where the two sizes are one expression (torch_cond.same_size), but strict
# export traces the bridge with dynamo, which shows it every size as an int.
DATA_DEPENDENT = "Could not guard on data-dependent expression"


def exported_for_sizes(p, mode):
    """(dynamic_export(p, mode), None); under --branch cond, when that fails on a
    data-dependent size, the export with the branch ops left Python conditionals, and a note
    saying so."""
    try:
        return dynamic_export(p, mode), None
    except Exception as e:  # noqa: BLE001 - retried only for the cause below
        if getattr(p, "_branch", None) is not cond_branch or DATA_DEPENDENT not in str(e):
            raise
        with branch_by(p, python_branch):
            ep = dynamic_export(p, mode)
        return ep, ("the branch ops left Python conditionals: with torch.cond, export could not "
                    "guard on a size a torch.cond merged (" + str(e).splitlines()[0][:120] + ")")


def dynamic_path(p, mode, eager, cache):
    stage = "export"
    note = None
    try:
        ep, note = exported_for_sizes(p, mode)
        stage = "save"
        load = saved_loader(ep)
        stage = "sizes"
        sizes, skip = sizes_of(p, ep, eager, cache)
        if sizes is None:
            return {"status": "skipped", "skip": skip}
    except Exception as e:  # noqa: BLE001 - torch refusing the program
        return failure(e, stage)
    worst, classes = {"status": "agree"}, []
    for inputs, want, at in sizes:
        try:
            r = judge_size(p, mode, load, inputs, want, at)
        except Exception as e:  # noqa: BLE001
            r = failure(e, "run")
        if r is None:
            continue
        if r["status"] == "known_torch_issue":
            classes += [c for c in r["known_torch_issue"].split("+") if c not in classes]
        if RANK.get(r["status"], 0) > RANK.get(worst["status"], 0):
            worst = {**r, "shapes": [list(t.shape) for t in inputs]}
    if worst["status"] == "known_torch_issue":  # every class seen at any size, in order
        worst["known_torch_issue"] = "+".join(classes)
    if note:
        worst = {**worst, "branch_note": note}
    return {**worst, "sizes": [[list(t.shape) for t in inputs] for inputs, _, _ in sizes]}


def run_dynamic(p, eager, paths, cache):
    """The dynamic paths of one program, when asked for: {path: result}."""
    return run_family(PATHS, paths, lambda path: dynamic_path(p, path.split(".")[1], eager,
                                                              cache), available())
