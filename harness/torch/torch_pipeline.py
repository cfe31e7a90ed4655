"""The bridge's pipelining path (docs/torch.md), torch >= 2.4: torch.distributed.pipelining.

  pipeline   torch.distributed.pipelining.pipeline(model, mb_args=inputs, split_spec=...): the
             model exported, split into stages at the drawn split points (split_module over the
             exported module), each stage's module tree rebuilt as unflatten does (a module
             called more than once gets call variants `n`, `n@1`), the state moved into the
             stages that use it; then the Pipe run locally (every stage in turn, as a single
             process runs it), CONFIG["calls"] calls; outputs and state must equal torch
             eager's bit for bit

The split points are drawn per program: each module the model calls (found by running it once
with forward pre-hooks) is a split point with probability 1/3, at its BEGINNING or its END; the
draw is seeded by those modules' names and the program's ops, so a program gets one split on
any machine (the bridge's --draw fixes them instead: PINNED, for shrinking). pipelining puts a
split before (or after) every call of a split-point module. A module of the state, parameter
or buffer, keeps its tensor identity through pipelining, so the stages' state is judged under
the model's FQNs (every name of a shared tensor is one tensor).

A failure (an exception building or running the pipe, or a wrong result) counts as a class only
when building the pipe again with the causes seen removed (alone, then two, and so on:
build_pipe's `fixes`) builds, runs and agrees with torch eager, and each removal changed
something (`attribute`):
  pipeline-shared-state-name-missing (docs/found-bugs.md 26)
      a tensor held under several FQNs (tied weights, a shared buffer): pipelining's aliasing
      step sets its other names only on a module at that exact path, so a call variant (`n@1`)
      lacks it, and so does a module the stage never calls whose state its parent reads
      (`mid.inner.buf` in a stage that runs only `mid`); and `_sink_params` takes the first name
      that fits the scope, which at a stage's top may be a name the stage does not hold.
      Removed: the names the stage holds tried first (held_names_first), then each module given
      the name it will be read by (fill_scopes).
  pipeline-drops-stage-updating-state (27)
      the dead code elimination pipelining runs on the split graph counts a call_module as pure:
      a stage (or a part of one) whose outputs nothing reads is removed with its in-place state
      updates. Removed: every call_module kept.
  pipeline-state-placeholder-renamed (28)
      pipelining keys the state by the names of the split root graph's get_attr nodes and looks
      a stage's placeholders up by their own names; split_module names a placeholder after the
      original node, which export's unlift may have renamed (`b_b_buf_1`), so the state stays an
      input of the stage and the stage cannot be called. Removed: placeholders also looked up by
      the name of the root node they take (renamed_inputs).
  pipeline-variant-drops-children (5: unflatten's, reached through the stages)
      each stage's tree is rebuilt by unflatten's _ModuleFrame with the call indices of the
      whole program, so a module's first call in a later stage is a variant (`b@1`) and no `b`
      exists there; a call of its child through it (`b.a`, from b's parent) makes an empty `b`
      to hold `a`, and the next call of `b` takes that module and replaces its children with
      those of its first variant: `a` is lost, AttributeError. Removed: the taken module keeps
      its children (torch_export.variant_keeps_children).
  pipeline-bound-forward-module-stack (29: export's, reached through the split points)
      pipelining marks a split point by replacing the module's forward with a wrapper bound to
      the module object; when the model holds a module under two names, export's non-strict
      tracer then names the nodes of that module's children by their bare attribute names
      (torch 2.14.1), and the stages are built from those wrong module paths: a wrong result or
      a crash. Removed: the split points' forwards put on the modules' classes
      (split_points_by_class).
  pipeline-split-reorders-mutation (22: split_module's, reached through pipelining)
      pipelining splits the exported graph with split_module in its default order, which
      orders the stages by their data dependencies only: a stage that updates a buffer in
      place runs before an independent earlier stage that reads it (a silent wrong result).
      Removed: the split made with keep_original_order=True (ordered_split).
  pipeline-strict-keys-name-module-objects (3: strict export's keys, reached through pipelining)
      torch 2.6's pipelining traces with export_for_training, strict: its nn_module_stack keys
      name module objects, so one module object held under two paths (`n.layer0` and
      `n.layer1`) has one key, which the stages' _ModuleFrame takes for one module: the second
      path's module shares the first's children and is wired as the first (a module's output
      tuple passed whole, a wrong shape). torch 2.14.1 traces non-strict (keys name paths).
      Removed: the keys named by path (torch_export.keyed_by_path) where one key names two
      paths (paths_share_keys).
On torch 2.6, an IndexError in unflatten's _sink_params at `inputs[-1]` (a stage module whose
graph has no placeholders; torch 2.14.1 checks for none) is pipeline-sink-params-no-inputs-
indexerror, read from the failing line. A RuntimeError saying a child module is not a
descendant of its parent ("currently unsupported": one module object under two parents) is
skipped with that reason when no removal above explains it (class 29's wrong paths raise it
too). With the branch op taken by torch.cond (the bridge's --branch cond), a failure whose
message is one of those class 36 raises (pipeline-cond-branch-graphs: the branch graphs taken
for stages, or for stage inputs nobody passes) is that class, without the removals above:
pipelining cannot split such a model at all (cond_graphs_refused). With the branch op's value
computed under torch.no_grad() (--branch nograd), whose body export keeps as a graph attribute
too, a failure is pipeline-grad-region-body (the same cause) when the pipe without the block
(the value cloned without torch.no_grad()) builds, runs and agrees (grad_region_refused).
An AttributeError building the pipe of a model with non-persistent buffers, where the same pipe
with every buffer made persistent builds and agrees, is pipeline-drops-non-persistent-buffer
(docs/found-bugs.md 111: pipelining assigns a shared tensor to each stage under the FQNs of the
state dict, which leaves non-persistent buffers out; persistent_refused).
"""
import contextlib
import importlib
import io
import itertools
import random
import re
import sys
import traceback
import zlib

