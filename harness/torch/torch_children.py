"""A cause of failures that lies in the program's child module names, not in a path: a child
named as an attribute of the modules torch builds, or as a value torch names itself
(emit-torch --hostile-child-names; docs/found-bugs.md 91).

  export-child-named-as-module-attribute
      a child named `graph`, `code`, `meta` (the GraphModule of ep.module() and
      torch.fx.symbolic_trace has these), `ivals`, `adapted`, `graph_signature` (unflatten's
      UnflattenedModule), ...: the module torch builds cannot hold it, and the path fails.
      Traced when the program names children so (CHILD_NAMES) and the path, run again with
      every child under its flatcheck name, agrees with torch eager, or fails only by known
      classes (joined to this one). A path that gave a wrong result (not an error) and agrees
      so keeps its mismatch, the result saying that the names are its cause
      ("child_names_cause"): the one silent class of child names known, a child named
      `_export_root` on strict export (docs/found-bugs.md 104 and 105), is traced before this,
      by root_traced (and inside the unflatten paths' structure check, torch_structure); so is
      a module name that is no identifier on strict export (103), by source_traced: torch
      2.14.1 records its path as dynamo's source expression, and a preserved module's call
      signature comes out empty
"""
import contextlib

import torch_structure
from torch_compare import tensors_of

CHILD_ATTR = "export-child-named-as-module-attribute"


def flatcheck_names(names):
    """A CHILD_NAMES table with every child under its flatcheck name (the key's second part)."""
    return {k: k.split(".", 1)[1] for k in names}


def spelled(p):
    """{"M<i>.<flatcheck name>": Python name} of the children `p` names otherwise."""
    names = getattr(p, "CHILD_NAMES", None) or {}
    flat = flatcheck_names(names)
    return {k: v for k, v in names.items() if v != flat[k]}


def fqn_map(p):
    """{FQN with CHILD_NAMES as they are: FQN with flatcheck's names} of the model's state (two
    builds of one construction: the same order of parameters and buffers)."""
    names = p.CHILD_NAMES
    given = list(tensors_of(p.build()))
    kept = dict(names)
    try:
        names.update(flatcheck_names(names))
        flat = list(tensors_of(p.build()))
    finally:
        names.update(kept)
    if len(given) != len(flat):
        raise ValueError(f"CHILD_NAMES changes the state: {len(given)} FQNs, then {len(flat)}")
    return dict(zip(given, flat))


@contextlib.contextmanager
def children_unspelled(p, eager, cache):
    """Inside, program `p` builds its model with every child under its flatcheck name (the
    program's CHILD_NAMES changed in place: build() and the forwards read it), and `eager`'s
    state is keyed by those FQNs; `cache` (results of torch eager runs) starts empty. All
    restored after."""
    names = p.CHILD_NAMES
    rename = fqn_map(p)
    kept_names, kept_cache = dict(names), dict(cache)
    kept_eager = (eager.final, eager.initial, eager.groups)
    try:
        names.update(flatcheck_names(names))
        eager.final, eager.initial, eager.groups = (
            {rename.get(f, f): v for f, v in d.items()} for d in kept_eager)
        cache.clear()
        yield
    finally:
        names.update(kept_names)
        eager.final, eager.initial, eager.groups = kept_eager
        cache.clear()
        cache.update(kept_cache)


def mended(again, paths):
    """{path: the known classes it still fails by, or None} for the paths of `paths` that the
    run `again` ({path: result}) found agreeing, excused or failing only by known classes."""
    out = {}
    for x in paths:
        status = again.get(x, {}).get("status")
        if status in ("agree", "excused", "known_torch_issue"):
            out[x] = again[x].get("known_torch_issue") if status == "known_torch_issue" else None
    return out


def rerun_traced(failing, run, results, context, classify, why, silent=None):
    """{path: result} for the paths of `failing` that, run again inside `context()`, agree, or
    fail only by known classes (joined after): each as the class `classify()` names (asked once
    a path mended; its error, or the context's, means no path is). `why` opens the detail. With
    `silent` (a result key), a path that gave a wrong result (not an error, nor a wrong
    structure: a mismatch at stage "structure", which a cause of wrong names gives) keeps its
    mismatch, marked under that key with what mended it: a cause known to give errors and wrong
    names is no excuse for wrong numbers."""
    try:
        with context():
            fixed = mended(run(failing), failing)
        if not fixed:  # (then classify's work is not needed)
            return {}
        cls = classify()
    except Exception:  # noqa: BLE001 - no torch to change so, or no run: not this cause
        return {}
    out = {}
    for x, other in fixed.items():
        then = f"the path {f'fails only by {other}' if other else 'agrees'}"
        if silent and results[x]["status"] == "mismatch" and \
                results[x].get("stage") != "structure":
            out[x] = dict(results[x], **{silent: f"{why}, {then} ({cls})"[:500]})
            continue
        stage = {"stage": results[x]["stage"]} if results[x].get("stage") else {}
        out[x] = {"status": "known_torch_issue",
                  "known_torch_issue": "+".join([cls] + ([other] if other else [])), **stage,
                  "detail": f"{why}, {then} ({results[x].get('first_mismatch')})"[:500]}
    return out


