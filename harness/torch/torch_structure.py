"""The unflattened module's names (docs/torch.md; docs/found-bugs.md 103).

torch.export.unflatten gives each module the model calls a module of its own under the model's
name for it (and `n@1`, ... to the further calls of a module whose calls differ): that is the
module a user calls alone or swaps. The unflatten paths check it beside the numbers: every
submodule name of the unflattened module, its call variants' `@N` taken off, is a name the model
holds a module under (the graphs of higher-order ops, such as a torch.cond's branches, kept as
GraphModules, aside). A module under any other name is a wrong structure even where the outputs
agree: the model's own name is then left an empty container, and swapping the module there
changes nothing. The strict path also checks that unflatten gives a module with a graph under
every name the non-strict export of the same program, unflattened, gives one (the reference:
real torch on the same program; where it cannot be made, that half is not checked).

A module under a name the model does not hold, or a graph missing under a name, is traced to
one of these causes, or both ("+"-joined), by removing it:
  unflatten-strict-source-path-module (docs/found-bugs.md 103)
      strict export (torch 2.14.1) records the module-stack path of a module whose name is no
      identifier (`0`, as `add_module("0", m)` names it) as the source expression dynamo
      followed (`getattr(L['self'], '0')`), and unflatten makes a module under that text, or
      (a path that does not extend its parent's, `getattr(L['self'].c, '1')` below `c`) drops
      it and leaves the module's ops in its parent's graph; the class when those paths read
      back as the FQNs they name (source_fqn), on a fresh copy of the program, make every name
      the model's, give a graph under each name the reference has one, and the outputs agree;
      first tried (where the path can export again) on the program exported with the paths
      read back as export records them (fqn_paths_at_export): a preserved module's call
      signature is keyed by its path, and reading the paths back afterwards is too late for it.
      The preserve path's structure is judged so too (torch_export.preserve_path); a strict
      path's failure on a program with such names is traced in torch_children (source_traced).
  unflatten-strict-export-root-name-erased (docs/found-bugs.md 104)
      strict export (torch 2.14.1) wraps the model as `_export_root` and then deletes every
      `_export_root` component from the module-stack paths and attribute targets, the model's
      own child so named too (`_export_root.layer0` recorded as `layer0`); the class when the
      program, exported again with only the wrapper's component deleted (export_root_once), has
      the right structure and agrees. Tried only where a module name of the model holds
      `_export_root` (a child so named, or one whose name holds it: torch deletes the text
      wherever it stands, `_export_rootb` recorded as `b` joined to its parent's name).
A wrong result of any strict path (wrong numbers, or an error) on a program whose module names
or state FQNs hold `_export_root` (holds_root_name) is traced in torch_children (root_traced):
the path run again inside export_root_once(); the class when it then agrees (or fails only by
known classes, joined):
  export-strict-root-name-merges-state (docs/found-bugs.md 105)
      104's cause turns the FQN of a parameter or buffer below that child into another's
      (`n._export_root.w` into `n.w`): strict export lifts the two as one, and ep.module()
      reads and updates the other's tensor, a silent wrong result; named where the lifted FQNs
      differ from those lifted inside export_root_once (state_merged), else 104's class. (At
      the root, `_export_root.w` beside the root's `w`, export raises inside export_root_once
      too: not traced.)
A removal that makes the structure right but the outputs wrong, or unflatten raise, had hidden
another cause (class 1: the wrong names kept the calls from unflatten's deduplication; class 34,
met with torch.cond); the unflatten paths' trace on the mended programs names it, joined after.
Any other wrong structure is a mismatch at stage "structure".
"""
import contextlib
import functools
import importlib
import keyword
import re

import torch