import torch

from torch_compare import judge, run_calls, tensors_of
from torch_export import failure, keyed_by_path, run_family, variant_keeps_children, verdict
from torch_hooked import called_modules, forward_by_class
from torch_cond import branch_by, clone_branch, cond_branch, nograd_branch
from torch_partition import attr_of

PATHS = ("pipeline",)
SHARED = "pipeline-shared-state-name-missing"
DROPPED = "pipeline-drops-stage-updating-state"
RENAMED = "pipeline-state-placeholder-renamed"
CHILDREN = "pipeline-variant-drops-children"
WRAPPER = "pipeline-bound-forward-module-stack"
ORDER = "pipeline-split-reorders-mutation"  # docs/found-bugs.md 22, reached through pipelining
KEYS = "pipeline-strict-keys-name-module-objects"  # docs/found-bugs.md 3, through pipelining
# torch 2.6 (not 2.14.1): _sink_params indexes the last placeholder of a graph without any.
NO_INPUTS = "pipeline-sink-params-no-inputs-indexerror"
UNSUPPORTED = "is not a descendant of parent module"
COND = "pipeline-cond-branch-graphs"  # docs/found-bugs.md 36
# The same cause with a torch.no_grad() block (the bridge's --branch nograd): export records it
# as wrap_with_set_grad_enabled, its body a graph attribute (`submod_N`) of the exported module.
GRAD_BODY = "pipeline-grad-region-body"
RETURNED = "pipeline-returned-state"  # docs/found-bugs.md 56
# What class 36 raises: 2.14.1 outlining a branch graph as a stage (its nodes carry no module
# stack), 2.6 a stage taking the branch graphs as placeholders nobody passes, or lacking them.
COND_TEXT = (r"Unable to find nn_module_stack for node|parameter (true|false)_graph_\d|"
             r"no attribute '(true|false)_graph_\d")
PINNED = None  # {FQN: "BEGINNING" or "END"} instead of a draw (the bridge's --draw)
NON_PERSISTENT = "pipeline-drops-non-persistent-buffer"  # docs/found-bugs.md 111


