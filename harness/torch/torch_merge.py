"""The bridge's matmul-merging path (docs/torch.md): torch.fx.experimental.merge_matmul, the pass
that merges the matmuls sharing a right-hand operand into one matmul of their left operands
concatenated, its result split back into theirs.

  fx.merge_matmul  the fx trace (the fx path's: buffer reads and in-place updates where the
                   model makes them) merged, the calls; outputs and state must equal torch
                   eager's bit for bit

Three causes of a failure are known (docs/found-bugs.md 82 to 84). A class counts only when the
pass run again with its cause removed gives no such failure:
  merge-matmul-stale-graph     after each merge the pass sorts the graph with legalize_graph,
                               which puts a new Graph into the module; the matmuls of the next
                               right-hand operand are nodes of the old Graph, and erasing them
                               raises "Attempting to remove ... from wrong graph" (torch 1.13,
                               whose erase_node does not check, raises KeyError in the next
                               sort; any model with two right-hand operands each shared by
                               independent matmuls); removed: legalize_graph's order given to
                               the same Graph
  merge-matmul-sort-reorders-update
                               after a merge, legalize_graph sorts by data dependencies alone
                               (the sort 49 met): an in-place update of a buffer moves across
                               reads of it; removed: the graph sorted keeping its order wherever
                               data allows (stable_sort)
  merge-matmul-across-update   the pass ignores in-place updates: it appends the merged matmul
                               at the graph's end, after updates of its operands that came
                               after one of the matmuls merged; removed (with the sort's): only
                               the matmuls after the graph's last in-place update merged
"""
import copy
import heapq
from unittest import mock

import torch

from torch_compare import judge, run_calls
from torch_export import failure, state_after, verdict
from torch_fx import trace
from torch_partition import in_place

PATHS = ("fx.merge_matmul",)
STALE = "merge-matmul-stale-graph"
ACROSS = "merge-matmul-across-update"
SORT = "merge-matmul-sort-reorders-update"


def merge_module():
    import torch.fx.experimental.merge_matmul as merge  # noqa: PLC0415 - torch >= 1.8
    return merge


def reorder(gm, order):
    """Puts `gm`'s nodes in `order` (the same node objects) in the same Graph."""
    root = gm.graph._root
    for n in order:
        root.prepend(n)  # before the sentinel: at the end


def in_place_of(legalize):
    """`legalize`'s order (read from the new Graph it makes, by node name) given to the module's
    own Graph: the sort without the new Graph."""
    def sort(gm):
        graph, nodes = gm.graph, {n.name: n for n in gm.graph.nodes}
        names = [n.name for n in legalize(gm).graph.nodes]
        gm.graph = graph
        reorder(gm, [nodes[name] for name in names])
        return gm
    return sort


def stable_sort(gm):
    """`gm`'s graph sorted in place, each node as early as in its order unless an input comes
    later (the merged matmul, appended at the end, moves its users after it)."""
    nodes = list(gm.graph.nodes)
    pos = {n: i for i, n in enumerate(nodes)}
    waiting = {n: len(set(n.all_input_nodes)) for n in nodes}
    ready = [pos[n] for n in nodes if not waiting[n]]
    heapq.heapify(ready)
    order = []
    while ready:
        n = nodes[heapq.heappop(ready)]
        order.append(n)
        for u in n.users:
            waiting[u] -= 1
            if not waiting[u]:
                heapq.heappush(ready, pos[u])
    reorder(gm, order)
    return gm


def after_updates(independent):
    """are_nodes_independent, false for matmuls any of which comes before an in-place update."""
    def check(nodes):
        order = list(nodes[0].graph.nodes)
        last = max((i for i, n in enumerate(order) if in_place(n)), default=-1)
        first = min(order.index(n) for n in nodes)
        return first > last and independent(nodes)
    return check


def as_traced(gm):
    """The trace merge_matmul starts from: a copy of `gm` as it is. The pass traces its input
    again with symbolic_trace, whose buffers are plain tensors: a read of one through a method
    (`self.buf.clone()`) would run once and be kept as a constant (docs/found-bugs.md 2's
    mechanism), a failure of the trace, not of the merge."""
    return torch.fx.GraphModule(gm, copy.deepcopy(gm.graph))


