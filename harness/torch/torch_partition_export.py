"""The bridge's re-export paths of a partitioned module (docs/torch.md), torch >= 2.5:

  partition.reexport.splitter, partition.reexport.capability
             the partition path's partitioned module (torch's own partitioner over the module of
             the non-strict exported program, torch_partition.py), exported again
             (torch.export.export, non-strict: a partitioned model saved as an ExportedProgram),
             then torch.export.unflatten; CONFIG["calls"] calls from the initial state; outputs
             and the unflattened module's final state (by its FQNs and the model's, mapped by
             the program's state names) judged against torch eager, bit for bit

A program whose partitioned module is itself wrong is skipped (its partition path reports it).
A failure is traced. When the export with the `nn_module_stack` its nodes carry removed (every
node of the partitioned module and its submodules; export then records the stacks it traces)
unflattens to a module that agrees, and the export with them records a module call as more than
one run of nodes under one key, the path is `known_torch_issue` (where that removal fails
otherwise, as on torch 2.6, whose export of the nodes without stacks records none for some:
the export with the stacks kept and the graph reordered, each call's nodes in one run where
the data flow allows, runs_joined, unflattens to a module that agrees):
  reexport-partitioned-stale-module-stack (docs/found-bugs.md 32)
      export of a GraphModule keeps the module stacks its nodes carry from the earlier export;
      the partitioner moved some of a module's nodes into a fused submodule, ahead of or after
      other modules' nodes, so one call is two runs with one key; unflatten outlines both runs
      as that call and keeps one run's graph
Where that removal leaves a mismatch, the unflatten paths' trace runs on the export with it
(joined_cause): a class found there is joined with it (`STALE+CLASS`: seen with
unflatten-aliased-constants-untied, docs/found-bugs.md 107, on non-persistent buffers).
Otherwise a failure is traced as the unflatten paths' are (the earlier stacks bring the model's
module tree, and its unflatten classes, into the re-exported program; and with the partitioner's
order, a module's calls out of their index order: unflatten-later-call-first-dedup,
docs/found-bugs.md 44). On torch 2.6, export
records no module stack for some nodes of the partitioned module and unflatten refuses it
("Unable to find nn_module_stack for node ..."): reexport-partitioned-no-module-stack.
"""
import contextlib
import os

import torch

from torch_compare import judge, run_calls, tensors_of
from torch_export import (UNLINKED, export_program, failure, fresh_exports, run_family,
                          state_after, trace_unflatten, unlinked_uses, users_relinked, verdict)
from torch_partition import (PartitionWithoutOutputs, WITHOUT_OUTPUTS, attr_of, available,
                             judged, reset_state, split_fast, split_global, support_for)

PATHS = ("partition.reexport.splitter", "partition.reexport.capability")
STALE = "reexport-partitioned-stale-module-stack"  # docs/found-bugs.md 32
# torch 2.6 (not 2.14.1): export records no nn_module_stack for some nodes of the partitioned
# module, and unflatten refuses the program (docs/found-bugs.md 32).
NO_STACK = "reexport-partitioned-no-module-stack"
NO_STACK_MESSAGE = "Unable to find nn_module_stack for node"
# STALE's two removals, as its detail names them: stacks_cleared, runs_joined (torch 2.6)
CLEARED = "the nodes' earlier module stacks removed"
JOINED_RUNS = "each call's nodes run together (the graph reordered, its stacks kept)"


def segmented_keys(ep):
    """The module paths (not the root) whose nn_module_stack key more than one run of
    consecutive call_function nodes of `ep`'s graph carries (a module call recorded in
    pieces), each as 'path (key)'."""
    runs, previous = {}, set()
    for n in ep.graph.nodes:
        if n.op != "call_function":
            continue
        keys = {(k, path) for k, (path, _) in (n.meta.get("nn_module_stack") or {}).items()
                if path}
        for k in keys - previous:
            runs[k] = runs.get(k, 0) + 1
        previous = keys
    return sorted(f"{path} ({k})" for (k, path), count in runs.items() if count > 1)


@contextlib.contextmanager
def stacks_cleared(module):
    """Inside, no node of `module` or of its GraphModule submodules carries an nn_module_stack;
    restored after."""
    kept = []
    for m in module.modules():
        if isinstance(m, torch.fx.GraphModule):
            for n in m.graph.nodes:
                if "nn_module_stack" in n.meta:
                    kept.append((n, n.meta.pop("nn_module_stack")))
    try:
        yield
    finally:
        for n, stack in kept:
            n.meta["nn_module_stack"] = stack


def stack_path(n):
    """The module paths of a node's nn_module_stack, outermost first (() for none)."""
    return tuple(path for path, _ in (n.meta.get("nn_module_stack") or {}).values())


