"""The bridge's AOTInductor path (docs/torch.md): an exported program compiled ahead of time by
Inductor into a shared library, the deployment form of torch.export's programs (run from C++
without Python, or loaded back into Python).

  aoti   torch.export.export (non-strict) of a fresh model, compiled by
         torch._inductor.aoti_compile_and_package into a .pt2 package in a temporary folder,
         loaded back by aoti_load_package and called: the calls; the outputs vs torch eager's,
         bit for bit or else within rounding of the float64 witness (torch_inductor.py). The
         package holds its own copy of the model's state and updates it itself, and no Python
         API reads it back: a buffer update is judged through the later calls' outputs (each
         program is called CONFIG["calls"] times), not as state.

  aoti.dynamic
         torch.export.export (non-strict) with every input dimension dynamic (Dim.AUTO, as
         export.nonstrict.dynamic exports: torch_dynamic.py) compiled into one package, which
         is then loaded afresh and called at the inputs' own sizes and at up to three other
         sizes the exported program's range constraints admit: kernels for symbolic sizes, run
         at sizes they were not traced at; each size judged as aoti judges, against torch eager
         (and the witness) at that size. A size ep.module() refuses with a failed shape guard
         is one the program does not cover: the package must refuse it too, and where it runs
         it the path is SHAPES (below), its results not judged. A mismatch is traced as aoti's
         are, with one more removal: BROADCAST (docs/found-bugs.md 71: Inductor's
         ExpandView.make_reindexer asking whether a size is 1 by its value)

On a program whose branch op is torch.cond (--branch cond) both paths try one removal first:
COND_STRIDES (docs/found-bugs.md 102: Inductor lowering the branch graphs for strides the
operands are not given; removed by torch_inductor.cond_operands_exact). Where the compile
fused an add whose alpha is not 1 into addmm (watched: torch_inductor.addmm_watched), or took a
graph from a cache, ADDMM_ALPHA (docs/found-bugs.md 109: that fusion dropping the alpha;
removed by torch_inductor.addmm_alpha_kept) is tried next.

Needs what compile.inductor needs (a C++ compiler, torch's headers) and torch >= 2.6
(aoti_compile_and_package); else the path is skipped with the reason. An export that fails is
reported as the export paths report it (its known classes included).
"""
import contextlib
import inspect
import itertools
import os
import tempfile

import torch

import torch_inductor
from torch_compare import run_calls
from torch_cond import cond_branch
from torch_dynamic import (RANK, dynamic_export, input_shapes, inputs_of, refused_by_guard,
                           sizes_of)
from torch_constants import registered_as_buffers
from torch_decomp import TIED_MUTATED, known, mutated_constants, tied_buffer_updated, untied_copy
from torch_export import classify, export_program, failure, run_family, verdict
from torch_inductor import available as inductor_available
from torch_inductor import (ADDMM_ALPHA, BROADCAST, COND_STRIDES, expand_by_value,
                             judged)