def merged(gm, stale_removed=False, sort_removed=False, across_removed=False):
    """merge_matmul of `gm` (of a copy: `gm` is kept), with the causes asked for removed (the
    sort's, stable_sort, removes the stale Graph's too)."""
    merge = merge_module()
    legalize = merge.legalize_graph
    sort = stable_sort if sort_removed else in_place_of(legalize) if stale_removed else legalize
    independent = merge.are_nodes_independent
    with mock.patch.object(merge, "symbolic_trace", as_traced), \
            mock.patch.object(merge, "legalize_graph", sort), \
            mock.patch.object(merge, "are_nodes_independent",
                              after_updates(independent) if across_removed else independent):
        return merge.merge_matmul(gm)


def groups(gm):
    """The count of right-hand operands two or more matmuls of `gm` share (merge_matmul's key: a
    get_attr by its target)."""
    rhs = {}
    for n in gm.graph.nodes:
        if n.op == "call_function" and n.target is torch.matmul:
            b = n.args[1]
            key = b.target if isinstance(b, torch.fx.Node) and b.op == "get_attr" else b
            rhs[key] = rhs.get(key, 0) + 1
    return sum(1 for c in rhs.values() if c > 1)


def updates(gm):
    return sum(1 for n in gm.graph.nodes if in_place(n))


def merge_path(p, eager, cache):
    stage = "trace"
    try:
        gm = trace(p)
        stage = "merge"
        try:
            m = merged(gm)
        except Exception as e:  # noqa: BLE001 - which exception depends on the torch
            if groups(gm) < 2:
                raise
            try:
                merged(trace(p), stale_removed=True)  # a fresh model: fresh state
            except Exception:  # noqa: BLE001 - another cause: the first exception reported
                raise e from None
            return {"status": "known_torch_issue", "stage": stage,
                    "detail": f"{type(e).__name__}: {e}"[:300],
                    "known_torch_issue": f"{STALE}: {groups(gm)} right-hand operands each "
                    "shared by two or more matmuls; merged again with the sort kept in the "
                    "same Graph, no such error"}
        stage = "run"
        status, why = judge(p, run_calls(m, p), state_after(m), eager, cache)
        if status != "mismatch" or not updates(gm) or not groups(gm):
            return verdict(status, why)
        # The causes: matmuls merged in a graph with in-place updates, and the data-only sort.
        # Removed one after the other, each on a fresh model (fresh state): the sort kept
        # to the graph's order where data allows; then only the matmuls after the last update
        # merged.
        for cls, removed in ((SORT, {"sort_removed": True}),
                             (ACROSS, {"sort_removed": True, "across_removed": True})):
            fixed = merged(trace(p), **removed)
            if judge(p, run_calls(fixed, p), state_after(fixed), eager, cache)[0] != "mismatch":
                break
        else:
            return verdict(status, why)
    except Exception as e:  # noqa: BLE001 - torch refusing a program
        return failure(e, stage)
    return {"status": "known_torch_issue", "first_mismatch": why,
            "known_torch_issue": f"{cls}: {groups(gm)} right-hand operands shared, "
            f"{updates(gm)} in-place updates; " + (
                "sorted keeping the graph's order, it agrees" if cls == SORT else
                "merged only after the last update and sorted keeping the order, it agrees")}


def available():
    """None where torch has merge_matmul with its legalize_graph; else why not."""
    try:
        merge = merge_module()
    except ImportError as e:
        return f"torch {torch.__version__} has no merge_matmul ({e})"
    if not hasattr(merge, "legalize_graph"):
        return f"torch {torch.__version__}: merge_matmul sorts without legalize_graph"
    return None


def run_merge(p, eager, paths, cache):
    """The merge_matmul path of one program, when asked for: {path: result}."""
    why = available()
    return {path: ({"status": "skipped", "skip": why} if why else merge_path(p, eager, cache))
            for path in PATHS if path in paths}