SOURCE_PATH = "unflatten-strict-source-path-module"
EXPORT_ROOT = "unflatten-strict-export-root-name-erased"
STATE_MERGED = "export-strict-root-name-merges-state"  # docs/found-bugs.md 105 (104's cause)
ROOT_NAME = "_export_root"  # strict export's name for its wrapper of the model
# Modules torch makes itself, at the root: export's shape guards (`ep.module()`'s and, on the
# dynamic paths, the unflattened module's `_guards_fn`, torch 2.9 and later).
TORCH_MADE = frozenset({"_guards_fn"})


def model_names(p, cache):
    """Every name a fresh model of program `p` holds a module under ('' the root)."""
    if ("model_names",) not in cache:
        cache[("model_names",)] = frozenset(
            name for name, _ in p.build().named_modules(remove_duplicate=False))
    return cache[("model_names",)]


def stray_names(u, names):
    """The submodule names of unflattened module `u` that name no module of the model (`names`),
    with or without the call variants' `@N`; below a torch.fx.GraphModule (a higher-order op's
    graph, not one of the model's modules) nothing is named, nor is what torch makes itself
    (TORCH_MADE)."""
    graphs, out = [], []
    for name, module in u.named_modules(remove_duplicate=False):
        if not name or name in TORCH_MADE or any(name.startswith(g + ".") for g in graphs):
            continue
        if isinstance(module, torch.fx.GraphModule):
            graphs.append(name)
            continue
        if name not in names and re.sub(r"@\d+(?=\.|$)", "", name) not in names:
            out.append(name)
    return out


def graph_names(u):
    """The names under which unflattened module `u` holds a module with a graph (an
    InterpreterModule), the insides of GraphModules (higher-order ops' graphs) aside."""
    graphs, out = [], set()
    for name, module in u.named_modules(remove_duplicate=False):
        if name in TORCH_MADE or any(name.startswith(g + ".") for g in graphs):
            continue
        if isinstance(module, torch.fx.GraphModule):
            graphs.append(name)
        elif name and hasattr(module, "graph"):
            out.add(name)
    return out


def source_fqn(path):
    """dynamo's source expression for a module of the model read back as its FQN:
    `getattr(L['self'], '0')` -> `0`, `getattr(L['self'].a, '1').b` -> `a.1.b`,
    `L['self']._modules['x']` -> `x`, `L['self'][2]` -> `2`; None for any other text (an FQN
    itself, a closure's path)."""
    if path == "L['self']":
        return ""
    for pattern in (r"getattr\((.+), '([^']+)'\)", r"(.+)\._modules\['([^']+)'\]",
                    r"(.+)\[(\d+)\]", r"(.+)\.([A-Za-z_]\w*)"):
        m = re.fullmatch(pattern, path)
        if m:
            base = source_fqn(m.group(1))
            if base is None:
                return None
            return f"{base}.{m.group(2)}" if base else m.group(2)
    return None


def source_paths(ep):
    """The module-stack paths of `ep`'s nodes that are source expressions (source_fqn reads them
    back as FQNs), sorted."""
    return sorted({path for node in ep.graph_module.graph.nodes
                   for path, _ in (node.meta.get("nn_module_stack") or {}).values()
                   if source_fqn(path) is not None and path != "L['self']"})


def with_fqn_paths(ep):
    """`ep` with each module-stack path that is a source expression replaced by its FQN (in
    place): the removal of class 103's cause (a row of torch_export.TRACES too). The number of
    paths replaced."""
    return fqn_paths_in(ep.graph_module.graph.nodes)


def fqn_paths_in(nodes):
    """Each module-stack path of `nodes` that is a source expression replaced by its FQN (in
    place); the number replaced."""
    replaced = 0
    for node in nodes:
        stack = node.meta.get("nn_module_stack")
        if not stack:
            continue
        for key, (path, kind) in list(stack.items()):
            fqn = source_fqn(path)
            if fqn is not None:
                stack[key] = (fqn, kind)
                replaced += 1
    return replaced


def read_back(ep):
    """`ep` with its source-expression paths read back as FQNs (with_fqn_paths): class 103's
    removal as the structure check and torch_export.TRACES take it."""
    with_fqn_paths(ep)
    return ep