PATHS = ("aoti", "aoti.dynamic")
# AOTInductor inlines a small buffer into the package as a constant though the graph updates it
# in place: no call sees an earlier call's update (pytorch#169118; fixed by pytorch#169347,
# 2025-12; torch 2.6 has it, 2.14.1 not). Removed: inductor_configs
# always_keep_tensor_constants=True, which keeps every tensor a constant of its own.
INLINED = "aoti-small-mutated-buffer-inlined"
KEEP = {"always_keep_tensor_constants": True}
# docs/found-bugs.md 72: Inductor's remove_noop_ops (fx_passes/post_grad.py) removes a clone
# whose result has the metadata of its source unless that would make an output alias an input,
# and counts as inputs the placeholders alone; AOTInductor holds the state as get_attr nodes, so
# a returned clone of a buffer taken before the buffer's in-place update becomes the buffer
# itself: the call returns the updated value. Removed: get_attr nodes counted as inputs there.
CLONE = "aoti-clone-of-updated-buffer-removed"
# Inductor's uniform-value constant folding folds a read of a one-element buffer into a
# compile-time constant though the graph updates the buffer (pytorch#165444; fixed on PyTorch's
# main by pytorch#185077, 2026-05; torch 2.14.1's constant_fold_uniform_value has no such check).
# Removed: inductor_configs joint_graph_constant_folding=False.
FOLDED = "aoti-uniform-mutated-buffer-folded"
UNFOLDED = {"joint_graph_constant_folding": False}
# A package compiled from a dynamic export runs inputs of sizes export's shape guards exclude (a
# guard on a floor division from chunk or split, say): it checks the inputs against the range
# constraints only, and only with AOTI_RUNTIME_CHECK_INPUTS=1 (pytorch#141115, open; #151925).
# ep.module() refuses them ("Guard failed", torch 2.14.1; torch 2.6 checks only the guards
# export put in the graph as assertions, so there the guards of export's shape environment are
# read instead); the package gives wrong results.
SHAPES = "aoti-runs-outside-shape-guards"
# Inductor's lowering of a dynamic export may guard on a size expression export did not (it
# specializes the kernels), and the package checks no such guard at run time (pytorch#150364,
# open): inputs of sizes the lowering's guard excludes give wrong results without an error.
SPECIALIZED = "aoti-lowering-guard-unchecked"
# AOTInductor compiles a program that updates a tensor constant (a plain tensor attribute,
# lifted as CONSTANT_TENSOR) in place: AOTAutograd cannot functionalize an update of a tensor
# that is no graph input, and stops at its own assertion (`expected to have an entirely
# functional graph`) or functionalization's INTERNAL ASSERT, where run_decompositions refuses
# the same program in words (`Constant k is mutated in the forward method. Pls register it as
# buffer`; docs/found-bugs.md 114). Removed: the constants registered as buffers.
CONSTANT_UPDATE = "aoti-constant-update-internal-assert"
PLACEHOLDERS = 'for node in graph.find_nodes(op="placeholder"):'
STATE_TOO = 'for node in [n for n in graph.nodes if n.op in ("placeholder", "get_attr")]:'


def available():
    """None where AOTInductor can compile here; else why not."""
    why = inductor_available()
    if why:
        return why
    import torch._inductor
    if not hasattr(torch._inductor, "aoti_compile_and_package"):
        return f"torch {torch.__version__} has no aoti_compile_and_package (needs >= 2.6)"
    return None


def compiled(ep, folder, configs=None):
    """`ep` compiled into a package in `folder` (with Inductor's `configs`) and loaded back."""
    package = torch._inductor.aoti_compile_and_package(
        ep, package_path=os.path.join(folder, "model.pt2"), inductor_configs=dict(configs or {}))
    return torch._inductor.aoti_load_package(package)


def traced(p, eager, cache, ep, folder, e):
    """The result of AOTInductor failing on `ep` with `e`: TIED_MUTATED where the program
    updates a buffer sharing its storage with another state name and a copy whose state tensors
    each have storage of their own compiles (the decomposition AOTInductor runs refuses the
    duplicated mutated input, pytorch#166572); INLINED where the program compiled with every
    tensor kept a constant of its own agrees (a small buffer inlined as a constant cannot be
    written: torch 2.6's `NotImplementedError: Constant` lowering the copy_); CONSTANT_UPDATE
    where the program updates a lifted tensor constant and, its constants registered as
    buffers, compiles and agrees (constant_update_traced); else the failure as it is."""
    if classify(e):
        return failure(e, "compile")
    cls, tied = None, tied_buffer_updated(ep)
    if tied:
        try:
            compiled(untied_copy(ep), folder)
            cls = TIED_MUTATED
        except Exception:  # noqa: BLE001 - not (only) this cause
            pass
    if cls is None and mutated_constants(ep):
        cls = constant_update_traced(p, eager, cache, os.path.join(folder, "buffers"))
    elif not tied and removed_agrees(p, eager, cache, os.path.join(folder, "kept"),
                                     contextlib.nullcontext, KEEP):
        cls = INLINED
    if cls is None:
        return failure(e, "compile")
    return known(cls, "compile", f"{type(e).__name__}: {e}")


def constant_update_traced(p, eager, cache, folder):
    """CONSTANT_UPDATE where the program with its constants registered as buffers compiles (into
    a folder named from `folder`) and agrees with eager; that class joined to TIED_MUTATED
    where that program updates a buffer whose tensor another name shares (constants of two
    modules sharing one tensor become such buffers) and compiles once its state tensors are
    untied (whose results cannot agree: the shared state is then two); either joined to
    INLINED where it takes every tensor kept a constant of its own too (torch 2.6 inlines a
    small buffer, as the counters of emit-torch --step-counters are); else None."""
    tied = tied_buffer_updated_where_registered(p)
    for i, (configs, also) in enumerate((({}, ""), (KEEP, f"+{INLINED}"))):
        if registered_compiles(p, eager, cache, f"{folder}{i}", configs, tied):
            return CONSTANT_UPDATE + (f"+{TIED_MUTATED}" if tied else "") + also
    return None


