"""The bridge's swap paths (docs/torch.md), torch >= 2.5:

  export.strict.swap, export.nonstrict.swap
             export preserving every submodule's call signature, torch.export.unflatten, then
             the use preserved signatures exist for: some preserved modules replaced in the
             unflattened module by eager modules of the same program (the model's own classes,
             each holding the unflattened module's tensors for its state, so an in-place update
             is seen by both); CONFIG["calls"] calls; outputs and state must equal torch eager's
             bit for bit

The swapped modules are drawn per program from the modules the model calls, each with
probability 1/2 (one at least; none below another drawn one), seeded by their names and the
program's ops, so a program gets one draw on any machine, the same for both paths. A program
that calls no module is skipped. A swap is judged only where the unflattened module was right
before it: as it is, or with one or two causes of the unflatten paths' trace removed
(torch_export.TRACES; the result's "removed" lists them, and a swap that then agrees is
`known_torch_issue` of those classes). A program on which neither holds is skipped (the preserve
path, the same export and unflatten with nothing swapped, reports it), and so is one of a shape
the preserve path excuses (torch_export.preserve_excuse).

A failure is traced. When the program has a placeholder a copy of its graph renames and the swap
agrees once it is renamed so that a copy keeps it, the path is `known_torch_issue`:
  export-signature-input-renamed-by-graph-copy (docs/found-bugs.md 89)
      unflatten looks a preserved call's arguments up by the exported graph's names in its copy
      of the graph, where torch.fx renamed a placeholder named after a builtin (`float`) and the
      next ones around it: the call gets None, or another input, for that argument (the
      unflattened module's own graph reads the input through a placeholder it adds, prepended
      to the call's arguments; a swapped-in module gets them all)
When unflatten run with torch.fx.Graph.eliminate_dead_code kept from
changing the exported graph makes the swap agree, the path is `known_torch_issue`:
  unflatten-preserve-dead-input-none (docs/found-bugs.md 31)
      unflatten's removal of effect tokens dead-code-eliminates the exported graph before
      outlining it; a value computed only for a preserved module's unused result is removed, and
      unflatten then passes None for that argument of the module's call: the unflattened
      module never reads it, the swapped-in module does
"""
import contextlib
import itertools
import random
import zlib

import torch

from torch_compare import judge, run_calls, tensors_of
from torch_export import (COPY_RENAMED, TRACES, available, copies_of, copy_renamed, export_program,
                          failure, preserve_excuse, run_family, state_after, unflatten_removing,
                          verdict)
from torch_hooked import called_modules
from torch_partition import attr_of

PATHS = ("export.strict.swap", "export.nonstrict.swap")
DEAD_INPUT = "unflatten-preserve-dead-input-none"  # docs/found-bugs.md 31
PINNED = None  # the modules to swap instead of a draw (the bridge's --draw)


def draw_swapped(p, called):
    """The called modules to swap: each with probability 1/2 (one at least, when the program
    calls any), seeded by their names and the program's ops; a module below another drawn one
    is dropped (the swapped ancestor holds the eager child)."""
    rng = random.Random(zlib.crc32(repr(("swap", called, list(p.OPS))).encode()))
    chosen = [fqn for fqn in called if rng.random() < 0.5]
    chosen = chosen or [rng.choice(called)] if called else []
    return outermost(chosen)


def outermost(fqns):
    return [f for f in fqns if not any(f.startswith(g + ".") for g in fqns if g != f)]


def swap(p, u, fqns):
    """Replaces the modules `fqns` of the unflattened module `u` by the same modules of one fresh
    eager model of `p` (a module held under two names is one object there, as in eager), each
    holding `u`'s tensors (eager_modules)."""
    for fqn, sub in eager_modules(p, u, fqns).items():
        parent, _, last = fqn.rpartition(".")
        setattr(attr_of(u, parent) if parent else u, last, sub)
    return u


def eager_modules(p, u, fqns):
    """{fqn: module} for the modules `fqns` of one fresh eager model of `p`. Each parameter and
    buffer of theirs is replaced by the tensor the module `u` holds under one of the names the
    eager model holds it under (that name first: strict export keeps one name of a shared
    tensor)."""
    model = p.build()
    names = {}
    for fqn, t in tensors_of(model).items():  # every name of each tensor
        names.setdefault(id(t), []).append(fqn)
    out = {}
    for fqn in fqns:
        sub = model.get_submodule(fqn)
        for prefix, m in sub.named_modules(remove_duplicate=False):
            for table in (m._parameters, m._buffers):
                for k in [k for k, v in table.items() if v is not None]:
                    name = ".".join(x for x in (fqn, prefix, k) if x)
                    table[k] = held(u, [name] + names.get(id(table[k]), []), table[k])
        out[fqn] = sub
    return out


def held(u, names, own):
    """The tensor the unflattened module `u` holds under the first of `names` it has; `own`
    (the eager module's) when it has none: the exported program never reads nor updates it
    (strict export lifts only the state its graph uses, and unflatten makes that)."""
    return next((t for t in (attr_of(u, name) for name in names) if t is not None), own)


@contextlib.contextmanager
def graph_kept():
    """torch.fx.Graph.eliminate_dead_code does nothing inside: unflatten's removal of effect
    tokens (its only caller there) then keeps every value of the exported graph."""
    dce = torch.fx.Graph.eliminate_dead_code
    torch.fx.Graph.eliminate_dead_code = lambda self, *a, **k: False
    try:
        yield
    finally:
        torch.fx.Graph.eliminate_dead_code = dce


