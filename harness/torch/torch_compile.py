"""The bridge's torch.compile paths (docs/torch.md): the model compiled whole, as a backend such as
Torch-TensorRT's torch.compile backend receives it, run by backends that keep torch's own kernels
so that the results stay bit for bit comparable.

  compile.eager      torch.compile(model, backend="eager", fullgraph=True, dynamic=False): dynamo's
                     capture of the whole forward (module state, buffer updates, the calls of
                     shared modules inlined), its graph run as captured; the calls
  compile.aot_eager  backend="aot_eager": dynamo's graph through AOTAutograd (functionalization:
                     buffer updates made graph outputs and written back after it; the aten graph
                     run by torch's kernels, no code generation); the calls
  compile.dynamic    backend="aot_eager" with torch.compile's default shapes (automatic dynamic:
                     compiled for the inputs' sizes first, a size that changes compiled again
                     with that dimension symbolic), at the inputs' own sizes and then at up to
                     MAX_SIZES others (a fresh model each, one compile cache for all: what a
                     model meeting new batch sizes does); the calls at each; vs torch eager on
                     the same inputs
  compile.breaks     backend="aot_eager" without fullgraph, with graph breaks
                     (torch._dynamo.graph_break()) after about a third of the nodes (chosen by
                     name, BREAK_EVERY) and after every buffer update: dynamo splits the forwards
                     into several graphs and resume functions, and values cross between graphs as
                     outputs and inputs (views of state and of each other among them), so
                     AOTAutograd's handling of aliased and mutated graph inputs and outputs, and
                     dynamo's replay of updates pending at a break, are on the path; the calls
  compile.regional   regional compilation: every module below the root compiled in place
                     (Module.compile, backend="aot_eager", fullgraph=True; a module object under
                     two names once), the root run eager, so each compiled module is entered with
                     the arguments its callers give (a shared one from each of them, a compiled
                     one's child from inside its caller's compiled call); the calls

Each program is compiled afresh (torch._dynamo.reset() before and after), its model's own
tensors judged after the calls: outputs and state must equal torch eager's bit for bit. Inductor's
generated kernels change results by rounding, which a bit-for-bit judge cannot tell from a wrong
result: its path, compile.inductor, is judged by a float64 witness instead (torch_inductor.py).

Known classes are read from the message (torch_export.KNOWN_ERRORS): an AOT backend refusing a
torch.cond whose operands are views of one tensor (docs/found-bugs.md 37, with --branch cond).
"""
import contextlib
import zlib

import torch

from torch_compare import judge, run_calls
from torch_cond import branch_by, cond_branch, python_branch
from torch_dynamic import DATA_DEPENDENT, RANK, eager_at, inputs_of, resized
from torch_export import failure, run_family, state_after, verdict

PATHS = ("compile.eager", "compile.aot_eager", "compile.dynamic", "compile.breaks",
         "compile.regional")
BREAK_EVERY = 3  # compile.breaks: a graph break after the nodes whose name's crc32 it divides
MAX_SIZES = 3  # sizes judged besides the inputs' own
STEPS = (lambda v: v + 1, lambda v: v * 2, lambda v: v + 2, lambda v: v - 1)


def available():
    """None where torch.compile can run here; else why not (torch 1.x has no torch.compile)."""
    if not hasattr(torch, "compile"):
        return f"torch {torch.__version__} has no torch.compile (needs >= 2.0)"
    return None


def reset():
    import torch._dynamo
    torch._dynamo.reset()


def refused(e):
    """The result of a compiled model's call raising `e`. The first call compiles: an error of
    dynamo's (or of the backend, which dynamo wraps) is stage "compile", any other "run"."""
    return failure(e, "compile" if type(e).__module__.startswith("torch._dynamo") else "run")


def judged_compiled(p, eager, cache, compile_model):
    """A fresh model compiled by compile_model(model) -> (the module to call, fields the result
    adds), the calls judged against torch eager with the model's own tensors as the state; the
    compile caches emptied before and after."""
    try:
        reset()
        model = p.build()
        module, extra = compile_model(model)
        status, why = judge(p, run_calls(module, p), state_after(model), eager, cache)
        return {**verdict(status, why), **extra}
    except Exception as e:  # noqa: BLE001 - torch refusing a program
        return refused(e)
    finally:
        reset()


def compile_path(p, backend, eager, cache):
    """compile.eager, compile.aot_eager: the whole model compiled with `backend`."""
    return judged_compiled(p, eager, cache, lambda model: (
        torch.compile(model, backend=backend, fullgraph=True, dynamic=False), {}))


def break_names(p):
    """The node names compile.breaks breaks after: those whose crc32 BREAK_EVERY divides (the
    names of the program's first call, a child's without the call path EXPECTED_NODES keys it
    by, "layer0/add" as "add": the recorder is given the name alone; a name used in several
    modules breaks in each)."""
    names = sorted({n.rsplit("/", 1)[-1] for n in p.EXPECTED_NODES[0]}) \
        if p.EXPECTED_NODES else []
    return tuple(n for n in names if zlib.crc32(n.encode()) % BREAK_EVERY == 0)


def breaking(p):
    """A recorder for the program's `_R` that breaks dynamo's graph after the nodes of
    break_names(p) and after every buffer update (otherwise the program's own: values pass
    through, buffers read by value)."""
    class Breaking(p._NoRecorder):
        BREAKS = break_names(p)

        def node(self, name, op, value, inputs, dim=None):
            if name in self.BREAKS:
                torch._dynamo.graph_break()
            return value

        def copy(self, module, path, value, into=None):
            super().copy(module, path, value, into)
            torch._dynamo.graph_break()

        def update(self, module, path, op, other, kwargs, into=None):
            super().update(module, path, op, other, kwargs, into)
            torch._dynamo.graph_break()
    return Breaking()


