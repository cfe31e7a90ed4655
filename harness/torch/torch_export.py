"""The bridge's torch.export paths (docs/torch.md), torch >= 2.5:

  export.<mode>.module     torch.export.export(model, inputs, strict=<mode>), then ep.module()
  export.<mode>.unflatten  the same program through torch.export.save / load, then
                           torch.export.unflatten (call variants n, n@1 sharing state)
  export.<mode>.preserve   export with preserve_module_call_signature naming every submodule,
                           then unflatten (a module called more than once: a dispatcher)
  export.<mode>.preserve_some
                           the same with the call signatures of a drawn part of the submodules
                           preserved (each module object, all its names, with probability 1/2,
                           at least one preserved and one not; --draw's "preserve" pins them):
                           preserved modules below and above unpreserved ones
  export.nonstrict.reexport  export, save/load, unflatten, torch.export.export of the
                           unflattened module, unflatten of that (strict export refuses an
                           UnflattenedModule)

for mode in strict, nonstrict. Each runs CONFIG["calls"] calls on fresh input copies; outputs
and final state (every FQN the module holds, variants mapped to their base) must equal torch
eager's bit for bit (torch_compare.judge). When the unflatten path differs, the note says
whether unflatten without save/load differs too, to localize the fault.

A mismatch or an exception of an unflatten path is traced before it is reported: unflatten is
run again with one cause of docs/found-bugs.md removed at a time (TRACES: module-stack paths
that are dynamo's source expressions read back as FQNs, tried first where a program has such
paths; call_module targets compared in the dedup; nn_module_stack keys that name module paths
instead of module objects; children not reordered; a call variant keeping its module's children; a preserved call's entry
without a module dropped; a higher-order op's graphs placed where they are read; and the
others of TRACES, each where the program has its shape), then in
pairs, threes and so on; when such a run agrees with eager, the path is `known_torch_issue` of
that class, otherwise a `mismatch` (or an `error`). On the
preserve path, a program of a shape found before (preserve_excuse: a module called more than
once that updates a buffer; one buffer updated by two modules) has any wrong result once
unflatten succeeds counted as that class. An exception that no trace removes is an `error`
unless it matches a row of KNOWN_ERRORS (torch bugs found and documented, by their message) or
SKIPS (documented limitations, counted as skipped).
"""
import collections
import contextlib
import copy
import dataclasses
import inspect
import io
import itertools
import operator
import os
import random
import re
import sys
import zlib

import torch

from torch_compare import judge, run_calls, strip_variants, tensors_of
import torch_structure

MODES = ("strict", "nonstrict")
KINDS = ("module", "unflatten", "preserve", "preserve_some", "reexport", "decomp",
         "decomp_preserve", "decomp_preserve_some")
# Strict export cannot export an UnflattenedModule (dynamo refuses its input processing, a
# function under torch.compiler.disable): the re-export is non-strict only.
PATHS = tuple(f"export.{m}.{k}" for m in MODES for k in KINDS
              if (m, k) != ("strict", "reexport"))

# (pattern on "ExceptionType: message", skip class, reason). Each row is a documented torch
# limitation (docs/torch.md, "Skip classes"); anything else is an error the triage looks at.
SKIPS = [
    # run_decompositions refusing a plain tensor attribute (a constant to export) that the
    # forward updates in place: functionalization does not lift a constant's mutation, and torch
    # says so and asks for a buffer (torch 2.6 and 2.14.1; pytorch#145593, #197096). Met with
    # emit-torch --tensor-constants --inplace-updates.
    (r"^RuntimeError: Constant \S+ is mutated in the forward method", "decomp-mutated-constant",
     "run_decompositions refuses a tensor constant that the forward updates (torch asks for a "
     "buffer)"),
]
# (pattern, class): torch crashes the campaign found that no trace attributes to a cause; each is
# in docs/found-bugs.md with its case and repro.
KNOWN_ERRORS = [
    # Strict export preserving a module with a non-identifier name ("0") called twice: the
    # second call's nn_module_stack holds dynamo's source name, the signature lookup's key
    # (torch 2.11 and 2.14; found-bugs 12, corpus/torch/export-strict-preserve-numeric-name-
    # keyerror.py).
    (r"^KeyError: .getattr\(.*L\['self'\]", "export-strict-preserve-numeric-name-keyerror"),
    # torch.cond (the bridge's --branch cond) refusing two branch values that differ only in a
    # size-1 dimension's stride (torch 2.14.1; found-bugs 35, corpus/torch/cond-size-one-stride-
    # rejected.py): its message, or a KeyError from the same stride merging (`_bound_stride`:
    # one branch's stride not among the other's) keyed by a symbolic stride or, under strict
    # export's dynamo, a plain int; or, where dynamo traces the cond with symbolic sizes (eager
    # torch.cond compiled again for another size), its check of the strides' order: the
    # bridge takes torch.cond only for values whose strides differ in size-1 dimensions alone
    # (torch_cond.same_layout), so the order differs there only. The cond paths trace it
    # instead (torch_cond.export_traced).
    (r"output stride is not a simple accumulative multiplication of sizes|"
     r"call_function cond\(.*got KeyError\((s\d+: hint = )?\d+\)|"
     r"The sorted order of strides of the two branches' output doesn't match",
     "cond-size-one-stride-rejected"),
    # run_decompositions refusing a torch.cond whose operands are views of one tensor as
    # "aliasing" (torch 2.14.1; found-bugs 37, corpus/torch/decomp-cond-operands-share-
    # storage.py). Read from the message: the bridge's branches always return a clone, so
    # neither aliases its input or output, and the message can mean only this here.
    # torch.compile's AOT backends raise it too, wrapped by dynamo (BackendCompilerFailed).
    (r"^(BackendCompilerFailed: backend='\w+' raised:\n)?"
     r"RuntimeError: cond_(true|false)\w* might be aliasing the input or the output",
     "decomp-cond-operands-share-storage"),
    # strict export of a torch.cond whose two operands the aten trace maps to one node (a
    # preserved module returning its input twice; an op returning its input, contiguous())
    # names two placeholders of a branch graph alike (torch 2.6 and 2.14.1; found-bugs 39,
    # corpus/torch/export-strict-cond-duplicate-operand.py). Read from the message (met with
    # --branch cond): the bridge's cond always has two operands, and the recompile of a branch
    # graph named by export's placeholder naming pass is the only code that raises it there.
    (r"^SyntaxError: duplicate argument '\w+' in function definition \(proxy_tensor\.py",
     "export-strict-cond-duplicate-operand"),
    # torch.export.load of a program holding a torch.no_grad() region whose results nothing
    # reads (its node's value the empty tuple): the loaded node has no value and the verifier
    # refuses it (torch 2.6 and 2.14.1; found-bugs 40, corpus/torch/export-load-dead-grad-
    # region.py). Read from the message (met with --branch nograd): only such a region's node
    # is named wrap_with_set_grad_enabled.
    (r"^SpecViolationError: Node\.meta wrap_with_set_grad_enabled\w* is missing val field",
     "export-load-dead-grad-region"),
    # torch.export names a user input's placeholder after the forward's parameter even when the
    # name is a global torch.fx's generated code reads (pytree, fx_pytree, torch): the exported
    # module's code then asks the tensor for the module's function (torch 2.6 and 2.14.1;
    # found-bugs 87, corpus/torch/export-input-named-as-codegen-global.py; met with emit-torch
    # --hostile-names). Read from the message: a tensor is asked for tree_unflatten,
    # tree_flatten_spec or ops only where such a name shadows the module it stands for.
    (r"^AttributeError: 'Tensor' object has no attribute '(tree_unflatten|tree_flatten_spec|ops)'",
     "export-input-named-as-codegen-global"),
]


def available():
    """None when torch has export, save/load and unflatten; else the reason it has not."""
    export = getattr(torch, "export", None)
    if export is None or not all(hasattr(export, f) for f in ("export", "save", "load",
                                                             "unflatten")):
        return f"torch {torch.__version__} has no torch.export with unflatten (needs >= 2.5)"
    return None


def run_family(family, paths, run_one, why):
    """{path: result} for each path of `family` in `paths`: run_one(path), or skipped with the
    reason `why` (a family's available(): None when it can run)."""
    return {path: {"status": "skipped", "skip": why} if why else run_one(path)
            for path in family if path in paths}


def classify(exc):
    """("skipped", text) for a documented limitation, ("known_torch_issue", class) for a torch
    bug found before, or None."""
    text = f"{type(exc).__name__}: {exc}"
    for pattern, cls, reason in SKIPS:
        if re.search(pattern, text, re.S):
            return "skipped", f"{cls}: {reason}"
    for pattern, cls in KNOWN_ERRORS:
        if re.search(pattern, text, re.S):
            return "known_torch_issue", cls
    return None


def _dump_with_call_targets(graph):
    """torch's _check_graph_equivalence dump, with call_module targets kept (the fix)."""
    index = {}
    lines = []

    def arg(a):
        return "%" + str(index[id(a)]) if isinstance(a, torch.fx.Node) else str(a)

    for i, node in enumerate(graph.nodes):
        args = [str(a) for a in torch.utils._pytree.tree_map(arg, node.args)]
        args += [f"{k}={v}" for k, v in torch.utils._pytree.tree_map(arg, node.kwargs).items()]
        target = node.target if node.op in ("call_function", "get_attr", "call_module") else ""
        lines.append(f"{i}: {node.op}[{target}]({', '.join(args)})")
        index[id(node)] = i
    return "\n".join(lines)


@contextlib.contextmanager
def call_targets_compared():
    """unflatten's deduplication with call_module targets compared (torch's blanks them)."""
    module = sys.modules["torch.export.unflatten"]
    original = module._check_graph_equivalence
    module._check_graph_equivalence = lambda x, y: (_dump_with_call_targets(x.graph) ==
                                                    _dump_with_call_targets(y.graph))
    try:
        yield
    finally:
        module._check_graph_equivalence = original


def keyed_by_path(ep):
    """`ep` with nn_module_stack keys that name module paths (changed in place: the trace gives
    each attempt a fresh program). Strict export keys a module by the object (`L__self___a`, or
    on torch 2.14 its id, for every name of an aliased module), and unflatten takes the key for
    the module's identity."""
    for node in ep.graph.nodes:
        stack = node.meta.get("nn_module_stack")
        if stack:
            node.meta["nn_module_stack"] = {
                (path or "L__self__") + (key[key.index("@"):] if "@" in key else ""): (path, ty)
                for key, (path, ty) in stack.items()}
    return ep


@contextlib.contextmanager
def children_not_reordered():
    """unflatten without its last step, which only sorts each module's children into the eager
    module's order (`_reorder_submodules`): results cannot depend on it."""
    module = sys.modules["torch.export.unflatten"]
    original = module._reorder_submodules
    module._reorder_submodules = lambda *args, **kwargs: None
    try:
        yield
    finally:
        module._reorder_submodules = original