def unflattened(fresh, removed=(), keep_graph=False):
    """unflatten of a fresh copy of the exported program, with the causes `removed` (rows of
    torch_export.TRACES) removed and, with `keep_graph`, no dead-code elimination."""
    return unflatten_removing(fresh, removed, *([graph_kept()] if keep_graph else []))


def swapped_run(p, fresh, fqns, eager, cache, removed=(), keep_graph=False):
    """(status, why) of the swap; an exception raised by unflatten, the swap or a call
    propagates."""
    u = swap(p, unflattened(fresh, removed, keep_graph), fqns)
    return judge(p, run_calls(u, p), state_after(u), eager, cache)


def unswapped_agrees(p, fresh, removed, eager, cache):
    try:
        u = unflattened(fresh, removed)
        return judge(p, run_calls(u, p), state_after(u), eager, cache)[0] != "mismatch"
    except Exception:  # noqa: BLE001 - not (only) these causes
        return False


def before_swap(p, fresh, eager, cache):
    """The causes (rows of TRACES, one or two) whose removal makes the unflattened module
    agree with eager before any swap: () when it agrees as it is; None when no one or two do,
    or when the program has a shape the preserve path excuses (preserve_excuse)."""
    if unswapped_agrees(p, fresh, (), eager, cache):
        return ()
    if preserve_excuse(p):
        return None
    for size in (1, 2):
        for removed in itertools.combinations(TRACES, size):
            if unswapped_agrees(p, fresh, removed, eager, cache):
                return removed
    return None


def trace_swap(p, fresh, fqns, eager, cache, removed):
    """DEAD_INPUT, joined with the causes removed, when the swap agrees on the exported graph
    kept whole with `removed` (what the unswapped module needed) removed; or, since the swap
    takes the swapped modules' own causes away and can show one of another module (strict
    export's module under two names, docs/found-bugs.md 3), with one more row of TRACES
    removed as well, where the swap still fails without the graph kept. None otherwise."""
    removed = tuple(removed)
    attempts = [removed] + [removed + (row,) for row in TRACES if row not in removed]
    for attempt in attempts:
        try:
            if attempt != removed and \
                    swapped_run(p, fresh, fqns, eager, cache, attempt)[0] != "mismatch":
                continue  # agrees without the graph kept: not DEAD_INPUT's shape
        except Exception:  # noqa: BLE001 - fails without the graph kept, as DEAD_INPUT does
            pass
        try:
            status, _ = swapped_run(p, fresh, fqns, eager, cache, attempt, keep_graph=True)
        except Exception:  # noqa: BLE001 - not (only) these causes
            continue
        if status != "mismatch":
            return "+".join([DEAD_INPUT] + [cls for cls, _, _ in attempt]) + \
                ": with the exported graph kept whole (no dead-code elimination in " \
                "unflatten), the swapped modules get every argument and the swap agrees"
    return None


def copy_renamed_swap(p, fresh, fqns, eager, cache, removed):
    """COPY_RENAMED, joined with the causes removed, when the program has its shape (a
    placeholder a copy of the graph renames) and the swap agrees with its cause removed too:
    unflatten looked a preserved call's argument up by a name its copy of the graph gave
    another node (or none), which the unflattened module's own graph does not read but a
    swapped-in module does. None otherwise."""
    if not copy_renamed(fresh()):
        return None
    removed = tuple(removed) + tuple(t for t in TRACES if t[0] == COPY_RENAMED)
    try:
        status, _ = swapped_run(p, fresh, fqns, eager, cache, removed)
    except Exception:  # noqa: BLE001 - not (only) these causes
        return None
    if status == "mismatch":
        return None
    return "+".join(cls for cls, _, _ in removed) + ": with the placeholders a copy of the " \
        "exported graph renames given names it keeps, the swap agrees"


def swap_path(p, mode, eager, cache):
    stage = "draw"
    try:
        fqns = PINNED if PINNED is not None else draw_swapped(p, called_modules(p, cache))
        if not fqns and PINNED is None:  # a pinned [] swaps nothing: the unswapped module judged
            return {"status": "skipped", "skip": "the program calls no module to swap"}
        result = {"swapped": fqns}
        stage = "export"
        fresh = copies_of(export_program(p, mode, preserve=True))
    except Exception as e:  # noqa: BLE001 - torch refusing the program
        return failure(e, stage)
    removed = before_swap(p, fresh, eager, cache)
    if removed is None:
        return {**result, "status": "skipped",
                "skip": "the preserve path does not agree on this program, with one or two "
                        "known causes removed or not (it reports why)"}
    if removed:
        result["removed"] = [cls for cls, _, _ in removed]
    try:
        status, why = swapped_run(p, fresh, fqns, eager, cache, removed)
        if status != "mismatch":
            if removed:  # the swap adds nothing to what unflatten got wrong before it
                return {**result, "status": "known_torch_issue", "stage": "unflatten",
                        "known_torch_issue": "+".join(result["removed"]) +
                        ": the unflattened module agrees, and the swap with it, once removed"}
            return {**result, **verdict(status, why)}
        error = None
    except Exception as e:  # noqa: BLE001 - a cause below, or a new failure
        error, why = e, f"{type(e).__name__}: {e}"
    known = copy_renamed_swap(p, fresh, fqns, eager, cache, removed) or \
        trace_swap(p, fresh, fqns, eager, cache, removed)
    if known:
        return {**result, "status": "known_torch_issue", "stage": "run", "detail": why[:300],
                "known_torch_issue": known}
    return {**result, **(verdict(status, why) if error is None else failure(error, "run"))}


def run_swap(p, eager, paths, cache):
    """The swap paths of one program, when asked for: {path: result}."""
    return run_family(PATHS, paths, lambda path: swap_path(p, path.split(".")[1], eager, cache),
                      available())
