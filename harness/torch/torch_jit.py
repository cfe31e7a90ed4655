"""The bridge's TorchScript paths (docs/torch.md): torch.jit, the frontend Torch-TensorRT's
TorchScript path and mobile deployment start from, and its own save format.

  jit.trace    torch.jit.trace of a fresh model on copies of the inputs (check_trace off: the
               calls are judged instead), then the calls; outputs and state must equal torch
               eager's bit for bit
  jit.save     the traced module written with torch.jit.save and read back with torch.jit.load
               (TorchScript's archive: code, constants and state), then the calls
  jit.freeze   the traced module frozen (torch.jit.freeze of it in eval mode: parameters and
               buffers folded into the graph as constants where the freezing pass finds them
               unchanged, then constant propagation), then the calls; the state judged is what
               the frozen module still holds (a folded tensor is no longer an attribute), the
               outputs all
  jit.convert  the traced module converted to an ExportedProgram by torch's TorchScript
               converter (torch._export.converter.TS2EPConverter, the model's inputs as its
               sample; torch >= 2.4, skipped with the reason before), then the calls of its
               module (ep.module()); outputs and state must equal torch eager's bit for bit

The model's branch ops run as the bridge's --branch makes them; a torch.cond is not traceable
by torch.jit, so with --branch cond the paths are skipped.

A mismatch is traced to a known class by its cause removed:
  jit-constant-pooling-signed-zero (docs/found-bugs.md 78)
      TorchScript's constant pooling (and CSE) compares float constants with ==, so a graph's
      0.0 and -0.0 become one constant: x / 0.0 beside x / -0.0 gives one infinity twice (in
      the traced graph, or in the executor's optimized graph from the second call on). Traced
      when the program has float zero constants of both signs in its add, sub, mul and div and,
      run with every one of them +0.0 (torch eager and the path alike: one_signed_zeros), the
      path agrees
  ts-converter-input-name-collision (docs/found-bugs.md 106; jit.convert)
      the converter names each input of the traced graph by its TorchScript debug name with
      '.' made '_', unchecked: torch.jit.trace renames an input `x` to `x.1` when a child's
      parameter `x` takes the name, so inputs `x.1` and `x_1` get one name, and the conversion
      raises (SyntaxError: duplicate argument). Traced when two of the traced graph's inputs
      normalize alike and, with every input renamed apart (flatcheck_input_N) before the
      conversion, the path agrees
"""
import contextlib
import importlib
import io
import math

import torch

from torch_compare import Eager, eager_run, judge, run_calls, tensors_of
from torch_constants import plain_tensors
from torch_export import failure, state_after, verdict
from torch_partition import reset_state

PATHS = ("jit.trace", "jit.save", "jit.freeze", "jit.convert")
POOLED_ZERO = "jit-constant-pooling-signed-zero"
INPUT_NAMES = "ts-converter-input-name-collision"  # docs/found-bugs.md 106
# The ops a program gives a float constant to (emit-torch: add_scalar ... div_scalar)
SCALAR_OPS = ("add", "sub", "mul", "div")


def available():
    """None where torch.jit can trace here; else why not."""
    jit = getattr(torch, "jit", None)
    if jit is None or not all(hasattr(jit, f) for f in ("trace", "save", "load", "freeze")):
        return f"torch {torch.__version__} has no torch.jit trace, save, load and freeze"
    return None


def forget():
    """TorchScript's process-wide state let go. Every module torch.jit traces gets class types
    and compiled methods in torch.jit's one global compilation unit, kept for the life of the
    process (about 4 MB a program on torch 2.6: a bridge process of 1,500 programs held 5.5 GB):
    the unit is made afresh, and the caches that name what the old one holds (compiled free
    functions, overloads, script classes, the concrete module types) are emptied, so what is
    looked up next is compiled again into the new one. Called after each program's check; the
    old unit goes when nothing holds it."""
    state = getattr(getattr(torch, "jit", None), "_state", None)
    if state is None or not hasattr(state, "_python_cu"):
        return
    state._python_cu = torch._C.CompilationUnit()
    for cache in ("_jit_caching_layer", "_jit_function_overload_caching"):
        getattr(state, cache, {}).clear()
    if hasattr(state, "_clear_class_state"):
        state._clear_class_state()
    store = getattr(importlib.import_module("torch.jit._recursive"), "concrete_type_store", None)
    for cache in ("type_store", "methods_compiled"):
        getattr(store, cache, set()).clear()


def traced(p):
    """torch.jit.trace of a fresh model, the inputs copied (a program may update them). The
    trace runs the model once and the traced module holds the model's own tensors, so each is
    set back to its value before the trace: the calls start where eager's do."""
    model = p.build()
    before = state_after(model)
    with torch.no_grad():
        module = torch.jit.trace(model, tuple(t.clone() for t in p.INPUTS), check_trace=False)
    reset_state(tensors_of(module), before)
    return module


