"""The bridge's torch.export paths (docs/torch.md), torch >= 2.5:

  export.<mode>.module     torch.export.export(model, inputs, strict=<mode>), then ep.module()
  export.<mode>.unflatten  the same program through torch.export.save / load, then
                           torch.export.unflatten (call variants n, n@1 sharing state)

for mode in strict, nonstrict. Each runs CONFIG["calls"] calls on fresh input copies; outputs
and final state (every FQN the module holds, variants mapped to their base) must equal torch
eager's bit for bit (torch_compare.judge). When the unflatten path differs, the note says
whether unflatten without save/load differs too, to localize the fault.

A mismatch or an exception of an unflatten path is traced before it is reported: unflatten is
run again with one cause of docs/found-bugs.md removed at a time (TRACES: call_module targets
compared in the dedup; nn_module_stack keys that name module paths instead of module objects;
children not reordered; a call variant keeping its module's children), then in pairs, threes and
all four; when such a run agrees with eager, the path is `known_torch_issue` of that
class, otherwise a `mismatch` (or an `error`). An exception that no trace removes is an `error`
unless it matches a row of KNOWN_ERRORS (torch bugs found and documented, by their message) or
SKIPS (documented limitations, counted as skipped).
"""
import contextlib
import copy
import io
import itertools
import re
import sys

import torch

from torch_compare import judge, run_calls, tensors_of

MODES = ("strict", "nonstrict")
KINDS = ("module", "unflatten")
PATHS = tuple(f"export.{m}.{k}" for m in MODES for k in KINDS)

# (pattern on "ExceptionType: message", skip class, reason). Each row is a documented torch
# limitation (docs/torch.md, "Skip classes"); anything else is an error the triage looks at.
SKIPS = []
# (pattern, class): torch crashes the campaign found that no trace attributes to a cause; each is
# in docs/found-bugs.md with its case. (None today: every crash found so far is traced.)
KNOWN_ERRORS = []


def available():
    """None when torch has export, save/load and unflatten; else the reason it has not."""
    export = getattr(torch, "export", None)
    if export is None or not all(hasattr(export, f) for f in ("export", "save", "load",
                                                             "unflatten")):
        return f"torch {torch.__version__} has no torch.export with unflatten (needs >= 2.5)"
    return None


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
    """A copy of `ep` whose nn_module_stack keys name module paths. Strict export keys a module
    by the object (`L__self___a` for every name of an aliased module), and unflatten takes the
    key for the module's identity."""
    ep = copy.deepcopy(ep)
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
def variant_keeps_children():
    """unflatten with a call variant's frame keeping the children its module already has. The
    frame of a later call of a module takes the first call's children
    (`self.module._modules = base_module_frame.module._modules`); when the module was first made
    as the prefix of a dotted call (`c.w` called from the parent before any plain call `c`
    survives), the child that call attached is dropped."""
    cls = sys.modules["torch.export.unflatten"].InterpreterModule
    had_own = "__setattr__" in cls.__dict__
    original = cls.__setattr__

    def keep_children(self, name, value):
        own = self.__dict__.get("_modules")
        if name == "_modules" and isinstance(value, dict) and own and value is not own:
            for child, module in own.items():
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


# (class, prepares the program, context for unflatten): one cause of docs/found-bugs.md removed.
TRACES = [
    ("unflatten-dedup-ignores-call-targets", lambda ep: ep, call_targets_compared),
    ("unflatten-strict-keys-name-module-objects", keyed_by_path, contextlib.nullcontext),
    ("unflatten-reorder-keyerror", lambda ep: ep, children_not_reordered),
    ("unflatten-variant-drops-children", lambda ep: ep, variant_keeps_children),
]