def registered_compiles(p, eager, cache, folder, configs, tied):
    """Whether the program with its constants registered as buffers, compiled into `folder`
    with Inductor's `configs`, agrees with eager; with `tied`, whether its copy with untied
    state compiles."""
    if not tied:
        return removed_agrees(p, eager, cache, folder, lambda: registered_as_buffers(p), configs)
    try:
        os.mkdir(folder)
        with registered_as_buffers(p):
            compiled(untied_copy(export_program(p, "nonstrict")), folder, configs)
        return True
    except Exception:  # noqa: BLE001 - not (only) these causes
        return False


def tied_buffer_updated_where_registered(p):
    """Whether the program, its constants registered as buffers, updates a buffer whose tensor
    another state name shares (TIED_MUTATED's cause)."""
    try:
        with registered_as_buffers(p):
            return tied_buffer_updated(export_program(p, "nonstrict"))
    except Exception:  # noqa: BLE001 - an export that fails: no such update seen
        return False


def aoti_path(p, eager, cache):
    """aoti: a fresh model exported, compiled into a package, loaded back, the calls judged."""
    try:
        ep = export_program(p, "nonstrict")
    except Exception as e:  # noqa: BLE001 - export refusing the program
        return failure(e, "export")
    with tempfile.TemporaryDirectory() as folder:
        try:
            with torch_inductor.addmm_watched() as fused:
                runner = compiled(ep, folder)
        except Exception as e:  # noqa: BLE001 - AOTInductor refusing or failing
            return traced(p, eager, cache, ep, folder, e)
        try:
            outs = run_calls(runner, p)
        except Exception as e:  # noqa: BLE001
            return failure(e, "run")
        status, why = judged(p, outs, None, eager, cache)
        cls = cause(p, eager, cache, folder, addmm=bool(fused)) if status == "mismatch" else \
            None
        if cls:
            return {"status": "known_torch_issue", "known_torch_issue": cls, "stage": "run",
                    "detail": f"{why}; with the cause removed it agrees"[:500]}
    return {**verdict(status, why), "state": "judged through the later calls' outputs"}


@contextlib.contextmanager
def state_counted_as_inputs():
    """Inductor's remove_noop_ops counting get_attr nodes (the package's state) as inputs too
    (CLONE removed); raises where this torch's remove_noop_ops is written otherwise."""
    import torch._inductor.fx_passes.post_grad as post_grad
    real = post_grad.remove_noop_ops
    source = inspect.getsource(real)
    if PLACEHOLDERS not in source:
        raise RuntimeError("remove_noop_ops is written otherwise here: CLONE cannot be removed")
    exec(compile(source.replace(PLACEHOLDERS, STATE_TOO), post_grad.__file__, "exec"),
         post_grad.__dict__)
    try:
        yield
    finally:
        post_grad.remove_noop_ops = real


def cause(p, eager, cache, folder, agrees=None, broadcast=False, addmm=False):
    """The class of a mismatch: the causes (CLONE, INLINED, FOLDED; with `broadcast` BROADCAST
    first; with `addmm` (the compile fused an add of alpha not 1 into addmm, or took a graph
    from a cache) ADDMM_ALPHA before those; on a program whose branch op is torch.cond
    COND_STRIDES before all; one, then two, then three, joined by '+') whose removal together
    makes the program compiled again agree with eager (or differ by rounding only), as
    agrees(p, eager, cache, folder, context, configs) says (removed_agrees); None when none
    does."""
    agrees = agrees or removed_agrees
    cond = getattr(p, "_branch", None) is cond_branch
    removals = ((COND_STRIDES, {}),) * cond + ((ADDMM_ALPHA, {}),) * addmm + \
        ((BROADCAST, {}),) * broadcast + ((CLONE, {}), (INLINED, KEEP), (FOLDED, UNFOLDED))
    contexts = {CLONE: state_counted_as_inputs, BROADCAST: expand_by_value,
                COND_STRIDES: torch_inductor.cond_operands_exact,
                ADDMM_ALPHA: lambda: torch_inductor.addmm_alpha_kept(set())}
    tries = [c for k in (1, 2, 3) for c in itertools.combinations(removals, k)]
    for i, chosen in enumerate(tries):
        names = [name for name, _ in chosen]

        @contextlib.contextmanager
        def context(names=names):
            with contextlib.ExitStack() as stack:
                for name in names:
                    if name in contexts:
                        stack.enter_context(contexts[name]())
                yield
        context.names = tuple(names)
        configs = {k: v for _, c in chosen for k, v in c.items()}
        if agrees(p, eager, cache, os.path.join(folder, f"removed{i}"), context, configs):
            return "+".join(names)
    return None