def converter():
    """torch's TorchScript-to-ExportedProgram converter (TS2EPConverter), or None where this
    torch has none (before 2.4)."""
    try:
        from torch._export.converter import TS2EPConverter  # noqa: PLC0415 - torch >= 2.4
    except ImportError:
        return None
    return TS2EPConverter


def converted(module, p):
    """The traced `module` converted to an ExportedProgram (the program's inputs, copied, as
    the sample), as the module ep.module() gives."""
    return converter()(module, tuple(t.clone() for t in p.INPUTS)).convert().module()


def colliding_inputs(module):
    """The traced graph's input names (self left out) that the converter's normalization
    ('.' made '_') gives another input's name too, sorted."""
    names = [v.debugName() for v in list(module.graph.inputs())[1:]]
    normal = [n.replace(".", "_") for n in names]
    return sorted(n for n, m in zip(names, normal) if normal.count(m) > 1)


def renamed_conversion(p, eager, cache):
    """(the traced graph's inputs that normalize to one name, jit.convert's status against
    `eager` with every input renamed apart before the conversion); ([], None) where none
    collide."""
    module = traced(p)
    colliding = colliding_inputs(module)
    if not colliding:
        return colliding, None
    for i, value in enumerate(list(module.graph.inputs())[1:]):
        value.setDebugName(f"flatcheck_input_{i}")
    again = converted(module, p)
    with fuser_off():
        status, _ = judge(p, run_calls(again, p), state_after(again), eager, cache)
    return colliding, status


def input_names_class(p, r, eager, cache):
    """`r`, a failure of jit.convert, as INPUT_NAMES when two of the traced graph's inputs
    normalize alike and, with every input renamed apart before the conversion, the path agrees
    with torch eager (or is excused); joined with POOLED_ZERO where it agrees only with every
    float zero constant +0.0 too (the program giving zeros of both signs: the trace pools
    them, as on jit.trace); else `r`."""
    cls = INPUT_NAMES
    try:
        colliding, status = renamed_conversion(p, eager, cache)
        if not colliding:
            return r
        if status not in ("agree", "excused"):
            with one_signed_zeros(p) as zeros:
                _, status = renamed_conversion(p, baked(p, eager_run(p)), {})
            if not (zeros.seen[-1.0] and zeros.seen[1.0]):
                return r
            cls = f"{INPUT_NAMES}+{POOLED_ZERO}"
    except Exception:  # noqa: BLE001 - the renamed conversion fails too: not this cause alone
        return r
    if status not in ("agree", "excused"):
        return r
    return {"status": "known_torch_issue", "known_torch_issue": cls,
            "stage": r.get("stage", "run"),
            "detail": (f"the traced graph's inputs {colliding} normalize to one name; with "
                       f"every input renamed apart{' and every zero +0.0' if '+' in cls else ''}"
                       f", the path agrees; {r.get('first_mismatch')}")[:500]}


def saved(module):
    """`module` through torch.jit.save and torch.jit.load."""
    data = io.BytesIO()
    torch.jit.save(module, data)
    return torch.jit.load(io.BytesIO(data.getvalue()))


def frozen(module):
    """torch.jit.freeze of `module` in eval mode, without the passes freezing documents as not
    preserving numerics (optimize_numerics: folding into convolutions and linear layers)."""
    return torch.jit.freeze(module.eval(), optimize_numerics=False)


@contextlib.contextmanager
def fuser_off():
    """The calls with the profiling executor's TensorExpr fuser off: a fused kernel rounds
    differently from torch's own (one ulp, the sign of a zero), which a bit-for-bit judge cannot
    tell from a wrong result. The executor's other passes still run from the second call on."""
    enabled = torch._C._jit_texpr_fuser_enabled()
    torch._C._jit_set_texpr_fuser_enabled(False)
    try:
        yield
    finally:
        torch._C._jit_set_texpr_fuser_enabled(enabled)


def frozen_state(module, names):
    """The tensors a frozen module still holds at the FQNs `names`: freezing keeps a tensor the
    graph updates as a plain attribute (no longer a registered buffer, so named_buffers() does
    not list it) and folds the others into the graph as constants."""
    state = {}
    for fqn in names:
        obj = module._c
        for part in fqn.split("."):
            obj = obj.getattr(part) if obj.hasattr(part) else None
            if obj is None:
                break
        if isinstance(obj, torch.Tensor):
            state[fqn] = obj.detach().clone()
    return state


