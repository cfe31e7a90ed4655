"""The bridge's hooked export paths (docs/torch.md), torch >= 2.5:

  export.strict.hooked, export.nonstrict.hooked
             each module the model calls, with probability 1/2, gets a hook that changes no
             result, of a kind drawn per module (KINDS): its forward replaced by a wrapper
             bound to the module object, as pipelining's split points do (`bound`:
             `m.forward = MethodType(wrapper, m)`), by a partial of a function taking the module
             with the original forward kept as an attribute, as accelerate's add_hook_to_module
             does (`partial`), or by a plain closure (`closure`), each wrapper calling the
             original bound forward; or an identity hook registered on the module (`pre_hook`:
             a forward pre-hook with keyword arguments; `hook`: a forward hook with keyword
             arguments, returning the output); or the module compiled in place
             (`compile`: Module.compile, dynamo's eager backend, so that no path needs a C++
             compiler); then torch.export.export (strict or not),
             torch.export.unflatten, CONFIG["calls"] calls; outputs and state must equal torch
             eager's bit for bit, and then the unflattened module's structure must be the
             unhooked program's (hooked_structure: the names the model holds, a graph under
             each name the unhooked program's non-strict export, unflattened, has one)

The hooked modules are drawn per program (one at least), seeded by the called modules' names
and the program's ops, and then each one's kind, seeded by the drawn names and the ops, so a
program gets one draw on any machine, the same for both paths; a program that calls no module is
skipped. The bridge's --draw fixes the modules and their kinds instead (PINNED: {FQN: kind}; a
list of FQNs hooks each `bound`), for shrinking. A result names its draw as `hooked`,
{FQN: kind}, which --draw takes as it is. Where torch's non-strict export refuses a compiled
module (torch 2.6), the draw's compiled modules are left uncompiled and the result names them as
`uncompiled` (its `hooked` the rest, which run); a draw of compiled modules alone is skipped.

A failure (an exception, or a wrong result) is traced. When the same wrappers put on the
modules' classes instead (forward_by_class: through the class, the tracer's proxy of a module
is its `self`; a compiled module left uncompiled, given that wrapper; the registered hooks kept
as they are) change the module stacks export records, and with them unflatten agrees (alone; or
with a cause of the unflatten paths removed too, torch_export.trace_unflatten, when those causes
do not explain the failure without it), the path is `known_torch_issue`:
  export-bound-forward-module-stack (non-strict; docs/found-bugs.md 29)
      with a module held under two names, export's non-strict tracer names the children of a
      module whose forward runs with the module itself as `self` by their bare attribute names
  export-strict-bound-forward-source-path (strict; 30)
      strict export (torch 2.14.1) records the path of a module reached through the wrapper's
      closure as the source expression dynamo followed (`a.forward.__func__.__closure__[1].
      cell_contents.__self__.a`), and unflatten fails on it
Other failures are traced as the unflatten paths' are. A wrong structure is traced so too: to
29 or 30 where the wrappers put on the classes mend it (torch_structure.judged, its `also`), to
103 or 104 where their removals do, else a mismatch at stage "structure".
"""
import functools
import random
import zlib
from types import MethodType

import torch

from torch_compare import judge, run_calls
from torch_export import (agreeing, available, export_program, failure, fresh_exports,
                          run_family, state_after, trace_unflatten, verdict)
import torch_structure

PATHS = ("export.strict.hooked", "export.nonstrict.hooked")
BOUND = "export-bound-forward-module-stack"  # non-strict (docs/found-bugs.md 29)
SOURCE = "export-strict-bound-forward-source-path"  # strict (docs/found-bugs.md 30)
PINNED = None  # {FQN: kind} to hook instead of a draw (the bridge's --draw)
KINDS = ("bound", "partial", "closure", "pre_hook", "hook", "compile")
# the kinds that replace what a call of the module runs (its forward; compile: its call)
REPLACING = ("bound", "partial", "closure", "compile")
# torch 2.6's non-strict export refuses a compiled module (a documented limitation: "not
# supported at the moment"); there the compiled modules are left as they are and the draw's other
# hooks run (the result's `uncompiled` names the modules left), or the path is skipped
COMPILED_REFUSED = "symbolically trace a dynamo-optimized function"
REFUSED = "this torch's non-strict export refuses a compiled module (Module.compile)"


def called_modules(p, cache=None):
    """The FQNs of the modules a fresh model of program `p` calls, in the order of their first
    calls, each module under the first name it is held under (module_calls)."""
    return list(dict.fromkeys(names[0] for names in module_calls(p, cache)))


def module_calls(p, cache=None):
    """The module calls of one forward of a fresh model of program `p`, in order, each as every
    FQN the called module is held under (forward pre-hooks on one eager call; its state is
    thrown away with the model). `cache`, the program's cache of the bridge, keeps them for the
    other drawn paths."""
    if cache is not None:
        if ("module_calls",) not in cache:
            cache[("module_calls",)] = module_calls(p)
        return cache[("module_calls",)]
    model = p.build()
    names = {}
    for fqn, m in model.named_modules(remove_duplicate=False):
        if fqn:
            names.setdefault(id(m), []).append(fqn)
    calls = []
    hooks = [m.register_forward_pre_hook(lambda mod, args: calls.append(tuple(names[id(mod)])))
             for m in model.modules() if id(m) in names]
    try:
        with torch.no_grad():
            model(*[t.clone() for t in p.INPUTS])
    finally:
        for h in hooks:
            h.remove()
    return calls