def available():
    """None when torch has torch.distributed.pipelining.pipeline; else the reason it has not."""
    try:
        from torch.distributed.pipelining import SplitPoint, pipeline  # noqa: F401
    except (ImportError, RuntimeError) as e:
        return f"torch {torch.__version__} has no torch.distributed.pipelining ({e})"
    return None


def draw_split_spec(p, called):
    """{FQN: SplitPoint}: each called module with probability 1/3, at its BEGINNING or END,
    seeded by the called modules' names and the program's ops."""
    from torch.distributed.pipelining import SplitPoint
    rng = random.Random(zlib.crc32(repr((called, list(p.OPS))).encode()))
    spec = {}
    for fqn in called:
        if rng.random() < 1 / 3:
            spec[fqn] = SplitPoint.BEGINNING if rng.random() < 0.5 else SplitPoint.END
    return spec


def first_fitting(names, scope):
    """The name _sink_params takes in a module at `scope` (its path, as a list of atoms): the
    first of `names` below it, or None."""
    return next((n for n in names if n.split(".")[:len(scope)] == list(scope)), None)


def fill_scopes(stage, inputs_to_state, state):
    """Puts, on each module of `stage` below its top that has a graph, the state that module's
    graph takes under the name _sink_params will read there (the first name in
    `inputs_to_state` that fits the module's scope, call indices dropped), where the module
    lacks it: the tensor from `state` ({FQN: tensor}, every name of a shared tensor), and the
    modules along the way as empty modules. pipelining's aliasing step sets a tensor's other
    names only where a module sits at exactly that path: never on a call variant (`a@1`), nor
    under a module the stage does not call (`mid.inner` when only `mid` runs in the stage and
    reads `mid.inner.buf`). Returns the paths it filled ("a@1.w", "mid.inner.buf")."""
    filled = []
    for path, mod in stage.named_modules(remove_duplicate=False):
        if not path or not isinstance(getattr(mod, "graph", None), torch.fx.Graph):
            continue
        scope = [atom.split("@")[0] for atom in path.split(".")]
        for ph in mod.graph.nodes:
            if ph.op != "placeholder" or ph.name not in inputs_to_state:
                continue
            name = first_fitting(inputs_to_state[ph.name], scope)
            if name not in state:
                continue
            *between, field = name.split(".")[len(scope):]
            owner = mod
            for atom in between:
                if getattr(owner, atom, None) is None:
                    owner.add_module(atom, torch.nn.Module())
                owner = getattr(owner, atom)
            if isinstance(owner, torch.nn.Module) and not hasattr(owner, field):
                setattr(owner, field, state[name])
                filled.append(".".join([path, *between, field]))
    return filled


def held_names_first(stage, inputs_to_state):
    """Puts, in each list of names of one state tensor, the names `stage` holds first (the
    fix: _sink_params takes the first name that fits the scope, and at a stage's top every name
    fits, held there or not). Returns the names it moved ahead: for each scope (a prefix of a
    name: the stage's top, or a module in it) whose first fitting name changed, as `3.weight`
    before `3.Layer.weight` in module `3` that holds no `Layer` in this stage."""
    moved = []
    for fqns in inputs_to_state.values():
        order = sorted(fqns, key=lambda f: attr_of(stage, f) is None)
        scopes = sorted({tuple(f.split(".")[:k]) for f in fqns for k in range(f.count(".") + 1)})
        for scope in scopes:
            now, before = first_fitting(order, scope), first_fitting(fqns, scope)
            if now != before:
                moved.append(f"{now} before {before}")
        fqns[:] = order
    return moved


