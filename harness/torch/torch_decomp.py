"""The bridge's decomposition paths (docs/torch.md): ExportedProgram.run_decompositions(), the
step every backend that wants the core ATen opset takes after torch.export (Torch-TensorRT's
dynamo frontend among them), judged against torch eager like the other export paths.

  decomp           export, run_decompositions, save / load, unflatten
  decomp_preserve  export preserving every submodule's call signature, run_decompositions,
                   unflatten: the preserved signatures must survive the new trace

A failure of run_decompositions is attributed to its cause when one of docs/found-bugs.md
explains it (decompose), checked on the program, never read from the message alone.
"""
import collections
import contextlib
import copy
import io
import operator
import re
import types

import torch

from torch_compare import judge, run_calls
from torch_export import (ALIASED_META, GRAD_REGION, aliased_constants, classify, copies_of,
                          export_program, failure, fresh_exports, loaded_module_class,
                          grad_regions, grad_regions_placed, preserve_structure,
                          preserve_unflatten, preserved_part, region_getitems, state_after,
                          trace_unflatten, unflatten_unsaved, variants, verdict)
from torch_partition import base_of, in_place, view_of

# docs/found-bugs.md 18: run_decompositions maps a preserved signature's names to the new
# graph by each new node's provenance, and the getitem nodes of a multi-output op (split,
# chunk, unbind) carry the op's provenance, not their own: a signature naming one keeps the old
# name, which the new graph lacks (SpecViolationError) or gives to another node.
GETITEM_PROVENANCE = "decomp-preserve-getitem-provenance"
# docs/found-bugs.md 19: a preserved call's input or output that dead code elimination removes
# is gone from the new trace, and its signature still names it.
DEAD_SIGNATURE_VALUE = "decomp-preserve-dead-value"
# docs/found-bugs.md 38 (torch 2.14.1): the new trace gives a parameter's (or buffer's)
# placeholder the provenance of a node that read it (`from_node`), and when that node is a dead
# value a preserved signature names, the signature is renamed to the placeholder.
DEAD_RENAMED = "decomp-dead-value-renamed-to-placeholder"
# docs/found-bugs.md 113: run_decompositions keeps a dead signature value's old name (19's
# mechanism), and the new trace, whose names are numbered anew (an in-place op traced as its
# functional form, `add_` as `add`, moves every later `add_<k>`), gives that name to another
# node: the verifier passes, and unflatten takes that node for the value (a preserved module
# returning another value, or `Could not find output node`).
NAME_REUSED = "decomp-dead-value-name-reused"
# docs/found-bugs.md 42: a preserved call's input or output that a torch.no_grad() block
# computes (a getitem of its wrap_with_set_grad_enabled node): the new trace inlines the block,
# no new node has the getitem's provenance, and the signature still names it.
GRAD_REGION_VALUE = "decomp-preserve-grad-region-value"
# A buffer the program updates in place that shares its storage with another state name:
# run_decompositions refuses the duplicated mutated input (pytorch/pytorch#166572, open).
TIED_MUTATED = "decomp-tied-mutated-buffer"
# run_decompositions of a preserved call whose input or output is an in-place update's result
# (the buffer as updated): docs/found-bugs.md 57.
UPDATED_VALUE = "decomp-preserve-updated-value"
# run_decompositions of a preserved call whose input or output is a view of a buffer or
# parameter that the graph updates in place after it: docs/found-bugs.md 58.
VIEW_UPDATED = "decomp-preserve-view-of-updated-state"
# docs/found-bugs.md 67: strict export names the placeholder of a buffer registered under two
# names after one of them and records the other as its target (torch/export/_trace.py's
# _get_param_buffer_mapping keeps a buffer's last name; 2.6 a parameter's too);
# run_decompositions names the new placeholder after the target, and a preserved call
# signature that takes the buffer still names the old one.
TIED_STATE_INPUT = "decomp-preserve-tied-state-input"
# docs/found-bugs.md 69: strict export names the placeholder of a buffer or parameter of a
# module whose name is no identifier (`0`, as nn.Sequential names its children) after dynamo's
# source expression (`b_getattr_l__self_____0___buf`), not after its target (`b_0_buf`);
# run_decompositions names the new placeholder after the target, and a preserved call
# signature that takes the state still names the old one.
SOURCE_NAMED_STATE = "decomp-preserve-strict-source-named-state"
# torch/_export/utils.py's placeholder_prefixes, by InputKind name
STATE_PREFIXES = {"PARAMETER": "p_", "BUFFER": "b_", "CONSTANT_TENSOR": "c_"}