@contextlib.contextmanager
def variant_keeps_children(kept=None):
    """unflatten with a call variant's frame keeping the children its module already has. The
    frame of a later call of a module takes the first call's children
    (`self.module._modules = base_module_frame.module._modules`); when the module was first made
    as the prefix of a dotted call (`c.w` called from the parent before any plain call `c`
    survives), the child that call attached is dropped. `kept`, a list, gets the name of each
    child kept that the line would have dropped."""
    cls = sys.modules["torch.export.unflatten"].InterpreterModule
    had_own = "__setattr__" in cls.__dict__
    original = cls.__setattr__

    def keep_children(self, name, value):
        own = self.__dict__.get("_modules")
        if name == "_modules" and isinstance(value, dict) and own and value is not own:
            for child, module in own.items():
                if kept is not None and child not in value:
                    kept.append(child)
                value.setdefault(child, module)
        original(self, name, value)

    cls.__setattr__ = keep_children
    try:
        yield
    finally:
        if had_own:
            cls.__setattr__ = original
        else:
            del cls.__setattr__


@contextlib.contextmanager
def redirects_reach_their_module():
    """unflatten with the dedup's redirections pointing at the module they name. When two calls
    of one module have the same graph, `_deduplicate_modules` drops the later and points its
    call at the earlier's name taken from the base path (`blk.conv@1`). But a variant's child
    lives under the variant (`blk@1`); the base name `blk` holds it only when it shares the
    variant's children. A dead first call of `blk` followed by a call of `blk.conv` by path
    leaves at `blk` a container of its own, so the call names a child it does not hold
    (RuntimeError from the graph's lint: docs/found-bugs.md, 15). Here every redirected call's
    target is made to hold the module it was redirected to."""
    unflatten = sys.modules["torch.export.unflatten"]
    original = unflatten._deduplicate_modules

    def dedup(partitions):
        partitions = [list(group) for group in partitions]
        redirected = original(partitions)
        for group in partitions:
            by_name = {unflatten._call_name(e.fqn, e.call_idx): e for e in group}
            for call, e in by_name.items():
                seen = by_name.get(redirected.get(call))
                if seen is None:
                    continue
                *prefix, name = e.parent_call_module.target.split(".")
                holder = unflatten._get_attr_via_attr_list(e.parent_module, prefix)
                holder._modules[name] = seen.module
        return redirected

    unflatten._deduplicate_modules = dedup
    try:
        yield
    finally:
        unflatten._deduplicate_modules = original


def move_variant(root, fqn, new):
    """Moves the module at `fqn` to `new`, a name under the same parent, keeping the children of
    a container that stood at `new`."""
    *prefix, old = fqn.split(".")
    parent = sys.modules["torch.export.unflatten"]._get_attr_via_attr_list(root, prefix)
    module, name = parent._modules.pop(old), new.rsplit(".", 1)[-1]
    container = parent._modules.get(name)
    for child, m in (container._modules if container else {}).items():
        module._modules.setdefault(child, m)
    parent._modules[name] = module


@contextlib.contextmanager
def entries_without_module_dropped():
    """unflatten with a preserved module's dispatcher built from the call variants unflatten
    made. A call of a preserved module whose results are all unused leaves no module (`n` or
    `n@1`), but its module_call_graph entry stays: `_dispatch_modules` looks every entry up
    (AttributeError: no attribute 'n@1'; AssertionError later when the name holds a bare
    container), then takes the variants by position, `n`, `n@1`, ... as many as there are calls
    (with the lookup alone fixed: KeyError when the missing one is not the last; a call to a
    missing `n` when only `n@1` was made). A module under two
    names (`self.b = self.a`) does the same when a name it is never called by is preserved.
    A module whose first call is dead but whose child the parent calls by path (`a_b.a_w`)
    holds only a container InterpreterModule at its name, never finalized (no graph_module):
    that is no module either. When such a container comes first, unflatten gives it to the next
    live call (`n@1`) as that call's module, so the dead call's name `n` holds `n@1`'s module
    and the dispatcher runs `n@1`'s graph twice, silently (docs/found-bugs.md, 16): a name no
    graph calls is no module, whatever it holds.
    Here entries without an InterpreterModule are dropped and the variants made are renumbered
    `n`, `n@1`, ... in call order (the children of a container at the new name kept), parents
    before children: entries name a variant's children by the base (`a.leaf@1`), which holds
    them only once `a@1` is renamed `a` (docs/found-bugs.md, 6: nested preserved variants)."""
    unflatten = sys.modules["torch.export.unflatten"]
    cls = unflatten.UnflattenedModule
    original = cls._dispatch_modules

    def dispatch(self, redirected, consts_targets):
        # every call variant some graph calls, or the dedup redirected, by its entry's name: a
        # variant's children are its base's (`a@1.leaf@1` is the entry `a.leaf@1`)
        called = set(redirected)
        for prefix, mod in self.named_modules(remove_duplicate=False):
            for node in getattr(mod, "graph", torch.fx.Graph()).nodes:
                if node.op == "call_module":
                    full = f"{prefix}.{node.target}" if prefix else node.target
                    parent, _, name = full.rpartition(".")
                    called.add(f"{strip_variants(parent)}.{name}" if parent else name)

        kept, gone, renamed, moved = [], set(), {}, {}  # moved: old name -> new, as renamed

        def made(fqn):  # an InterpreterModule, not a bare container unflatten made for a path
            if fqn not in called:  # a name that holds another call's module: no call of its own
                return False
            try:
                target = redirected.get(fqn, fqn)
                mod = torch.fx.graph_module._get_attr(self, moved.get(target, target))
                return hasattr(mod, "graph") and getattr(mod, "graph_module", None) is not None
            except (AttributeError, AssertionError):  # no such attribute; a None on the path
                return False

        entries = self.module_call_graph
        levels = collections.defaultdict(list)  # by depth: a variant `a@1`'s children are found
        for e in entries:  # at `a.leaf@1` only once `a@1` is renamed `a`, so parents go first
            if e.fqn and e.signature:
                levels[e.fqn.count(".")].append(e)
            else:
                kept.append(e)
        for depth in sorted(levels):
            groups = collections.defaultdict(list)
            for e in levels[depth]:
                if made(e.fqn):
                    groups[e.fqn.split("@")[0]].append(e)
                else:
                    gone.add(e.fqn)
            for base, group in groups.items():
                group.sort(key=lambda e: int(e.fqn.split("@")[1]) if "@" in e.fqn else 0)
                for k, e in enumerate(group):
                    want = unflatten._call_name(base, k + 1)
                    if e.fqn != want:
                        renamed[e.fqn] = want
                        if e.fqn not in redirected:
                            move_variant(self, e.fqn, want)
                            moved[e.fqn] = want
                        e = dataclasses.replace(e, fqn=want)
                    kept.append(e)
        # the dedup's redirections, under the new names (none left under an old or dropped one)
        kept_keys = {k: v for k, v in redirected.items() if k not in renamed and k not in gone}
        redirected = {**kept_keys, **{new: redirected[old] for old, new in renamed.items()
                                      if old in redirected}}
        redirected = {k: moved.get(v, v) for k, v in redirected.items()}
        self.module_call_graph = kept
        try:
            original(self, redirected, consts_targets)
        finally:
            self.module_call_graph = entries

    cls._dispatch_modules = dispatch
    try:
        yield
    finally:
        cls._dispatch_modules = original


# docs/found-bugs.md 20: unflatten of a functionalized program replays a module's buffer
# updates by node name, in the graph of every call of the module.
IVALS_CLASS = "unflatten-ivals-names-across-calls"


class IvalsNameCollision(Exception):
    """unflatten was about to replay a recorded update on a placeholder (IVALS_CLASS)."""


@contextlib.contextmanager
def ivals_collisions_raised():
    """unflatten raising IvalsNameCollision where torch's mutation replay (`_IVals.update`, the
    one that takes the partitions: torch 2.14) would put `copy_` after a placeholder: a node of
    another call of the module that holds a recorded update under its name. Nothing changes on
    a torch whose `_IVals.update` is another (torch 2.6's keeps values in attributes)."""
    import inspect

    from torch.export import unflatten as _  # noqa: F401 - the module, loaded
    cls = getattr(sys.modules["torch.export.unflatten"], "_IVals", None)
    original = getattr(cls, "update", None)
    if original is None or list(inspect.signature(original).parameters) != ["self", "partitions"]:
        yield
        return

    def update(self, partitions):
        for shared_submodules in partitions:
            for entry in shared_submodules:
                names = self.node_names_by_fqn[entry.fqn]
                hit = [n.name for n in entry.module.graph.nodes
                       if n.name in names and n.op == "placeholder"]
                if hit:
                    raise IvalsNameCollision(f"{entry.fqn}: an update recorded as {hit[0]} "
                                             "names a placeholder of this call")
        return original(self, partitions)

    cls.update = update
    try:
        yield
    finally:
        cls.update = original


def ivals_collide(fresh, chosen=()):
    """Whether unflatten of `fresh()`, with the causes `chosen` (rows of TRACES) removed,
    replays a recorded update on a placeholder (IVALS_CLASS, attributed by its mechanism: the
    replay itself is what goes wrong, and removing the crash alone leaves the buffer stale)."""
    try:
        unflatten_removing(fresh, chosen, ivals_collisions_raised())
    except IvalsNameCollision:
        return True
    except Exception:  # noqa: BLE001 - another failure: not this mechanism
        return False
    return False


OUTPUT_INSIDE_CHILD = "unflatten-preserve-output-inside-child"


def preserved_outputs(ep):
    """(module call entry, output name, its node in `ep`'s graph) for each output of each
    preserved module's signature (the root's left out) that names a node of the graph."""
    nodes = {n.name: n for n in ep.graph.nodes}
    for entry in ep.module_call_graph:
        if entry.signature is None or not entry.fqn:
            continue
        for out in entry.signature.outputs:
            name = getattr(out, "name", None)
            if name in nodes:
                yield entry, name, nodes[name]


def live_nodes(graph):
    """The nodes of `graph` that dead-code elimination keeps: the output, impure nodes (an
    in-place update, a placeholder) and what they read, transitively."""
    live = set()
    for n in reversed(graph.nodes):
        if n.op in ("output", "placeholder") or n.is_impure() or any(u in live for u in n.users):
            live.add(n)
    return live


def stack_paths(n):
    """The module paths of `n`'s module stack, outermost first, without call indices."""
    return [path.split("@")[0] for path, _ in (n.meta.get("nn_module_stack") or {}).values()]


def output_inside_child(ep, replayed=False):
    """The first value a preserved module's signature returns that an unpreserved module below
    it computes and only that module reads (docs/found-bugs.md 21, by its mechanism: unflatten
    outlines the child with the values read outside it, and a signature is not a reader): a
    text, or None. With `replayed` (a functional graph: a decomposed program's), the output's
    read of a buffer's or input's new value that the program does not return is not a read
    either: unflatten turns it back into a `copy_` beside the value."""
    preserved = {e.fqn.split("@")[0] for e in ep.module_call_graph if e.signature is not None}
    live = live_nodes(ep.graph)
    sig = ep.graph_signature
    replay = {*sig.buffers_to_mutate, *getattr(sig, "user_inputs_to_mutate", {})} - \
        set(sig.user_outputs) if replayed else set()
    for entry, _, n in preserved_outputs(ep):
        # a later call's entry is `a@1`; the module stack names the module, `a`
        base = entry.fqn.split("@")[0]
        inside = [q for q in stack_paths(n) if q.startswith(base + ".") and q not in preserved]
        readers = [u for u in n.users if u in live and not (u.op == "output" and n.name in replay)]
        if inside and all(inside[0] in stack_paths(u) for u in readers):
            return (f"{entry.fqn} returns {n.name}, which its unpreserved child {inside[0]} "
                    f"computes and only it reads")
    return None


