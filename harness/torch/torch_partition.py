"""The bridge's partition paths (docs/torch.md), torch >= 2.5: torch's own partitioners, the ones
Torch-TensorRT's dynamo frontend builds on, over the module of the non-strict exported program
(`ep.module()`, as Torch-TensorRT partitions it):

  partition.splitter    torch.fx.passes.splitter_base._SplitterBase (the base of Torch-TensorRT's
                        fast partitioner): `_run_on_acc_<k>` and `_run_on_gpu_<k>` submodules,
                        min_acc_module_size = CONFIG["min_block_size"]
  partition.capability  torch.fx.passes.infra.partitioner.CapabilityBasedPartitioner (the base
                        of its global partitioner): partitions of at least min_block_size compute
                        ops fused as `_run_on_acc_<id>`; the fallbacks stay in the top graph

An op runs in a fallback when its aten name is one of CONFIG["fallback_ops"] (Torch-TensorRT's
torch_executed_ops; flatcheck's op names mapped by FALLBACK_ATEN), a getitem where its producer
does. Each path runs the partitioned module, then the flatten pass (the built-in positional
inliner or --pass) on it, and runs that: CONFIG["calls"] calls each from the initial state,
outputs and final state (by the exported module's FQNs) judged against torch eager bit for bit.

_SplitterBase runs the module once on the sample inputs while it splits (ShapeProp), which
updates the buffers of a program that updates buffers: the bridge puts the initial state back
before each run. A wrong result of partition.capability on a program whose partitioning moved
an access to a buffer across an in-place update of it (mutation_reordered: the cause, read from
the graphs, never from the symptom) is the known torch issue
capability-partitioner-reorders-mutation (pytorch/pytorch#81244, open since 2022).
"""
import contextlib
import io

import torch

from torch_compare import judge, run_calls, tensors_of
from torch_export import export_program, failure, state_after, verdict

PATHS = ("partition.splitter", "partition.capability")

# flatcheck op -> the aten op name its PyTorch form exports to (the rest keep their names).
FALLBACK_ATEN = {"add_scalar": "add", "sub_scalar": "sub", "mul_scalar": "mul",
                 "div_scalar": "div", "concat": "cat", "split": "chunk"}
REORDER = "capability-partitioner-reorders-mutation"
SPLITTER_REORDER = "splitter-reorders-mutation"
AFTER_OUTPUT = "capability-partition-after-output"
# The same cause on torch 2.11: fuse_partitions asserts on a partition without outputs.
WITHOUT_OUTPUTS = "capability-partition-without-outputs"


class PartitionWithoutOutputs(Exception):
    """fuse_partitions raised on a partition whose values nothing outside it reads."""


def available():
    """None when torch has export and both partitioners; else the reason it has not."""
    try:
        import torch.fx.passes.infra.partitioner  # noqa: F401
        import torch.fx.passes.splitter_base  # noqa: F401
    except ImportError as e:
        return f"torch {torch.__version__} has no fx partitioners ({e})"
    if not hasattr(getattr(torch, "export", None), "export"):
        return f"torch {torch.__version__} has no torch.export (needs >= 2.5)"
    return None


def aten_name(node):
    """An op's name: an aten overload's op name, a function's name, a method's name."""
    if isinstance(node.target, str):
        return node.target if node.op == "call_method" else ""
    return getattr(node.target, "_opname", None) or getattr(node.target, "__name__", "")


def support_for(p):
    """Torch-TensorRT's operator support: every call_function but the fallback ops."""
    from torch.fx.passes.operator_support import OperatorSupportBase
    fallback = {FALLBACK_ATEN.get(op, op) for op in p.CONFIG.get("fallback_ops", [])}

    class Support(OperatorSupportBase):
        def is_node_supported(self, submodules, node):
            if node.op != "call_function":
                return False
            if aten_name(node) == "getitem":
                src = node.args[0]
                return isinstance(src, torch.fx.Node) and self.is_node_supported(submodules, src)
            return aten_name(node) not in fallback

    return Support()


