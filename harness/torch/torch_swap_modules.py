"""The bridge's graph-swap paths (docs/torch.md), torch >= 2.5:

  export.strict.swap_modules, export.nonstrict.swap_modules
             export preserving every submodule's call signature, then torch's own module swap,
             torch.export._swap._swap_modules: ep.module() with the preserved modules' nodes
             fused into submodules and replaced by calls of eager modules of the same program
             (the model's own classes, each holding the exported module's tensors for its
             state); CONFIG["calls"] calls; outputs and state must equal torch eager's bit for
             bit

The swap paths (torch_swap.py) swap modules in the unflattened module; these swap them in the
flat graph, as _swap_modules does. The modules are drawn as the swap paths draw them (the same
seed; --draw's "swap" pins both), from the modules the model calls once in a forward: a module
called more than once (or under two names) has its calls' nodes under one path, and
_swap_modules does not handle that ("TODO: Handle the duplicate module case" in its source);
a program with no such module is skipped. A swap is judged only where ep.module() of the same
export agrees before it (a program of a shape the preserve path excuses is skipped too,
torch_export.preserve_excuse).

A failure is traced: when the swap with one of these causes removed agrees, or two, and so on up
to all eight, the path is `known_torch_issue` of those classes (joined by "+"):
  swap-modules-output-by-position (docs/found-bugs.md 45)
      a value the graph read from the replaced nodes is read from the swapped module's output
      at its position among the values read (the fused nodes' outputs, in graph order), not
      from the output of its name in the preserved signature, and the value of a buffer update
      the module makes (ep.module()'s aten.copy_, read after the call) from an output too;
      removed: read by name, an update's value from the buffer
  swap-modules-constant-argument-none (46)
      an argument the preserved signature records as a constant (a float, an int, a flag) is
      passed to the swapped module as None; removed: passed as its value
  swap-modules-connects-whole-output (47)
      between two swapped modules' calls, the flatten of the first's results and the unflatten
      of the second's arguments are removed when the second's arguments are the first's first
      results, and the second gets the first's whole result as its one argument; removed: the
      flatten and unflatten kept
  swap-modules-dead-input-none (48)
      _swap_modules eliminates dead code before it swaps; a value only an unused result of the
      module reads is removed, and the module gets None for it; removed: the graph kept whole
  swap-modules-reorders-buffer-update (49)
      _swap_modules sorts the graph with legalize_graph, a topological sort that sees data
      dependencies only; a buffer's in-place update (aten.copy_ of the buffer's get_attr)
      depends on no read of the buffer, so the sort can run it before a read that came first,
      which then sees the new value, or place it after the graph's output, where it never
      runs; a user input updated in place (emit-torch --update-inputs) alike, before the
      swapped module's call that reads it; removed: a sort keeping each update after those
      reads and the output last
      (torch's stable sort alone is not enough: the swap appends the module's call at the
      graph's end, and the reads that depend on it move past the update)
  swap-modules-input-of-erased-node (61)
      a swapped module's result that no node outside it reads (a later swapped module is
      given it and ignores it) keeps its old node in _swap_modules' name map, and the later
      module's call reads that node after it is erased (legalize_graph: KeyError); removed:
      each of the module's signature outputs computed inside it mapped to its call's output
  swap-modules-state-argument-none (63)
      an argument that is one of the model's parameters or buffers as it is: the signature
      names the exported graph's lifted input (`b_buf`), ep.module() holds a get_attr node of
      another name, and the swapped module gets None for it; removed: the get_attr node given
  export-signature-input-renamed-by-graph-copy (89)
      the preserved signature names an argument by the exported graph's placeholder, and
      ep.module()'s copy of the graph renamed that placeholder (torch.fx's namespace refuses a
      builtin's name, `float` -> `float_1`, and renames the next ones around it): the name
      finds another input, or none; removed: those placeholders given names a copy keeps
and, where the program has a torch.no_grad() block (--branch nograd), strict export's
  export-strict-grad-region-module-stack (41)
      the block recorded under the calling module's stack: the swapped module's nodes are cut
      in two around it, and fuse_as_graphmodule finds a dependency cycle; removed: the block's
      nodes given the stack of the module that runs it (torch_export.grad_regions_placed)
"""
import contextlib
import heapq
import itertools
import operator
from unittest import mock