RETURNED_STATE = "unflatten-preserve-returned-state"  # docs/found-bugs.md 54


def lifted_state(ep):
    """{lifted input name: parameter, buffer or constant FQN} of `ep`."""
    sig = ep.graph_signature
    return {**sig.inputs_to_parameters, **sig.inputs_to_buffers,
            **getattr(sig, "inputs_to_lifted_tensor_constants", {})}


def returned_state(ep, why):
    """A preserved module's signature returning one of the program's parameters, buffers or
    constants as it is, a value its own graph does not compute: the lifted state input of the
    graph, or an in-place update of it made outside the module (its latest version). unflatten
    finds no node of the module's own graph for it and fails naming it (`why`, unflatten's
    error; docs/found-bugs.md 54, by its mechanism). A text, or None."""
    from torch_partition import base_of  # torch_partition imports this module
    state = lifted_state(ep)
    for entry, name, n in preserved_outputs(ep):
        if not re.search(rf"\b{re.escape(name)}\b", why):
            continue
        inside = any(path.split("@")[0] == entry.fqn or
                     path.split("@")[0].startswith(entry.fqn + ".")
                     for path, _ in (n.meta.get("nn_module_stack") or {}).values())
        n = base_of(n, views=False)
        if n.name in state and not inside:
            return f"{entry.fqn} returns {state[n.name]} as it is ({name})"
    return None


OUTPUT_IN_PRESERVED = "unflatten-preserve-output-inside-preserved-child"  # docs/found-bugs.md 60


def signature_returns(ep):
    """{module path (no @N): the names its preserved signatures return, over all its calls}."""
    returns = collections.defaultdict(set)
    for e in ep.module_call_graph:
        if e.signature is not None and e.fqn:
            returns[e.fqn.split("@")[0]] |= {getattr(a, "name", None) for a in e.signature.outputs}
    return returns


def output_inside_preserved_child(ep, why):
    """A preserved module's signature returning a value (named in `why`, unflatten's error)
    that a preserved module below it computes and whose own signatures do not return it (such
    as a child's in-place update of its buffer, when the module returns the buffer as
    updated): unflatten builds the module's graph with that child as one call giving its
    signature's outputs, so no node of the graph is the value (docs/found-bugs.md 60, by its
    mechanism). A text, or None."""
    returns = signature_returns(ep)
    for entry, name, n in preserved_outputs(ep):
        if not re.search(rf"\b{re.escape(name)}\b", why):
            continue
        base = entry.fqn.split("@")[0]
        for path, _ in (n.meta.get("nn_module_stack") or {}).values():
            child = path.split("@")[0]
            if child.startswith(base + ".") and child in returns and name not in returns[child]:
                return (f"{entry.fqn} returns {name}, which its preserved child {child} "
                        f"computes and does not return")
    return None


COND_CLASS = "unflatten-cond-dead-first-call"  # docs/found-bugs.md 34


@contextlib.contextmanager
def graph_attrs_where_read():
    """unflatten placing each higher-order op's graph (torch.cond's branches) on every module
    whose graph reads it by name, instead of on the module named by the FQN the op's call was
    outlined under: with that call's module dead (a first call whose result is unused), torch's
    _copy_graph_attrs looks up a module that does not exist."""
    module = sys.modules["torch.export.unflatten"]
    original = getattr(module, "_copy_graph_attrs", None)
    if original is None:  # a torch without the step: nothing to remove
        yield
        return

    def placed(gm, root, seen_attrs):
        names = set().union(*seen_attrs.values()) if seen_attrs else set()
        for _, m in root.named_modules(remove_duplicate=False):
            graph = getattr(m, "graph", None)
            for node in graph.nodes if isinstance(graph, torch.fx.Graph) else ():
                if node.op == "get_attr" and node.target in names:
                    setattr(m, node.target, getattr(gm, node.target))

    module._copy_graph_attrs = placed
    try:
        yield
    finally:
        module._copy_graph_attrs = original


GRAD_REGION = "export-strict-grad-region-module-stack"  # docs/found-bugs.md 41


def grad_regions(ep):
    """The wrap_with_set_grad_enabled nodes of `ep`'s graph (torch.no_grad() blocks)."""
    return [n for n in ep.graph.nodes
            if n.op == "call_function" and "wrap_with_set_grad_enabled" in str(n.target)]


REGION_STACKS = "flatcheck_region_stacks"
# docs/found-bugs.md 43: export's pass replacing grad-mode changes by higher-order ops inlines
# the graph's pieces back (torch._export.utils.node_inline_) and clears the users of a piece's
# single output, unlinking a dead node inside the piece from the value it reads.
UNLINKED = "export-grad-region-dead-user-unlinked"


def uses_of(gm):
    """(node, input) for every input every node of `gm`'s graphs (its submodules' too) reads."""
    return [(n, a) for m in gm.modules() if isinstance(getattr(m, "graph", None), torch.fx.Graph)
            for n in m.graph.nodes for a in n.all_input_nodes]


def unlinked_uses(gm):
    """(node, input) names where a node of `gm`'s graphs reads a node whose users do not list
    it: a graph whose use lists are wrong."""
    return [(n.name, a.name) for n, a in uses_of(gm) if n not in a.users]


def relink_users(gm):
    """`gm` with every node put back among the users of the nodes it reads (in place)."""
    for n, a in uses_of(gm):
        a.users.setdefault(n, None)
    return gm


def users_mended(ep):
    """`ep` with its graph's use lists mended (relink_users; TRACES' row of UNLINKED)."""
    relink_users(ep.graph_module)
    return ep


@contextlib.contextmanager
def users_relinked():
    """torch.export with UNLINKED's cause removed: the graph's use lists repaired right after
    the pass that replaces grad-mode changes by higher-order ops (export imports it when it
    runs it, so the module's function is the one to wrap)."""
    from torch._export.passes import replace_set_grad_with_hop_pass as module
    original = module.replace_set_grad_with_hop_pass

    def relinked(gm, *args, **kwargs):
        out = original(gm, *args, **kwargs)
        relink_users(out[0] if isinstance(out, tuple) else out)
        return out
    module.replace_set_grad_with_hop_pass = relinked
    try:
        yield
    finally:
        module.replace_set_grad_with_hop_pass = original


def region_getitems(ep):
    """The getitem nodes reading `ep`'s torch.no_grad() blocks' results."""
    return [u for n in grad_regions(ep) for u in n.users if u.target is operator.getitem]


def region_stacks(ep):
    """{node name: module stack} of region_getitems(ep), as export recorded them."""
    return {u.name: dict(u.meta.get("nn_module_stack") or {}) for u in region_getitems(ep)}


def grad_regions_placed(ep):
    """`ep` with each torch.no_grad() block's node (the get_attr of its body, the getitems of
    its results) given the module stack of the module that ran it, where export recorded a
    shorter one: the longest stack every computed node it reads and every node reading its
    results share (changed in place: the trace gives each attempt a fresh program). Strict
    export records the block under the module that called the one running it, so unflatten
    cuts that module's call in two around the block."""
    recorded = ep.graph_module.meta.get(REGION_STACKS, {})  # set by saved_loader's loads

    def stack(x):
        return list((recorded.get(x.name) or x.meta.get("nn_module_stack") or {}).items())

    for n in grad_regions(ep):
        # the block's results are read through getitem nodes, which export records where the
        # block ran (save/load gives them the root's; saved_loader keeps export's for this);
        # where they say no more than the block's own, the computed nodes it reads and the
        # nodes reading those getitems count (not the output node: it has no stack)
        own = stack(n)
        picks = [u for u in n.users if u.target is operator.getitem]
        common = os.path.commonprefix([stack(g) for g in picks]) if picks else own
        if len(common) <= len(own):
            near = [a for a in n.all_input_nodes if a.op == "call_function"] + \
                [u for u in n.users if u not in picks] + [r for g in picks for r in g.users]
            stacks = [stack(x) for x in near if x.op != "output"]
            if not stacks:
                continue
            common = os.path.commonprefix(stacks)  # element-wise on lists: the shared modules
        if len(common) > len(own) and common[:len(own)] == own:
            for x in [n] + [a for a in n.all_input_nodes if a.op == "get_attr"] + picks:
                x.meta["nn_module_stack"] = dict(common)
    return ep


def holds_graphs(ep):
    """Whether the exported program's graph reads a graph module (a higher-order op's)."""
    gm = ep.graph_module
    return any(n.op == "get_attr" and isinstance(getattr(gm, n.target, None),
                                                 torch.fx.GraphModule) for n in ep.graph.nodes)


# docs/found-bugs.md 44: unflatten numbers a module's calls by the `@N` of their nn_module_stack
# keys, and its deduplication takes the first call met in the graph for the one to keep; when a
# later call's nodes come first (a valid order a pass can give), it removes the module at the
# submodule's own path.
LATER_FIRST = "unflatten-later-call-first-dedup"


def call_index(key):
    """(base, N) of an nn_module_stack key `base@N` (N 0 without the suffix)."""
    base, _, n = key.rpartition("@")
    return (base, int(n)) if base and n.isdigit() else (key, 0)


def calls_met(ep):
    """{key base (a module's calls): the call indices in the order `ep`'s graph meets them}."""
    met = {}
    for n in ep.graph.nodes:
        for key in n.meta.get("nn_module_stack") or {}:
            base, index = call_index(key)
            if index not in met.setdefault(base, []):
                met[base].append(index)
    return met


def calls_out_of_order(ep):
    """Each module (its keys' base) whose calls `ep`'s graph meets out of their index order,
    a call of higher index first: 'base: @1 before @0'."""
    return [f"{base}: " + " before ".join(f"@{i}" for i in order)
            for base, order in calls_met(ep).items() if order != sorted(order)]


def calls_renumbered(ep):
    """`ep` (changed in place) with each module's call keys numbered in the order the graph
    meets them (LATER_FIRST's cause removed): the first call met is `base`, the next `base@1`."""
    renamed = {}
    for base, order in calls_met(ep).items():
        for new, old in enumerate(order):
            renamed[base if old == 0 else f"{base}@{old}"] = base if new == 0 else f"{base}@{new}"
    for n in ep.graph.nodes:
        stack = n.meta.get("nn_module_stack")
        if stack:
            n.meta["nn_module_stack"] = {renamed.get(k, k): v for k, v in stack.items()}
    return ep


# docs/found-bugs.md 59: run_decompositions gives no module stack to a view it regenerates after
# an in-place update of its base (an empty one from torch 2.14), and a buffer's new value may
# be a graph input as it is (`buf.copy_(x)`), whose copy_ unflatten makes with the
# placeholder's metadata: unflatten refuses the program ("Unable to find nn_module_stack for
# node", or on 2.14.1 a ValueError of _fix_nn_module_stacks).
STACKLESS = "decomp-unflatten-stackless-node"


def stackless_nodes(ep):
    """Names of the nodes of `ep`'s graph unflatten needs a module stack of and finds none: a
    call_function node whose nn_module_stack is missing or empty, and a placeholder given as a
    buffer's new value (an output of kind BUFFER_MUTATION)."""
    kind = torch.export.graph_signature.OutputKind.BUFFER_MUTATION
    new_values = {getattr(s.arg, "name", None) for s in ep.graph_signature.output_specs
                  if s.kind == kind}
    return [n.name for n in ep.graph.nodes
            if n.op == "call_function" and not n.meta.get("nn_module_stack") or
            n.op == "placeholder" and n.name in new_values]