def strict_paths(paths):
    return [x for x in paths if "strict" in x.split(".")]


def root_traced(p, failing, run, results):
    """{path: result} for the strict paths of `failing` that fail only by strict export's
    cleaning of its wrapper's name from every `_export_root` component (docs/found-bugs.md 104,
    105), where a module name or state FQN of `p`'s model holds `_export_root`
    (torch_structure.holds_root_name): each run again inside
    torch_structure.export_root_once() that agrees, or fails only by known classes (joined
    after), as 105's class where the state export lifts differs so (state_merged), else 104's."""
    strict = strict_paths(failing)
    try:
        if not strict or not torch_structure.holds_root_name(p):
            return {}
    except Exception:  # noqa: BLE001 - no model to read: not this cause
        return {}
    return rerun_traced(
        strict, run, results, torch_structure.export_root_once,
        lambda: torch_structure.STATE_MERGED if torch_structure.state_merged(p)
        else torch_structure.EXPORT_ROOT,
        f"a name holding {torch_structure.ROOT_NAME}; with strict export's cleaning of its "
        "wrapper's component only")


def source_names(p):
    """Whether `p`'s model has a module name that is no identifier and this torch's strict
    export records such a name's path as a source expression (103's cause can act)."""
    return torch_structure.holds_source_name(p) and torch_structure.records_source_paths()


def source_traced(p, failing, run, results):
    """{path: result} for the strict paths of `failing` that fail only by strict export
    recording module-stack paths as dynamo's source expressions (docs/found-bugs.md 103), where
    a module name of `p`'s model is no identifier (torch_structure.holds_source_name) and this
    torch records such paths (records_source_paths): each run again inside
    torch_structure.fqn_paths_at_export() that agrees, or fails only by known classes (joined
    after), as 103's class. A path that gave wrong numbers and so agrees keeps its mismatch,
    marked "source_path_cause": 103 is known to give wrong structure and errors, not wrong
    numbers (a wrong structure, stage "structure", is traced to it)."""
    strict = strict_paths(failing)
    try:
        if not strict or not source_names(p):
            return {}
    except Exception:  # noqa: BLE001 - no model to read: not this cause
        return {}
    return rerun_traced(
        strict, run, results, torch_structure.fqn_paths_at_export,
        lambda: torch_structure.SOURCE_PATH,
        "a module name that is no identifier; with strict export's module-stack paths read back "
        "as FQNs as it records them", silent="source_path_cause")


def traced(p, group, run, results, eager, cache):
    """`results` of the paths `group` ({path: result}) with each error traced to CHILD_ATTR where
    `p` names children otherwise and the path, run again with flatcheck's names, agrees (or
    fails only by known classes); a mismatch that so agrees is marked, not excused. First a
    strict path's failure, where `p`'s model names something `_export_root` or a name holding
    it, is traced to 104 or 105 (root_traced), then one where a module name is no identifier to
    103 (source_traced)."""
    failing = [x for x in group if results.get(x, {}).get("status") in ("mismatch", "error")]
    for trace in (root_traced, source_traced):
        found = trace(p, failing, run, results) if failing else {}
        if found:  # (a case file may name a child so without --hostile-child-names)
            results = {**results, **found}
            failing = [x for x in failing if x not in found]
    names = spelled(p) if failing else {}
    if not names:
        return results
    fixed = {}  # {path: (classes, the known classes it still fails by)}
    try:
        with children_unspelled(p, eager, cache):
            fixed = {x: [CHILD_ATTR, other] for x, other in mended(run(failing), failing).items()}
            # flatcheck's names are numbers (`0`), themselves no identifiers: a strict path may
            # fail by both causes, the second (103) removed as source_traced removes it
            rest = strict_paths([x for x in failing if x not in fixed])
            if rest and source_names(p):
                with torch_structure.fqn_paths_at_export():
                    fixed.update({x: [f"{CHILD_ATTR}+{torch_structure.SOURCE_PATH}", other]
                                  for x, other in mended(run(rest), rest).items()})
    except Exception:  # noqa: BLE001, S110 - no run to compare with: those results stand
        pass
    shown = ", ".join(f"{k} as {v}" for k, v in sorted(names.items())[:4]) + \
        (f" and {len(names) - 4} more" if len(names) > 4 else "")
    out = dict(results)
    for x, (cls, other) in fixed.items():
        read = " and the module-stack paths read back as FQNs" if "+" in cls else ""
        then = f"the path {f'fails only by {other}' if other else 'agrees'}"
        if results[x]["status"] == "mismatch":
            out[x] = dict(results[x], child_names_cause=(
                f"with flatcheck's child names (not {shown}){read} {then}"))
            continue
        out[x] = {"status": "known_torch_issue",
                  "known_torch_issue": "+".join([cls] + ([other] if other else [])),
                  "stage": results[x].get("stage"),
                  "detail": (f"children named {shown}; with flatcheck's names{read} {then} "
                             f"({results[x].get('first_mismatch')})")[:500]}
    return out