def removed_agrees(p, eager, cache, folder, context, configs):
    """Whether the program exported and compiled again in `context` with Inductor's `configs`
    into `folder` agrees with eager, or differs by rounding only. Inductor's caches are off
    meanwhile, so that no graph compiled with the cause in place is taken from them."""
    import torch._inductor.config
    try:
        os.mkdir(folder)
        with context(), torch._inductor.config.patch(force_disable_caches=True):
            runner = compiled(export_program(p, "nonstrict"), folder, configs)
        outs = run_calls(runner, p)
    except Exception:  # noqa: BLE001 - not this cause
        return False
    return judged(p, outs, None, eager, cache)[0] in ("agree", "excused")


def sized(p, eager, cache):
    """(the program exported with every input dimension dynamic, its sizes as
    torch_dynamic.sizes_of gives them, those no guard of export's excludes drawn first)."""
    ep = dynamic_export(p, "nonstrict")
    guards = list(shape_guards(ep))
    return (ep, *sizes_of(p, ep, eager, cache, lambda assignment: holds(guards, assignment)))


def packaged(ep, folder, configs=None):
    """`ep` compiled into a package in `folder` (with Inductor's `configs`): its path."""
    return torch._inductor.aoti_compile_and_package(
        ep, package_path=os.path.join(folder, "model.pt2"), inductor_configs=dict(configs or {}))


def covered(p, ep):
    """Whether ep.module() runs the program on p's inputs: False where it refuses them with a
    failed shape guard (a size the exported program does not cover)."""
    try:
        run_calls(ep.module(), p)
    except Exception as e:  # noqa: BLE001 - any other failure is judged on the package
        return not refused_by_guard(e)
    return True


def shape_guards(ep):
    """The guards of the shape environment `ep`'s placeholders were traced in (a list Inductor's
    lowering appends to), or [] where none is found."""
    for n in ep.graph.nodes:
        mode = getattr(n.meta.get("val"), "fake_mode", None)
        if n.op == "placeholder" and getattr(mode, "shape_env", None) is not None:
            return mode.shape_env.guards
    return []


def size_exprs(ep):
    """The input dimensions of `ep` as sympy expressions (ints where static), read before
    Inductor's lowering: a size it specializes reads as its value afterwards."""
    return [[d.node.expr if isinstance(d, torch.SymInt) else int(d) for d in shape]
            for shape in input_shapes(ep)]


def failed_guard(p, exprs, guards):
    """The first of `guards` (sympy expressions of the input sizes' symbols) false at p's input
    sizes (`exprs`: size_exprs), as text; None when all hold or cannot be told."""
    values = {e: int(size) for shape, t in zip(exprs, p.INPUTS)
              for e, size in zip(shape, t.shape) if getattr(e, "is_Symbol", False)}
    return first_false(guards, values)


def first_false(guards, values):
    """The first of `guards` (ShapeGuards or sympy expressions) false with the symbols set to
    `values`, as text; None when all hold or cannot be told (a symbol without a value)."""
    import sympy
    for g in (getattr(g, "expr", g) for g in guards):
        if g.free_symbols <= set(values) and g.xreplace(
                {k: sympy.Integer(v) for k, v in values.items()}) is sympy.false:
            return str(g)
    return None


def holds(guards, values):
    """Whether no guard is false at `values` (aoti.dynamic draws such sizes first: the ones
    the package covers, whose results are judged)."""
    return first_false(guards, values) is None


def outside(p, ep, guards):
    """Why p's inputs are outside what the package was compiled for: ep.module() refusing them,
    a guard of export's false there (torch 2.6's ep.module() checks only those export put in
    the graph as assertions), or one Inductor's lowering added (SPECIALIZED); None when inside."""
    if not covered(p, ep):
        return SHAPES, "ep.module() refuses them (a failed shape guard)"
    exported, lowered, exprs = guards
    g = failed_guard(p, exprs, exported)
    if g:
        return SHAPES, f"export's guard {g} is false there (ep.module() does not check it)"
    g = failed_guard(p, exprs, lowered)
    return (SPECIALIZED, f"Inductor's lowering guarded on {g}, false there") if g else None