def stacks_placed(ep):
    """`ep` (changed in place) with STACKLESS's cause removed: each call_function node of
    stackless_nodes given the root module's stack entry (it runs in the root module), and each
    buffer's new value that is a placeholder given as a clone of it made in the root module (a
    placeholder with a module stack is one unflatten refuses)."""
    # the root's entry as the graph has it, or, where no node has one, as export writes it
    root = next(({key: (path, ty)} for n in ep.graph.nodes
                 for key, (path, ty) in (n.meta.get("nn_module_stack") or {}).items()
                 if path == ""), {"L__self__": ("", "torch.nn.Module")})
    named = set(stackless_nodes(ep))
    graph = ep.graph
    output = next(n for n in graph.nodes if n.op == "output")
    results = list(output.args[0])
    kind = torch.export.graph_signature.OutputKind.BUFFER_MUTATION
    for i, spec in enumerate(ep.graph_signature.output_specs):
        value = results[i]
        if spec.kind != kind or value.op != "placeholder" or value.name not in named:
            continue
        with graph.inserting_before(output):
            clone = graph.call_function(torch.ops.aten.clone.default, (value,))
        clone.meta["val"] = value.meta.get("val")
        clone.meta["nn_module_stack"] = dict(root)
        results[i] = clone
        spec.arg.name = clone.name
    output.args = (tuple(results),) + tuple(output.args[1:])
    for n in graph.nodes:
        if n.op == "call_function" and n.name in named:
            n.meta["nn_module_stack"] = dict(root)
    ep.graph_module.recompile()
    return ep


UNREAD_ARGUMENT = "unflatten-preserve-unread-argument-read-as-mutation"  # docs/found-bugs.md 64


def unread_arguments(ep):
    """(preserved call's entry, node) for each argument of a preserved call that an unpreserved
    module outside the call's ancestors computes and only that module reads (no node of the
    callee reads it either). unflatten outlines that module with the values nodes outside it
    read, and a signature is not a reader, so the preserved call's frame finds the argument in
    no frame and takes it for a buffer mutation's intermediate value (`_IVals.read`): it reads
    the node's first argument instead (a crash where that is a list), and on torch 2.14.1 writes
    the value into it with `copy_` after the node, in place (docs/found-bugs.md 64)."""
    preserved = {e.fqn.split("@")[0] for e in ep.module_call_graph if e.signature is not None}
    nodes = {n.name: n for n in ep.graph.nodes}
    live = live_nodes(ep.graph)
    found = []
    for entry in ep.module_call_graph:
        if entry.signature is None or not entry.fqn:
            continue
        base = entry.fqn.split("@")[0]
        for arg in entry.signature.inputs:
            n = nodes.get(getattr(arg, "name", None))
            if n is None or n.op != "call_function":
                continue
            outside = [q for q in stack_paths(n)
                       if q and q != base and not base.startswith(q + ".")]
            if outside and outside[0] not in preserved and \
                    all(outside[0] in stack_paths(u) for u in n.users if u in live):
                found.append((entry, n))
    return found


class _SignatureReader:
    """Stands in unflatten's use lists for a preserved call reading its argument."""
    name = "<a preserved call's argument>"


@contextlib.contextmanager
def unread_arguments_returned():
    """unflatten with UNREAD_ARGUMENT's cause removed: a module outlined with the values read
    outside it (one whose call signature is not preserved) also returns each value it made that
    a preserved call's signature takes as an argument, as if the signature read it."""
    frame = sys.modules["torch.export.unflatten"]._ModuleFrame
    original = frame.finalize_outputs

    def finalize_outputs(self):
        if self.module_call_graph.get(self.child_fqn) is not None and self.parent is not None:
            return original(self)
        arguments = {getattr(a, "name", None) for sig in self.module_call_graph.values()
                     for a in sig.inputs}
        added = [n for n in self.node_map if n.name in arguments]
        for n in added:
            n.users[_SignatureReader] = None
        try:
            return original(self)
        finally:
            for n in added:
                n.users.pop(_SignatureReader, None)

    frame.finalize_outputs = finalize_outputs
    try:
        yield
    finally:
        frame.finalize_outputs = original


UPDATE_READ_OUTSIDE = "unflatten-update-read-outside-preserved-module"  # docs/found-bugs.md 65


def updates_read_outside(ep):
    """(in-place update node, preserved module path) for each in-place update of a lifted buffer
    (`copy_(buf, v)`, or of an earlier update's result: `add_(copy_, x)`) made inside a
    preserved module, whose signatures do not return it, and read
    by a live node outside that module (its caller reading `self.leaf.buf` after the call). The
    reader's frame finds the update in no frame: an unpreserved one gets it as a new placeholder
    and asks its caller for it, and the caller's frame maps it to the buffer, an argument that
    the buffer's sinking removes from the call again (docs/found-bugs.md 65)."""
    from torch_partition import base_of  # torch_partition imports this module
    buffers = set(ep.graph_signature.inputs_to_buffers)
    returns = signature_returns(ep)
    live = live_nodes(ep.graph)
    found = []
    for n in ep.graph.nodes:
        target = getattr(n.target, "_schema", None)
        if n.op != "call_function" or target is None or not target.is_mutable or not n.args:
            continue
        base = base_of(n, views=False)  # a later update writes the earlier one's result
        if getattr(base, "op", None) != "placeholder" or base.name not in buffers:
            continue
        inside = [q for q in stack_paths(n) if q in returns and n.name not in returns[q]]
        if inside and any(inside[-1] not in stack_paths(u) for u in n.users if u in live):
            found.append((n, inside[-1]))
    return found


def updates_read_as_buffer(ep):
    """`ep` (changed in place) with UPDATE_READ_OUTSIDE's cause removed: each reader outside the
    preserved module of an update of updates_read_outside reads the buffer itself instead, the
    same tensor once the update ran (the unflattened module updates its buffers in place)."""
    from torch_partition import base_of  # torch_partition imports this module
    for n, path in updates_read_outside(ep):
        for u in list(n.users):
            if path not in stack_paths(u):
                u.replace_input_with(n, base_of(n, views=False))
    ep.graph_module.recompile()
    return ep


SIGNATURE_UPDATE = "unflatten-preserve-functional-update-in-signature"  # docs/found-bugs.md 66


def signature_updates(ep):
    """(preserved call's path, value) for each value a preserved call signature takes or returns
    that is also the program's new value of a buffer or input: a mutation output of the
    functional graph run_decompositions gives (`add` for `self.buf.add_(x); return self.buf`).
    unflatten turns each such mutation back into `copy_(buf, add)` and moves every reader of
    `add` to the `copy_`, so the name the signature holds no longer links the value to its
    readers (docs/found-bugs.md 66):
    - returned, computed below the preserved module (no preserved module below returns it): the
      module below returns the `copy_`, and the preserved module's graph has no node for `add`;
    - taken, computed outside the module: its readers inside read the `copy_`, a value the frame
      does not have, which unflatten takes for a mutation's intermediate value (on torch 2.6 an
      attribute that nothing writes where the root computed the value)."""
    mutated = {*ep.graph_signature.buffers_to_mutate,
               *getattr(ep.graph_signature, "user_inputs_to_mutate", {})}
    returns = signature_returns(ep)
    nodes = {n.name: n for n in ep.graph.nodes}
    found = []
    for entry in ep.module_call_graph:
        if entry.signature is None or not entry.fqn:
            continue
        base = entry.fqn.split("@")[0]
        for side, args in (("returns", entry.signature.outputs), ("takes", entry.signature.inputs)):
            for name in (getattr(a, "name", None) for a in args):
                if name not in mutated or name not in nodes:
                    continue
                paths = stack_paths(nodes[name])
                below = [q for q in paths if q.startswith(base + ".")]
                # a preserved module below that returns the value gives the module a node for it
                returned = below and not any(name in returns.get(q, ()) for q in below)
                taken = base not in paths
                if (returned if side == "returns" else taken):
                    found.append((entry.fqn, f"{side} {name}"))
    return found


@contextlib.contextmanager
def updates_read_as_values():
    """unflatten with SIGNATURE_UPDATE's cause removed: after torch turns the graph's mutations
    back into `copy_` nodes (`_inplace_buffer_and_input_mutations`, `_inplace_buffer_mutations`
    on torch 2.6), each reader of a new value reads the value again, not the `copy_` (the same
    tensor: the value is not written after; the `copy_` still updates the buffer)."""
    module = sys.modules["torch.export.unflatten"]
    name = next(n for n in ("_inplace_buffer_and_input_mutations", "_inplace_buffer_mutations")
                if hasattr(module, n))
    original = getattr(module, name)

    def inplaced(graph, *args, **kwargs):
        before = set(graph.nodes)
        original(graph, *args, **kwargs)
        for n in [n for n in graph.nodes if n not in before]:
            if n.op == "call_function" and "copy_" in str(n.target) and len(n.args) == 2:
                n.replace_all_uses_with(n.args[1])

    setattr(module, name, inplaced)
    try:
        yield
    finally:
        setattr(module, name, original)


# docs/found-bugs.md 68 (torch 2.6; pytorch/pytorch#149206 brought input mutations in, March
# 2025): unflatten turns the buffer mutations of a functional graph (a decomposed program's)
# back into copy_ nodes and drops them from the outputs, but not the user input mutations, so
# the module returns those too and its outputs do not fit the output spec.
INPUT_UPDATES_KEPT = "unflatten-decomp-input-update-outputs"


def input_updates_kept(ep):
    """The user inputs `ep`'s graph returns as mutation outputs, where this torch's unflatten
    has no pass that turns them back into copy_ nodes (torch 2.6's `_inplace_buffer_mutations`
    handles buffers only): [] where it has one, or where nothing is mutated."""
    module = sys.modules["torch.export.unflatten"]
    if hasattr(module, "_inplace_buffer_and_input_mutations"):
        return []
    return sorted(ep.graph_signature.user_inputs_to_mutate.values())


@contextlib.contextmanager
def input_updates_inplaced():
    """unflatten whose mutation pass (`_inplace_buffer_mutations`) turns user input mutations
    back into copy_ nodes as it does buffer mutations, and drops both from the outputs: what
    torch's pass does since pytorch/pytorch#149206, written here from its description."""
    module = sys.modules["torch.export.unflatten"]
    original = module._inplace_buffer_mutations
    if getattr(original, "__module__", None) != module.__name__:
        # another removal wraps the pass already (updates_read_as_values): replacing the
        # wrapper would drop that removal without a word, so the order of TRACES is wrong
        raise RuntimeError("flatcheck bridge: input_updates_inplaced entered inside another "
                           "removal that wraps _inplace_buffer_mutations; enter it first")

    def with_inputs(graph, graph_signature):
        output = next(iter(reversed(graph.nodes)))
        results = output.args[0]
        placeholders = {n.name: n for n in graph.nodes if n.op == "placeholder"}
        by_buffer = {fqn: name for name, fqn in graph_signature.inputs_to_buffers.items()}
        target = {name: by_buffer[fqn] for name, fqn in graph_signature.buffers_to_mutate.items()}
        target.update(graph_signature.user_inputs_to_mutate)
        for value in results[:len(target)]:
            with graph.inserting_after(value):
                copy = graph.create_node("call_function", torch.ops.aten.copy_.default,
                                         (placeholders[target[value.name]], value))
            copy.meta.update(value.meta)
            value.replace_all_uses_with(copy, lambda user: user is not copy)
        output.args = (tuple(results[len(target):]),)

    module._inplace_buffer_mutations = with_inputs
    try:
        yield
    finally:
        module._inplace_buffer_mutations = original