@contextlib.contextmanager
def fqn_paths_at_export():
    """Inside, strict export reads each module-stack path that is a source expression back as
    its FQN (fqn_paths_in) as soon as torch has normalized the paths
    (torch.export._trace._normalize_nn_module_stack), before the passes that key by them: the
    removal of class 103's cause where reading back the exported program's paths comes too late
    (a preserved module's call signature recorded empty, its unflatten failing; entry 12's
    KeyError). Raises LookupError on a torch without that function."""
    try:
        trace = importlib.import_module("torch.export._trace")
        original = trace._normalize_nn_module_stack
    except (ImportError, AttributeError) as e:
        raise LookupError(f"no module-stack normalization to extend here: {e}") from e

    def normalize(gm, *args, **kwargs):
        out = original(gm, *args, **kwargs)
        fqn_paths_in(n for g in gm.modules() if isinstance(g, torch.fx.GraphModule)
                     for n in g.graph.nodes)
        return out
    trace._normalize_nn_module_stack = normalize
    try:
        yield
    finally:
        trace._normalize_nn_module_stack = original


@functools.lru_cache(maxsize=None)
def records_source_paths():
    """Whether this torch's strict export records a module-stack path as dynamo's source
    expression (torch 2.14.1; 2.6 reads them back as FQNs): a child named `0` exported, once."""
    class Leaf(torch.nn.Module):
        def forward(self, x):
            return x + 1

    class Holder(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.add_module("0", Leaf())

        def forward(self, x):
            return getattr(self, "0")(x)
    try:
        ep = torch.export.export(Holder(), (torch.ones(1),), strict=True)
    except Exception:  # noqa: BLE001 - no strict export here: nothing it records
        return False
    return bool(source_paths(ep))


def holds_source_name(p):
    """Whether a module name of a fresh model of program `p` has a component that is no Python
    identifier (`0`, `a-b`, a keyword): strict export may record its path as a source
    expression (class 103)."""
    return any(not c.isidentifier() or keyword.iskeyword(c)
               for name, _ in p.build().named_modules(remove_duplicate=False) if name
               for c in name.split("."))


@contextlib.contextmanager
def export_root_once():
    """Inside, strict export deletes its root wrapper's `_export_root` component from a module
    path, key or target once, the first of torch's patterns that matches, not every component so
    named (torch._dynamo.functional_export.clean_export_root_string; torch 2.14.1): the removal
    of class 104's cause. Raises LookupError on a torch without that function."""
    try:
        export = importlib.import_module("torch._dynamo.functional_export")
        patterns, original = export.EXPORT_ROOT_REPLACEMENTS, export.clean_export_root_string
    except (ImportError, AttributeError) as e:
        raise LookupError(f"no export root cleaning to change here: {e}") from e

    def once(text):
        for pattern, replacement in patterns:
            if pattern in text:
                return text.replace(pattern, replacement, 1)
        return text
    export.clean_export_root_string = once
    try:
        yield
    finally:
        export.clean_export_root_string = original


def holds_root_name(p):
    """Whether a module name or state FQN of a fresh model of program `p` holds strict export's
    wrapper name `_export_root` (as a component, or inside one: torch's cleaning replaces the
    text `_export_root.`, `._export_root` and `__export_root_` wherever it stands, so
    `n._export_rootb` is recorded as `nb` and `a__export_root_b` as `a_b`)."""
    model = p.build()
    return any(ROOT_NAME in name for name, _ in model.named_modules(remove_duplicate=False)) or \
        any(ROOT_NAME in fqn for fqn, _ in model.named_parameters(remove_duplicate=False)) or \
        any(ROOT_NAME in fqn for fqn, _ in model.named_buffers(remove_duplicate=False))


def lifted_state(p):
    """The parameter and buffer FQNs that strict export of a fresh model of program `p` lifts
    into its graph's inputs (its graph signature's), each list sorted."""
    ep = torch.export.export(p.build(), tuple(t.clone() for t in p.INPUTS), strict=True)
    return sorted(ep.graph_signature.parameters), sorted(ep.graph_signature.buffers)


def state_merged(p):
    """Whether strict export of program `p` lifts other parameter and buffer FQNs than it does
    inside export_root_once() (class 105's symptom: torch's cleaning turned the FQN of state
    below a child named `_export_root` into another's, and the two became one; or export raised
    where, so cleaned, it does not). Raises what the export inside export_root_once raises."""
    with export_root_once():
        once = lifted_state(p)
    try:
        return lifted_state(p) != once
    except Exception:  # noqa: BLE001 - export raises as torch cleans, not as cleaned once
        return True


def judged(u, p, fresh, agrees, cache, reference=None, reexport=None, trace=None, also=()):
    """None where unflattened module `u` names only the model's modules and, given `reference()`
    (the reference's unflattened module), has a graph under each name that has one; else the
    path's result: the class (or both, joined) whose cause removed makes both hold and
    `agrees(module)` hold, a mismatch at stage "structure" otherwise. 103's removal acts on
    `reexport(fqn_paths_at_export)`, then on `fresh()` (a new copy of the program); 104's, where
    the model names a child `_export_root`, on `reexport(export_root_once)` (the program
    exported again inside that context). Where a removal makes
    the structure right but the outputs wrong, or unflatten raise, the cause had hidden another
    (a module under the wrong name escapes unflatten's deduplication, class 1; class 34 with
    torch.cond): `trace(make)`, the unflatten paths' trace on the programs `make()` gives, names
    it, joined after. `also`, (class, make) pairs, are a path's own removals, tried after
    these (the hooked paths' wrappers put on the modules' classes: docs/found-bugs.md 29, 30)."""
    names = model_names(p, cache)
    want = set()
    if reference is not None:
        try:
            want = graph_names(reference())
        except Exception:  # noqa: BLE001, S110 - no reference: the names alone are checked
            pass

    def wrong(module):
        stray = stray_names(module, names)
        missing = sorted(want - graph_names(module))
        return ([f"unflatten made modules under names the model does not hold: {stray[:4]}"]
                if stray else []) + \
            ([f"unflatten gave no graph under {missing[:4]}, where the non-strict export's "
              "unflattened module has one"] if missing else [])
    found = wrong(u)
    if not found:
        return None
    detail = "; ".join(found)
    removals = []
    if source_paths(fresh()):
        if reexport is not None:  # read back as export records them: afterwards comes too
            # late for a preserved module's call signature (keyed by the path)
            removals.append((SOURCE_PATH, lambda: reexport(fqn_paths_at_export)))
        removals.append((SOURCE_PATH, lambda: read_back(fresh())))
    if reexport is not None and any(ROOT_NAME in n for n in names):
        removals += [(EXPORT_ROOT, lambda: reexport(export_root_once)),
                     (f"{SOURCE_PATH}+{EXPORT_ROOT}",
                      lambda: read_back(reexport(export_root_once)))]
    for cls, make in removals + list(also):
        try:
            try:
                mended = torch.export.unflatten(make())
            except Exception:  # noqa: BLE001 - another cause's crash, met once the names are
                mended = None  # right (class 34 with torch.cond): the trace names it
            if mended is not None and wrong(mended):
                continue
            right = mended is not None and agrees(mended)  # once: the calls update the state
            other = None if right or trace is None else trace(make)
            if right or other:
                return {"status": "known_torch_issue",
                        "known_torch_issue": f"{cls}+{other}" if other else cls,
                        "stage": "structure", "detail": detail}
        except Exception:  # noqa: BLE001, S112 - then not this cause: the next, or the mismatch
            continue
    return {"status": "mismatch", "stage": "structure", "first_mismatch": detail}