def renamed_inputs(stage, split, inputs_to_state):
    """Keys `inputs_to_state` (pipelining's map from the split root graph's get_attr node names
    to state FQNs) also by `stage`'s own placeholder names, matched by position against the
    arguments of the root graph's call of `stage` (the fix: split_module may name a stage's
    placeholder otherwise than the root graph names the get_attr node it takes). Returns the
    (placeholder, get_attr node) name pairs it added."""
    call = next((n for n in split.graph.nodes if n.op == "call_module" and
                 getattr(split, n.target, None) is stage), None)
    if call is None:
        return []
    added = []
    placeholders = [n for n in stage.graph.nodes if n.op == "placeholder"]
    for ph, arg in zip(placeholders, call.args):
        if ph.name not in inputs_to_state and isinstance(arg, torch.fx.Node) and \
                arg.name in inputs_to_state:
            inputs_to_state[ph.name] = inputs_to_state[arg.name]
            added.append((ph.name, arg.name))
    return added


def split_points_by_class(model, spec):
    """pipelining's annotate_split_points, but each split-point module's forward found through
    its class (torch_hooked.forward_by_class), calling pipe_split() before (BEGINNING) or after
    (END) it. pipelining binds its wrapper to the module object, so while export traces, the
    module's own forward runs with the module as `self`, not the tracer's proxy, and export
    records its children's nodes under wrong paths when the model holds a module under two
    names (docs/found-bugs.md 29). Returns the FQNs it wrapped."""
    from torch.distributed.pipelining import SplitPoint, pipe_split

    def split_around(point):
        def around(forward, *args, **kwargs):
            if point == SplitPoint.BEGINNING:
                pipe_split()
            try:
                return forward(*args, **kwargs)
            finally:
                if point == SplitPoint.END:
                    pipe_split()
        return around

    for fqn, point in spec.items():
        forward_by_class(model.get_submodule(fqn), split_around(point))
    return list(spec)


FIXES = ("fill", "keep", "rename", "children", "wrapper", "order", "keys")


def stage_calls(split):
    """The targets of the split root graph's call_module nodes (the stages), in graph order."""
    return [n.target for n in split.graph.nodes if n.op == "call_module"]


def ordered_split(split_module, changed):
    """pipelining's split_module, but in the graph's own order (keep_original_order=True): by
    default split_module orders the stages by their data dependencies only, so a stage that
    updates a buffer in place can run before an independent earlier stage that reads it
    (docs/found-bugs.md 22, reached through pipelining). The default split is made too, with
    the same partition of each node (pipelining's callback counts the split points it meets,
    so it is asked once per node), and when its stage order differs, `changed` gets it."""
    def split(m, root, callback, *args, **kwargs):
        memo = {}

        def once(node):
            if node not in memo:
                memo[node] = callback(node)
            return memo[node]
        default = split_module(m, root, once, *args, **kwargs)
        kept = split_module(m, root, once, *args, keep_original_order=True, **kwargs)
        if stage_calls(default) != stage_calls(kept):
            changed.append(" ".join(stage_calls(default)))
        return kept
    return split