def held_only(eager, state):
    """torch eager's results with its final state cut to the FQNs of `state`: freezing folds
    unchanged tensors into the graph, so they are no longer state to judge."""
    final = {fqn: t for fqn, t in eager.final.items() if fqn in state}
    return Eager(eager.outs, final, eager.initial, eager.groups)


class OneSignedZeros:
    """Stands for the torch module in a program's globals: its SCALAR_OPS get every float zero
    constant as +0.0; `seen` counts the zero constants they were given by sign (-1, 1)."""

    def __init__(self):
        self.seen = {-1.0: 0, 1.0: 0}

    def __getattr__(self, name):
        fn = getattr(torch, name)
        if name not in SCALAR_OPS:
            return fn

        def signed(*args, **kwargs):
            return fn(*(self.plus(a) for a in args), **kwargs)
        return signed

    def plus(self, a):
        if type(a) is not float or a != 0.0:
            return a
        self.seen[math.copysign(1.0, a)] += 1
        return 0.0


@contextlib.contextmanager
def one_signed_zeros(p):
    """Program `p` with every float zero constant of its SCALAR_OPS +0.0 inside
    (OneSignedZeros, which it yields)."""
    zeros, real = OneSignedZeros(), p.torch
    p.torch = zeros
    try:
        yield zeros
    finally:
        p.torch = real


def pooled_zero_class(p, path, r):
    """`r`, a mismatch of `path`, as POOLED_ZERO when the program gives zero constants of both
    signs and, with them all +0.0, the path agrees with torch eager (or is excused); else
    `r`."""
    try:
        with one_signed_zeros(p) as zeros:
            again = jit_path(p, path, eager_run(p), {}, traced_classes=False)
    except Exception:  # noqa: BLE001 - no such run to compare with
        return r
    minus, plus = zeros.seen[-1.0], zeros.seen[1.0]
    if not (minus and plus) or again["status"] not in ("agree", "excused"):
        return r
    return {"status": "known_torch_issue", "known_torch_issue": POOLED_ZERO, "stage": "run",
            "detail": (f"{r.get('first_mismatch')}; with every float zero constant +0.0 (the "
                       f"program gave {minus} of -0.0 and {plus} of 0.0), the path "
                       "agrees")[:500]}


def baked(p, eager):
    """`eager` without the final state of the program's plain tensor attributes (emit-torch
    --tensor-constants): tracing bakes such an attribute into the graph as a constant
    (TorchScript's documented rule: only parameters and buffers stay attributes), so it is no
    state of the module to read; the outputs judge it."""
    constants = plain_tensors(p.build())
    if not constants:
        return eager
    return Eager(eager.outs, {k: t for k, t in eager.final.items() if k not in constants},
                 eager.initial, eager.groups)


def jit_path(p, path, eager, cache, traced_classes=True):
    """One TorchScript path of one program: the result dict; a mismatch traced to its known
    class where `traced_classes`."""
    stage = "trace"
    try:
        module = traced(p)
        want, state = baked(p, eager), state_after
        if path == "jit.save":
            stage = "save"
            module = saved(module)
        elif path == "jit.convert":
            stage = "convert"
            module = converted(module, p)
        elif path == "jit.freeze":
            stage = "freeze"
            module = frozen(module)
            names = list(eager.final)
            want = held_only(eager, frozen_state(module, names))
            state = lambda m: frozen_state(m, names)  # noqa: E731
        stage = "run"
        with fuser_off():
            outs = run_calls(module, p)
        status, why = judge(p, outs, state(module), want, cache)
    except Exception as e:  # noqa: BLE001 - torch refusing a program
        r = failure(e, stage)
        if path == "jit.convert" and r["status"] == "error" and traced_classes:
            r = input_names_class(p, r, baked(p, eager), cache)
        return r
    r = verdict(status, why)
    if status == "mismatch" and traced_classes:
        r = pooled_zero_class(p, path, r)
    if path == "jit.convert" and r["status"] == "mismatch" and traced_classes:
        r = input_names_class(p, r, want, cache)
    if path == "jit.freeze":
        r["state_held"] = len(want.final)
    return r


def run_jit(p, eager, paths, cache, branch="python"):
    """The TorchScript paths of one program, when asked for: {path: result}."""
    why = available() or ("torch.jit cannot trace torch.cond (--branch cond)"
                          if branch == "cond" else None)
    no_converter = None if "jit.convert" not in paths or converter() else (
        f"torch {torch.__version__} has no TorchScript converter (torch._export.converter, "
        "torch >= 2.4)")
    return {path: {"status": "skipped", "skip": why or no_converter}
            if why or (path == "jit.convert" and no_converter)
            else jit_path(p, path, eager, cache)
            for path in PATHS if path in paths}