class DecompositionFailed(Exception):
    """run_decompositions raised `error` for a cause `cls` (classes joined by '+'), or (`error`
    a text) returned a program that cause makes wrong."""
    def __init__(self, cls, error):
        super().__init__(error if isinstance(error, str) else f"{type(error).__name__}: {error}")
        self.cls = cls


@contextlib.contextmanager
def getitems_keep_provenance(old_gm):
    """run_decompositions with the cause of GETITEM_PROVENANCE removed: while it maps the
    preserved signatures' names, each new getitem of a node traced from an old node `n` also
    names the old getitem of `n` with the same index as its source. `old_gm` is the graph
    module of the program being decomposed (torch 2.6 does not pass it to the mapping)."""
    from torch.export import exported_program as module

    original = module._get_updated_module_call_graph

    def mapped(*args):
        gm = args[2] if len(args) == 5 else args[0]  # torch >= 2.7 passes the old graph first
        old = {(n.args[0].name, n.args[1]): n.name for n in old_gm.graph.nodes
               if n.op == "call_function" and n.target is operator.getitem
               and isinstance(n.args[0], torch.fx.Node)}
        saved = {}
        for n in gm.graph.nodes:
            if n.op != "call_function" or n.target is not operator.getitem or \
                    not isinstance(n.args[0], torch.fx.Node):
                continue
            source = n.args[0].meta.get("from_node")
            name = old.get((source[-1].name, n.args[1])) if source else None
            if name:
                saved[n] = n.meta.get("from_node")
                n.meta["from_node"] = list(saved[n] or []) + [types.SimpleNamespace(name=name)]
        try:
            return original(*args)
        finally:
            for n, history in saved.items():
                n.meta["from_node"] = history
    module._get_updated_module_call_graph = mapped
    try:
        yield
    finally:
        module._get_updated_module_call_graph = original


def fixed_decomposition(ep):
    """ep.run_decompositions() with the GETITEM_PROVENANCE cause removed."""
    with getitems_keep_provenance(ep.graph_module):
        return ep.run_decompositions()


def decompose(ep):
    """(the decomposed program, None, None), or (it, GETITEM_PROVENANCE, what torch raised)
    when run_decompositions fails and succeeds once that cause is removed (the path goes on
    with it, so what the program gets wrong past the bug is still seen). Raises
    DecompositionFailed when another known cause explains the failure, or when it succeeds
    with a dead signature value renamed to a placeholder (DEAD_RENAMED), else what
    run_decompositions raised."""
    try:
        dec = ep.run_decompositions()
    except Exception as e:  # noqa: BLE001
        error = e
    else:
        renamed = dead_values_renamed(ep, dec)
        if renamed:
            raise DecompositionFailed(renamed[0], "run_decompositions succeeded, but " +
                                      renamed[1])
        return dec, None, None
    refused = mutated_constant_refusal(ep, error)
    if refused:
        raise refused from error
    dead = dead_nodes(ep.graph_module)
    # first: these need no second decomposition
    named = missing_signature_value(ep, error, dead)
    if named:
        raise DecompositionFailed(named, error) from error
    try:
        return fixed_decomposition(ep), GETITEM_PROVENANCE, f"{type(error).__name__}: {error}"
    except Exception as e:  # noqa: BLE001
        still = e
    cls = decomposition_cause(ep, still, dead)
    if cls:
        raise DecompositionFailed(cls, error) from error
    raise error