SINK_BY_NAME = "unflatten-sink-params-kwarg-named-as-state"  # docs/found-bugs.md 86
RENAMED = "_flatcheck_"  # the prefix no program's name has (emit-torch: hostile names too)


def kwarg_state_collisions(ep):
    """The keyword arguments of preserved calls named as one of the program's state placeholders
    (export names a parameter's placeholder p_<FQN>, a buffer's b_<FQN>). A preserved call's
    graph takes its keyword arguments as placeholders named by their keys, the state's copies
    are renamed around them (p_c_w_1), and _sink_params replaces the placeholders whose *names*
    are in inputs_to_state with the state: the argument becomes the parameter and the renamed
    parameter placeholder takes the argument's value (docs/found-bugs.md 86)."""
    state = lifted_state(ep)
    found = []
    for entry in ep.module_call_graph:
        spec = entry.signature.in_spec if entry.signature is not None else None
        kids = getattr(spec, "children_specs", None) or []
        keys = kids[1].context if len(kids) == 2 and isinstance(kids[1].context, list) else []
        found += [(entry.fqn, k) for k in keys if k in state]
    return found


def state_renamed(ep):
    """`ep` with SINK_BY_NAME's cause removed: every state placeholder (and its input spec)
    renamed RENAMED + its name, which no keyword argument is."""
    names = lifted_state(ep)
    specs = [s for s in ep.graph_signature.input_specs if getattr(s.arg, "name", None) in names]
    new = {}
    for n in ep.graph.nodes:
        if n.op == "placeholder" and n.name in names:
            old = n.name
            n._rename(RENAMED + old)
            n.target = n.name
            new[old] = n.name
    for s in specs:
        s.arg.name = new.get(s.arg.name, s.arg.name)
    ep.graph_module.recompile()
    return ep


# docs/found-bugs.md 89: a preserved call signature names its arguments by the exported graph's
# node names, and unflatten (a deepcopy of the graph) and _swap_modules (ep.module()'s copy) look
# them up by those names in a copy, where torch.fx's namespace has renamed a placeholder export
# named after a builtin (`float` -> `float_1`) and the placeholders after it around it
# (`float_1` -> `float_2`): an argument named `float` is not found (None is passed), one named
# `float_1` finds the input `float`.
COPY_RENAMED = "export-signature-input-renamed-by-graph-copy"


def copy_renamed(ep):
    """[(name, its name in a copy)] of the placeholders of `ep` whose input spec's name a copy of
    its graph (as unflatten and ep.module() make one) does not keep; `ep` may be such a copy
    already (a deep copy of an exported program renames them in its graph, not its specs)."""
    placeholders = [n for n in ep.graph.nodes if n.op == "placeholder"]
    copied = [n.name for n in copy.deepcopy(ep.graph).nodes if n.op == "placeholder"]
    names = [getattr(s.arg, "name", None) for s in ep.graph_signature.input_specs]
    return [(name, got) for name, got in zip(names, copied) if name is not None and name != got] \
        if len(names) == len(placeholders) else []


def copy_names_kept(ep):
    """`ep` with COPY_RENAMED's cause removed: each placeholder whose name a copy does not keep
    (copy_renamed) renamed RENAMED + its input spec's name, which a copy keeps, in the graph,
    the input spec, the call signatures' inputs and outputs, and the root's forward argument
    names."""
    new = {name: RENAMED + name for name, _ in copy_renamed(ep)}
    placeholders = [n for n in ep.graph.nodes if n.op == "placeholder"]
    for n, spec in zip(placeholders, ep.graph_signature.input_specs):
        if getattr(spec.arg, "name", None) in new:
            n._rename(new[spec.arg.name])
            n.target = n.name
    arguments = [s.arg for s in ep.graph_signature.input_specs]
    for entry in ep.module_call_graph:
        if entry.signature is not None:
            arguments += list(entry.signature.inputs) + list(entry.signature.outputs)
    for arg in arguments:
        if getattr(arg, "name", None) in new:
            arg.name = new[arg.name]
    root = ep.module_call_graph[0].signature
    if root is not None and root.forward_arg_names:
        root.forward_arg_names = [new.get(a, a) for a in root.forward_arg_names]
    ep.graph_module.recompile()
    return ep


# docs/found-bugs.md 107: unflatten gives the modules it builds a clone of each state tensor,
# one per tensor that names share (a parameter or buffer of the state dict), but then assigns
# the program's constants (its non-persistent buffers among them) again, each name a clone of
# its own: its table meant to clone a shared constant once is keyed by the clone's id. A
# non-persistent buffer is then no longer the tensor its other names hold, and an update of it
# reaches one of them only.
CONSTANT_CLONES = "unflatten-aliased-constants-untied"
# docs/found-bugs.md 110: torch.export.save / load writes each constant on its own: a loaded
# program's constants share no tensor, with each other or with the state dict, where the saved
# program's did; its module() then updates one name of a shared buffer only.
LOAD_UNTIES = "export-load-unties-aliased-constants"
ALIASED = []  # the last program constants_cloned_once was prepared for: aliased_constants
ALIASED_META = "flatcheck_aliased_constants"  # saved_loader's record of the saved program's


def aliased_constants(ep):
    """The groups of names of the program's state dict and constants (non-persistent buffers,
    tensor constants) that hold one tensor, each with two names or more and a constant among
    them: the state dict's names first."""
    groups = {}
    for table in (ep.state_dict, ep.constants):
        for fqn, value in table.items():
            if isinstance(value, torch.Tensor):
                groups.setdefault(id(value), []).append(fqn)
    return [g for g in groups.values() if len(g) > 1 and any(f in ep.constants for f in g)]


def constants_retied(ep):
    """A loaded `ep` (saved_loader) with LOAD_UNTIES's cause removed: each constant of a group
    the saved program shared made again the tensor of the group's first name."""
    for group in ep.graph_module.meta.get(ALIASED_META, ()):
        first = ep.state_dict.get(group[0], ep.constants.get(group[0]))
        for fqn in group:
            if fqn in ep.constants:
                ep.constants[fqn] = first
    return ep


def load_untied(ep):
    """Whether `ep` was loaded from a program with aliased constants that it no longer shares."""
    return any(len({id(ep.state_dict.get(f, ep.constants.get(f))) for f in group}) > 1
               for group in ep.graph_module.meta.get(ALIASED_META, ()))


def aliases_recorded(ep):
    """`ep` with its aliased constants recorded for constants_cloned_once."""
    ALIASED[:] = aliased_constants(ep)
    return ep


def constants_aliased(ep):
    """Whether `ep`, or the program a loaded `ep` was saved from, has aliased constants."""
    return bool(ep.graph_module.meta.get(ALIASED_META) or aliased_constants(ep))


def loaded_module_class(p, load, eager, cache):
    """LOAD_UNTIES when the module() of a program `load()` loads, with the class's cause removed
    (constants_retied), agrees with torch eager; else None."""
    try:
        ep = load()
        if not load_untied(ep):
            return None
        m = constants_retied(ep).module()
        return LOAD_UNTIES if judge(p, run_calls(m, p), state_after(m), eager,
                                    cache)[0] != "mismatch" else None
    except Exception:  # noqa: BLE001 - then not (only) this cause
        return None


@contextlib.contextmanager
def constants_cloned_once():
    """unflatten with CONSTANT_CLONES's cause removed: a constant that unflatten already gave
    its module as a buffer (a non-persistent buffer: a clone shared as the tensor is) is not
    given again, and the other constants of a recorded group (aliases_recorded) are all given
    the clone the group's first name was given: a parameter's or buffer's where one holds the
    tensor (a plain tensor attribute sharing a buffer's tensor, emit-torch --tensor-constants),
    else the first constant's."""
    module = sys.modules["torch.export.unflatten"]
    original = module._assign_attr
    group_of = {fqn: i for i, group in enumerate(ALIASED) for fqn in group}
    given, buffers = {}, set()

    def assign(from_obj, to_module, target, attr_kind, persistent=True):
        if attr_kind in (module._AttrKind.BUFFER, module._AttrKind.PARAMETER):
            buffers.add(target)
            if target in group_of:
                given.setdefault(group_of[target], from_obj)
        elif attr_kind == module._AttrKind.CONSTANT:
            if target in buffers:
                return None
            if target in group_of:
                from_obj = given.setdefault(group_of[target], from_obj)
        return original(from_obj, to_module, target, attr_kind=attr_kind, persistent=persistent)
    module._assign_attr = assign
    try:
        yield
    finally:
        module._assign_attr = original


# docs/found-bugs.md 62: unflatten replaces the call variants of a module whose call signature is
# preserved by one dispatcher (_dispatch_modules) and renames each call of `leaf@N` in a graph
# to `leaf`, but it finds the graph's calls of the module by a path built from the calling
# module's own name: a call inside a variant of an unpreserved ancestor (`mid@1`'s call of
# `leaf@1`, path `mid@1.leaf`) is not renamed, and `leaf@1` was removed.
DISPATCH_UNDER_VARIANT = "unflatten-dispatch-misses-call-under-variant"


def dispatched_under_variants(ep):
    """The modules whose call signature `ep` preserves for more than one call (each gets a
    dispatcher) with an ancestor whose signature it does not preserve (which may have call
    variants of its own): 'path (unpreserved ancestor)'."""
    preserved = {e.fqn for e in ep.module_call_graph if e.fqn and e.signature}
    twice = sorted({f.split("@")[0] for f in preserved if "@" in f})
    out = []
    for path in twice:
        parts = path.split(".")
        above = [".".join(parts[:i]) for i in range(1, len(parts))]
        unpreserved = [a for a in above if a not in preserved]
        if unpreserved:
            out.append(f"{path} ({unpreserved[-1]})")
    return out


def without_call_indices(path):
    """`path` with the call index of each of its parts removed (`mid@1.leaf` -> `mid.leaf`)."""
    return ".".join(part.split("@")[0] for part in path.split("."))


@contextlib.contextmanager
def calls_dispatched_under_variants():
    """unflatten's _dispatch_modules, then each call of a preserved module (`leaf`, `leaf@N`) in
    the graph of an unpreserved ancestor's call variant (`mid@1`) made a call of the module at
    the preserved path (`mid.leaf`: the dispatcher, or the one module), which that variant then
    holds. torch renames a graph's calls of a preserved module by a path built from the calling
    module's name as it is, which holds the ancestor's call index (`mid@1.leaf`), so it
    renames none of these."""
    module = sys.modules["torch.export.unflatten"]
    dispatch = module.UnflattenedModule._dispatch_modules

    def dispatched(self, *args, **kwargs):
        dispatch(self, *args, **kwargs)
        preserved = {e.fqn.split("@")[0] for e in self.module_call_graph if e.fqn and e.signature}
        for fqn, m in self.named_modules(remove_duplicate=False):
            if "@" not in fqn:  # torch's own renaming reaches these
                continue
            graphs = [m.graph] if hasattr(m, "graph") else \
                [c.graph for c in getattr(m, "_call_modules", ())]
            for node in (n for g in graphs for n in g.nodes if n.op == "call_module"):
                # a child's name, or a descendant's path where the module calls it by its path
                # (`self.conv.leaf(x)`: the target `conv.leaf@1`)
                name = without_call_indices(node.target)
                base = f"{without_call_indices(fqn)}.{name}"
                if base not in preserved:
                    continue
                try:
                    called = torch.fx.graph_module._get_attr(self, base)
                except (AttributeError, AssertionError):
                    continue
                if not hasattr(called, "graph") and not hasattr(called, "_call_modules"):
                    continue  # a bare container: no call of the path made a module (6)
                node.target = name
                *prefix, last = name.split(".")
                for holder in [m] + list(getattr(m, "_call_modules", ())):
                    for part in prefix:
                        holder = holder._modules.get(part) if holder is not None else None
                    if holder is not None:
                        holder._modules[last] = called
    module.UnflattenedModule._dispatch_modules = dispatched
    try:
        yield
    finally:
        module.UnflattenedModule._dispatch_modules = dispatch