def split_fast(gm, p, support):
    from torch.fx.passes.splitter_base import _SplitterBase, _SplitterSettingBase
    settings = _SplitterSettingBase(min_acc_module_size=p.CONFIG.get("min_block_size", 1),
                                    skip_fusion=True, allow_non_tensor=True)
    with contextlib.redirect_stdout(io.StringIO()):  # it prints its subgraph counts
        splitter = _SplitterBase(gm, tuple(t.clone() for t in p.INPUTS), support, settings,
                                 non_acc_submodule_name="_run_on_gpu_")
        return splitter()


def split_global(gm, p, support):
    """As Torch-TensorRT's global partitioner: single-node partitions allowed, then those with
    fewer than min_block_size compute ops (getitem and view not counted) dropped, the rest
    fused as `_run_on_acc_<id>`."""
    from torch.fx.passes.infra.partitioner import CapabilityBasedPartitioner
    partitioner = CapabilityBasedPartitioner(gm, support, allows_single_node_partition=True)
    size = p.CONFIG.get("min_block_size", 1)
    parts = [q for q in partitioner.propose_partitions()
             if sum(1 for n in q.nodes if n.op == "call_function" and
                    aten_name(n) not in ("getitem", "view")) >= size]
    try:
        return partitioner.fuse_partitions(parts, prefix="_run_on_acc_")
    except AssertionError as e:
        silent = [q for q in parts if not any(u not in q.nodes for n in q.nodes for u in n.users)]
        if not silent:
            raise
        nodes = sorted(n.name for n in silent[0].nodes)
        raise PartitionWithoutOutputs(
            f"a partition whose values nothing outside it reads ({', '.join(nodes[:6])}"
            f"{', ...' if len(nodes) > 6 else ''}): fuse_partitions raises "
            f"{type(e).__name__}: {e}") from e


INPUT = "input "  # accesses(inputs=True) names a user input `x` "input x"


def accesses(graph, module=None, inputs=False):
    """The in-place buffer updates of a graph (an exported module's aten copy_, a traced
    module's copy_ or add_ method: in_place) and the other uses of each buffer: (node name,
    buffer, is_update) in graph order. An in-place op returns its destination, and a view op
    (view_of) an alias of its input, so a use of its result uses its buffer too. With the
    graph's `module`, a buffer is named by its tensor's
    storage (the first FQN that holds it): two FQNs of one shared tensor are one buffer. With
    `inputs`, each user input (placeholder) the graph updates in place is such a tensor too,
    named INPUT + its name (emit-torch --update-inputs); inputs never updated are left out."""
    canonical = {}
    if module is not None:
        for fqn, t in tensors_of(module).items():
            if storage_of(t):
                canonical.setdefault(storage_of(t), fqn)

    def buffer(target):
        t = attr_of(module, target) if module is not None else None
        if not isinstance(t, torch.Tensor):
            return target
        return canonical.get(storage_of(t), target)

    of = {}
    out = []
    for n in graph.nodes:
        if n.op == "get_attr" or inputs and n.op == "placeholder":
            of[n] = buffer(n.target) if n.op == "get_attr" else INPUT + n.name
            continue
        inplace = in_place(n)
        for a in n.all_input_nodes:
            if a in of:
                out.append((n.name, of[a], inplace and n.args[0] is a))
        if (inplace or view_of(n)) and n.args[0] in of:
            of[n] = of[n.args[0]]
    updated = {buf for _, buf, update in out if update}
    return [u for u in out if not u[1].startswith(INPUT) or u[1] in updated]


# Ops whose result may share its first argument's storage (reshape and contiguous do where they
# can), as functions and methods; an aten overload says so in its schema.
VIEW_NAMES = {"view", "view_as", "reshape", "reshape_as", "transpose", "permute", "t", "chunk",
              "split", "split_with_sizes", "unbind", "tensor_split", "expand", "expand_as",
              "squeeze", "unsqueeze", "narrow", "select", "flatten", "unflatten", "movedim",
              "swapaxes", "swapdims", "as_strided", "alias", "detach", "contiguous", "getitem",
              "__getitem__", "slice", "diagonal", "unfold", "real", "view_as_real"}


