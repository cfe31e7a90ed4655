"""The bridge's to_folder path (docs/torch.md): torch.fx's save-as-code.

  fx.folder   the fx trace (the fx path's: buffer reads and in-place updates where the model
              makes them) written with GraphModule.to_folder (a Python package: the module's
              code, its state dict, each child module pickled) into a temporary folder,
              imported back, and the calls; outputs and state must equal torch eager's bit for
              bit

A wrong result where the imported module holds as two tensors what the traced module holds as
one (two FQNs of one shared parameter or buffer), and the same module with those tensors shared
again agrees, is the class fx-to-folder-unties-shared-state (docs/found-bugs.md 24). A
SyntaxError importing the package, where the traced module has a child whose name is not a
Python identifier (`0`), is fx-to-folder-child-name-not-identifier (torch 1.13 and 2.6: the
code says `self.0 = ...`; torch 2.14.1 writes setattr). An error building the imported module
for a state dict key it misses, where the traced module has non-persistent buffers and the same
module with them made persistent agrees, is fx-to-folder-drops-non-persistent-buffer
(docs/found-bugs.md 108: the package registers every buffer as a persistent one and loads the
state dict, which leaves the non-persistent ones out; torch 2.14.1, whose symbolic_trace keeps a
buffer non-persistent).
"""
import importlib.util
import itertools
import os
import shutil
import sys
import tempfile
import warnings

import torch

from torch_compare import judge, run_calls, tensors_of
from torch_export import failure, state_after, verdict
from torch_fx import trace
from torch_partition import attr_of, storage_of

PATHS = ("fx.folder",)
UNTIED = "fx-to-folder-unties-shared-state"
# torch 1.13 and 2.6 (not 2.14.1): a child whose name is not an identifier is written as an
# attribute assignment, which does not parse.
NAME = "fx-to-folder-child-name-not-identifier"
DROPPED = "fx-to-folder-drops-non-persistent-buffer"  # docs/found-bugs.md 108
_count = itertools.count()


def written(gm, work):
    """The class of the package gm.to_folder writes into a new folder below `work`, imported."""
    name = f"flatcheck_folder_{os.getpid()}_{next(_count)}"
    with warnings.catch_warnings():  # it warns of each child it pickles
        warnings.simplefilter("ignore")
        gm.to_folder(os.path.join(work, name), "FlatcheckFolder")
    return import_folder(os.path.join(work, name), name, cls="FlatcheckFolder")


def non_persistent(module):
    """The FQNs of the module's non-persistent buffers."""
    return [f"{prefix}.{b}" if prefix else b for prefix, m in module.named_modules()
            for b in sorted(m._non_persistent_buffers_set)]


def dropped_buffers(p, gm, work, eager, cache, e):
    """The known-issue result when `e`, building the imported module, is DROPPED's: a state
    dict key missing, the traced module has non-persistent buffers, and with them made
    persistent (a fresh trace) the package builds and agrees, or agrees once the tensors it
    unties are shared again (UNTIED's cause removed too: the class is then both); else None."""
    names = non_persistent(gm)
    if not names or "Missing key(s) in state_dict" not in str(e):
        return None
    again = trace(p)
    for _, m in again.named_modules():
        m._non_persistent_buffers_set.clear()
    cls = DROPPED
    try:
        built = written(again, work)
        module = built()
        if judge(p, run_calls(module, p), state_after(module), eager, cache)[0] == "mismatch":
            split = untied(shared_groups(again), module)
            module = built()
            for g in split:
                tie(module, g)
            if not split or judge(p, run_calls(module, p), state_after(module), eager,
                                  cache)[0] == "mismatch":
                return None
            cls = f"{DROPPED}+{UNTIED}"
    except Exception:  # noqa: BLE001 - then not (only) this cause
        return None
    return {"status": "known_torch_issue", "stage": "import", "detail": str(e).strip()[:300],
            "known_torch_issue": f"{cls}: the package's state dict leaves out the "
                                 f"non-persistent buffers {', '.join(names[:4])}; made "
                                 "persistent, it agrees"}


def import_folder(folder, name, cls):
    """The class `cls` of the package to_folder wrote into `folder`, imported as `name`."""
    spec = importlib.util.spec_from_file_location(name, os.path.join(folder, "__init__.py"),
                                                  submodule_search_locations=[folder])
    package = importlib.util.module_from_spec(spec)
    sys.modules[name] = package
    try:
        spec.loader.exec_module(package)
        return getattr(package, cls)
    finally:
        for key in [k for k in sys.modules if k == name or k.startswith(name + ".")]:
            del sys.modules[key]


def shared_groups(module):
    """The FQNs of each tensor held under more than one name: a list of lists."""
    groups = {}
    for fqn, t in tensors_of(module).items():
        groups.setdefault(storage_of(t), []).append(fqn)
    return [names for names in groups.values() if len(names) > 1]


def untied(groups, module):
    """The groups whose names `module` holds as more than one tensor."""
    held = tensors_of(module)
    return [g for g in groups if len({storage_of(held[n]) for n in g if n in held}) > 1]


def tie(module, group):
    """Puts the tensor at the group's first FQN under every other FQN of the group."""
    tensor = attr_of(module, group[0])
    for fqn in group[1:]:
        owner, _, attr = fqn.rpartition(".")
        holder = module.get_submodule(owner) if owner else module
        table = holder._parameters if attr in holder._parameters else holder._buffers
        table[attr] = tensor


def folder_path(p, eager, cache):
    stage = "trace"
    work = tempfile.mkdtemp(prefix="flatcheck-folder-")
    try:
        gm = trace(p)
        groups = shared_groups(gm)
        stage = "to_folder"
        try:
            cls = written(gm, work)
        except SyntaxError as e:
            stage = "import"
            bad = [c for c, _ in gm.named_children() if not c.isidentifier()]
            if bad:
                return {"status": "known_torch_issue", "stage": stage, "detail": str(e),
                        "known_torch_issue": f"{NAME}: to_folder writes self.{bad[0]} = ... for "
                                             f"the child {bad[0]!r}, not a Python name"}
            raise
        stage = "import"
        try:
            module = cls()
        except RuntimeError as e:
            known = dropped_buffers(p, gm, work, eager, cache, e)
            if known:
                return known
            raise
        stage = "run"
        status, why = judge(p, run_calls(module, p), state_after(module), eager, cache)
        split = untied(groups, module)
        result = {"untied": split[:4]} if split else {}
        if status == "mismatch" and split:
            again = cls()
            for g in split:
                tie(again, g)
            if judge(p, run_calls(again, p), state_after(again), eager, cache)[0] != "mismatch":
                names = "; ".join(" = ".join(g) for g in split[:3])
                return {**result, "status": "known_torch_issue", "detail": why,
                        "known_torch_issue": f"{UNTIED}: the imported module holds {names} as "
                                             "separate tensors; shared again, it agrees"}
    except Exception as e:  # noqa: BLE001 - torch refusing a program
        return failure(e, stage)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return {**result, **verdict(status, why)}


def run_folder(p, eager, paths, cache):
    """The to_folder path of one program, when asked for: {path: result}."""
    return {path: folder_path(p, eager, cache) for path in PATHS if path in paths}