def mutated_constants(ep):
    """The lifted tensor constants (CONSTANT_TENSOR inputs) of `ep` that an in-place op of its
    graph writes, by target."""
    constants = ep.graph_signature.inputs_to_lifted_tensor_constants  # placeholder -> target
    return sorted({constants[n.args[0].name] for n in ep.graph.nodes
                   if in_place(n) and getattr(n.args[0], "name", None) in constants})


def mutated_constant_refusal(ep, error):
    """torch's documented refusal of a tensor constant that the forward updates in place, in the
    words torch 2.14.1 uses (`Constant k is mutated in the forward method`, a documented skip),
    where run_decompositions of `ep` raised `error` some other way and `ep` updates a lifted
    constant: torch 2.6 refuses the same program with an AOTAutograd assertion (`expected to
    have an entirely functional graph`, an update from numbers alone) or functionalization's
    INTERNAL ASSERT (`mutating a non-functional tensor with a functional tensor`, an update from
    a traced value). None where `ep` updates no constant or `error` already says so."""
    mutated = mutated_constants(ep)
    if not mutated or (classify(error) or ("",))[0] == "skipped":
        return None
    first = (str(error).splitlines() or [""])[0][:200]
    return RuntimeError(f"Constant {mutated[0]} is mutated in the forward method (torch "
                        f"{torch.__version__}'s run_decompositions raised "
                        f"{type(error).__name__}: {first})")


def decomposition_cause(ep, still, dead):
    """The classes of a run_decompositions failure on `ep` that decompose() did not explain
    by one missing signature value alone (missing_signature_value): `still` is what it raised
    with GETITEM_PROVENANCE's cause removed, `dead` the exported graph's dead nodes
    (dead_nodes). None when no known cause explains it.
      DEAD_SIGNATURE_VALUE  the error names a preserved call's input or output (of
                            ep.module_call_graph) that torch.fx's dead code elimination
                            removes from the exported graph
      GRAD_REGION_VALUE     the error names a preserved call's input or output that a
                            torch.no_grad() block of the exported graph computes
      UPDATED_VALUE         the error names a preserved call's input or output that is an
                            in-place op's result
      VIEW_UPDATED          the error names a preserved call's input or output that is a view
                            of a buffer or parameter an in-place op writes after it
      TIED_MUTATED          an in-place op of the graph writes a buffer whose storage another
                            state name shares, and run_decompositions succeeds once every
                            state tensor has storage of its own, or fails there naming one of
                            the values above (the two classes joined)"""
    named = missing_signature_value(ep, still, dead)
    if named:
        return f"{GETITEM_PROVENANCE}+{named}"
    if tied_buffer_updated(ep):
        untied = untied_copy(ep)
        for fix, cls in ((lambda x: x.run_decompositions(), TIED_MUTATED),
                         (fixed_decomposition, f"{GETITEM_PROVENANCE}+{TIED_MUTATED}")):
            try:
                fix(untied)
                return cls
            except Exception as e:  # noqa: BLE001 - not (only) this cause
                if (classify(e) or ("",))[0] == "skipped":
                    # untied, torch refuses the program as documented (a plain tensor attribute
                    # the forward updates: decomp-mutated-constant); as exported, where that
                    # constant shares a buffer's tensor, it raised an error that says less
                    raise type(e)(f"{e} (as exported, where a constant shares another state "
                                  f"name's tensor: {type(still).__name__}: {still})"[:500]) \
                        from None
                named = missing_signature_value(untied, e, dead)
                if named:
                    return f"{cls}+{named}"
    return None


def dead_values_renamed(ep, dec):
    """(class, text) naming the first value of a preserved signature of `ep` that torch.fx's
    dead code elimination removes and that the decomposed program `dec`'s signature names by
    one of its placeholders (DEAD_RENAMED) or by its old name, which a node of `dec` has
    (NAME_REUSED: the dead node is gone, so that node is another), or None."""
    dead = dead_nodes(ep.graph_module)
    placeholders = {n.name for n in dec.graph.nodes if n.op == "placeholder"}
    names = {n.name for n in dec.graph.nodes}
    for old, new in zip(ep.module_call_graph, dec.module_call_graph):
        if old.signature is None or new.signature is None:
            continue
        for a, b in zip([*old.signature.inputs, *old.signature.outputs],
                        [*new.signature.inputs, *new.signature.outputs]):
            was, now = getattr(a, "name", None), getattr(b, "name", None)
            if was in dead and now != was and now in placeholders:
                return DEAD_RENAMED, (f"the signature of {old.fqn} names {was}, a dead value, as "
                                      f"the placeholder {now} after run_decompositions")
            if was in dead and now == was and now in names:
                return NAME_REUSED, (f"the signature of {old.fqn} still names {was}, a dead "
                                     "value, and the decomposed graph gives that name to "
                                     "another node")
    return None