def base_of(value, views=True):
    """The node whose tensor `value` is: followed back through in-place ops' results (they
    return their destination) and, with `views`, through view ops (view_of)."""
    while isinstance(value, torch.fx.Node) and (views and view_of(value) or in_place(value)) \
            and isinstance(value.args[0], torch.fx.Node):
        value = value.args[0]
    return value


def view_of(node):
    """Whether a node's result may be a view of its first argument (a tuple of views, for
    chunk and split): an aten overload whose schema marks its result as an alias of an input
    and not written, or a function or method named in VIEW_NAMES."""
    if node.op not in ("call_function", "call_method") or not node.args:
        return False
    schema = getattr(node.target, "_schema", None)
    if schema is not None:
        info = [r.alias_info for r in schema.returns]
        return bool(info) and info[0] is not None and not info[0].is_write
    return aten_name(node) in VIEW_NAMES


def attr_of(module, target):
    """What a get_attr target (`a.b.buf`) names in `module`, or None."""
    for part in target.split("."):
        module = getattr(module, part, None)
    return module


def storage_of(t):
    """The address of a tensor's storage (torch 1.13 has no untyped_storage)."""
    return (t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage()).data_ptr()


def in_place(node):
    """Whether a node updates its first argument in place and returns it: copy_, add_, mul_ and
    every op whose name ends in one underscore (torch's in-place convention)."""
    name = aten_name(node)
    return node.op in ("call_function", "call_method") and bool(node.args) and \
        name.endswith("_") and not name.endswith("__") and not name.startswith("_")


def run_order(module, key=lambda n: n.name):
    """Node key (default: its name) -> position in the order the partitioned module runs them,
    a fused partition's nodes at its call; nodes after the output node never run and are left
    out."""
    order = {}
    for n in module.graph.nodes:
        if n.op == "output":
            break
        if n.op == "call_module":
            inner = getattr(module.get_submodule(n.target), "graph", None)
            for m in (inner.nodes if inner is not None else ()):
                if m.op not in ("placeholder", "output"):
                    order.setdefault(key(m), len(order))
        order.setdefault(key(n), len(order))
    return order


def after_output(module):
    """The nodes after the graph's output node: code that never runs."""
    late, seen = [], False
    for n in module.graph.nodes:
        if seen:
            late.append(n)
        seen = seen or n.op == "output"
    return late


def mutation_reordered(uses, module, order=None):
    """The first buffer use that the partitioned module runs on the other side of an in-place
    update of that buffer than the original graph did: a text, or None. `order`: node name ->
    position in the run (default: run_order of the module)."""
    order = run_order(module) if order is None else order
    known = [(name, buf, upd, i) for i, (name, buf, upd) in enumerate(uses) if name in order]
    for name, buf, upd, i in known:
        if not upd:
            continue
        for other, obuf, _, j in known:
            if obuf == buf and other != name and (j < i) != (order[other] < order[name]):
                what = buf if buf.startswith(INPUT) else f"buffer {buf}"
                return (f"{other} uses {what} {'before' if j < i else 'after'} the update "
                        f"{name} in the original graph, {'after' if j < i else 'before'} it once "
                        f"partitioned")
    return None