# (class, prepares the program, context for unflatten): one cause of docs/found-bugs.md removed.
# Single causes are tried in this order, the first that explains a program naming it: 103's
# first (tried only where a program has source-expression paths), as the wrong names it gives
# change what the other causes show (they kept class 1's calls from the dedup on seed 7 case 37).
TRACES = [
    (torch_structure.SOURCE_PATH, torch_structure.read_back, contextlib.nullcontext),
    ("unflatten-dedup-ignores-call-targets", lambda ep: ep, call_targets_compared),
    ("unflatten-strict-keys-name-module-objects", keyed_by_path, contextlib.nullcontext),
    ("unflatten-reorder-keyerror", lambda ep: ep, children_not_reordered),
    ("unflatten-variant-drops-children", lambda ep: ep, variant_keeps_children),
    ("unflatten-preserve-entry-without-module", lambda ep: ep, entries_without_module_dropped),
    ("unflatten-dedup-redirect-unreachable", lambda ep: ep, redirects_reach_their_module),
    (COND_CLASS, lambda ep: ep, graph_attrs_where_read),
    (GRAD_REGION, grad_regions_placed, contextlib.nullcontext),
    (UNLINKED, users_mended, contextlib.nullcontext),
    (LATER_FIRST, calls_renumbered, contextlib.nullcontext),
    (STACKLESS, stacks_placed, contextlib.nullcontext),
    (DISPATCH_UNDER_VARIANT, lambda ep: ep, calls_dispatched_under_variants),
    (UNREAD_ARGUMENT, lambda ep: ep, unread_arguments_returned),
    (UPDATE_READ_OUTSIDE, updates_read_as_buffer, contextlib.nullcontext),
    # before SIGNATURE_UPDATE: its removal replaces the pass that SIGNATURE_UPDATE's wraps, and
    # the contexts are entered in this order (input_updates_inplaced refuses to come second)
    (INPUT_UPDATES_KEPT, lambda ep: ep, input_updates_inplaced),
    (SIGNATURE_UPDATE, lambda ep: ep, updates_read_as_values),
    (SINK_BY_NAME, state_renamed, contextlib.nullcontext),
    (COPY_RENAMED, copy_names_kept, contextlib.nullcontext),
    (LOAD_UNTIES, constants_retied, contextlib.nullcontext),
    (CONSTANT_CLONES, aliases_recorded, constants_cloned_once),
]


def unflatten_removing(fresh, chosen, *contexts):
    """torch.export.unflatten of `fresh()` with the causes `chosen` (rows of TRACES) removed,
    inside the further `contexts` too."""
    prepared = fresh()
    with contextlib.ExitStack() as stack:
        for _, prepare, context in chosen:
            prepared = prepare(prepared)
            stack.enter_context(context())
        for context in contexts:
            stack.enter_context(context)
        return torch.export.unflatten(prepared)


def trace_unflatten(p, fresh, eager, cache, excuse=None, names=None):
    """`fresh()` gives the program as the path had it, a new one on each call: unflatten changes
    the program it is given (docs/found-bugs.md, 10), and no attempt may see what an earlier one
    (or the path's own unflatten) did to it. The classes of docs/found-bugs.md (joined by '+')
    whose causes, removed, make unflatten agree with eager on this program: single causes
    first, then pairs, then threes, then all; None when no combination does. `excuse`, a class
    that explains any wrong result (or failure while running) of this program, counts as
    agreement once unflatten succeeds: no cause removed when unflatten succeeds as it is.
    `names` maps each state FQN of the unflattened module to the one eager has (renamed
    variants named back, trace_reexported)."""
    def agrees(chosen):
        try:
            u = unflatten_removing(fresh, chosen)
        except Exception:  # noqa: BLE001 - then not (only) these causes
            return None
        try:
            outs = run_calls(u, p)  # before the state is read
            state = {(names or str)(fqn): t for fqn, t in state_after(u).items()}
            status, _ = judge(p, outs, state, eager, cache)
        except Exception:  # noqa: BLE001
            status = "mismatch"
        if status != "mismatch":
            return [cls for cls, _, _ in chosen]
        return [cls for cls, _, _ in chosen] + [excuse] if excuse else None

    if ivals_collide(fresh):
        return IVALS_CLASS
    # a cause only source-expression module paths, a higher-order op's graphs, only a no_grad
    # block, wrong use lists, a module's calls met out of order, nodes without a module stack or
    # a dispatched module below an unpreserved one have, is tried only where the program has them
    only_where = {torch_structure.SOURCE_PATH: torch_structure.source_paths,
                  COND_CLASS: holds_graphs, GRAD_REGION: grad_regions,
                  UNLINKED: lambda ep: unlinked_uses(ep.graph_module),
                  LATER_FIRST: calls_out_of_order, STACKLESS: stackless_nodes,
                  DISPATCH_UNDER_VARIANT: dispatched_under_variants,
                  UNREAD_ARGUMENT: unread_arguments, UPDATE_READ_OUTSIDE: updates_read_outside,
                  SIGNATURE_UPDATE: signature_updates, INPUT_UPDATES_KEPT: input_updates_kept,
                  SINK_BY_NAME: kwarg_state_collisions, COPY_RENAMED: copy_renamed,
                  LOAD_UNTIES: load_untied, CONSTANT_CLONES: constants_aliased}
    first = fresh() if any(t[0] in only_where for t in TRACES) else None
    traces = [t for t in TRACES if t[0] not in only_where or only_where[t[0]](first)]
    for size in range(0 if excuse else 1, len(traces) + 1):
        for chosen in itertools.combinations(traces, size):
            classes = agrees(chosen)
            if classes:
                return "+".join(classes)
    # a cause that stops unflatten before its mutation replay, removed, may let it reach
    # IVALS_CLASS, which has no removal: that cause and the replay's class
    for t in traces:
        if ivals_collide(fresh, [t]):
            return f"{t[0]}+{IVALS_CLASS}"
    return None


def state_after(module):
    return {fqn: t.detach().clone() for fqn, t in tensors_of(module).items()}


def export_program(p, mode, preserve=False, unpreserved=()):
    """torch.export.export of a fresh model; with `preserve`, every submodule's call signature
    preserved (each name of an aliased module) but those named in `unpreserved`. An export
    that raises an error no known class names, and succeeds with UNLINKED's cause removed
    (users_relinked), raises with that class (its `cls`, as failure() reads it)."""
    def export():
        model = p.build()
        signature = tuple(sorted({name for name, _ in model.named_modules(remove_duplicate=False)
                                  if name and name not in unpreserved})) if preserve else ()
        return torch.export.export(model, tuple(t.clone() for t in p.INPUTS),
                                   strict=(mode == "strict"),
                                   preserve_module_call_signature=signature)
    try:
        return export()
    except Exception as e:  # noqa: BLE001 - traced below, else raised as it is
        if classify(e):
            raise
        try:
            with users_relinked():
                export()
        except Exception:  # noqa: BLE001 - not (only) this cause
            raise e from None
        e.cls = UNLINKED
        raise


def suffix_counting_naming():
    """Whether this torch's placeholder naming gives a taken name the suffix after the largest
    seen (its _rename_without_collisions keeps `find_available`; torch 2.14.1), as flatcheck's
    export does, and not the first free one (torch 2.6)."""
    try:
        from torch._export.utils import _rename_without_collisions
        return "find_available" in inspect.signature(_rename_without_collisions).parameters
    except (ImportError, TypeError, ValueError):
        return False


def names_differ(p, ep):
    """Where non-strict export names a parameter's or buffer's placeholder otherwise than
    flatcheck's export (EXPORT_NAMES of the program, None where they cannot compare): a text,
    or None when they agree. Strict export is not compared: torch 2.6 names its placeholders
    from dynamo's attribute names there (p_l__s___a_w, suffixes _0 for collisions). On a torch
    that suffixes a taken name with the first free number (2.6; suffix_counting_naming), a
    state name both suffix is not compared: flatcheck numbers as current PyTorch does."""
    want = getattr(p, "EXPORT_NAMES", None)
    if want is None or getattr(p, "CONFIG", {}).get("hostile_names"):
        # emit-torch --hostile-names: the root's arguments are not named as flatcheck's export
        # names its user inputs, so its state names (suffixed around those) cannot compare
        return None
    got = {s.target: s.arg.name for s in ep.graph_signature.input_specs
           if s.kind.name in ("PARAMETER", "BUFFER")}

    def plain(fqn, name):  # the name is the mangled FQN itself, no collision suffix
        return name is not None and name[2:] == re.sub(r"[^a-z0-9]", "_", fqn.lower())

    counting = suffix_counting_naming()
    diff = sorted(f for f in set(want) | set(got) if want.get(f) != got.get(f) and
                  (counting or plain(f, want.get(f)) or plain(f, got.get(f))))
    if not diff:
        return None
    return "placeholder names differ from flatcheck's export: " + "; ".join(
        f"{f}: flatcheck {want.get(f)}, torch {got.get(f)}" for f in diff[:6])


def run_one(p, eager, mode, kinds, cache):
    """The export paths of one mode: a result dict per requested kind. The preserve path
    exports on its own, so an export failure of one is not the other's."""
    results = {}
    plain = [k for k in kinds if k in ("module", "unflatten")]
    stage = "export"
    try:
        if plain:
            ep = export_program(p, mode)
            naming = names_differ(p, ep) if mode == "nonstrict" else None
            stage = "save"
            load = saved_loader(ep)  # before anything runs: the state is the case's
        if "module" in kinds:
            stage = "module"
            m = ep.module()
            status, why = judge(p, run_calls(m, p), state_after(m), eager, cache)
            results["module"] = verdict(status, why)
            if naming and results["module"]["status"] != "mismatch":
                results["module"] = {"status": "mismatch", "stage": "names",
                                     "first_mismatch": naming}
        if "unflatten" in kinds:
            stage = "load"
            loaded = load()  # loaded anew on each call (a copy would not be the same: below)
            stage = "unflatten"
            results["unflatten"] = unflatten_path(p, mode, loaded, load, eager, cache)
    except Exception as e:  # noqa: BLE001 - torch refusing or crashing on a program
        for kind in plain:
            results.setdefault(kind, failure(e, stage))
    if "preserve" in kinds:
        try:
            results["preserve"] = preserve_path(p, mode, eager, cache)
        except Exception as e:  # noqa: BLE001 - raised by the export
            results["preserve"] = failure(e, "export")
    if "preserve_some" in kinds:
        try:
            results["preserve_some"] = preserve_some_path(p, mode, eager, cache)
        except Exception as e:  # noqa: BLE001 - raised by the export
            results["preserve_some"] = failure(e, "export")
    if "reexport" in kinds:
        try:
            results["reexport"] = reexport_path(p, mode, eager, cache)
        except Exception as e:  # noqa: BLE001 - raised by the first export
            results["reexport"] = failure(e, "export")
    for kind in ("decomp", "decomp_preserve", "decomp_preserve_some"):
        if kind in kinds:
            import torch_decomp  # noqa: PLC0415 - it builds on this module
            try:
                results[kind] = torch_decomp.PATHS[kind](p, mode, eager, cache)
            except Exception as e:  # noqa: BLE001 - raised by the export
                results[kind] = failure(e, "export")
    return results


