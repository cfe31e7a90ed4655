"""The bridge's split_module paths (docs/torch.md): torch.fx.passes.split_module.split_module,
the pass Dynamo's DDPOptimizer, torch.distributed.pipelining and vLLM's piecewise backend split
graphs with, over the fx trace of the model (the fx path's trace: buffer reads and in-place
updates where the model makes them, as a Dynamo graph has them).

  fx.split           split_module with its default order (keep_original_order=False: the
                     partitions in a topological order of their dependencies)
  fx.split_ordered   keep_original_order=True (the partitions in the order their first nodes
                     have in the graph)

The partitions are drawn per program, not taken from flatcheck's partitioner: each compute node
goes to the highest partition among its inputs' and its buffers' earlier uses' plus 0, 1 or 2
(drawn; at most one past the highest so far), so partitions only ever depend on lower ones and
first appear in the order of their numbers: the split is acyclic, its first nodes' order is one
its dependencies allow, running the partitions in that order keeps every buffer use on its side
of every in-place update, and independent partitions (siblings of one partition) are common. Both paths split a program
alike; only the order of the partitions' calls differs. The draw also picks keep_original_node_name and tuple_return, each
passed where the installed torch has it. The draw is seeded by the traced graph (its nodes' ops and names):
one program gives one split on any machine. The split module runs CONFIG["calls"] calls from
the initial state; outputs and buffers must equal torch eager's bit for bit.

A wrong result of fx.split with a buffer use moved across an in-place update of that buffer
(read from the graphs: the original graph's order against the order the split module runs
them; the split itself keeps them in order, above), where the same split with its calls in the
graph's order (keep_original_order=True) agrees, is the class split-module-reorders-mutation
(docs/found-bugs.md): the default order, a topological sort of the partitions' data
dependencies, ignores the order of their side effects. A KeyError of fx.split_ordered that
names a get_attr node the graph returns and no partition reads is the class
split-module-ordered-output-attr-keyerror (docs/found-bugs.md 23; torch_fx.split_by): with
keep_original_order=True the base graph gets an attribute only when a partition takes it as an
input. The fx path, which splits with keep_original_order=True too, reports it alike.
"""
import inspect
import random
import zlib

import torch
import torch.fx.passes.split_module

from torch_compare import judge, run_calls
from torch_export import failure, verdict
from torch_fx import KnownTorchIssue, live_state, split_by, trace
from torch_partition import accesses, mutation_reordered, run_order

PATHS = ("fx.split", "fx.split_ordered")
REORDER = "split-module-reorders-mutation"
# Where the split module's nodes came from: split_module copies a node's meta to its copy.
ORIGIN = "flatcheck_split_origin"


def graph_seed(gm):
    """A seed from the traced graph alone: its nodes' ops and names, in order."""
    text = "|".join(f"{n.op}:{n.name}" for n in gm.graph.nodes)
    return zlib.crc32(text.encode())


def draw_split(gm, rng, uses=()):
    """Node -> partition for every compute node of `gm`: the highest partition of its compute
    inputs and of the earlier uses of every buffer it uses (`uses`: accesses of the graph; 0
    when there are none) plus 0, 1 or 2, but at most one past the highest partition so far.

    A partition only uses lower ones (acyclic), and partitions first appear in the order of
    their numbers, so the graph's order of their first nodes is an order their dependencies
    allow (split_module with keep_original_order=True needs one: it raises a KeyError
    otherwise). A buffer's uses go to partitions in the order the graph has them, so running
    the partitions in that order keeps every buffer use on its side of every update: a split
    a caller may rightly ask for."""
    touches = {}
    for name, buf, _ in uses:
        touches.setdefault(name, set()).add(buf)
    last = {}  # buffer -> the highest partition of its uses so far
    plan = {}
    for n in gm.graph.nodes:
        if n.op in ("placeholder", "get_attr", "output"):
            continue
        bufs = touches.get(n.name, ())
        base = max([plan[a] for a in n.all_input_nodes if a in plan] +
                   [last[b] for b in bufs if b in last], default=0)
        highest = max(plan.values(), default=-1)
        plan[n] = min(base + rng.choice((0, 0, 1, 2)), highest + 1)
        for b in bufs:
            last[b] = max(last.get(b, 0), plan[n])
    return plan


def draw_options(rng):
    """split_module's naming and return options for one program: each drawn always (one
    program, one draw), passed where the installed torch has it (torch 1.13 has neither)."""
    has = inspect.signature(torch.fx.passes.split_module.split_module).parameters
    drawn = {"keep_original_node_name": rng.random() < 0.5, "tuple_return": rng.random() < 0.5}
    return {k: v for k, v in drawn.items() if k in has}


def order_by_origin(module):
    """Original node name -> position in the order the split module runs it."""
    return run_order(module, key=lambda n: n.meta.get(ORIGIN, n.name))


def split_path(p, ordered, eager, cache):
    stage = "trace"
    try:
        gm = trace(p)
        rng = random.Random(graph_seed(gm))
        uses = accesses(gm.graph, gm, inputs=True)
        plan = draw_split(gm, rng, uses)
        options = draw_options(rng)
        result = {"partitions": len(set(plan.values())), "options": options}
        for n in gm.graph.nodes:
            n.meta[ORIGIN] = n.name
        stage = "split"
        split = split_by(gm, plan, ordered, **options)
        stage = "run"
        status, why = judge(p, run_calls(split, p), live_state(split), eager, cache)
        if status == "mismatch" and not ordered:
            moved = mutation_reordered(uses, split, order_by_origin(split))
            if moved:
                # The cause removed: the same split with its calls in the graph's order.
                again = trace(p)
                for n, m in zip(gm.graph.nodes, again.graph.nodes):
                    m.meta[ORIGIN] = n.name
                plan = {m: plan[n] for n, m in zip(gm.graph.nodes, again.graph.nodes)
                        if n in plan}
                kept = split_by(again, plan, True, **options)
                if judge(p, run_calls(kept, p), live_state(kept), eager, cache)[0] != \
                        "mismatch":
                    return {**result, "status": "known_torch_issue",
                            "known_torch_issue": f"{REORDER}: {moved}; the same split run in "
                                                 "the graph's order agrees", "detail": why}
    except KnownTorchIssue as e:
        return {"status": "skipped", "skip": f"torch {torch.__version__}: {e}"}
    except Exception as e:  # noqa: BLE001 - torch refusing a program
        return failure(e, stage)
    return {**result, **verdict(status, why)}


def run_split(p, eager, paths, cache):
    """Every requested split_module path of one program: {path: result}."""
    return {path: split_path(p, path == "fx.split_ordered", eager, cache)
            for path in PATHS if path in paths}