import torch

from torch_compare import (UNEXPLAINED_PAYLOADS, canonical_constants, canonical_nan_eager,
                           diff_values, judge, lossy_nan_constants, run_calls)
from torch_export import (COPY_RENAMED, GRAD_REGION, available, copies_of, copy_names_kept,
                          copy_renamed, export_program, failure, grad_regions,
                          grad_regions_placed, lifted_state, preserve_excuse, run_family,
                          state_after, verdict)
from torch_hooked import called_modules, module_calls
import torch_swap
from torch_partition import base_of

PATHS = ("export.strict.swap_modules", "export.nonstrict.swap_modules")
OUTPUT_POSITION = "swap-modules-output-by-position"  # docs/found-bugs.md 45
CONSTANT_NONE = "swap-modules-constant-argument-none"  # docs/found-bugs.md 46
CONNECTED = "swap-modules-connects-whole-output"  # docs/found-bugs.md 47
DEAD_INPUT = "swap-modules-dead-input-none"  # docs/found-bugs.md 48
REORDERED = "swap-modules-reorders-buffer-update"  # docs/found-bugs.md 49
ERASED_INPUT = "swap-modules-input-of-erased-node"  # docs/found-bugs.md 61
STATE_ARGUMENT = "swap-modules-state-argument-none"  # docs/found-bugs.md 63


def call_counts(p, cache):
    """FQN -> how many times one forward of a fresh model calls the module object under that
    name (a module held under two names counts the calls under both)."""
    counts = {}
    for names in module_calls(p, cache):
        for fqn in names:
            counts[fqn] = counts.get(fqn, 0) + 1
    return counts


def constants_passed():
    """_swap_modules' construction of a swapped module's inputs given each constant argument
    of the preserved signature (a ConstantArgument other than None) as its value: torch passes
    None for it, as for an input the graph does not compute."""
    import torch.export._swap as swap_module  # noqa: PLC0415 - torch >= 2.5 only
    from torch.export.graph_signature import ConstantArgument  # noqa: PLC0415
    construct = swap_module._construct_inputs

    def with_constants(gm, signature, node_name_map):
        args_nodes, kwargs_nodes = construct(gm, signature, node_name_map)
        some = next(iter(args_nodes), None) or next(iter(kwargs_nodes.values()), None)
        if some is not None:  # getitem(getitem(tree_unflatten(flat, spec), 0 or 1), i)
            unflatten = some.args[0].args[0]
            flat = [a.value if isinstance(a, ConstantArgument) and a.value is not None else x
                    for a, x in zip(signature.inputs, unflatten.args[0])]
            unflatten.args = (flat,) + tuple(unflatten.args[1:])
        return args_nodes, kwargs_nodes
    return mock.patch.object(swap_module, "_construct_inputs", with_constants)


def outputs_by_name():
    """_swap_modules' rewiring of a swapped module's results: each value the graph read from the
    replaced nodes read from the module's output of the same name in the preserved signature,
    and the value of a buffer update the module makes (ep.module()'s aten.copy_, read after the
    call) from the buffer. torch reads the module's output at the value's position among the
    partition's outputs (the replaced nodes whose values are read outside them, in graph
    order): another output where a module's result is unused or its results are computed out
    of order, and an output for an update's value."""
    import torch.export._swap as swap_module  # noqa: PLC0415 - torch >= 2.5 only
    from torch.export.unflatten import _generate_flatten_spec  # noqa: PLC0415

    def by_name(gm, signature, module_node, node_name_map, orig_outputs):
        flat = _generate_flatten_spec(gm, module_node, signature.out_spec)
        names = [getattr(o, "name", None) for o in signature.outputs]
        for orig in orig_outputs:
            buffer = updated_attr(orig) if orig.name not in names else None
            if buffer is not None:  # the buffer the module updates, read after its call
                # (after a getitem of its results: the call keeps one user, as torch expects)
                call = torch.fx.Proxy(flat)[0].node if names else module_node
                out = gm.graph.call_function(after, (buffer, call))
            else:
                out = torch.fx.Proxy(flat)[names.index(orig.name)].node
            orig.replace_all_uses_with(out, propagate_meta=buffer is None)
            node_name_map[orig.name] = out
    return mock.patch.object(swap_module, "_deconstruct_outputs", by_name)