def forward_bound(module, around):
    """Replaces `module`'s forward by a wrapper bound to the module object: the wrapper calls
    `around(forward, *args, **kwargs)` with the module's original bound forward."""
    original = module.forward
    module.forward = MethodType(lambda self, *args, **kwargs: around(original, *args, **kwargs),
                                module)


def forward_partial(module, around):
    """Replaces `module`'s forward as accelerate's add_hook_to_module does: the original bound
    forward kept as the module's attribute `_old_forward`, the new forward a partial of a function
    taking the module, wrapped to look like the original (functools.update_wrapper)."""
    module._old_forward = module.forward

    def new_forward(module, *args, **kwargs):
        return around(module._old_forward, *args, **kwargs)
    module.forward = functools.update_wrapper(functools.partial(new_forward, module),
                                              module._old_forward)


def forward_closure(module, around):
    """Replaces `module`'s forward by a plain function closing over the original bound forward."""
    original = module.forward
    module.forward = lambda *args, **kwargs: around(original, *args, **kwargs)


def pre_hook(module, around):
    """Registers an identity forward pre-hook with keyword arguments on `module`."""
    module.register_forward_pre_hook(lambda m, args, kwargs: (args, kwargs), with_kwargs=True)


def post_hook(module, around):
    """Registers an identity forward hook with keyword arguments on `module`."""
    module.register_forward_hook(lambda m, args, kwargs, output: output, with_kwargs=True)


def compiled(module, around):
    """Compiles `module` in place (Module.compile: its calls run torch.compile of its bound
    _call_impl), with dynamo's eager backend."""
    module.compile(backend="eager")


HOOK = {"bound": forward_bound, "partial": forward_partial, "closure": forward_closure,
        "pre_hook": pre_hook, "hook": post_hook, "compile": compiled}


def as_hooks(fqns):
    """{FQN: kind} of a draw: `fqns` itself, or each FQN of a list `bound`."""
    return dict(fqns) if isinstance(fqns, dict) else {fqn: "bound" for fqn in fqns}


def forward_by_class(module, around):
    """The same wrapper found through the module's class: the module gets a subclass of its
    class (same names) whose forward calls `around(forward, *args, **kwargs)` with the class's
    forward bound to `self`, whatever object `self` is (a tracer's proxy of the module)."""
    base = type(module)

    def forward(self, *args, **kwargs):
        return around(functools.partial(base.forward, self), *args, **kwargs)

    module.__class__ = type(base.__name__, (base,), {
        "forward": forward, "__qualname__": base.__qualname__, "__module__": base.__module__})


def passthrough(forward, /, *args, **kwargs):
    # `forward` positional-only: a keyword argument of the module may be named "forward" too
    return forward(*args, **kwargs)


def draw_hooked(p, called):
    """The called modules to hook: each with probability 1/2 (one at least, when the program
    calls any), seeded by their names and the program's ops."""
    rng = random.Random(zlib.crc32(repr(("hooked", called, list(p.OPS))).encode()))
    chosen = [fqn for fqn in called if rng.random() < 0.5]
    return chosen or [rng.choice(called)] if called else []


def draw_kinds(p, fqns):
    """{FQN: kind} for the drawn modules `fqns`: each kind of KINDS alike, seeded by the names
    and the program's ops."""
    rng = random.Random(zlib.crc32(repr(("hook kinds", fqns, list(p.OPS))).encode()))
    return {fqn: rng.choice(KINDS) for fqn in fqns}


def module_stacks(ep):
    """The module paths export recorded for each node of `ep`'s graph."""
    return [(n.name, tuple(path for path, _ in (n.meta.get("nn_module_stack") or {}).values()))
            for n in ep.graph.nodes]


def hooked_export(p, fqns, by_class=False, strict=False):
    """A fresh model of `p` with the modules `fqns` hooked ({FQN: kind}, or a list of FQNs hooked
    `bound`; with `by_class`, each kind of REPLACING a passthrough wrapper put on the module's
    class instead), exported (non-strict, or `strict`)."""
    model = p.build()
    for fqn, kind in as_hooks(fqns).items():
        hook = forward_by_class if by_class and kind in REPLACING else HOOK[kind]
        hook(model.get_submodule(fqn), passthrough)
    return torch.export.export(model, tuple(t.clone() for t in p.INPUTS), strict=strict)


def unflatten_agrees(p, ep, eager, cache):
    try:
        u = torch.export.unflatten(ep)
        return judge(p, run_calls(u, p), state_after(u), eager, cache)[0] != "mismatch"
    except Exception:  # noqa: BLE001 - not (only) this cause
        return False