def dead_signature_modules(ep):
    """The module paths of `ep.module_call_graph` whose signature names a value that torch.fx's
    dead code elimination removes from the exported graph (DEAD_SIGNATURE_VALUE's shape) or
    that a torch.no_grad() block computes (GRAD_REGION_VALUE's) or that is an in-place update's
    result (UPDATED_VALUE's) or a view of state updated in place after it (VIEW_UPDATED's) or
    the placeholder of state named after another FQN than its target (TIED_STATE_INPUT's) or
    after no FQN (SOURCE_NAMED_STATE's)."""
    left = dead_nodes(ep.graph_module) | grad_region_values(ep) | updated_values(ep) | \
        views_of_updated_state(ep) | set(misnamed_state(ep)) | set(source_named_state(ep))
    return {entry.fqn for entry in ep.module_call_graph if entry.signature and
            any(getattr(a, "name", None) in left
                for a in [*entry.signature.inputs, *entry.signature.outputs])}


def updated_values(ep):
    """Names of the nodes of `ep`'s graph that are an in-place op's result (export's training
    IR keeps `copy_`; its result is the buffer as updated)."""
    return {n.name for n in ep.graph.nodes if n.op == "call_function" and in_place(n)}


def views_of_updated_state(ep):
    """Names of the nodes of `ep`'s graph that are views (view_of: a slice, a chunk's piece, a
    reshape, through in-place results too) of a lifted buffer or parameter that an in-place op
    after the node writes (through a view of it too)."""
    state = {*ep.graph_signature.inputs_to_buffers, *ep.graph_signature.inputs_to_parameters}
    views, out = {}, set()  # view name -> the state placeholder it is a view of
    for n in ep.graph.nodes:
        if n.op != "call_function":
            continue
        base = base_of(n)
        if base is n or getattr(base, "name", None) not in state:
            continue
        if in_place(n):
            out |= {v for v, b in views.items() if b == base.name}
        elif view_of(n):
            views[n.name] = base.name
    return out


def grad_region_values(ep):
    """Names of the getitem nodes of `ep`'s graph that read a torch.no_grad() block's results
    (of its wrap_with_set_grad_enabled nodes)."""
    return {u.name for u in region_getitems(ep)}


def signature_value_named(ep, error):
    """The value a verifier's error names as missing ("Input X does not exist in the graph")
    when a preserved signature of `ep.module_call_graph` names it, else None."""
    named = re.search(r"(?:Input|Output) (\S+) does not exist in the graph", str(error))
    if not named:
        return None
    return named.group(1) if any(
        getattr(a, "name", None) == named.group(1)
        for entry in ep.module_call_graph if entry.signature
        for a in [*entry.signature.inputs, *entry.signature.outputs]) else None