def at_size(p, ep, package, inputs, want, at, guards):
    """The package loaded afresh (its state as compiled) and called on `inputs`: the verdict,
    or, where the size is outside (SHAPES, SPECIALIZED: `guards` are export's and the
    lowering's, with the sizes' expressions) and the package runs it, that class (its results
    not judged); None where it is outside and the package refuses it."""
    with inputs_of(p, inputs):
        out = outside(p, ep, guards)
        try:
            outs = run_calls(torch._inductor.aoti_load_package(package), p)
        except Exception as e:  # noqa: BLE001
            return failure(e, "run") if out is None else None
        status, why = judged(p, outs, None, want, at)
    if out is None:
        return verdict(status, why)
    agreed = "its results agree with eager's" if status != "mismatch" else \
        f"its results differ from eager's: {why}"
    return {"status": "known_torch_issue", "known_torch_issue": out[0], "stage": "guards",
            "detail": f"inputs of shapes {[list(t.shape) for t in inputs]}: {out[1]}; the "
                      f"package runs them, and {agreed}"[:500]}


def compiled_with_guards(ep, folder, configs=None):
    """(the package of `ep`, (export's guards, the guards Inductor's lowering added, the input
    sizes' expressions from before the lowering))."""
    guards, exprs = shape_guards(ep), size_exprs(ep)
    before = len(guards)
    package = packaged(ep, folder, configs)
    return package, (list(guards[:before]), list(guards[before:]), exprs)


def worst_at(p, ep, package, sizes, guards):
    """The worst result over the sizes (a known class where nothing is worse), with its
    shapes; agree where every size agrees or is outside and refused."""
    worst = {"status": "agree"}
    for inputs, want, at in sizes:
        r = at_size(p, ep, package, inputs, want, at, guards) or {"status": "agree"}
        if RANK.get(r["status"], 0) > RANK.get(worst["status"], 0):
            worst = {**r, "shapes": [list(t.shape) for t in inputs]}
    return worst


def dynamic_agrees(sizes):
    """removed_agrees for aoti.dynamic: the dynamic export compiled again (in the context, with
    the configs, caches off) agrees or is rounding at every one of `sizes` inside."""
    import torch._inductor.config

    def agrees(p, eager, cache, folder, context, configs):
        try:
            os.mkdir(folder)
            ep = dynamic_export(p, "nonstrict")
            with context(), torch._inductor.config.patch(force_disable_caches=True):
                package, guards = compiled_with_guards(ep, folder, configs)
            results = [at_size(p, ep, package, *size, guards) for size in sizes]
        except Exception:  # noqa: BLE001 - not this cause
            return False
        return all(r is None or r["status"] in ("agree", "excused", "known_torch_issue")
                   for r in results)
    return agrees


def dynamic_aoti_path(p, eager, cache):
    """aoti.dynamic: one package compiled from the dynamic export, loaded afresh at each size
    (its state as the package holds it), the calls judged there; the worst result, a mismatch
    traced to its cause (found-bugs 71 among them)."""
    try:
        ep, sizes, skip = sized(p, eager, cache)
    except Exception as e:  # noqa: BLE001 - export refusing the program
        return failure(e, "export")
    if sizes is None:
        return {"status": "skipped", "skip": skip}
    shapes = {"sizes": [[list(t.shape) for t in inputs] for inputs, _, _ in sizes],
              "state": "judged through the later calls' outputs"}
    with tempfile.TemporaryDirectory() as folder:
        try:
            with torch_inductor.addmm_watched() as fused:
                package, guards = compiled_with_guards(ep, folder)
        except Exception as e:  # noqa: BLE001 - AOTInductor refusing or failing
            return {**traced(p, eager, cache, ep, folder, e), **shapes}
        worst = worst_at(p, ep, package, sizes, guards)
        if worst["status"] == "mismatch":
            cls = cause(p, eager, cache, folder, dynamic_agrees(sizes), broadcast=True,
                        addmm=bool(fused))
            if cls:
                worst = {"status": "known_torch_issue", "known_torch_issue": cls,
                         "stage": "run", "shapes": worst["shapes"],
                         "detail": f"{worst.get('first_mismatch')}; with the cause removed "
                                   "every size agrees"[:500]}
    return {**worst, **shapes}


def run_aoti(p, eager, paths, cache):
    """The AOTInductor paths of one program, when asked for: {path: result}."""
    def one(path):
        return dynamic_aoti_path(p, eager, cache) if path == "aoti.dynamic" else \
            aoti_path(p, eager, cache)
    return run_family(PATHS, paths, one, available())