def build_pipe(p, model, spec, fixes=()):
    """pipelining's Pipe of `model`, built with the cause removals `fixes` (for attribution):
      fill    the names each stage holds tried first (held_names_first), then each module of a
              stage given the state its graph takes under the name pipelining will read there
              (fill_scopes)
      keep    the dead code elimination pipelining runs on the split graph keeps every
              call_module (a stage may update a buffer in place while nothing reads its outputs)
      rename  a stage's state placeholders looked up by the root graph's names too
              (renamed_inputs)
      children  a module unflatten made as the parent of a child it calls keeps that child
              when a later call of the module shares its first call variant's children
              (torch_export.variant_keeps_children)
      wrapper the split points put on the modules' classes, not bound to the module objects
              (split_points_by_class)
      order   the split made in the graph's own order (ordered_split)
      keys    the traced program's nn_module_stack keys named by path where one key names two
              paths (paths_share_keys)
    Returns (pipe, seen): seen[fix] lists what each fix changed (empty: it changed nothing)."""
    from torch.distributed.pipelining import pipeline
    ir = importlib.import_module("torch.distributed.pipelining._IR")
    sink, dce = ir._sink_params, torch.fx.Graph.eliminate_dead_code
    annotate, split_module = ir.annotate_split_points, ir.split_module
    seen = {fix: [] for fix in fixes}
    state = model.state_dict(keep_vars=True)

    def fixed_sink(module, inputs_to_state, *args, **kwargs):
        if "fill" in seen:
            seen["fill"].extend(held_names_first(module, inputs_to_state))
            seen["fill"].extend(fill_scopes(module, inputs_to_state, state))
        if "rename" in seen:
            split = sys._getframe(1).f_locals.get("split")  # _from_traced's split module
            if isinstance(split, torch.fx.GraphModule):
                seen["rename"].extend(f"{ph} (root graph: {node})" for ph, node in
                                      renamed_inputs(module, split, inputs_to_state))
        return sink(module, inputs_to_state, *args, **kwargs)

    def kept_dce(graph, is_impure_node=None):
        seen["keep"].extend(n.target for n in graph.nodes
                            if n.op == "call_module" and not n.users)

        def impure(n):
            return n.op == "call_module" or (is_impure_node(n) if is_impure_node else n.is_impure())
        return dce(graph, is_impure_node=impure)

    if "fill" in seen or "rename" in seen:
        ir._sink_params = fixed_sink
    if "keep" in seen:
        torch.fx.Graph.eliminate_dead_code = kept_dce
    if "wrapper" in seen:
        ir.annotate_split_points = \
            lambda mod, points: seen["wrapper"].extend(split_points_by_class(mod, points))
    if "order" in seen:
        ir.split_module = ordered_split(split_module, seen["order"])
    trace = ir.Pipe.__dict__["_trace_with_export"]
    if "keys" in seen:
        ir.Pipe._trace_with_export = staticmethod(
            lambda *args, **kwargs: paths_share_keys(trace.__func__(*args, **kwargs),
                                                     seen["keys"]))
    try:
        with variant_keeps_children(seen["children"]) if "children" in seen else \
                contextlib.nullcontext():
            pipe = pipeline(model, mb_args=tuple(t.clone() for t in p.INPUTS), split_spec=spec)
    finally:
        ir._sink_params, torch.fx.Graph.eliminate_dead_code = sink, dce
        ir.annotate_split_points, ir.split_module = annotate, split_module
        ir.Pipe._trace_with_export = trace
    return pipe, seen


def paths_share_keys(ep, shared):
    """`ep` with its nn_module_stack keys named by path (torch_export.keyed_by_path) when one key
    names two or more module paths (added to `shared`: "key: path, path"); else as it is."""
    paths = {}
    for node in ep.graph.nodes:
        for key, (path, _) in (node.meta.get("nn_module_stack") or {}).items():
            paths.setdefault(key.split("@")[0], set()).add(path)
    found = [f"{k}: {', '.join(sorted(v))}" for k, v in paths.items() if len(v) > 1]
    if found:
        shared.extend(found)
        keyed_by_path(ep)
    return ep


def model_names(model):
    """id(tensor) -> the first FQN under which `model` holds it."""
    names = {}
    for fqn, t in tensors_of(model).items():
        names.setdefault(id(t), fqn)
    return names


def judged(p, pipe, names, eager, cache):
    """Runs the pipe's calls; the verdict by the model's FQNs (`names`: model_names)."""
    outs = run_calls(pipe, p)
    state = {names[id(t)]: t.detach().clone()
             for t in tensors_of(pipe.split_gm).values() if id(t) in names}
    return judge(p, outs, state, eager, cache)