def past_dead_values(p, mode, ep, failed, unpreserved=()):
    """After DecompositionFailed `failed` with DEAD_SIGNATURE_VALUE, DEAD_RENAMED, NAME_REUSED,
    GRAD_REGION_VALUE, UPDATED_VALUE, VIEW_UPDATED, TIED_STATE_INPUT or SOURCE_NAMED_STATE
    (and no cause that
    changes the program's meaning): the program exported again without preserving the modules
    whose signatures name such values (dead_signature_modules), decomposed.
    The path goes on with it, so the rest of the program is still judged. Raises `failed` when
    that is not the case or the second decomposition fails too. Returns (the program exported
    again, it decomposed, the classes, what torch raised first). `unpreserved`: the modules
    `ep` was exported without preserving (they stay so)."""
    classes = failed.cls.split("+")
    if not {DEAD_SIGNATURE_VALUE, DEAD_RENAMED, NAME_REUSED, GRAD_REGION_VALUE, UPDATED_VALUE,
            VIEW_UPDATED, TIED_STATE_INPUT, SOURCE_NAMED_STATE} & \
            set(classes) or \
            TIED_MUTATED in classes:
        raise failed
    skip = dead_signature_modules(ep) | set(unpreserved)
    try:
        again = export_program(p, mode, preserve=True, unpreserved=skip)
        dec, fixed, _ = decompose(again)
    except Exception:  # noqa: BLE001 - the class stands; nothing past it is judged
        raise failed from None
    return again, dec, joined(*classes, fixed), str(failed)


def missing_signature_value(ep, error, dead):
    """The class of the preserved signature value the verifier's `error` reports missing:
    DEAD_SIGNATURE_VALUE (one of `dead`, ep's dead nodes), UPDATED_VALUE (an in-place op's
    result), GRAD_REGION_VALUE (a torch.no_grad() block's result) or VIEW_UPDATED (a view of
    state an in-place op writes after it) or TIED_STATE_INPUT (the placeholder of state named
    after another FQN than its target, no longer missing once that is its target) or
    SOURCE_NAMED_STATE (the placeholder of state named after no FQN, no longer missing once
    named after its target); None when the error names no such value."""
    named = signature_value_named(ep, error)
    if named is None:
        return None
    if named in dead:
        return DEAD_SIGNATURE_VALUE
    if named in updated_values(ep):
        return UPDATED_VALUE
    if named in grad_region_values(ep):
        return GRAD_REGION_VALUE
    if named in views_of_updated_state(ep):
        return VIEW_UPDATED
    if decomposes_retargeted(ep, named):
        return TIED_STATE_INPUT
    if decomposes_renamed(ep, named):
        return SOURCE_NAMED_STATE
    return None


def misnamed_state(ep):
    """{placeholder: FQN} for each lifted buffer or parameter of `ep` that is named after one
    of its tensor's FQNs (prefix, then the FQN with every other character than a letter or
    digit as '_') while its target is another (TIED_STATE_INPUT's shape)."""
    state = {**ep.state_dict, **ep.constants}
    out = {}
    for spec in ep.graph_signature.input_specs:
        name, target = getattr(spec.arg, "name", None), spec.target
        tensor = state.get(target)
        if not isinstance(tensor, torch.Tensor) or not name or name[1:2] != "_":
            continue
        for fqn, t in state.items():
            if fqn != target and t is tensor and \
                    name == name[:2] + re.sub(r"[^a-zA-Z0-9]", "_", fqn):
                out[name] = fqn
    return out


def decomposes_retargeted(ep, named):
    """Whether `named` is misnamed state (misnamed_state) and run_decompositions, once its
    target is the FQN it is named after, no longer reports it missing: TIED_STATE_INPUT's cause
    removed, on a copy."""
    fqn = misnamed_state(ep).get(named)
    if fqn is None:
        return False
    fixed = copy.deepcopy(ep)
    for spec in fixed.graph_signature.input_specs:
        if getattr(spec.arg, "name", None) == named:
            spec.target = fqn
    return decomposes_past(fixed, (named,))


def decomposes_past(fixed, names):
    """Whether run_decompositions of `fixed` (a copy with one cause removed) succeeds, or fails
    with the verifier reporting none of `names` missing (another cause may stand besides)."""
    try:
        fixed.run_decompositions()
    except Exception as e:  # noqa: BLE001 - another cause may stand besides
        return signature_value_named(fixed, e) not in names
    return True


def state_name(spec):
    """The name torch's placeholder naming gives the placeholder of a lifted buffer, parameter
    or constant `spec` (an input spec): its prefix, then its target lower-cased with every
    character that is not a letter or digit as '_' (torch/_export/utils.py,
    placeholder_naming_pass); None for another kind of input."""
    prefix = STATE_PREFIXES.get(getattr(spec.kind, "name", None))
    target = spec.target
    if prefix is None or not isinstance(target, str):
        return None
    return prefix + re.sub(r"[^a-zA-Z0-9]", "_", target.lower())