def outputs_all_mapped():
    """_swap_modules' rewiring of a swapped module's results, then each output of its preserved
    signature that a replaced node computes mapped in the name map to its call's output too:
    torch maps only the replaced nodes read outside them (fuse_as_graphmodule's outputs), and a
    later swapped module given one of the others (which it ignores) reads the erased node.
    Wraps the rewiring in place when entered (outputs_by_name's, where that is entered first)."""
    import torch.export._swap as swap_module  # noqa: PLC0415 - torch >= 2.5 only
    import torch.fx._pytree as fx_pytree  # noqa: PLC0415
    rewire = swap_module._deconstruct_outputs

    def all_mapped(gm, signature, module_node, node_name_map, orig_outputs):
        rewire(gm, signature, module_node, node_name_map, orig_outputs)
        flat = next(u for u in module_node.users if u.target is fx_pytree.tree_flatten_spec)
        read_outside = set(orig_outputs)
        for i, out in enumerate(signature.outputs):
            node = node_name_map.get(getattr(out, "name", None))
            if isinstance(node, torch.fx.Node) and node not in read_outside and \
                    module_node.target in stack_paths(node):
                node_name_map[out.name] = torch.fx.Proxy(flat)[i].node
    return mock.patch.object(swap_module, "_deconstruct_outputs", all_mapped)


def state_arguments(ep):
    """The preserved signatures' arguments that are a lifted parameter, buffer or constant
    input as it is: 'module: input'."""
    state = lifted_state(ep)
    return [f"{e.fqn}: {arg.name}" for e in ep.module_call_graph if e.fqn and e.signature
            for arg in e.signature.inputs if getattr(arg, "name", None) in state]


def state_arguments_passed():
    """_swap_modules with each argument of a swapped module that the preserved signature names
    by a lifted parameter, buffer or constant input (`b_buf`) given the unlifted module's
    get_attr node of that tensor: torch looks the argument up by the input's name among
    ep.module()'s nodes, finds none, and passes None, as for an unused input. Wraps the
    inputs' construction in place when entered (constants_passed's, where that is entered
    first)."""
    import torch.export._swap as swap_module  # noqa: PLC0415 - torch >= 2.5 only
    swap, construct = swap_module._swap_modules, swap_module._construct_inputs

    def with_state(ep, modules):
        state = lifted_state(ep)

        def construct_with_state(gm, signature, node_name_map):
            attrs = {n.target: n for n in gm.graph.nodes if n.op == "get_attr"}
            named = dict(node_name_map)
            for arg in signature.inputs:
                name = getattr(arg, "name", None)
                if name not in named and state.get(name) in attrs:
                    named[name] = attrs[state[name]]
            return construct(gm, signature, named)
        with mock.patch.object(swap_module, "_construct_inputs", construct_with_state):
            return swap(ep, modules)
    return mock.patch.object(swap_module, "_swap_modules", with_state)


def stack_paths(node):
    """The module paths of `node`'s nn_module_stack (those _swap_modules fuses it under)."""
    return {path for path, _ in (node.meta.get("nn_module_stack") or {}).values()}


def pytrees_kept():
    """_swap_modules' removal of the flatten and unflatten between two swapped modules' calls
    not done: each call gets its arguments as its signature lists them."""
    import torch.export._swap as swap_module  # noqa: PLC0415 - torch >= 2.5 only
    return mock.patch.object(swap_module, "_try_remove_connecting_pytrees", lambda node: None)