def joined_order(graph):
    """The nodes of `graph` in an order that runs each module call's nodes together where the
    data flow allows: placeholders and get_attr nodes first, then, between two side-effecting
    nodes (which keep their places), the next node whose inputs are all made, preferring the
    one whose module stack shares the longest prefix with the last node's (the earliest of
    those), the output last."""
    nodes = list(graph.nodes)
    at = {n: i for i, n in enumerate(nodes)}
    order = [n for n in nodes if n.op in ("placeholder", "get_attr")]
    made, last = set(order), ()
    segment = []

    def flush():
        nonlocal last
        while segment:
            ready = [n for n in segment if all(a in made for a in n.all_input_nodes)]
            if not ready:  # an input made later in this segment cannot be: keep the rest
                ready = segment[:1]
            pick = max(ready, key=lambda n: (len(os.path.commonprefix([stack_path(n), last])),
                                             -at[n]))
            segment.remove(pick)
            order.append(pick)
            made.add(pick)
            last = stack_path(pick)

    for n in nodes:
        if n.op in ("placeholder", "get_attr", "output"):
            continue
        if n.is_impure():
            flush()
            order.append(n)
            made.add(n)
            last = stack_path(n)
        else:
            segment.append(n)
    flush()
    return order + [n for n in nodes if n.op == "output"]


@contextlib.contextmanager
def runs_joined(module):
    """Inside, the graph of `module` (a GraphModule) runs in joined_order: each module call's
    nodes in one run where the data flow allows, the same values (a topological order that
    moves no node across a side-effecting one), the nodes' module stacks kept; restored
    after."""
    graph = module.graph
    before = list(graph.nodes)

    def arrange(order):
        end = before[-1]  # the output node
        for n in order:
            if n is not end:
                end.prepend(n)
        graph.lint()
        module.recompile()

    arrange(joined_order(graph))
    try:
        yield
    finally:
        arrange(before)


def reexported(split, p, refs, initial):
    """torch.export.export (non-strict) of the partitioned module, from the initial state."""
    reset_state(refs, initial)
    return torch.export.export(split, tuple(t.clone() for t in p.INPUTS), strict=False)


def unflatten_judged(split, p, refs, initial, eager, cache, clear=False):
    """The verdict on the unflattened re-export. Its state is its own (unflatten gives it
    tensors of its own), held under the re-exported program's names, which are the partitioned
    module's (split_module gives each submodule its state under names of its own): each is
    judged under every model FQN whose tensor the program's state names (the same tensor
    objects, `refs`), beside the unflattened module's own FQNs."""
    with stacks_cleared(split) if clear else contextlib.nullcontext():
        ep = reexported(split, p, refs, initial)
    fqns_of = {}
    for fqn, t in refs.items():
        fqns_of.setdefault(id(t), []).append(fqn)
    u = torch.export.unflatten(ep)
    outs = run_calls(u, p)
    state = state_after(u)
    # the non-persistent buffers are the program's constants, not its state dict
    for name, t in {**ep.state_dict, **ep.constants}.items():
        value = attr_of(u, name)
        if not isinstance(value, torch.Tensor):
            continue
        for fqn in fqns_of.get(id(t), []):
            state.setdefault(fqn, value.detach().clone())
    return judge(p, outs, state, eager, cache)