def pipeline_path(p, eager, cache):
    stage = "pipeline"
    try:
        if PINNED is None:
            spec = draw_split_spec(p, called_modules(p, cache))
        else:
            from torch.distributed.pipelining import SplitPoint
            spec = {fqn: SplitPoint[point] for fqn, point in PINNED.items()}
        result = {"split_spec": {k: v.name for k, v in spec.items()}}
        try:
            model = p.build()
            pipe, _ = build_pipe(p, model, spec)
            stage = "run"
            status, why = judged(p, pipe, model_names(model), eager, cache)
            result["stages"] = pipe.num_stages
        except Exception as e:  # noqa: BLE001 - torch refusing the program, or a cause below
            known = cond_graphs_refused(p, e) or grad_region_refused(p, eager, cache) \
                or no_inputs_indexerror(e) or returned_state(p, e) \
                or attribute(p, spec, eager, cache) or persistent_refused(p, spec, e, eager, cache)
            if known:
                return {**result, "status": "known_torch_issue", "stage": stage,
                        "detail": f"{type(e).__name__}: {e}"[:300], "known_torch_issue": known}
            if no_stage(e):
                return {"status": "skipped", "skip": "the exported graph computes nothing: "
                                                     "pipelining makes no stage of it "
                                                     "(StopIteration in Pipe.from_tracing)"}
            if UNSUPPORTED in str(e):
                return {"status": "skipped", "skip": "pipelining refuses a module object under "
                                                     "two parents (\"currently unsupported\")"}
            raise
        if status == "mismatch":
            known = attribute(p, spec, eager, cache)
            if known:
                return {**result, "status": "known_torch_issue", "detail": why,
                        "known_torch_issue": known}
    except Exception as e:  # noqa: BLE001 - torch refusing a program
        return failure(e, stage)
    return {**result, **verdict(status, why)}


def persistent_refused(p, spec, e, eager, cache):
    """NON_PERSISTENT's class text when `e` is an AttributeError, the model has non-persistent
    buffers, and the pipe of a model with every buffer made persistent builds, runs and agrees
    with torch eager; else None."""
    if not isinstance(e, AttributeError):
        return None
    model = p.build()
    held = [m for _, m in model.named_modules() if m._non_persistent_buffers_set]
    if not held:
        return None
    for m in held:
        m._non_persistent_buffers_set.clear()
    try:
        pipe, _ = build_pipe(p, model, spec)
        if judged(p, pipe, model_names(model), eager, cache)[0] == "mismatch":
            return None
    except Exception:  # noqa: BLE001 - then not (only) this cause
        return None
    return (f"{NON_PERSISTENT}: with its buffers persistent (in the state dict, which "
            "pipelining assigns shared tensors by) the pipe builds and agrees")


def cond_graphs_refused(p, e):
    """The class text when the program's branch op is torch.cond (the bridge's --branch cond)
    and `e` says what class 36 raises; else None."""
    if getattr(p, "_branch", None) is not cond_branch or not re.search(COND_TEXT, str(e)):
        return None
    return (f"{COND}: pipelining takes torch.cond's branch graphs for stages or stage inputs "
            "and cannot split the model")


def grad_region_refused(p, eager, cache):
    """The class text when the program's branch op runs a torch.no_grad() block (the bridge's
    --branch nograd) and the same pipe with the block removed (the value cloned without
    torch.no_grad(): the same ops) builds, runs and agrees with torch eager: the block's body,
    a graph attribute like torch.cond's branch graphs, is what pipelining cannot take (class
    36's cause); joined with the classes the path finds without the block, when it finds
    some there. Else None."""
    if getattr(p, "_branch", None) is not nograd_branch:
        return None
    with branch_by(p, clone_branch):
        without = pipeline_path(p, eager, cache)
    why = ("without the torch.no_grad() block (its body a graph attribute, as torch.cond's "
           "branch graphs: class 36) the pipe")
    if without["status"] in ("agree", "excused"):
        return f"{GRAD_BODY}: {why} builds, runs and agrees"
    if without["status"] == "known_torch_issue":
        other = without["known_torch_issue"].split(":")[0]
        return f"{GRAD_BODY}+{other}: {why} shows {other} only"
    return None


