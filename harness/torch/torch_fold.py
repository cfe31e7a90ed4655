"""The bridge's constant-folding path (docs/torch.md):
torch.fx.experimental.const_fold.split_const_subgraphs, the pass that moves every computation
on parameters and buffers alone into a subgraph run once, on the first call, and keeps its
results as attributes.

  fx.const_fold   the fx trace (the fx path's: buffer reads and in-place updates where the model
                  makes them) folded, the calls; outputs and state must equal torch eager's
                  bit for bit

Two causes of a wrong result are known (docs/found-bugs.md 25), each seen in the folded module,
and the classes count only when folding again with the causes seen removed agrees:
  const-fold-freezes-mutated-buffer  the subgraph that runs once holds a read of a buffer the
                                     graph updates in place (or the update itself, a method
                                     whose value comes from parameters and buffers alone), so
                                     later calls see its first value; removed: those reads not
                                     folded (skip_folding_node_fn)
  const-fold-drops-inplace-method    the folded module holds fewer in-place method calls
                                     (`buf.copy_(v)`) than the trace: the pass runs dead code
                                     elimination, which counts a method call as pure, so an
                                     update whose result nothing reads is dropped; removed: the
                                     methods made aten calls (`aten.copy_`), which fx counts as
                                     impure
"""
import warnings

import torch

from torch_compare import judge, run_calls
from torch_export import failure, state_after, verdict
from torch_fx import trace
from torch_partition import accesses, attr_of, in_place, storage_of

PATHS = ("fx.const_fold",)
FROZEN = "const-fold-freezes-mutated-buffer"
DROPPED = "const-fold-drops-inplace-method"


def fold(gm, skip=None):
    from torch.fx.experimental.const_fold import split_const_subgraphs
    with warnings.catch_warnings():  # it warns of the get_attr nodes it moves
        warnings.simplefilter("ignore")
        return split_const_subgraphs(gm, skip_folding_node_fn=skip)


def mutated_reads(gm):
    """The nodes that read (directly or through other nodes) a buffer the graph updates in
    place, and the updates themselves (an in-place op whose operands are all state, as
    `b.add_(1.0)` of emit-torch --inplace-updates, would fold whole): the names of the nodes a
    correct folding must not fold."""
    uses = accesses(gm.graph, gm)
    mutated = {buf for _, buf, update in uses if update}
    tainted = {name for name, buf, update in uses if buf in mutated and not update}
    for n in gm.graph.nodes:
        if any(a.name in tainted for a in n.all_input_nodes) and not in_place(n):
            tainted.add(n.name)
    return tainted | {name for name, _, update in uses if update}


def attr_tensors(module):
    """get_attr target -> tensor, for every get_attr node of `module`'s graph."""
    out = {}
    for n in module.graph.nodes:
        if n.op == "get_attr" and isinstance(attr_of(module, n.target), torch.Tensor):
            out[n.target] = attr_of(module, n.target)
    return out


def updated_storages(gm):
    """The storages of the buffers `gm`'s graph updates in place."""
    return {storage_of(attr_of(gm, buf)) for _, buf, update in accesses(gm.graph, gm)
            if update and isinstance(attr_of(gm, buf), torch.Tensor)}


def methods_as_functions(gm):
    """`gm` with every in-place method call (`x.copy_(v)`) made a call of the aten operator
    (`aten.copy_(x, v)`), whose mutable schema torch.fx counts as impure; the names of those
    nodes."""
    changed = []
    for n in gm.graph.nodes:
        if n.op == "call_method" and in_place(n) and hasattr(torch.ops.aten, n.target):
            packet = getattr(torch.ops.aten, n.target)
            # An overload, not the packet: torch 2.6 counts only an overload's schema.
            overload = next((getattr(packet, o) for o in ("default", "Tensor")
                             if o in packet.overloads()), None)
            if overload is not None:
                n.op, n.target = "call_function", overload
                changed.append(n.name)
    gm.recompile()
    return changed


def methods(module):
    """The in-place method calls in every graph of `module`: a count."""
    return sum(1 for m in module.modules() if isinstance(m, torch.fx.GraphModule)
               for n in m.graph.nodes if n.op == "call_method" and in_place(n))


def fold_path(p, eager, cache):
    stage = "trace"
    try:
        gm = trace(p)
        before = methods(gm)
        reads = mutated_reads(gm)
        updated = updated_storages(gm)
        stage = "fold"
        folded = fold(gm)
        stage = "run"
        status, why = judge(p, run_calls(folded, p), state_after(folded), eager, cache)
        if status != "mismatch":
            return verdict(status, why)
        # Each cause seen in the folded module: in-place method calls gone, reads of updated
        # buffers in the subgraph that runs once.
        dropped = before - methods(folded)
        const = getattr(folded, "const_subgraph_module", None)
        frozen = sorted(target for target, t in attr_tensors(const).items()
                        if storage_of(t) in updated) if const is not None else []
        if not dropped and not frozen:
            return verdict(status, why)
        # Both removed: the methods made aten calls, the reads not folded.
        fixed = fold(trace_as(p, bool(dropped)),
                     (lambda n: n.name in reads) if frozen else None)
        if judge(p, run_calls(fixed, p), state_after(fixed), eager, cache)[0] == "mismatch":
            return verdict(status, why)
    except Exception as e:  # noqa: BLE001 - torch refusing a program
        return failure(e, stage)
    classes = ([DROPPED] if dropped else []) + ([FROZEN] if frozen else [])
    texts = ([f"{dropped} of {before} in-place method calls dropped"] if dropped else []) + \
        ([f"the subgraph run once reads or updates updated buffers ({', '.join(frozen[:4])})"]
         if frozen else [])
    return {"status": "known_torch_issue", "detail": why,
            "known_torch_issue": "+".join(classes) + ": " + "; ".join(texts)}


def trace_as(p, functions):
    """A fresh trace, its in-place methods made functions when `functions`."""
    gm = trace(p)
    if functions:
        methods_as_functions(gm)
    return gm


def available():
    """None on torch 2.x; else why the path does not judge this torch. torch 1.13's const_fold
    splits with a split_module that fails on a partition without outputs (IndexError), and
    keeps some buffers only under the folded subgraph's names."""
    if int(torch.__version__.split(".")[0]) < 2:
        return (f"torch {torch.__version__}: const_fold's split fails on partitions without "
                "outputs there; the path needs torch >= 2")
    return None


def run_fold(p, eager, paths, cache):
    """The const_fold path of one program, when asked for: {path: result}."""
    why = available()
    return {path: ({"status": "skipped", "skip": why} if why else fold_path(p, eager, cache))
            for path in PATHS if path in paths}