def source_named_state(ep):
    """{placeholder: the name it would have} for each lifted buffer, parameter or constant of
    `ep` whose placeholder is named after neither its target (state_name, or that with a
    collision's `_N`) nor another FQN of its tensor (misnamed_state, TIED_STATE_INPUT's shape):
    SOURCE_NAMED_STATE's shape."""
    tied = misnamed_state(ep)
    taken = {n.name for n in ep.graph.nodes}
    out = {}
    for spec in ep.graph_signature.input_specs:
        name, want = getattr(spec.arg, "name", None), state_name(spec)
        if not name or not want or name in tied or \
                re.fullmatch(re.escape(want) + r"(_\d+)?", name):
            continue
        if want not in taken:
            out[name] = want
    return out


def decomposes_renamed(ep, named):
    """Whether `named` is source-named state (source_named_state) and run_decompositions, once
    the placeholder is named after its target (in the graph, the signature and every preserved
    call signature), no longer reports it missing: SOURCE_NAMED_STATE's cause removed, on a
    copy."""
    want = source_named_state(ep).get(named)
    if want is None:
        return False
    fixed = copy.deepcopy(ep)
    for node in fixed.graph.nodes:
        if node.op == "placeholder" and node.name == named:
            node.name = node.target = want
    fixed.graph_module.recompile()
    for spec in fixed.graph_signature.input_specs:
        if getattr(spec.arg, "name", None) == named:
            spec.arg.name = want
    for entry in fixed.module_call_graph:
        for arg in [*entry.signature.inputs, *entry.signature.outputs] if entry.signature else ():
            if getattr(arg, "name", None) == named:
                arg.name = want
    return decomposes_past(fixed, (named, want))


def dead_nodes(gm):
    """Names of the nodes of `gm` that torch.fx's dead code elimination removes."""
    g = copy.deepcopy(gm.graph)
    before = {n.name for n in g.nodes}
    g.eliminate_dead_code()
    return before - {n.name for n in g.nodes}


def untied_copy(ep):
    """A copy of `ep` whose every state tensor (the constants too: non-persistent buffers) has
    storage of its own (TIED_MUTATED removed)."""
    untied = copy.deepcopy(ep)
    for table in (untied.state_dict, untied.constants):
        for name, t in list(table.items()):
            if isinstance(t, torch.Tensor):
                own = t.detach().clone()
                table[name] = (torch.nn.Parameter(own, t.requires_grad)
                               if isinstance(t, torch.nn.Parameter) else own)
    return untied


def tied_buffer_updated(ep):
    """Whether an in-place op of `ep`'s graph writes a buffer (or a tensor constant) that
    shares its storage with another of the program's state tensors."""
    buffers = {**ep.graph_signature.inputs_to_buffers,  # and the plain tensor attributes
               **ep.graph_signature.inputs_to_lifted_tensor_constants}
    state = {**ep.state_dict, **ep.constants}
    shared = collections.Counter(t.untyped_storage().data_ptr() for t in state.values()
                                 if isinstance(t, torch.Tensor))
    for node in ep.graph.nodes:
        schema = getattr(node.target, "_schema", None)
        if node.op != "call_function" or schema is None or not schema.is_mutable:
            continue
        arg = node.args[0] if node.args else None
        target = buffers.get(getattr(arg, "name", None))
        if target and shared[state[target].untyped_storage().data_ptr()] > 1:
            return True
    return False


def judged_flat(p, ep, eager, cache):
    """The decomposed program's module() (on a copy: module() shares its program's state) vs
    torch eager: (status, why)."""
    m = copies_of(ep)().module()
    return judge(p, run_calls(m, p), state_after(m), eager, cache)