def saved_loader(ep):
    """torch.export.save of `ep`, and a function loading it anew on each call (unflatten changes
    the program it is given, so each use needs its own). Each loaded program's graph module
    carries, under REGION_STACKS in its meta, the module stacks export gave the results of its
    torch.no_grad() blocks (region_stacks): save/load gives them the root's, and the trace of
    class 41 (grad_regions_placed) reads them; under ALIASED_META, the groups of the saved
    program's constant names that shared a tensor (aliased_constants: a loaded program's share
    nothing), which the trace of class 107 (aliases_recorded) reads. unflatten does not read that
    meta."""
    saved = io.BytesIO()
    torch.export.save(ep, saved)
    data = saved.getvalue()
    stacks = region_stacks(ep)
    aliased = aliased_constants(ep)

    def load():
        loaded = torch.export.load(io.BytesIO(data))
        if stacks:
            loaded.graph_module.meta[REGION_STACKS] = stacks
        if aliased:
            loaded.graph_module.meta[ALIASED_META] = aliased
        return loaded
    return load


def failure(e, stage):
    """The result of a path that torch raised `e` on at `stage`: skipped, a known issue listed
    by its message or by a cause found before raising (an exception with a `cls`), or an
    error."""
    if getattr(e, "cls", None):
        return {"status": "known_torch_issue", "known_torch_issue": e.cls, "stage": stage,
                "detail": str(e)[:300]}
    skip = classify(e)
    if skip and skip[0] == "skipped":
        return {"status": "skipped", "skip": skip[1]}
    if skip:
        return {"status": "known_torch_issue", "known_torch_issue": skip[1], "stage": stage,
                "detail": f"{type(e).__name__}: {e}"[:300]}
    return {"status": "error", "stage": stage, "first_mismatch": f"{type(e).__name__}: {e}"[:600]}


def agreeing(p, eager, cache):
    """Whether a module's calls of program `p` agree with torch eager (or are excused): the
    structure check's test of a mended module (its calls update the state: asked once)."""
    return lambda module: judge(p, run_calls(module, p), state_after(module), eager,
                                cache)[0] != "mismatch"


def unflatten_path(p, mode, loaded, load, eager, cache):
    """unflatten of the loaded program, the calls, the verdict; a mismatch or an exception is
    traced to a cause of docs/found-bugs.md when one explains it, on programs `load()` loads
    anew."""
    try:
        u = torch.export.unflatten(loaded)
        status, why = judge(p, run_calls(u, p), state_after(u), eager, cache)
    except Exception as e:  # noqa: BLE001
        cls = trace_unflatten(p, load, eager, cache)
        if cls:
            return {"status": "known_torch_issue", "known_torch_issue": cls, "stage": "unflatten",
                    "detail": f"{type(e).__name__}: {e}"[:300]}
        raise
    r = verdict(status, why)
    if status == "mismatch":
        cls = trace_unflatten(p, load, eager, cache)
        if cls:
            return {"status": "known_torch_issue", "known_torch_issue": cls, "detail": why,
                    "variants": variants(u)}
        r["without_save_load"] = unflatten_unsaved(p, mode, eager, cache)
    else:  # the numbers agree: the names too (torch_structure, docs/found-bugs.md 103)
        def reference():  # the same program's non-strict export, unflattened
            return torch.export.unflatten(export_program(p, "nonstrict"))

        def reexport(context):  # the program exported again inside `context`
            with context():
                return export_program(p, mode)
        strict = mode == "strict"
        wrong = torch_structure.judged(u, p, load, agreeing(p, eager, cache), cache,
                                       reference if strict else None,
                                       reexport if strict else None,
                                       lambda make: trace_unflatten(p, make, eager, cache))
        if wrong:
            return {**wrong, "variants": variants(u)}
    r["variants"] = variants(u)
    return r


def preserve_path(p, mode, eager, cache):
    """export with every submodule's call signature preserved, then unflatten (no save/load):
    each preserved module keeps its calling convention, and the calls of a module called more
    than once are dispatched by call index (torch's InterpreterModuleDispatcher). Where the
    numbers agree, the names are judged as on the unflatten paths (torch_structure.judged), the
    strict path's against the non-strict preserve path's unflattened module
    (preserve_structure)."""
    return preserve_unflatten(p, export_program(p, mode, preserve=True), eager, cache,
                              preserve_structure(p, mode))


def preserve_structure(p, mode, unpreserved=(), then=lambda ep: ep):
    """The `structure` argument of preserve_unflatten for the preserve paths that export with
    the call signatures of all submodules but `unpreserved` kept, and give unflatten
    `then(exported program)`: on a strict path, (the non-strict export's unflattened module so
    made, the program exported so again inside a context); (None, None) on a non-strict path,
    whose names alone are judged."""
    if mode != "strict":
        return None, None

    def reference():
        return torch.export.unflatten(
            then(export_program(p, "nonstrict", preserve=True, unpreserved=unpreserved)))

    def reexport(context):
        with context():
            return then(export_program(p, mode, preserve=True, unpreserved=unpreserved))
    return reference, reexport


PRESERVED = None  # the modules whose call signatures preserve_some keeps (the bridge's --draw)


def submodule_names(p):
    """The names of each submodule object of a fresh model of `p` (a module held under two
    names has both), in module order."""
    groups = {}
    for name, module in p.build().named_modules(remove_duplicate=False):
        if name:
            groups.setdefault(id(module), []).append(name)
    return list(groups.values())


def draw_preserved(p, groups):
    """The submodule names whose call signatures preserve_some keeps: each module object's
    names (`groups`) together, with probability 1/2, seeded by the names and the program's ops,
    with at least one module kept and one not (either extreme is the preserve or the unflatten
    path). A module's names go together as on the preserve path: preserving one name of a
    module called by another is docs/found-bugs.md entry 7's crash."""
    rng = random.Random(zlib.crc32(repr(("preserve", groups, list(p.OPS))).encode()))
    chosen = [i for i in range(len(groups)) if rng.random() < 0.5]
    if not chosen:
        chosen = [rng.randrange(len(groups))]
    elif len(chosen) == len(groups):
        chosen.remove(rng.randrange(len(groups)))
    return [name for i in chosen for name in groups[i]]


def preserved_part(p):
    """(the submodule names whose call signatures the preserve_some paths keep: draw_preserved,
    or PRESERVED; the other names), or (None, the skipped result) for a program with fewer than
    two submodule objects. A pinned name the program does not have raises ValueError."""
    groups = submodule_names(p)
    if PRESERVED is None and len(groups) < 2:
        return None, {"status": "skipped",
                      "skip": "fewer than two submodules: no part to preserve but all or none"}
    kept = list(PRESERVED) if PRESERVED is not None else draw_preserved(p, groups)
    names = [name for group in groups for name in group]
    unknown = sorted(set(kept) - set(names))
    if unknown:
        raise ValueError(f"--draw preserve: no submodule {', '.join(unknown)}")
    return kept, set(names) - set(kept)


def preserve_some_path(p, mode, eager, cache):
    """export with the call signatures of a drawn part of the submodules preserved
    (preserved_part), then the preserve path's unflatten and calls: preserved modules below and
    above unpreserved ones, which the preserve path (every module) never has. A program with
    fewer than two submodule objects is skipped. The names are judged as on the preserve path,
    against the non-strict export with the same part preserved."""
    kept, unpreserved = preserved_part(p)
    if kept is None:
        return unpreserved
    ep = export_program(p, mode, preserve=True, unpreserved=unpreserved)
    return {"preserved": kept, **preserve_unflatten(p, ep, eager, cache,
                                                    preserve_structure(p, mode, unpreserved))}


def preserve_unflatten(p, ep, eager, cache, structure=None):
    """The preserve path from the exported program `ep` on: unflatten, the calls, the verdict.
    A failure is traced (trace_unflatten), with a shape found before (preserve_excuse)
    excusing what goes wrong once unflatten succeeds; a missing output node is checked for
    entry 21's mechanism first (output_inside_child), then entry 54's (returned_state), then
    entry 60's (output_inside_preserved_child). With `structure` ((reference, reexport), either
    None), a result whose numbers agree has its names judged too (torch_structure.judged)."""
    fresh = copies_of(ep)
    stage = "unflatten"
    try:
        u = torch.export.unflatten(fresh())
        stage = "run"
        status, why = judge(p, run_calls(u, p), state_after(u), eager, cache)
        if status != "mismatch":
            wrong = structure and torch_structure.judged(
                u, p, fresh, agreeing(p, eager, cache), cache, *structure,
                lambda make: trace_unflatten(p, make, eager, cache))
            return wrong or verdict(status, why)
        error = None
    except Exception as e:  # noqa: BLE001
        error, why = e, f"{type(e).__name__}: {e}"
        missing = "Could not find output node" in why
        inside = output_inside_child(fresh()) if missing else None
        if inside:
            return {"status": "known_torch_issue", "stage": stage, "detail": why[:300],
                    "known_torch_issue": f"{OUTPUT_INSIDE_CHILD}: {inside}"}
        state = returned_state(ep, why.split(". Graph:")[0]) if missing else None
        if state:
            return {"status": "known_torch_issue", "stage": stage, "detail": why[:300],
                    "known_torch_issue": f"{RETURNED_STATE}: {state}"}
        below = output_inside_preserved_child(ep, why.split(". Graph:")[0]) if missing else None
        if below:
            return {"status": "known_torch_issue", "stage": stage, "detail": why[:300],
                    "known_torch_issue": f"{OUTPUT_IN_PRESERVED}: {below}"}
    shape = preserve_excuse(p)
    cls = trace_unflatten(p, fresh, eager, cache, shape[0] if shape else None)
    if cls:
        detail = f"{shape[1]}: {why}" if shape and shape[0] in cls else why
        return {"status": "known_torch_issue", "known_torch_issue": cls, "stage": stage,
                "detail": detail[:300]}
    # entry 21's mechanism in a functional graph, once no removal explains the failure (entry
    # 66's, which moves a returned update's readers, comes first)
    inside = output_inside_child(ep, replayed=True) if error is not None and \
        "Could not find output node" in why else None
    if inside:
        return {"status": "known_torch_issue", "stage": stage, "detail": why[:300],
                "known_torch_issue": f"{OUTPUT_INSIDE_CHILD}: {inside}, the new value of "
                "state the program does not return (its copy_ put beside it)"}
    return verdict(status, why) if error is None else failure(error, stage)