def after(value, *_):
    """`value`: a call of it in a graph reads `value` after the nodes it is given too."""
    return value


def attr_under(value, views=True):
    """The get_attr node whose tensor `value` is, or an in-place update's result on (in_place:
    it returns its destination), or (with `views`) a view of (view_of), else None."""
    value = base_of(value, views)
    return value if isinstance(value, torch.fx.Node) and value.op == "get_attr" else None


def destination(node):
    """The first argument of `node` when it is a mutable op (an aten overload whose schema
    writes an input), the value it updates in place; else None."""
    schema = getattr(node.target, "_schema", None)
    if node.op == "call_function" and schema is not None and schema.is_mutable and node.args \
            and isinstance(node.args[0], torch.fx.Node):
        return node.args[0]
    return None


def updated_attr(node):
    """The get_attr node whose value `node` updates in place (a mutable op whose first argument
    is a get_attr or an earlier update's result on one: the whole tensor, not a view of it),
    else None."""
    first = destination(node)
    return attr_under(first, views=False) if first is not None else None


PYTREE_CALLS = (torch.utils._pytree.tree_flatten, torch.utils._pytree.tree_unflatten,
                torch.fx._pytree.tree_flatten_spec)


def input_roots(nodes):
    """Node -> the user inputs (placeholders) whose tensors its value may be or hold: through
    views, in-place results (base_of's ops) and the pytree flatten, unflatten and getitem nodes
    that carry a swapped module's arguments."""
    roots = {}
    for n in nodes:
        if n.op == "placeholder":
            roots[n] = {n}
        elif n.op == "call_function" and (n.target in PYTREE_CALLS or
                                          n.target is operator.getitem):
            roots[n] = set().union(*(roots.get(a, set()) for a in n.all_input_nodes))
        elif base_of(n) is not n and isinstance(base_of(n), torch.fx.Node):
            roots[n] = roots.get(base_of(n), set())
        else:
            roots[n] = set()
    return roots


def updates_after_reads(gm):
    """Sorts `gm`'s graph (in place) topologically, keeping its order wherever it can, with each
    in-place update of a get_attr's value (updated_attr) after every use of that get_attr that
    came before it (of the get_attr itself, a view of it or an earlier update's result: the
    same tensor), each in-place update of a user input (emit-torch --update-inputs) after every
    node that came before it and reads the input (a swapped module's call, which the swap
    appends at the graph's end, counting as placed right after its arguments), and the output
    last: the dependencies legalize_graph does not see."""
    nodes = list(gm.graph.nodes)
    pos = {n: i for i, n in enumerate(nodes)}
    # Where each node runs in the program: the swap appends the module's call, and the nodes
    # that make its arguments, after the output node; each such node counts as placed right
    # after the last of its inputs.
    placed = dict(pos)
    end = next((pos[n] for n in nodes if n.op == "output"), len(nodes))
    for n in nodes:
        if pos[n] > end:
            placed[n] = max((placed[a] for a in n.all_input_nodes), default=-1) + 0.001
    before = {n: set(n.all_input_nodes) for n in nodes}
    uses = {}  # get_attr, or a user input's placeholder -> the nodes reading its tensor
    roots = input_roots(nodes)
    for n in nodes:
        for a in {attr_under(i) for i in n.all_input_nodes} - {None}:
            uses.setdefault(a, []).append(n)
        for a in set().union(*(roots[i] for i in n.all_input_nodes)):
            uses.setdefault(a, []).append(n)
    for n in nodes:
        attr = updated_attr(n)
        written = roots[destination(n)] if destination(n) is not None else set()
        for a in ({attr} if attr is not None else set()) | written:
            before[n] |= {u for u in uses.get(a, ()) if u is not n and placed[u] < placed[n]}
        if n.op == "output":  # last: a node placed after it never runs (an update dropped)
            before[n] |= {u for u in nodes if u is not n}
    waiting = {n: len(before[n]) for n in nodes}
    then = {n: [] for n in nodes}  # the nodes waiting for each node
    for n in nodes:
        for d in before[n]:
            then[d].append(n)
    ready = [pos[n] for n in nodes if not waiting[n]]
    heapq.heapify(ready)
    graph, env = torch.fx.Graph(), {}
    while ready:
        n = nodes[heapq.heappop(ready)]
        env[n] = graph.node_copy(n, lambda x: env[x])
        for u in then[n]:
            waiting[u] -= 1
            if not waiting[u]:
                heapq.heappush(ready, pos[u])
    if len(env) < len(nodes):
        raise RuntimeError("flatcheck bridge: the graph with its updates after their reads "
                           "has a cycle")
    graph._codegen = gm.graph._codegen
    gm.graph = graph
    return gm