def trace_reexport(split, p, refs, initial, eager, cache):
    """Class 32 where the earlier stacks are the cause and cut a call in pieces; else the
    unflatten paths' trace (torch_export.trace_unflatten) on the re-exported program: the
    earlier stacks carry the module tree, and with it the unflatten classes, into it. First
    UNLINKED (docs/found-bugs.md 43), where the re-exported graph's use lists are wrong and the
    re-export with that cause removed (users_relinked) agrees, and NO_STACK joined with it
    where that re-export's unflatten refuses a node without a module stack (torch 2.6: the
    wrong lists fail unflatten's dead code elimination before). Where they are wrong and that
    is not all, the rest of the trace runs on re-exports with the lists mended, and what it
    finds is joined with UNLINKED (unflatten's dead code elimination fails on such a graph
    before any other cause shows; and mended, the program can be copied, not exported again
    for every attempt)."""
    unlinked = bool(unlinked_uses(reexported(split, p, refs, initial).graph_module))
    mended = users_relinked if unlinked else contextlib.nullcontext
    also = f"+{UNLINKED}" if unlinked else ""
    if unlinked:
        try:
            with mended():
                status, _ = unflatten_judged(split, p, refs, initial, eager, cache)
        except Exception as e:  # noqa: BLE001 - not (only) this cause
            if NO_STACK_MESSAGE in str(e):  # torch 2.6: the refusal the wrong lists hid
                return f"{NO_STACK}{also}: with the use lists mended, {str(e)[:200]}"
            status = "mismatch"
        if status != "mismatch":
            return f"{UNLINKED}: the re-exported graph's use lists are wrong; with them " \
                "mended after export's grad-mode pass, unflatten agrees"

    def export():
        with mended():
            return reexported(split, p, refs, initial)

    try:
        with mended():
            status, _ = unflatten_judged(split, p, refs, initial, eager, cache, clear=True)
    except Exception:  # noqa: BLE001 - not (only) this cause
        status = "mismatch"
    pieces = segmented_keys(export())
    removal = CLEARED
    if status == "mismatch" and pieces:
        # torch 2.6 records no module stack for some nodes of the export without them, and
        # unflatten refuses it (NO_STACK): the other removal keeps the stacks and runs each
        # call's nodes together
        try:
            with mended(), runs_joined(split):
                if not segmented_keys(export()):
                    status, _ = unflatten_judged(split, p, refs, initial, eager, cache)
        except Exception:  # noqa: BLE001 - not (only) this cause
            pass
        removal = JOINED_RUNS
    joined = None
    if status == "mismatch" and pieces:  # that cause and another: the unflatten classes'
        joined, removal = joined_cause(split, p, refs, initial, eager, cache, mended)
        status = "agree" if joined else status
    if status == "mismatch" or not pieces:
        known = trace_unflatten(p, fresh_exports(export), eager, cache)
        return known + also if known else None
    return f"{STALE}{'+' + joined if joined else ''}{also}: export records a call of " + \
        f"{pieces[0]}" + (f" and {len(pieces) - 1} more" if len(pieces) > 1 else "") + \
        f" as more than one run of nodes under one key; with {removal}" + \
        (f" and {joined}'s cause removed" if joined else "") + \
        (" and the use lists mended" if unlinked else "") + ", unflatten agrees"


def joined_cause(split, p, refs, initial, eager, cache, mended):
    """(the unflatten class whose cause, removed beside STALE's, makes the re-export's unflatten
    agree (torch_export.trace_unflatten on the re-export with STALE's cause removed: the
    stacks cleared, or on torch 2.6 each call's nodes run together), how STALE's was removed);
    (None, None) where none does. Seen: seed 218 case 14 with non-persistent buffers, whose
    re-export with the stacks cleared still lost a shared buffer's updates (found-bugs 107)."""
    removals = ((CLEARED, lambda: stacks_cleared(split)),
                (JOINED_RUNS, lambda: runs_joined(split)))
    for removal, context in removals:
        def export(context=context):
            with mended(), context():
                return reexported(split, p, refs, initial)
        try:
            if segmented_keys(export()):
                continue  # this removal leaves STALE's cause in place
            known = trace_unflatten(p, fresh_exports(export), eager, cache)
        except Exception:  # noqa: BLE001,S112 - not (only) these causes
            continue
        if known:
            return known, removal
    return None, None


def reexport_path(p, kind, eager, cache):
    stage = "export"
    try:
        gm = export_program(p, "nonstrict").module()
        refs = tensors_of(gm)  # the partitioned and re-exported modules share these tensors
        initial = state_after(gm)
        stage = "partition"
        split = (split_fast if kind == "splitter" else split_global)(gm, p, support_for(p))
        if judged(split, p, refs, initial, eager, cache)[0] == "mismatch":
            return {"status": "skipped", "skip": "the partitioned module is wrong itself "
                                                 "(its partition path reports it)"}
        stage = "reexport"
        reexported(split, p, refs, initial)
    except PartitionWithoutOutputs as e:
        return {"status": "known_torch_issue", "known_torch_issue": f"{WITHOUT_OUTPUTS}: {e}",
                "stage": stage}
    except Exception as e:  # noqa: BLE001 - torch refusing the program
        return failure(e, stage)
    try:
        status, why = unflatten_judged(split, p, refs, initial, eager, cache)
        if status != "mismatch":
            return verdict(status, why)
        error = None
    except Exception as e:  # noqa: BLE001 - a cause below, or a new failure
        error, why = e, f"{type(e).__name__}: {e}"
    if NO_STACK_MESSAGE in why:
        return {"status": "known_torch_issue", "stage": "unflatten", "detail": why[:300],
                "known_torch_issue": f"{NO_STACK}: {why[:200]}"}
    known = trace_reexport(split, p, refs, initial, eager, cache)
    if known:
        return {"status": "known_torch_issue", "stage": "unflatten", "detail": why[:300],
                "known_torch_issue": known}
    return verdict(status, why) if error is None else failure(error, "unflatten")


def run_partition_export(p, eager, paths, cache):
    """The re-export paths of one program, when asked for: {path: result}."""
    return run_family(PATHS, paths,
                      lambda path: reexport_path(p, path.split(".")[2], eager, cache),
                      available())