def trace_hooked(p, fqns, eager, cache, strict=False):
    """The classes that explain a failure of a hooked path, or None. Class 29 (non-strict) or 30
    (strict) only where the wrappers matter: the wrappers put on the classes change the module
    stacks, and unflatten agrees with that change alone, or the unflatten paths' trace explains
    the failure only with it. Otherwise the unflatten paths' trace of the hooked export."""
    bound, by_class = (fresh_exports(lambda c=c: hooked_export(p, fqns, c, strict))
                       for c in (False, True))
    cls = SOURCE if strict else BOUND
    moved = module_stacks(bound()) != module_stacks(by_class())
    if moved and unflatten_agrees(p, by_class(), eager, cache):
        return f"{cls}: with the wrappers on the modules' classes, the module stacks export " \
               "records change and unflatten agrees"
    other = trace_unflatten(p, bound, eager, cache)
    if other or not moved:
        return other
    other = trace_unflatten(p, by_class, eager, cache)
    return f"{cls}+{other}" if other else None


def unhooked_reference(p, cache):
    """The structure check's reference of both hooked paths: the program without wrappers,
    exported non-strict and unflattened (once per program; only its names are read)."""
    key = ("unhooked_reference",)
    if key not in cache:
        try:
            cache[key] = torch.export.unflatten(export_program(p, "nonstrict"))
        except Exception as e:  # noqa: BLE001 - kept: raised again for the other path
            cache[key] = e
    if isinstance(cache[key], Exception):
        raise cache[key]
    return cache[key]


def hooked_structure(p, fqns, u, eager, cache, strict=False):
    """None where `u`, the hooked export unflattened (its calls agreeing), names only the
    model's modules and has a graph under every name the unhooked program's non-strict export,
    unflattened, has one (a wrapper that calls the forward it replaces changes no structure);
    else the path's result (torch_structure.judged): class 103 or 104 where their causes'
    removal mends it, class 29 (non-strict) or 30 (strict) where the wrappers put on the
    modules' classes do (joined with 103 where strict export's paths must be read back too),
    a mismatch at stage "structure" otherwise."""
    cls = SOURCE if strict else BOUND

    def reexport(context):
        with context():
            return hooked_export(p, fqns, strict=strict)
    also = [(cls, lambda: hooked_export(p, fqns, True, strict))]
    if strict:
        also.append((f"{cls}+{torch_structure.SOURCE_PATH}", lambda: torch_structure.read_back(
            hooked_export(p, fqns, True, strict))))
    return torch_structure.judged(
        u, p, lambda: hooked_export(p, fqns, strict=strict), agreeing(p, eager, cache), cache,
        lambda: unhooked_reference(p, cache), reexport if strict else None,
        lambda make: trace_unflatten(p, make, eager, cache), also)


def hooked_path(p, eager, cache, strict=False):
    try:
        fqns = as_hooks(PINNED) if PINNED is not None else \
            draw_kinds(p, draw_hooked(p, called_modules(p, cache)))
    except Exception as e:  # noqa: BLE001 - the program's modules not found, or a bad --draw
        return failure(e, "draw")
    if not fqns:
        return {"status": "skipped", "skip": "the program calls no module to hook"}
    r = drawn_path(p, fqns, eager, cache, strict)
    kept = {fqn: kind for fqn, kind in fqns.items() if kind != "compile"}
    if r.get("skip") == REFUSED and kept:
        # the other hooks still run on this torch: the compiled modules left as they are
        return {**drawn_path(p, kept, eager, cache, strict),
                "uncompiled": [fqn for fqn in fqns if fqn not in kept]}
    return r


def drawn_path(p, fqns, eager, cache, strict=False):
    """One hooked path with the modules `fqns` hooked ({FQN: kind})."""
    result = {"hooked": fqns}
    stage = "export"
    try:
        ep = hooked_export(p, fqns, strict=strict)
        stage = "unflatten"
        u = torch.export.unflatten(ep)
        stage = "run"
        status, why = judge(p, run_calls(u, p), state_after(u), eager, cache)
        if status != "mismatch":  # the numbers agree: the structure too
            wrong = hooked_structure(p, fqns, u, eager, cache, strict)
            return {**result, **(wrong or verdict(status, why))}
        error = None
    except Exception as e:  # noqa: BLE001 - torch refusing the program, or a cause below
        if stage == "export" and not strict and "compile" in fqns.values() and \
                COMPILED_REFUSED in str(e):
            return {**result, "status": "skipped", "skip": REFUSED}
        if stage == "export":
            return failure(e, stage)
        error, why = e, f"{type(e).__name__}: {e}"
    known = trace_hooked(p, fqns, eager, cache, strict)
    if known:
        return {**result, "status": "known_torch_issue", "stage": stage, "detail": why[:300],
                "known_torch_issue": known}
    return {**result, **(verdict(status, why) if error is None else failure(error, stage))}


def run_hooked(p, eager, paths, cache):
    """The hooked paths of one program, when asked for: {path: result}."""
    return run_family(PATHS, paths, lambda path: hooked_path(
        p, eager, cache, strict=path == "export.strict.hooked"), available())