def updates_kept_after_reads():
    """_swap_modules' topological sort made updates_after_reads."""
    import torch.export._swap as swap_module  # noqa: PLC0415 - torch >= 2.5 only
    return mock.patch.object(swap_module, "legalize_graph", updates_after_reads)


def swapped(p, ep, fqns):
    """torch.export._swap._swap_modules of `ep` with the eager modules `fqns`."""
    from torch.export._swap import _swap_modules  # noqa: PLC0415 - torch >= 2.5 only
    return _swap_modules(ep, torch_swap.eager_modules(p, ep.module(), fqns))


CANONICAL = ("NaN payloads only: with the program's NaN constants canonical, as the exported "
             "graph writes them, the swap gives torch eager's values exactly (the swapped eager "
             "modules keep payloads the graph's code lost)")


def canonical_agrees(p, build, eager, cache):
    """Whether a new swap (`build()`), called with the program's NaN constants canonical (the swapped eager
    modules read them when they run), gives exactly torch eager's results with them canonical:
    a value the graph's code and an eager module both compute with NaN constants mixes a
    canonical NaN with a payload, which no excuse of judge() explains."""
    names = tuple(sorted(lossy_nan_constants(p)))
    if not names:
        return False
    key = ("canon",) + names
    if key not in cache:
        cache[key] = canonical_nan_eager(p, names)
    gm = build()
    with canonical_constants(p, names):
        outs, state = run_calls(gm, p), state_after(gm)
    return not diff_values(outs, state, eager, *cache[key])


def swap_verdict(p, gm, build, eager, cache):
    """(status, why) of the swap `gm`: judge()'s, or excused where only NaN payloads differ and
    a new swap (`build()`) agrees with the constants canonical (canonical_agrees)."""
    status, why = judged(p, gm, eager, cache)
    if status == "mismatch" and why.endswith(UNEXPLAINED_PAYLOADS) and \
            canonical_agrees(p, build, eager, cache):
        return "excused", CANONICAL
    return status, why


def judged(p, gm, eager, cache):
    return judge(p, run_calls(gm, p), state_after(gm), eager, cache)


def swap_modules_path(p, mode, eager, cache):
    stage = "draw"
    try:
        counts = call_counts(p, cache)
        once = [f for f in called_modules(p, cache) if counts.get(f) == 1]
        fqns = torch_swap.PINNED if torch_swap.PINNED is not None else \
            torch_swap.draw_swapped(p, once)
        if not fqns and torch_swap.PINNED is None:
            return {"status": "skipped",
                    "skip": "the program calls no module exactly once (_swap_modules does not "
                            "handle a module called more than once)"}
        result = {"swapped": fqns}
        if preserve_excuse(p):
            return {**result, "status": "skipped",
                    "skip": "a shape the preserve path excuses (it reports why)"}
        stage = "export"
        fresh = copies_of(export_program(p, mode, preserve=True))
        stage = "module"
        status, why = judged(p, fresh().module(), eager, cache)
        if status == "mismatch":
            return {**result, "status": "skipped",
                    "skip": "ep.module() of the preserve export disagrees before any swap"}
        stage = "swap"
        gm = swapped(p, fresh(), fqns)
        stage = "run"
        status, why = swap_verdict(p, gm, lambda: swapped(p, fresh(), fqns), eager, cache)
        if status != "mismatch":
            return {**result, **verdict(status, why)}
        error = None
    except Exception as e:  # noqa: BLE001 - torch refusing or crashing on the program
        if stage in ("draw", "export", "module"):
            return {**result, **failure(e, stage)} if stage != "draw" else failure(e, stage)
        error, why = e, f"{type(e).__name__}: {e}"
    known = trace_swap_modules(p, fresh, fqns, eager, cache)
    if known:
        return {**result, "status": "known_torch_issue", "stage": stage, "detail": why[:300],
                "known_torch_issue": known}
    return {**result, **(verdict(status, why) if error is None else failure(error, stage))}