def decomp_path(p, mode, eager, cache):
    """export, run_decompositions, then torch.export.save / load, then unflatten; the calls
    against torch eager after each step: the decomposed program's module() (stage
    "decompose"), the loaded program's module() (stage "load"), the unflattened module (stage
    "unflatten"). The first stage that goes wrong is reported, so what a stage reports is its
    own. A wrong unflatten is traced (trace_unflatten, on the decomposed program), and
    otherwise reported with whether unflatten of the program as exported agrees."""
    ep = export_program(p, mode)
    stage = "decompose"
    try:
        dec, fixed, raised = decompose(ep)
        stage = "save"
        saved = io.BytesIO()
        torch.export.save(dec, saved)
        data = saved.getvalue()
        stage = "decompose"
        status, why = judged_flat(p, dec, eager, cache)
        aliased = aliased_constants(dec)  # the names of shared constants (load unshares them)

        def fresh():  # the decomposed program, loaded anew
            loaded = torch.export.load(io.BytesIO(data))
            if aliased:
                loaded.graph_module.meta[ALIASED_META] = aliased
            return loaded
        if status != "mismatch":
            stage = "load"
            m = fresh().module()
            status, why = judge(p, run_calls(m, p), state_after(m), eager, cache)
            untied = loaded_module_class(p, fresh, eager, cache) if status == "mismatch" else None
            if untied:
                return known(joined(fixed, untied), stage, why)
        if status == "mismatch":
            return {"status": "mismatch", "stage": stage, "first_mismatch": why[:600]}
    except Exception as e:  # noqa: BLE001
        return failure(e, stage)
    try:
        u = torch.export.unflatten(fresh())
        status, why = judge(p, run_calls(u, p), state_after(u), eager, cache)
        error = None
    except Exception as e:  # noqa: BLE001
        u, status, why, error = None, "error", f"{type(e).__name__}: {e}", e
    if status in ("mismatch", "error"):
        cls = trace_unflatten(p, fresh, eager, cache) or grad_region_cause(p, mode, eager, cache)
        if cls:
            return known(joined(fixed, cls), "unflatten", why)
        r = verdict(status, why) if error is None else failure(error, "unflatten")
        r["stage"] = "unflatten"
        r["without_decomposition"] = unflatten_unsaved(p, mode, eager, cache)
        return r
    if fixed:
        return known(fixed, "decompose", raised)
    r = verdict(status, why)
    r["variants"] = variants(u)
    return r


def grad_region_cause(p, mode, eager, cache):
    """GRAD_REGION (docs/found-bugs.md 41), joined with the unflatten classes it needs besides,
    when the program exported with its torch.no_grad() blocks' module stacks placed
    (grad_regions_placed), then decomposed, unflattens right: the decomposition inlines each
    block and keeps the stacks export gave it, so the trace of the decomposed program cannot
    remove the cause. None otherwise."""
    def placed():
        return decompose(grad_regions_placed(export_program(p, mode)))[0]

    if not grad_regions(export_program(p, mode)):
        return None
    try:
        fresh = fresh_exports(placed)
    except Exception:  # noqa: BLE001 - then not (only) this cause
        return None
    try:
        u = torch.export.unflatten(fresh())
        if judge(p, run_calls(u, p), state_after(u), eager, cache)[0] != "mismatch":
            return GRAD_REGION
    except Exception:  # noqa: BLE001 - another cause besides: the trace below
        pass
    try:
        other = trace_unflatten(p, fresh, eager, cache)
    except Exception:  # noqa: BLE001 - then not (only) this cause
        return None
    return joined(GRAD_REGION, other) if other else None


