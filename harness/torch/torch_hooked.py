"""The bridge's hooked export path (docs/torch.md), torch >= 2.5:

  export.nonstrict.hooked  each module the model calls, with probability 1/2, gets its forward
             replaced by a wrapper bound to the module object, as library hooks and
             pipelining's split points do (`m.forward = MethodType(wrapper, m)`, the wrapper
             calling the original bound forward; the result is unchanged); then
             torch.export.export (non-strict), torch.export.unflatten, CONFIG["calls"] calls;
             outputs and state must equal torch eager's bit for bit

The hooked modules are drawn per program (one at least), seeded by the called modules' names
and the program's ops, so a program gets one draw on any machine; a program that calls no
module is skipped. The bridge's --draw fixes the modules instead (PINNED), for shrinking.

A failure (an exception, or a wrong result) is traced. When the same wrappers put on the
modules' classes instead (forward_by_class: through the class, the tracer's proxy of a module
is its `self`) change the module stacks export records, and with them unflatten agrees (alone,
or with a cause of the unflatten paths removed too: torch_export.trace_unflatten), the path is
`known_torch_issue` export-bound-forward-module-stack (docs/found-bugs.md 29): with a module
held under two names, export's non-strict tracer names the children of a module whose
forward runs with the module itself as `self` by their bare attribute names. Other failures are
traced as the unflatten paths' are.
"""
import functools
import random
import zlib
from types import MethodType

import torch

from torch_compare import judge, run_calls
from torch_export import available, failure, state_after, trace_unflatten, verdict

PATHS = ("export.nonstrict.hooked",)
BOUND = "export-bound-forward-module-stack"
PINNED = None  # the modules to hook instead of a draw (the bridge's --draw)


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


def forward_bound(module, around):
    """Replaces `module`'s forward by a wrapper bound to the module object: the wrapper calls
    `around(forward, *args, **kwargs)` with the module's original bound forward."""
    original = module.forward
    module.forward = MethodType(lambda self, *args, **kwargs: around(original, *args, **kwargs),
                                module)


def forward_by_class(module, around):
    """The same wrapper found through the module's class: the module gets a subclass of its
    class (same names) whose forward calls `around(forward, *args, **kwargs)` with the class's
    forward bound to `self`, whatever object `self` is (a tracer's proxy of the module)."""
    base = type(module)

    def forward(self, *args, **kwargs):
        return around(functools.partial(base.forward, self), *args, **kwargs)

    module.__class__ = type(base.__name__, (base,), {
        "forward": forward, "__qualname__": base.__qualname__, "__module__": base.__module__})


def passthrough(forward, *args, **kwargs):
    return forward(*args, **kwargs)


def draw_hooked(p, called):
    """The called modules to hook: each with probability 1/2 (one at least, when the program
    calls any), seeded by their names and the program's ops."""
    rng = random.Random(zlib.crc32(repr(("hooked", called, list(p.OPS))).encode()))
    chosen = [fqn for fqn in called if rng.random() < 0.5]
    return chosen or [rng.choice(called)] if called else []


def module_stacks(ep):
    """The module paths export recorded for each node of `ep`'s graph."""
    return [(n.name, tuple(path for path, _ in (n.meta.get("nn_module_stack") or {}).values()))
            for n in ep.graph.nodes]


def hooked_export(p, fqns, by_class=False):
    """A fresh model of `p` with the modules `fqns` hooked (bound wrappers, or `by_class`),
    exported non-strict."""
    model = p.build()
    for fqn in fqns:
        (forward_by_class if by_class else forward_bound)(model.get_submodule(fqn), passthrough)
    return torch.export.export(model, tuple(t.clone() for t in p.INPUTS), strict=False)


def unflatten_agrees(p, ep, eager, cache):
    try:
        u = torch.export.unflatten(ep)
        return judge(p, run_calls(u, p), state_after(u), eager, cache)[0] != "mismatch"
    except Exception:  # noqa: BLE001 - not (only) this cause
        return False


def trace_hooked(p, fqns, eager, cache):
    """The classes that explain a failure of the hooked path, or None: class 29 when the
    wrappers put on the classes change the module stacks and make unflatten agree (with another
    traced cause removed too, if need be); else the unflatten paths' trace."""
    if module_stacks(hooked_export(p, fqns)) != module_stacks(hooked_export(p, fqns, True)):
        if unflatten_agrees(p, hooked_export(p, fqns, True), eager, cache):
            return f"{BOUND}: with the wrappers on the modules' classes, the module stacks " \
                   "export records change and unflatten agrees"
        other = trace_unflatten(p, lambda: hooked_export(p, fqns, True), eager, cache)
        return f"{BOUND}+{other}" if other else None
    return trace_unflatten(p, lambda: hooked_export(p, fqns), eager, cache)


def hooked_path(p, eager, cache):
    stage = "draw"
    try:
        fqns = PINNED if PINNED is not None else draw_hooked(p, called_modules(p))
        if not fqns:
            return {"status": "skipped", "skip": "the program calls no module to hook"}
        result = {"hooked": fqns}
        stage = "export"
        ep = hooked_export(p, fqns)
        stage = "unflatten"
        u = torch.export.unflatten(ep)
        stage = "run"
        status, why = judge(p, run_calls(u, p), state_after(u), eager, cache)
        if status != "mismatch":
            return {**result, **verdict(status, why)}
        error = None
    except Exception as e:  # noqa: BLE001 - torch refusing the program, or a cause below
        if stage in ("draw", "export"):
            return failure(e, stage)
        error, why = e, f"{type(e).__name__}: {e}"
    known = trace_hooked(p, fqns, eager, cache)
    if known:
        return {**result, "status": "known_torch_issue", "stage": stage, "detail": why[:300],
                "known_torch_issue": known}
    return {**result, **(verdict(status, why) if error is None else failure(error, stage))}


def run_hooked(p, eager, paths, cache):
    """The hooked path of one program, when asked for: {path: result}."""
    why = available()
    out = {}
    for path in PATHS:
        if path in paths:
            out[path] = {"status": "skipped", "skip": why} if why else hooked_path(p, eager, cache)
    return out