def attribute(split, uses, rejudge):
    """The known issues that explain a wrong result of the capability path, by cause: a text
    ("class: cause", classes joined by +), or None. The fused partitions after the output node
    are moved before it, where they run (pytorch/pytorch#175203 puts such a partition at its
    last node), and the module is judged again; a buffer use moved across an update of the
    buffer is read from the graphs."""
    classes, causes = [], []
    late = after_output(split)
    if late:
        runs = [n.target for n in late if n.op == "call_module"]
        what = ", ".join(runs) if runs else late[0].name
        rest = len(late) - len(runs)
        if runs and rest:
            what += f" (and {rest} node{'s' if rest != 1 else ''} only " + \
                ("it reads)" if len(runs) == 1 else "they read)")
        output = next(n for n in split.graph.nodes if n.op == "output")
        for n in late:
            output.prepend(n)
        split.recompile()
        classes.append(AFTER_OUTPUT)
        causes.append(f"{what} placed after the output node, never run")
        if rejudge(split)[0] != "mismatch":
            return f"{AFTER_OUTPUT}: {causes[0]}"
    reordered = mutation_reordered(uses, split)
    if not reordered:
        return None
    return "+".join(classes + [REORDER]) + ": " + "; ".join(causes + [reordered])


def reset_state(refs, initial):
    """Puts the initial state back into the tensors `refs` (FQN -> tensor)."""
    with torch.no_grad():
        for fqn, t in refs.items():
            t.copy_(initial[fqn])


def judged(module, p, refs, initial, eager, cache):
    """Runs `module` from the initial state; the verdict by the exported module's FQNs."""
    reset_state(refs, initial)
    outs = run_calls(module, p)
    return judge(p, outs, {fqn: t.detach().clone() for fqn, t in refs.items()}, eager, cache)


def partition_path(p, kind, flatten, eager, cache):
    stage = "export"
    try:
        gm = export_program(p, "nonstrict").module()
        refs = tensors_of(gm)  # the partitioned modules share these tensors
        initial = state_after(gm)
        uses = accesses(gm.graph, gm, inputs=True)
        stage = "partition"
        support = support_for(p)
        split = (split_fast if kind == "splitter" else split_global)(gm, p, support)
        runs = sorted(n.target for n in split.graph.nodes if n.op == "call_module")
        result = {"runs": runs[:8]}
        status, why = judged(split, p, refs, initial, eager, cache)
        if status == "mismatch" and kind == "capability":
            known = attribute(split, uses, lambda m: judged(m, p, refs, initial, eager, cache))
            if known:
                return {**result, "status": "known_torch_issue", "known_torch_issue": known,
                        "detail": why}
        if status == "mismatch" and kind == "splitter":
            # _SplitterBase groups nodes by data dependencies alone, as the capability
            # partitioner does: a buffer use moved across an update of it, read from the graphs
            # (met with --reads alias, where a view of a buffer read before its update is used
            # after it; docs/found-bugs.md 55).
            moved = mutation_reordered(uses, split)
            if moved:
                return {**result, "status": "known_torch_issue",
                        "known_torch_issue": f"{SPLITTER_REORDER}: {moved}", "detail": why}
        stage = "flatten"
        flat = flatten(split)
        if not isinstance(flat, torch.fx.GraphModule):
            raise TypeError(f"the flatten pass returned {type(flat).__name__}, "
                            "not a GraphModule")
        f_status, f_why = judged(flat, p, refs, initial, eager, cache)
    except PartitionWithoutOutputs as e:
        return {"status": "known_torch_issue", "known_torch_issue": f"{WITHOUT_OUTPUTS}: {e}",
                "stage": stage}
    except Exception as e:  # noqa: BLE001 - torch (or the pass) refusing a program
        return failure(e, stage)
    worst = max((status, why, "partitioned"), (f_status, f_why, "flattened"),
                key=lambda s: ("agree", "excused", "mismatch").index(s[0]))
    return {**result, **verdict(worst[0], f"{worst[2]}: {worst[1]}" if worst[1] else None)}


def run_partition(p, eager, paths, flatten, cache):
    """Every requested partition path of one program: {path: result}."""
    why = available()
    out = {}
    for path in PATHS:
        if path not in paths:
            continue
        if why:
            out[path] = {"status": "skipped", "skip": why}
        else:
            out[path] = partition_path(p, path.split(".")[1], flatten, eager, cache)
    return out