@contextlib.contextmanager
def broken(p):
    """The program with breaking(p) as its recorder inside (yields the number of names that
    break), its own recorder set back after."""
    import torch._dynamo  # noqa: F401 - torch._dynamo.graph_break, which the recorder calls
    p._R = breaking(p)
    try:
        yield len(p._R.BREAKS)
    finally:
        p._R = p._NoRecorder()


def breaks_path(p, eager, cache, backend="aot_eager"):
    """compile.breaks: the whole model compiled with `backend` (aot_eager), graph breaks where
    breaking(p) puts them."""
    with broken(p) as breaks:
        return {**judged_compiled(p, eager, cache, lambda model: (
            torch.compile(model, backend=backend, dynamic=False), {})), "breaks": breaks}


def compile_regions(model, backend="aot_eager"):
    """Every module below the root compiled in place (with `backend`), each module object
    once."""
    seen = set()
    for name, module in model.named_modules():
        if name and id(module) not in seen:
            seen.add(id(module))
            module.compile(backend=backend, fullgraph=True)
    return model, {"compiled": len(seen)}


def regional_path(p, eager, cache):
    """compile.regional: every module below the root compiled in place, the root eager."""
    return judged_compiled(p, eager, cache, compile_regions)


def new_sizes(p):
    """The input shape lists tried besides the inputs' own, in order: each step applied to every
    distinct dimension size at once (dimensions of one size stay alike, so broadcasting still
    lines up), then each distinct size alone + 1; sizes below 1 left out."""
    own = [list(t.shape) for t in p.INPUTS]
    values = sorted({d for shape in own for d in shape})
    maps = [{v: step(v) for v in values} for step in STEPS]
    maps += [{**{v: v for v in values}, w: w + 1} for w in values] if len(values) > 1 else []
    out = []
    for m in maps:
        shapes = [[m[d] for d in shape] for shape in own]
        if all(d >= 1 for shape in shapes for d in shape) and shapes != own and shapes not in out:
            out.append(shapes)
    return out


def dynamic_path(p, eager, cache, backend="aot_eager", judged=judge):
    """compile.dynamic: the inputs' own sizes, then up to MAX_SIZES others eager runs, each on a
    fresh model compiled with `backend` under one compile cache, its results judged by
    judged(p, outs, state, eager, cache) -> (status, why) with the inputs of that size in p;
    the worst result, with the sizes judged."""
    sizes = sizes_judged(p, eager, cache)
    worst, note = {"status": "agree"}, None
    reset()
    try:
        for inputs, want, at in sizes:
            r, python = at_size(p, inputs, want, at, backend, judged)
            if python:
                note = ("the branch ops left Python conditionals at some sizes: the bridge's "
                        "torch.cond helper could not guard on a size a torch.cond merged")
            if RANK.get(r["status"], 0) > RANK.get(worst["status"], 0):
                worst = {**r, "shapes": [list(t.shape) for t in inputs]}
    finally:
        reset()
    if note:
        worst = {**worst, "branch_note": note}
    return {**worst, "sizes": [[list(t.shape) for t in inputs] for inputs, _, _ in sizes]}


def sizes_judged(p, eager, cache):
    """[(inputs, torch eager's results on them, the judge's cache)]: the inputs' own, then up to
    MAX_SIZES others (new_sizes) that torch eager runs."""
    sizes = [(list(p.INPUTS), eager, cache)]
    for shapes in new_sizes(p):
        if len(sizes) > MAX_SIZES:
            break
        inputs = [resized(t, s) for t, s in zip(p.INPUTS, shapes)]
        want = eager_at(p, inputs)
        if want is not None:  # the canonical-NaN runs `cache` keeps are at the own sizes
            sizes.append((inputs, want, {}))
    return sizes


def at_size(p, inputs, want, at, backend, judged, dynamic=None):
    """(the result at one size, whether the branch ops were left Python conditionals): a fresh
    model compiled under the compile cache as it stands. The bridge's torch.cond helper, traced
    with a size a torch.cond merged (an unbacked symbol), cannot choose; the size then runs with
    the branch ops Python conditionals, as the dynamic export paths run it (torch_dynamic).
    `dynamic`: torch.compile's, when given (True: every dimension symbolic from the first
    compile)."""
    given = {} if dynamic is None else {"dynamic": dynamic}

    def run():
        with inputs_of(p, inputs):
            model = p.build()
            compiled = torch.compile(model, backend=backend, fullgraph=True, **given)
            return verdict(*judged(p, run_calls(compiled, p), state_after(model), want, at))
    try:
        return run(), False
    except Exception as e:  # noqa: BLE001 - torch refusing the program at a size
        if getattr(p, "_branch", None) is not cond_branch or DATA_DEPENDENT not in str(e):
            return refused(e), False
    with branch_by(p, python_branch):
        try:
            return run(), True
        except Exception as e:  # noqa: BLE001
            return refused(e), True


def run_compile(p, eager, paths, cache):
    """The torch.compile paths of one program, when asked for: {path: result}."""
    # else the name is the backend
    own = {"dynamic": dynamic_path, "regional": regional_path, "breaks": breaks_path}

    def one(path):
        kind = path.split(".")[1]
        return own[kind](p, eager, cache) if kind in own else compile_path(p, kind, eager, cache)
    return run_family(PATHS, paths, one, available())