def returned_state(p, e):
    """The class text when `e` is Pipe._from_traced's assertion that every get_attr node of the
    split graph is read by a stage (`user.op` is 'call_module'; torch 2.6 gives it no message)
    and the model, run once, returns one of its own parameters or buffers as it is: the graph's
    output reads that get_attr (docs/found-bugs.md 56). Read from the failing line and the
    model, else None."""
    if not isinstance(e, AssertionError):
        return None
    last = traceback.extract_tb(e.__traceback__)[-1]
    if last.name != "_from_traced" or "user.op" not in (last.line or "") + str(e):
        return None
    model = p.build()
    state = {id(t): fqn for fqn, t in tensors_of(model).items()}
    with torch.no_grad():
        outs = model(*[t.clone() for t in p.INPUTS])
    outs = outs if isinstance(outs, (tuple, list)) else (outs,)
    returned = [state[id(o)] for o in outs if id(o) in state]
    if not returned:
        return None
    return (f"{RETURNED}: the model returns {', '.join(returned[:3])} as it is; pipelining "
            "expects every state read of the split graph to be a stage's")


def no_stage(e):
    """Whether `e` is pipelining's StopIteration at the first stage of a split graph that has
    none (a model computing nothing: its outputs are its inputs). Read from the failing line."""
    if not isinstance(e, StopIteration):
        return False
    last = traceback.extract_tb(e.__traceback__)[-1]
    return last.name == "from_tracing" and "split.children()" in (last.line or "")


def no_inputs_indexerror(e):
    """The class text when `e` is torch 2.6's IndexError in unflatten's _sink_params at
    `inputs[-1]`: a module of a stage whose graph has no placeholders (later torch checks for
    none). Read from the failing line, else None."""
    if not isinstance(e, IndexError):
        return None
    last = traceback.extract_tb(e.__traceback__)[-1]
    if last.name == "_sink_params" and "inputs[-1]" in (last.line or ""):
        return (f"{NO_INPUTS}: _sink_params takes the last placeholder of a stage module's graph "
                "that has none (`inputs[-1]`)")
    return None


CLASSES = {"fill": (SHARED, "a stage lacks the name of a shared state tensor that pipelining "
                           "looks up there ({})"),
           "keep": (DROPPED, "dead code elimination removes the call of {}, whose outputs "
                             "nothing reads (it updates state in place)"),
           "rename": (RENAMED, "a stage's state placeholder is named otherwise than the root "
                               "graph's node it takes ({}), so it is not made state"),
           "children": (CHILDREN, "unflatten made a stage's module as the parent of a child "
                                  "called through it, then gave a later call of the module "
                                  "the children of its first call variant, losing {}"),
           "wrapper": (WRAPPER, "the split points' wrappers are bound to their modules ({}), so "
                                "export records their children under wrong paths"),
           "order": (ORDER, "split_module orders the stages by data dependencies only ({}), "
                            "so a stage updating state runs before an earlier one reading it"),
           "keys": (KEYS, "the strict trace gives one nn_module_stack key to the paths of one "
                          "module object ({}), which the stages' modules take for one module")}


def attribute(p, spec, eager, cache):
    """The classes that explain a pipe that failed to build or run, or gave a wrong result:
    the pipe built again with one cause removed, then two, and so on up to all (build_pipe's
    `fixes`), until one builds and agrees with torch eager; each removed cause must have
    changed something. A text ("class+class: causes; ..."), or None."""
    for size in range(1, len(FIXES) + 1):
        for fixes in itertools.combinations(FIXES, size):
            model = p.build()
            try:  # fx prints a failing generated forward to stderr: not this path's output
                with contextlib.redirect_stderr(io.StringIO()):
                    pipe, seen = build_pipe(p, model, spec, fixes)
                    if judged(p, pipe, model_names(model), eager, cache)[0] == "mismatch":
                        continue
            except Exception:  # noqa: BLE001 - not built or not run with these causes removed
                continue
            if not all(seen[f] for f in fixes):
                continue
            classes = "+".join(CLASSES[f][0] for f in fixes)
            causes = "; ".join(CLASSES[f][1].format(", ".join(seen[f][:3])) for f in fixes)
            return f"{classes}: {causes}; with that removed, the pipe agrees"
    return None


def run_pipeline(p, eager, paths, cache):
    """The pipelining path of one program, when asked for: {path: result}."""
    return run_family(PATHS, paths, lambda path: pipeline_path(p, eager, cache), available())