def decomp_preserve_path(p, mode, eager, cache, unpreserved=()):
    """export preserving every submodule's call signature (but the names in `unpreserved`, as
    on decomp_preserve_some), run_decompositions (its flat module
    judged first, stage "decompose"), then the preserve path's unflatten and calls (with the
    names judged as there, against the non-strict program decomposed, except past
    past_dead_values, where more modules are left unpreserved). Past a
    decomposition that fails for a known cause the path goes on where it can: with
    GETITEM_PROVENANCE's cause removed (decompose), and past DEAD_SIGNATURE_VALUE (and
    GRAD_REGION_VALUE) with the modules whose signatures name dead values (no_grad blocks'
    results) left unpreserved (past_dead_values); the class
    is reported when the rest agrees, the rest's own result otherwise. When the
    decomposition runs but the unflattened program goes wrong, the program is decomposed again
    with GETITEM_PROVENANCE's cause removed: agreeing then, the cause is that class (its
    second symptom: a signature name given to another node of the new graph)."""
    ep = export_program(p, mode, preserve=True, unpreserved=unpreserved)
    # the names are judged (torch_structure.judged), on each unflatten of the program and the
    # programs the traces make, but where past_dead_values left more modules unpreserved
    structure = preserve_structure(p, mode, unpreserved, lambda e: decompose(e)[0])
    try:
        try:
            dec, fixed, raised = decompose(ep)
        except DecompositionFailed as e:
            ep, dec, fixed, raised = past_dead_values(p, mode, ep, e, unpreserved)
            structure = None
        status, why = judged_flat(p, dec, eager, cache)
    except Exception as e:  # noqa: BLE001
        return failure(e, "decompose")
    if status == "mismatch":
        return {"status": "mismatch", "stage": "decompose", "first_mismatch": why[:600],
                **({"decomposed_with_cause_removed": fixed} if fixed else {})}
    r = preserve_unflatten(p, dec, eager, cache, structure)
    if r["status"] not in ("mismatch", "error"):
        return known(joined(fixed, r.get("known_torch_issue")), "decompose", raised) \
            if fixed else r
    if GETITEM_PROVENANCE not in (fixed or "").split("+"):
        try:
            again = preserve_unflatten(p, fixed_decomposition(ep), eager, cache, structure)
        except Exception:  # noqa: BLE001 - then not this cause
            again = {"status": "error"}
        if again["status"] in ("agree", "excused", "known_torch_issue"):
            return known(joined(fixed, GETITEM_PROVENANCE, again.get("known_torch_issue")),
                         r.get("stage", "unflatten"), raised or r.get("first_mismatch", ""))
    if grad_regions(ep):  # class 41: the blocks placed where they ran, then decomposed
        try:
            again = preserve_unflatten(p, decompose(grad_regions_placed(copy.deepcopy(ep)))[0],
                                       eager, cache, structure)
        except Exception:  # noqa: BLE001 - then not this cause
            again = {"status": "error"}
        if again["status"] in ("agree", "excused", "known_torch_issue"):
            return known(joined(fixed, GRAD_REGION, again.get("known_torch_issue")),
                         r.get("stage", "unflatten"), raised or r.get("first_mismatch", ""))
    if fixed:
        r["decomposed_with_cause_removed"] = fixed
    # whether the program the path decomposed (after past_dead_values, with some modules left
    # unpreserved) already fails without the decomposition: then the failure is not its
    r["without_decomposition"] = preserve_unflatten(
        p, ep, eager, cache, structure and preserve_structure(p, mode, unpreserved))["status"]
    return r


def decomp_preserve_some_path(p, mode, eager, cache):
    """The decomp_preserve path with the call signatures of a drawn part of the submodules
    preserved (as on preserve_some: draw_preserved, or the bridge's --draw): preserved modules
    below and above unpreserved ones, then run_decompositions, the step a backend takes after
    export (Torch-TensorRT's dynamo frontend among them). A program with fewer than two
    submodule objects is skipped."""
    kept, unpreserved = preserved_part(p)
    if kept is None:
        return unpreserved
    return {"preserved": kept, **decomp_preserve_path(p, mode, eager, cache, unpreserved)}


def joined(*classes):
    """Classes joined by '+', each once, in order (an argument may hold joined ones)."""
    out = []
    for part in (x for c in classes if c for x in c.split("+")):
        if part not in out:
            out.append(part)
    return "+".join(out)


def known(cls, stage, detail):
    return {"status": "known_torch_issue", "known_torch_issue": cls, "stage": stage,
            "detail": str(detail)[:300]}


PATHS = {"decomp": decomp_path, "decomp_preserve": decomp_preserve_path,
         "decomp_preserve_some": decomp_preserve_some_path}
