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
any machine. pipelining puts a split before (or after) every call of a split-point module. A
module of the state, parameter or buffer, keeps its tensor identity through pipelining, so the
stages' state is judged under the model's FQNs (every name of a shared tensor is one tensor).

A failure (an exception building or running the pipe, or a wrong result) counts as a class only
when building the pipe again with the causes seen removed (alone, then two, then all three:
build_pipe's `fixes`) builds, runs and agrees with torch eager, and each removal changed
something (`attribute`):
  pipeline-shared-state-name-missing (docs/found-bugs.md 26)
      a tensor held under several FQNs (tied weights, a shared buffer): pipelining's aliasing
      step sets its other names only on a module at that exact path, so a call variant (`n@1`)
      lacks it, and `_sink_params` takes the first name that fits the scope, which at a stage's
      top may be a name the stage does not hold. Removed: the names put on the variants too
      (fill_variants), the names the stage holds tried first (held_names_first).
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
On torch 2.6, an IndexError in unflatten's _sink_params at `inputs[-1]` (a stage module whose
graph has no placeholders; torch 2.14.1 checks for none) is pipeline-sink-params-no-inputs-
indexerror, read from the failing line. A RuntimeError saying a child module is not a
descendant of its parent ("currently unsupported": one module object under two parents) is
skipped with that reason.
"""
import importlib
import itertools
import random
import sys
import traceback
import zlib

import torch

from torch_compare import judge, run_calls, tensors_of
from torch_export import failure, verdict
from torch_partition import attr_of

PATHS = ("pipeline",)
SHARED = "pipeline-shared-state-name-missing"
DROPPED = "pipeline-drops-stage-updating-state"
RENAMED = "pipeline-state-placeholder-renamed"
# torch 2.6 (not 2.14.1): _sink_params indexes the last placeholder of a graph without any.
NO_INPUTS = "pipeline-sink-params-no-inputs-indexerror"
UNSUPPORTED = "is not a descendant of parent module"


def available():
    """None when torch has torch.distributed.pipelining.pipeline; else the reason it has not."""
    try:
        from torch.distributed.pipelining import SplitPoint, pipeline  # noqa: F401
    except (ImportError, RuntimeError) as e:
        return f"torch {torch.__version__} has no torch.distributed.pipelining ({e})"
    return None


def called_modules(p):
    """The FQNs of the modules a fresh model of program `p` calls, in the order of their first
    calls (forward pre-hooks on one eager call; its state is thrown away with the model)."""
    model = p.build()
    seen = []
    hooks = [m.register_forward_pre_hook(lambda mod, args, fqn=fqn: seen.append(fqn))
             for fqn, m in model.named_modules() if fqn]
    try:
        with torch.no_grad():
            model(*[t.clone() for t in p.INPUTS])
    finally:
        for h in hooks:
            h.remove()
    return list(dict.fromkeys(seen))


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


def fill_variants(stage, state):
    """Puts each tensor of `state` ({FQN: tensor}, every name of a shared tensor) on every call
    variant along its FQN's path in `stage` that lacks it (`a.b.w` on `a@1.b`, `a.b@2`, ...):
    what unflatten's _assign_attr does for variants, and pipelining's aliasing step does only for
    the module at the exact path. Returns the (variant module path, attribute) pairs it filled."""
    filled = []
    for fqn, t in state.items():
        *prefix, field = fqn.split(".")
        mods = [("", stage)]
        for atom in prefix:
            mods = [(f"{path}.{k}" if path else k, child) for path, mod in mods
                    for k, child in mod._modules.items()
                    if child is not None and k.split("@")[0] == atom]
        for path, mod in mods:
            if "@" in path and not hasattr(mod, field):
                setattr(mod, field, t)
                filled.append((path, field))
    return filled


def held_names_first(stage, inputs_to_state):
    """Puts, in each list of names of one state tensor, the names `stage` holds first (the
    fix: _sink_params takes the first name that fits the scope, and at a stage's top every name
    fits, held there or not). Returns the names it moved ahead."""
    moved = []
    for fqns in inputs_to_state.values():
        order = sorted(fqns, key=lambda f: attr_of(stage, f) is None)
        if order[0] != fqns[0]:
            moved.append(f"{order[0]} before {fqns[0]}")
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


FIXES = ("fill", "keep", "rename")


def build_pipe(p, model, spec, fixes=()):
    """pipelining's Pipe of `model`, built with the cause removals `fixes` (for attribution):
      fill    each stage's call variants given every name of the state before pipelining sinks
              the state into them (fill_variants), and the names each stage holds tried first
              (held_names_first)
      keep    the dead code elimination pipelining runs on the split graph keeps every
              call_module (a stage may update a buffer in place while nothing reads its outputs)
      rename  a stage's state placeholders looked up by the root graph's names too
              (renamed_inputs)
    Returns (pipe, seen): seen[fix] lists what each fix changed (empty: it changed nothing)."""
    from torch.distributed.pipelining import pipeline
    ir = importlib.import_module("torch.distributed.pipelining._IR")
    sink, dce = ir._sink_params, torch.fx.Graph.eliminate_dead_code
    seen = {fix: [] for fix in fixes}
    state = model.state_dict(keep_vars=True)

    def fixed_sink(module, inputs_to_state, *args, **kwargs):
        if "fill" in seen:
            seen["fill"].extend(f"{v}.{a}" for v, a in fill_variants(module, state))
            seen["fill"].extend(held_names_first(module, inputs_to_state))
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
    try:
        pipe = pipeline(model, mb_args=tuple(t.clone() for t in p.INPUTS), split_spec=spec)
    finally:
        ir._sink_params, torch.fx.Graph.eliminate_dead_code = sink, dce
    return pipe, seen


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
        spec = draw_split_spec(p, called_modules(p))
        result = {"split_spec": {k: v.name for k, v in list(spec.items())[:6]}}
        try:
            model = p.build()
            pipe, _ = build_pipe(p, model, spec)
            stage = "run"
            status, why = judged(p, pipe, model_names(model), eager, cache)
            result["stages"] = pipe.num_stages
        except Exception as e:  # noqa: BLE001 - torch refusing the program, or a cause below
            if UNSUPPORTED in str(e):
                return {"status": "skipped", "skip": "pipelining refuses a module object under "
                                                     "two parents (\"currently unsupported\")"}
            known = no_inputs_indexerror(e) or attribute(p, spec, eager, cache)
            if known:
                return {**result, "status": "known_torch_issue", "stage": stage,
                        "detail": f"{type(e).__name__}: {e}"[:300], "known_torch_issue": known}
            raise
        if status == "mismatch":
            known = attribute(p, spec, eager, cache)
            if known:
                return {**result, "status": "known_torch_issue", "detail": why,
                        "known_torch_issue": known}
    except Exception as e:  # noqa: BLE001 - torch refusing a program
        return failure(e, stage)
    return {**result, **verdict(status, why)}


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
                               "graph's node it takes ({}), so it is not made state")}


def attribute(p, spec, eager, cache):
    """The classes that explain a pipe that failed to build or run, or gave a wrong result:
    the pipe built again with one cause removed, then two, then all three (build_pipe's
    `fixes`), until one builds and agrees with torch eager; each removed cause must have
    changed something. A text ("class+class: causes; ..."), or None."""
    for size in range(1, len(FIXES) + 1):
        for fixes in itertools.combinations(FIXES, size):
            model = p.build()
            try:
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
    why = available()
    out = {}
    for path in PATHS:
        if path in paths:
            out[path] = {"status": "skipped", "skip": why} if why else \
                pipeline_path(p, eager, cache)
    return out