def trace_swap_modules(p, fresh, fqns, eager, cache):
    """The classes of the fewest causes (CAUSES, and GRAD_REGION's where the program has a
    torch.no_grad() block) whose removal together makes the swap agree, with what was removed,
    as the result's text; None when no set of them does."""
    first = fresh()
    causes = CAUSES + ((GRAD_REGION, contextlib.nullcontext, grad_regions_placed,
                        "with each torch.no_grad() block's nodes under the module that runs "
                        "it"),) if grad_regions(first) else CAUSES
    if not state_arguments(first):  # a cause only a program passing its state as it is has
        causes = tuple(c for c in causes if c[0] != STATE_ARGUMENT)
    if not copy_renamed(first):  # and one only a program with a placeholder a copy renames
        causes = tuple(c for c in causes if c[0] != COPY_RENAMED)
    for size in range(1, len(causes) + 1):
        for chosen in itertools.combinations(causes, size):
            def build(chosen=chosen):
                with contextlib.ExitStack() as stack:
                    ep = fresh()
                    for _, removed, placed, _ in chosen:
                        stack.enter_context(removed())
                        ep = placed(ep)
                    return swapped(p, ep, fqns)
            try:
                status, _ = swap_verdict(p, build(), build, eager, cache)
            except Exception:  # noqa: BLE001 - not (only) these causes
                continue
            if status != "mismatch":
                return "+".join(cls for cls, _, _, _ in chosen) + ": " + "; ".join(
                    text for _, _, _, text in chosen) + ": the swap agrees"
    return None


def same(ep):
    return ep


# (class, a context removing its cause in _swap_modules, a function removing it from the
# exported program, what the removal does)
CAUSES = ((OUTPUT_POSITION, outputs_by_name, same,
           "with each value read from the swapped module's output of its name"),
          (CONSTANT_NONE, constants_passed, same,
           "with each constant argument of a swapped module's call passed as its value"),
          (CONNECTED, pytrees_kept, same,
           "with the flatten and unflatten between two swapped modules' calls kept"),
          (DEAD_INPUT, torch_swap.graph_kept, same,
           "with the graph kept whole (no dead-code elimination in _swap_modules)"),
          (REORDERED, updates_kept_after_reads, same,
           "with _swap_modules' topological sort keeping each buffer (or input) update after "
           "the reads of it that came before it"),
          (ERASED_INPUT, outputs_all_mapped, same,
           "with each of a swapped module's signature outputs computed inside it mapped to its "
           "call's output"),
          (STATE_ARGUMENT, state_arguments_passed, same,
           "with each argument that is a parameter or buffer as it is given the module's "
           "get_attr node"),
          (COPY_RENAMED, contextlib.nullcontext, copy_names_kept,
           "with the placeholders a copy of the exported graph renames given names it keeps"))


def run_swap_modules(p, eager, paths, cache):
    """The graph-swap paths of one program, when asked for: {path: result}."""
    return run_family(PATHS, paths,
                      lambda path: swap_modules_path(p, path.split(".")[1], eager, cache),
                      available())