def aliasing(ep):
    """Which of the program's state names hold one tensor object, and which share storage: the
    groups, by name."""
    def groups(key):
        by = collections.defaultdict(list)
        for name, t in {**ep.state_dict, **ep.constants}.items():
            if isinstance(t, torch.Tensor):
                by[key(t)].append(name)
        return sorted(sorted(g) for g in by.values())
    return groups(id), groups(lambda t: t.untyped_storage().data_ptr())


def copies_of(ep):
    """A function giving a new deep copy of an exported program on each call, checked to keep
    which state tensors are one object and which share storage: unflatten depends on both, and
    a deep copy does not always keep them (one of a loaded program, whose tied tensors are
    separate objects over one storage, gets separate storages: unflatten then fails otherwise
    on a strict program, torch 2.14.1). A copy that does not keep them raises."""
    want = aliasing(ep)

    def fresh():
        c = copy.deepcopy(ep)
        if aliasing(c) != want:
            raise RuntimeError("flatcheck bridge: a deep copy of the exported program does not "
                               "keep which of its tensors are shared")
        return c
    return fresh


def fresh_exports(export):
    """A function giving a new exported program on each call, as `export()` does: deep copies
    of one export (copies_of; an export costs up to seconds, a copy milliseconds, and a trace
    tries up to a hundred), or `export` itself where a copy does not keep which tensors are
    shared, or where the export's graph has wrong use lists (UNLINKED's: a deep copy mends
    them, and would hide the cause)."""
    first = export()
    if unlinked_uses(first.graph_module):
        return export
    fresh = copies_of(first)
    try:
        fresh()
    except RuntimeError:
        return export
    return fresh


def preserve_excuse(p):
    """(class, detail) when the program has a shape the preserve path gets wrong for a reason
    found and documented before (docs/found-bugs.md, 8 and 9), else None. Found by running the
    eager model once and recording every buffer update (the program's `_R.copy`, whether or not
    it changes a value), not from the symptom:
      preserve-multicall-buffer-update  a module one forward calls more than once whose call
                                        updates a buffer (its own or a descendant's): torch
                                        does not support it (pytorch/pytorch#137999)
      preserve-tied-buffer-update       one buffer tensor updated by two modules' own code (a
                                        tensor registered in both, or a parent updating its
                                        child's buffer)"""
    model = p.build()
    names = {id(m): n or "<root>" for n, m in model.named_modules()}
    calls, stack, writers, updating = {}, [], {}, set()

    class Watch(p._NoRecorder):
        def written(self, module, path, into):
            target = self.state(module, path) if into is None else into  # the tensor itself
            writers.setdefault(target.data_ptr(), set()).add(id(module))
            updating.update(stack)

        def copy(self, module, path, value, into=None):
            self.written(module, path, into)
            super().copy(module, path, value, into)

        def update(self, module, path, op, other, kwargs, into=None):
            self.written(module, path, into)
            super().update(module, path, op, other, kwargs, into)

    def before(module, args):
        calls[id(module)] = calls.get(id(module), 0) + 1
        stack.append(id(module))

    def after(module, args, out):  # returns None: the output stays the module's
        stack.pop()

    hooks = [h for m in model.modules()
             for h in (m.register_forward_pre_hook(before), m.register_forward_hook(after))]
    p._R = Watch()
    try:
        with torch.no_grad():
            model(*[t.clone() for t in p.INPUTS])
    finally:
        p._R = p._NoRecorder()
        for h in hooks:
            h.remove()
    multi = sorted(names[i] for i in updating if calls[i] > 1)
    if multi:
        return ("preserve-multicall-buffer-update",
                f"{multi[0]} is called more than once and updates a buffer")
    tied = sorted(sorted(names[i] for i in w) for w in writers.values() if len(w) > 1)
    if tied:
        return ("preserve-tied-buffer-update", f"one buffer is updated by {' and '.join(tied[0])}")
    return None


def reexport_path(p, mode, eager, cache):
    """export, unflatten, torch.export.export of the unflattened module (the same mode), unflatten
    of that program, the calls. Exporting an UnflattenedModule again is how a model is re-exported
    after a pass over its module tree (pytorch/pytorch#171964 does it). The first unflatten is
    judged alone before: when it is wrong already, the path reports the class that explains it
    (trace_unflatten) or its own mismatch or error at stage "unflatten", so what the path reports
    past that stage is the re-export's and the second unflatten's own. The program goes through
    torch.export.save / load first, as on the unflatten path: a first unflatten without it can
    merge two calls whose graphs differ only in a NaN constant's payload (the dedup compares
    printed graphs, where every NaN is `nan`), a difference the unflatten path never sees."""
    fresh = saved_loader(export_program(p, mode))
    try:
        first = torch.export.unflatten(fresh())
        status, why = judge(p, run_calls(first, p), state_after(first), eager, cache)
    except Exception as e:  # noqa: BLE001
        status, why = "error", f"{type(e).__name__}: {e}"
    if status in ("mismatch", "error"):
        cls = trace_unflatten(p, fresh, eager, cache)
        if cls:
            return {"status": "known_torch_issue", "known_torch_issue": cls, "stage": "unflatten",
                    "detail": why[:300]}
        return {"status": status, "stage": "unflatten", "first_mismatch": why[:600]}
    try:
        status, why, u = reexport(p, mode, fresh, eager, cache)
    except Exception as e:  # noqa: BLE001 - torch refusing or crashing on the program
        status, why, u, error = "error", f"{type(e).__name__}: {e}", None, e
    if status in ("mismatch", "error"):
        try:
            fixed, _, _ = reexport(p, mode, fresh, eager, cache, rename_variants_first=True)
        except Exception:  # noqa: BLE001 - then not (only) this cause
            fixed = "error"
        if fixed not in ("mismatch", "error"):
            return {"status": "known_torch_issue", "known_torch_issue": REEXPORT_CLASS,
                    "stage": "reexport", "detail": why[:300]}
        known = trace_reexported(p, mode, fresh, eager, cache)
        if known:
            return {"status": "known_torch_issue", "known_torch_issue": known,
                    "stage": "reexport", "detail": why[:300]}
        if u is None:
            return failure(error, "reexport")
    r = verdict(status, why)
    if status == "mismatch":
        r["stage"] = "reexport"
    r["variants"] = variants(u)
    return r


# The cause of docs/found-bugs.md 17: a module path holding "@" (unflatten's name for a call
# variant, `c@1`) makes non-strict export's call keys ambiguous (the second call of `w.c` and
# the first of `w.c@1` are both `w.c@1`), and unflatten reads "@" in a path as a call suffix.
REEXPORT_CLASS = "reexport-variant-call-keys-collide"
VARIANT_MARK = "_flatcheck_call_"


def rename_variants(module):
    """`module` (unflattened) with every call variant `c@1` renamed `c_flatcheck_call_1`: in its
    parent's children (their order kept), and in every part of every call_module and get_attr
    target of every graph (a graph can call a variant by a dotted path, `a_w.a_w@1`)."""
    def renamed(target):
        return ".".join(part.replace("@", VARIANT_MARK) for part in target.split("."))

    for _, m in list(module.named_modules(remove_duplicate=False)):
        if any("@" in n for n in m._modules):
            m._modules = {renamed(n): c for n, c in m._modules.items()}
        for node in getattr(m, "graph", torch.fx.Graph()).nodes:
            if node.op in ("call_module", "get_attr") and "@" in node.target:
                node.target = renamed(node.target)
    return module


def reexport(p, mode, fresh, eager, cache, rename_variants_first=False):
    """unflatten of `fresh()`, torch.export.export of it, unflatten of that, the calls: (status,
    why, the module); with `rename_variants_first`, the variants renamed before the re-export
    (the cause of REEXPORT_CLASS removed) and their state named back for the judge."""
    u = torch.export.unflatten(export_unflattened(p, mode, fresh, rename_variants_first))
    outs = run_calls(u, p)
    state = {named_back(fqn): t for fqn, t in state_after(u).items()}
    status, why = judge(p, outs, state, eager, cache)
    return status, why, u


def export_unflattened(p, mode, fresh, rename_variants_first=False):
    """torch.export.export (in `mode`) of the unflatten of `fresh()`, its variants renamed first
    with `rename_variants_first`."""
    first = torch.export.unflatten(fresh())
    if rename_variants_first:
        rename_variants(first)
    return torch.export.export(first, tuple(t.clone() for t in p.INPUTS),
                               strict=(mode == "strict"))


def trace_reexported(p, mode, fresh, eager, cache):
    """The unflatten paths' trace (trace_unflatten) on the re-exported program, whose unflatten
    (the second) failed: the re-export carries the module tree, call variants (`c@1`) included,
    into its program, and with it unflatten's classes (docs/found-bugs.md 4 on torch 2.6: a
    variant's child looked up under a path that keeps `@1`). None where the re-export itself
    fails, where the program the trace is given unflattens right as it is (no removal could
    be told from no cause), or where no combination agrees. Where none does, the same trace on
    the re-export of the module with its variants renamed (REEXPORT_CLASS's cause removed,
    whose failure can hide every other: on torch 2.6 its keys can make a module its own child,
    and unflatten recurses until RecursionError), joined to REEXPORT_CLASS."""
    try:
        again = fresh_exports(lambda: export_unflattened(p, mode, fresh))
    except Exception:  # noqa: BLE001 - the re-export failing: nothing to unflatten
        return None
    try:
        u = torch.export.unflatten(again())
        if judge(p, run_calls(u, p), state_after(u), eager, cache)[0] != "mismatch":
            return None
    except Exception:  # noqa: BLE001 - the failure the trace looks for
        pass
    cls = trace_unflatten(p, again, eager, cache)
    if cls:
        return cls
    try:
        renamed = fresh_exports(lambda: export_unflattened(p, mode, fresh, True))
    except Exception:  # noqa: BLE001 - as above
        return None
    cls = trace_unflatten(p, renamed, eager, cache, names=named_back)
    return f"{REEXPORT_CLASS}+{cls}" if cls else None


def named_back(fqn):
    """A state FQN of a module whose variants rename_variants renamed, with `@` again."""
    return fqn.replace(VARIANT_MARK, "@")


def verdict(status, why):
    r = {"status": status}
    if why:
        r["detail" if status == "excused" else "first_mismatch"] = why
    return r


def unflatten_unsaved(p, mode, eager, cache):
    """The unflatten path without save/load: "agrees" or what differs (localizes a mismatch)."""
    try:
        u = torch.export.unflatten(export_program(p, mode))
        status, why = judge(p, run_calls(u, p), state_after(u), eager, cache)
        return "agrees" if status != "mismatch" else f"differs too: {why}"
    except Exception as e:  # noqa: BLE001
        return f"{type(e).__name__}: {e}"[:200]


def variants(module):
    """The unflattened module's call variants (`n@1`, ...): a count, for the reach of a run."""
    return sum(1 for name, _ in module.named_modules(remove_duplicate=False)
               if "@" in name.rsplit(".", 1)[-1])


def run_export(p, eager, paths, cache):
    """Every requested export path of one program: {path: result}."""
    why = available()
    out = {}
    for mode in MODES:
        kinds = [k for k in KINDS if f"export.{mode}.{k}" in paths]
        if not kinds:
            continue
        if why:
            for k in kinds:
                out[f"export.{mode}.{k}"] = {"status": "skipped", "skip": why}
            continue
        for k, r in run_one(p, eager, mode, kinds, cache).items():
            out[f"export.{mode}.{k}"] = r
    return out