def trace_unflatten(p, loaded, eager, cache):
    """The classes of docs/found-bugs.md (joined by '+') whose causes, removed, make unflatten
    agree with eager on this program: single causes first, then pairs, then threes, then all; None
    when no combination does."""
    def agrees(chosen):
        try:
            prepared = loaded
            with contextlib.ExitStack() as stack:
                for _, prepare, context in chosen:
                    prepared = prepare(prepared)
                    stack.enter_context(context())
                u = torch.export.unflatten(prepared)
            status, _ = judge(p, run_calls(u, p), state_after(u), eager, cache)
            return status != "mismatch"
        except Exception:  # noqa: BLE001 - then not (only) these causes
            return False

    for size in range(1, len(TRACES) + 1):
        for chosen in itertools.combinations(TRACES, size):
            if agrees(chosen):
                return "+".join(cls for cls, _, _ in chosen)
    return None


def state_after(module):
    return {fqn: t.detach().clone() for fqn, t in tensors_of(module).items()}


def export_program(p, mode):
    model = p.build()
    return torch.export.export(model, tuple(t.clone() for t in p.INPUTS),
                               strict=(mode == "strict"))


def names_differ(p, ep):
    """Where non-strict export names a parameter's or buffer's placeholder otherwise than
    flatcheck's export (EXPORT_NAMES of the program, None where they cannot compare): a text,
    or None when they agree. Strict export is not compared: torch 2.6 names its placeholders
    from dynamo's attribute names there (p_l__s___a_w, suffixes _0 for collisions)."""
    want = getattr(p, "EXPORT_NAMES", None)
    if want is None:
        return None
    got = {s.target: s.arg.name for s in ep.graph_signature.input_specs
           if s.kind.name in ("PARAMETER", "BUFFER")}
    diff = sorted(f for f in set(want) | set(got) if want.get(f) != got.get(f))
    if not diff:
        return None
    return "placeholder names differ from flatcheck's export: " + "; ".join(
        f"{f}: flatcheck {want.get(f)}, torch {got.get(f)}" for f in diff[:6])


def run_one(p, eager, mode, kinds, cache):
    """The export paths of one mode: a result dict per requested kind."""
    results = {}
    stage = "export"
    try:
        ep = export_program(p, mode)
        naming = names_differ(p, ep) if mode == "nonstrict" else None
        stage = "save"
        saved = io.BytesIO()
        torch.export.save(ep, saved)  # before anything runs: the state is the case's
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
            saved.seek(0)
            loaded = torch.export.load(saved)
            results["unflatten"] = unflatten_path(p, mode, loaded, eager, cache)
    except Exception as e:  # noqa: BLE001 - torch refusing or crashing on a program
        skip = classify(e)
        for kind in kinds:
            if kind in results:
                continue
            if skip and skip[0] == "skipped":
                results[kind] = {"status": "skipped", "skip": skip[1]}
            elif skip:
                results[kind] = {"status": "known_torch_issue", "known_torch_issue": skip[1],
                                 "stage": stage, "detail": f"{type(e).__name__}: {e}"[:300]}
            else:
                results[kind] = {"status": "error", "stage": stage,
                                 "first_mismatch": f"{type(e).__name__}: {e}"[:600]}
    return results


def unflatten_path(p, mode, loaded, eager, cache):
    """unflatten of the loaded program, the calls, the verdict; a mismatch or an exception is
    traced to a cause of docs/found-bugs.md when one explains it."""
    try:
        u = torch.export.unflatten(loaded)
        status, why = judge(p, run_calls(u, p), state_after(u), eager, cache)
    except Exception as e:  # noqa: BLE001
        cls = trace_unflatten(p, loaded, eager, cache)
        if cls:
            return {"status": "known_torch_issue", "known_torch_issue": cls, "stage": "unflatten",
                    "detail": f"{type(e).__name__}: {e}"[:300]}
        raise
    r = verdict(status, why)
    if status == "mismatch":
        cls = trace_unflatten(p, loaded, eager, cache)
        if cls:
            return {"status": "known_torch_issue", "known_torch_issue": cls, "detail": why,
                    "variants": variants(u)}
        r["without_save_load"] = unflatten_unsaved(p, mode, eager, cache)
    r["variants"] = variants(u)
    return r


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
