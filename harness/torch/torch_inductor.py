"""The bridge's Inductor path (docs/torch.md): torch.compile's default backend, which generates
and compiles its own C++ kernels for the CPU.

  compile.inductor   torch.compile(model, backend="inductor", fullgraph=True, dynamic=False) of a
                     fresh model (compiled afresh: the compile caches emptied before and after);
                     the calls; outputs and the model's state vs torch eager
  compile.inductor.dynamic
                     Inductor with torch.compile's default automatic dynamic shapes, as
                     compile.dynamic runs aot_eager (torch_compile.py): at the inputs' own sizes,
                     then at up to three others, a fresh model each under one compile cache, so
                     the sizes after the first run kernels generated for symbolic sizes (sizes
                     and strides as the kernels' arguments, loops bounded by them); the calls at
                     each size vs torch eager on the same inputs, the float64 witness at that size
  compile.inductor.freezing
                     compile.inductor with Inductor's freezing (torch._inductor.config.freezing,
                     which needs the calls under torch.no_grad(), as every path's are): the
                     parameters and buffers the graph does not update folded into the compiled
                     graph as constants, what is computed from them alone computed once at
                     compile time; what inference deployments turn on
  compile.inductor.breaks
                     compile.inductor without fullgraph, with compile.breaks' graph breaks
                     (torch_compile.breaking): each forward split into several graphs, each
                     compiled by Inductor, values, views and pending buffer updates crossing
                     between them as graph inputs and outputs
  compile.inductor.cpp_wrapper
                     compile.inductor with Inductor's C++ wrapper (torch._inductor.config
                     cpp_wrapper): the code that allocates the buffers, calls the kernels and
                     returns the outputs (views of buffers among them) written in C++ and
                     compiled, not Python; needs pybind11's headers
  compile.inductor.scalar
                     compile.inductor with vectorization off (torch._inductor.config.cpp
                     simdlen = 1): Inductor's scalar kernels only, where the other paths run its
                     vector kernels (at::vec::Vectorized loads and stores, masked tails)
                     wherever it can build them; skipped where it can build none (vector_isa)
  compile.inductor.memory
                     compile.inductor with Inductor's memory planning (torch._inductor.config
                     memory_planning; inference graphs only, which every path's calls, under
                     torch.no_grad(), give): every buffer carved from a few pools at offsets
                     planned from the buffers' lifetimes, so buffers alive at different times
                     share storage
  compile.inductor.wide
                     compile.inductor of the program widened: every dimension of its inputs,
                     parameters and buffers made 9 times larger (1 to 4 -> 9 to 36; values
                     repeated in order), so a kernel's loops run whole vectors and tails of
                     several lengths, where the programs' own sizes (at most 4) fit in one
                     partial vector; judged against torch eager on the widened program (the
                     float64 witness there); skipped where eager refuses it
  compile.inductor.cache
                     compile.inductor twice in an empty cache directory of its own, with
                     Inductor's FX graph cache and AOTAutograd's cache on (local only): the
                     first compile fills the caches; then dynamo and every compiled module in
                     memory are forgotten, as in a new process, and a fresh model's compile
                     takes its graph from the caches (the kernels, the constants, and from
                     AOTAutograd's cache the wrappers that apply buffer updates and rebuild
                     aliased outputs). The second model's calls are judged; a compile that took
                     nothing from the caches is skipped, with the counts
  compile.inductor.cache.dynamic
                     the caches taken across sizes: in an empty cache directory of its own, the
                     program compiled with every dimension symbolic (dynamic=True) at the
                     inputs' own sizes, then at each of up to three other sizes (compile.dynamic's)
                     a fresh model compiled so after everything in memory is forgotten: the
                     graph is the same, and the FX graph cache gives the kernels compiled at the
                     first size where the shape guards stored with them hold at the new size.
                     Each size is judged against torch eager at that size (the float64 witness
                     at that size); the result says what each size took from the caches;
                     skipped when no size after the first took anything
  compile.inductor.parallel
                     compile.inductor.wide with every loop Inductor can parallelize split across
                     THREADS OpenMP threads however short (torch._inductor.config.cpp
                     min_chunk_size = 1, threads = 4): the kernels' parallel loops, a reduction
                     split in per-thread partial results combined after, where the programs'
                     sizes never reach Inductor's threshold (4,096 elements in torch 2.6, 512
                     in 2.14); at the program's own sizes where torch eager refuses it widened
  compile.inductor.loop_order
                     compile.inductor with loop ordering after fusion
                     (torch._inductor.config.loop_ordering_after_fusion) the other way from
                     this torch's setting: on in torch 2.6 (off by default), off in 2.14 (on by
                     default): fused nodes' loops reordered to match their memory access
  compile.inductor.padding
                     compile.inductor.wide with Inductor's stride padding on the CPU and for
                     every size (torch._inductor.config disable_padding_cpu = False,
                     comprehensive_padding, padding_stride_threshold = 0, pad_outputs): each
                     buffer's rows start at 128-byte boundaries, outputs too, so the kernels
                     index rows by padded strides and a view or reshape of a buffer must see
                     the gaps; at the program's own sizes where torch eager refuses it widened.

With --branch cond, an error or a mismatch of any of these paths but the two cache paths is run
again with Inductor changed to give each torch.cond operand the strides its branch graphs were
compiled for (cond_operands_exact); if that agrees or is rounding, the result is
inductor-cond-operand-strides (docs/found-bugs.md 102: Inductor computes an operand into a
slice of a cat's output, or pads it, and the branch graph asserts or reads the strides it was
compiled for).

Inductor's kernels round differently from torch's (fused loops, other summation orders, its own
vectorized exp and tanh), so bit for bit is not the judge. What is: a float64 witness. The
program is run eagerly once more with its state and inputs in float64 (every value nearer the
exact one), and each element Inductor gives that is not bit-identical to torch eager's float32
must be near the witness: |inductor - f64| <= 16 |eager - f64| + 2^-14 |f64|. An honest
rounding difference stays within a small multiple of eager's own float32 error; a wrong result
(a value from the wrong node, a missed or doubled state update, a stale buffer) is off by about
the size of the values. NaN and infinity must be where torch eager has them, of the same sign
(an infinity where only the witness is finite, it overflowed alone, passes). A result that
passes is "excused" with the largest ratio of the error to its bound; one that does not is a
mismatch naming the element and its three values.

Needs a C++ compiler and torch's C++ headers (Debian: g++ and libtorch-dev, which
scripts/torch-root.sh installs in the torch roots); without them the path is skipped with the
reason.
"""
import contextlib
import importlib
import os
import shutil
import unittest.mock

import torch

from torch_compare import diff_values, eager_run, judge, run_calls, strip_variants
from torch_compile import available as compile_available
from torch_compile import at_size, broken, dynamic_path, refused, reset, sizes_judged
from torch_cond import cond_branch
from torch_dynamic import RANK, eager_at, inputs_of, resized
from torch_export import run_family, state_after, verdict
from torch_reinplace import EQUAL_CONSTANTS, exact_cse

PATHS = ("compile.inductor", "compile.inductor.dynamic", "compile.inductor.freezing",
         "compile.inductor.breaks", "compile.inductor.cpp_wrapper", "compile.inductor.scalar",
         "compile.inductor.memory", "compile.inductor.wide", "compile.inductor.cache",
         "compile.inductor.cache.dynamic", "compile.inductor.parallel",
         "compile.inductor.loop_order", "compile.inductor.padding")
THREADS = 4  # compile.inductor.parallel: the threads its kernels' parallel loops are split for
# compile.inductor's variants that differ only in Inductor's settings: {path: the settings of
# torch._inductor.config it compiles under}. Every path's calls run under torch.no_grad()
# (torch_compare.run_calls), so Inductor compiles an inference graph: what freezing and memory
# planning need.
SETTINGS = {"compile.inductor.freezing": {"freezing": True},
            "compile.inductor.cpp_wrapper": {"cpp_wrapper": True},
            "compile.inductor.scalar": {"cpp.simdlen": 1},
            "compile.inductor.memory": {"memory_planning": True},
            "compile.inductor.parallel": {"cpp.min_chunk_size": 1, "cpp.threads": THREADS},
            "compile.inductor.padding": {"disable_padding_cpu": False,
                                         "comprehensive_padding": True,
                                         "padding_stride_threshold": 0, "pad_outputs": True}}
# The paths run widened (at the program's own sizes where torch eager refuses it widened)
WIDE_SETTINGS = ("compile.inductor.parallel", "compile.inductor.padding")
# compile.inductor.cache: the counters of torch._dynamo.utils.counters it reads ({group: names})
CACHE_COUNTERS = {"inductor": ("fxgraph_cache_hit", "fxgraph_cache_miss", "fxgraph_cache_bypass"),
                  "aot_autograd": ("autograd_cache_hit", "autograd_cache_miss",
                                   "autograd_cache_bypass")}
BROADCAST = "inductor-dynamic-size-one-expression-broadcast"  # docs/found-bugs.md 71
COND_STRIDES = "inductor-cond-operand-strides"  # docs/found-bugs.md 102
# the paths entry 102's trace leaves alone: its rerun has Inductor's caches off
CACHE_PATHS = ("compile.inductor.cache", "compile.inductor.cache.dynamic")
WIDE = 9  # compile.inductor.wide: every dimension times this (9 to 36: past a 16-lane vector)
RATIO = 16  # the error allowed, as a multiple of torch eager's own float32 error
SLACK = 2.0 ** -14  # and relative to the value


def available():
    """None where Inductor can compile for the CPU here; else why not."""
    if compile_available():
        return compile_available()
    if not (os.environ.get("CXX") or shutil.which("g++") or shutil.which("c++")):
        return ("no C++ compiler: Inductor compiles C++ kernels for the CPU (Debian: g++; "
                "scripts/torch-root.sh installs it in the torch roots)")
    if not has_header("c10", "util", "BFloat16.h"):
        return "torch's C++ headers are missing: Inductor includes them (Debian: libtorch-dev)"
    try:
        importlib.import_module("torch.utils.cpp_extension")  # Inductor loads kernels by it
    except ImportError as e:  # torch 2.6's imports setuptools
        return f"torch.utils.cpp_extension cannot be imported ({e}; Debian: python3-setuptools)"
    return None


def has_header(*parts):
    """Whether the header is among a wheel's own headers (torch/include) or the system's."""
    where = (os.path.join(os.path.dirname(torch.__file__), "include"), "/usr/include",
             "/usr/local/include")
    return any(os.path.exists(os.path.join(d, *parts)) for d in where)


def cpp_wrapper_available():
    """None where Inductor's C++ wrapper can be compiled here; else why not: it includes
    pybind11's headers (Debian: pybind11-dev, which scripts/torch-root.sh installs)."""
    if not has_header("pybind11", "gil.h"):
        return ("pybind11's headers are missing: Inductor's C++ wrapper includes them (Debian: "
                "pybind11-dev)")
    return None


def vector_isa():
    """The vector instruction set Inductor writes its CPU kernels for here ("avx512", "avx2"),
    or None: it finds none it can build (torch's vector types include sleef.h; without it,
    every kernel is scalar)."""
    try:
        from torch._inductor.cpu_vec_isa import pick_vec_isa
    except ImportError:  # torch < 2.5
        from torch._inductor.codecache import pick_vec_isa
    isa = pick_vec_isa()
    return str(isa) if isa else None


def scalar_available():
    """None where compile.inductor.scalar differs from compile.inductor here; else why not."""
    if vector_isa() is None:
        return ("Inductor builds no vector kernels here (no vector ISA it can compile for; "
                "torch's vector types include sleef.h: Debian libsleef-dev), so every Inductor "
                "path's kernels are already scalar")
    return None


@contextlib.contextmanager
def settings(path):
    """Inductor's settings for `path` (SETTINGS; for compile.inductor.loop_order, loop ordering
    after fusion the other way from this torch's setting; none for the others)."""
    import torch._inductor.config as config
    want = SETTINGS.get(path, {})
    if path == "compile.inductor.loop_order":
        want = {"loop_ordering_after_fusion": not config.loop_ordering_after_fusion}
    with config.patch(want):
        yield


@contextlib.contextmanager
def in_float64(p):
    """The program `p` with its model's state and its inputs in float64 inside (eager_run reads
    p.build and p.INPUTS)."""
    build = p.build
    p.build = lambda: build().double()
    try:
        with inputs_of(p, [t.double() for t in p.INPUTS]):
            yield p
    finally:
        p.build = build


def rounding_only(got, want, wide, name="inductor"):
    """(True, worst ratio of error to bound) when `got` differs from torch eager's float32
    `want` only as rounding does against the float64 witness `wide`; else (False, the first
    element beyond: its index and the three values)."""
    if got.shape != want.shape or got.dtype != want.dtype or wide.shape != want.shape:
        return False, f"shape or dtype {list(got.shape)} {got.dtype} vs {list(want.shape)} " \
                      f"{want.dtype}"
    g, a, w = got.double().reshape(-1), want.double().reshape(-1), wide.reshape(-1)
    finite = torch.isfinite(g) & torch.isfinite(a)
    # Not finite in either: NaN in both, or the same infinity.
    same = (torch.isnan(g) & torch.isnan(a)) | (g == a)
    bound = RATIO * (a - w).abs() + SLACK * w.abs() + 1e-30
    err = (g - w).abs()
    ok = torch.where(finite, err <= bound, same)
    ok = ok | ~torch.isfinite(w) & finite & (g == a)  # the witness overflowed alone
    if bool(ok.all()):
        ratio = torch.where(finite & torch.isfinite(w), err / bound, torch.zeros_like(err))
        return True, float(ratio.max()) if ratio.numel() else 0.0
    i = int((~ok).nonzero()[0])
    return False, (f"element {i}: {name} {float(g[i])!r}, torch eager {float(a[i])!r}, "
                   f"float64 {float(w[i])!r}")


def witness(p, outs, state, eager, name="inductor"):
    """("excused", why) when every value differing from torch eager's is rounding against the
    float64 witness (rounding_only), else ("mismatch", where and what)."""
    with in_float64(p):
        wide = eager_run(p)
    worst = 0.0
    for where, _ in diff_values(outs, state, eager):
        got, want, w = pick(where, outs, state, eager, wide)
        if got is None:
            return "mismatch", f"{where}: no float64 witness to judge it by"
        ok, what = rounding_only(got, want, w, name)
        if not ok:
            return "mismatch", f"{where}: beyond rounding (float64 witness): {what}"
        worst = max(worst, what)
    return "excused", (f"rounding only: every value that differs from torch eager's is within "
                       f"{RATIO}x eager's own float32 error against a float64 run (+2^-14 "
                       f"relative); worst {worst:.3g} of that bound")


def pick(where, outs, state, eager, wide):
    """(inductor's, torch eager's, the witness's) tensors that diff_values' `where` names, or
    (None, ...) when `where` is not one tensor of both (a missing output or buffer)."""
    parts = where.split()
    if parts[0] == "call" and len(parts) == 4:
        k, i = int(parts[1]) - 1, int(parts[3])
        return outs[k][i], eager.outs[k][i], wide.outs[k][i]
    if parts[:2] == ["final", "state"] and len(parts) == 3:
        fqn = parts[2]
        base = strip_variants(fqn)
        if fqn in state and base in eager.final and base in wide.final:
            return state[fqn], eager.final[base], wide.final[base]
    return None, None, None


def judged(p, outs, state, eager, cache, name="inductor"):
    """Inductor's results against torch eager's on p.INPUTS: bit for bit agree, else the float64
    witness decides (status, why); `name` names the path's values in its text."""
    status, why = judge(p, outs, state, eager, cache)
    return (status, why) if status != "mismatch" else witness(p, outs, state, eager, name)


def compiled_run(p, fullgraph=True):
    """(outputs, the model's state after) of a fresh model compiled by Inductor with static
    shapes; the compile happens at the first call, under the caller's settings."""
    model = p.build()
    compiled = torch.compile(model, backend="inductor", fullgraph=fullgraph, dynamic=False)
    return run_calls(compiled, p), state_after(model)


def inductor_path(p, eager, cache, path="compile.inductor"):
    """compile.inductor, and its variants: compile.inductor.breaks without fullgraph, with
    compile.breaks' graph breaks; the others under their SETTINGS. A fresh model compiled by
    Inductor with static shapes, the calls judged."""
    breaks = path == "compile.inductor.breaks"
    with broken(p) if breaks else contextlib.nullcontext() as n:
        extra = {"breaks": n} if breaks else {}
        try:
            reset()
            with settings(path):
                outs, state = compiled_run(p, fullgraph=not breaks)
        except Exception as e:  # noqa: BLE001 - Inductor refusing or failing on a program
            return {**refused(e), **extra}
        finally:
            reset()
    out = {**verdict(*judged(p, outs, state, eager, cache)), **extra}
    if out["status"] != "mismatch":
        return out
    return cse_class(p, eager, cache, out) if path == "compile.inductor.freezing" else out


# docs/found-bugs.md 109: Inductor's post-grad pattern that fuses add(mm(a, b), c) (or add(c,
# mm(a, b))) into addmm(c, a, b) matches an add with any alpha and drops it: torch.add(a @ b, c,
# alpha=-1) runs as a @ b + c.
ADDMM_ALPHA = "inductor-addmm-fusion-drops-alpha"


@contextlib.contextmanager
def addmm_alpha_kept(found, refuse=True):
    """Inductor with ADDMM_ALPHA's cause removed: its add + mm -> addmm fusion refuses an add
    whose alpha is not 1 (`found` collects those alphas), and no cache is read (a cached graph
    was fused). With `refuse` False, the fusion is only watched: `found` collects the alphas
    it fuses, and nothing else changes. Yields whether the fusion was found."""
    import torch._inductor.config
    from torch._inductor.fx_passes import post_grad
    wrapped = []
    for entries in post_grad.pass_patterns[2].patterns.values():
        for entry in entries:
            if getattr(getattr(entry, "handler", None), "__name__", "") != "addmm" or \
                    any(entry is e for e, _ in wrapped):  # an entry under two keys: once
                continue

            def watched(match, check=entry.extra_check):
                alpha = match.output_node().kwargs.get("alpha", 1)
                if alpha == 1:
                    return check(match)
                if not refuse:
                    fused = check(match)
                    if fused:
                        found.add(repr(alpha))
                    return fused
                found.add(repr(alpha))
                return False
            wrapped.append((entry, entry.extra_check))
            entry.extra_check = watched
    try:
        with torch._inductor.config.patch(force_disable_caches=True) if refuse else \
                contextlib.nullcontext():
            yield bool(wrapped)
    finally:
        for entry, check in wrapped:
            entry.extra_check = check


@contextlib.contextmanager
def addmm_watched(count_hits=True):
    """Yields the set of the alphas of adds the addmm fusion takes in the block, other than 1
    (entry 109's cause; addmm_alpha_kept(refuse=False)); with `count_hits`, "unseen" is added
    where a graph came from Inductor's or AOTAutograd's cache, whose fusions nobody watched."""
    fused = set()
    before = cache_counts()
    with addmm_alpha_kept(fused, refuse=False):
        yield fused
    hits = cache_counts(before)
    if count_hits and (hits.get("fxgraph_cache_hit") or hits.get("autograd_cache_hit")):
        fused.add("unseen")


def addmm_class(r, again):
    """`r`, a mismatch of an Inductor path, as entry 109's class when the path run again with
    its cause removed (`again()` inside addmm_alpha_kept) refused some fusion and agrees or is
    rounding; else `r`."""
    found = set()
    try:
        with addmm_alpha_kept(found):
            second = again()
    except Exception:  # noqa: BLE001 - the mismatch has another cause too
        return r
    if not found or second.get("status") not in ("agree", "excused"):
        return r
    return {**{k: v for k, v in r.items() if k not in ("status", "first_mismatch")},
            "status": "known_torch_issue", "known_torch_issue": ADDMM_ALPHA, "stage": "run",
            "detail": (f"{r.get('first_mismatch')}; with the add + mm -> addmm fusion refusing "
                       f"adds of alpha {', '.join(sorted(found))}, it agrees or is rounding")[:500]}


def cse_class(p, eager, cache, r):
    """`r`, a mismatch of compile.inductor.freezing, as entry 77's class when the path run again
    with its cause removed (exact_cse: fx_graph_cse keeps apart nodes whose constants differ in
    bits or type) kept some nodes apart and agrees or is rounding; else `r`."""
    found = set()
    try:
        reset()
        with exact_cse(found), settings("compile.inductor.freezing"):
            outs, state = compiled_run(p)
        again, _ = judged(p, outs, state, eager, cache)
    except Exception:  # noqa: BLE001 - the mismatch has another cause too
        return r
    finally:
        reset()
    if not found or again not in ("agree", "excused"):
        return r
    return {"status": "known_torch_issue", "known_torch_issue": EQUAL_CONSTANTS, "stage": "run",
            "detail": (f"{r.get('first_mismatch')}; with fx_graph_cse keeping apart "
                       f"{', '.join(sorted(found))} (constants equal in Python, not in bits or "
                       "type), it agrees or is rounding")[:500]}


@contextlib.contextmanager
def expand_by_value():
    """Inductor with found-bugs 71 removed: ExpandView.make_reindexer zeroes the index of a
    dimension whose size is 1 by its value (as ExpandView.create asks for a view's stride), not
    only where the size is the literal 1; Inductor's caches off inside, so that no kernel
    compiled without the change is taken from them."""
    import sympy
    import torch._inductor.config
    from torch._inductor import ir
    from torch._inductor.virtualized import V

    def one(size):
        sizevars = V.graph.sizevars
        if hasattr(sizevars, "is_size_one_or_false"):  # torch >= 2.9 or so
            return sizevars.is_size_one_or_false(size)
        return sizevars.shape_env.evaluate_expr(sympy.Eq(size, 1), size_oblivious=True)

    def make_reindexer(view):
        actual = view.data.get_size()
        skip = len(view.get_size()) - len(actual)
        return lambda index: [sympy.S.Zero if one(size) else i
                              for i, size in zip(list(index[skip:]), actual)]
    real = ir.ExpandView.make_reindexer
    ir.ExpandView.make_reindexer = make_reindexer
    try:
        with torch._inductor.config.patch(force_disable_caches=True):
            yield
    finally:
        ir.ExpandView.make_reindexer = real


def dynamic_inductor_path(p, eager, cache):
    """compile.inductor.dynamic: Inductor at four sizes (compile.dynamic's); a mismatch that
    Inductor with entry 71's change removes at every size is that class."""
    r = dynamic_path(p, eager, cache, "inductor", judged)
    if r["status"] != "mismatch":
        return r
    with expand_by_value():
        again = dynamic_path(p, eager, cache, "inductor", judged)
    return broadcast_class(r, again)


def wide_path(p, eager, cache):
    """compile.inductor.wide: the program widened (widened), a fresh model compiled by Inductor
    with static shapes, its calls judged against torch eager's on the widened program."""
    own = [list(t.shape) for t in p.INPUTS]
    shapes = [wide_shape(s) for s in own]
    if shapes == own:
        return {"status": "skipped", "skip": "no-wide-input: no input has a dimension"}
    inputs = [resized(t, s) for t, s in zip(p.INPUTS, shapes)]
    with widened(p):
        want = eager_at(p, inputs)
        if want is None:
            return {"status": "skipped", "shapes": shapes,
                    "skip": "eager-refuses-wide: torch eager does not run the widened program "
                            "(a fixed shape in its code does not fit the new sizes)"}
        reset()
        try:
            r, _ = at_size(p, inputs, want, {}, "inductor", judged, dynamic=False)
        finally:
            reset()
    return {**r, "shapes": shapes}


def wide_settings_path(p, eager, cache, path):
    """compile.inductor.parallel, compile.inductor.padding: compile.inductor.wide under the
    path's SETTINGS; at the program's own sizes where torch eager refuses it widened."""
    with settings(path):
        r = wide_path(p, eager, cache)
    if not r.get("skip", "").startswith("eager-refuses-wide"):
        return r
    return {**inductor_path(p, eager, cache, path), "shapes": None}


def cond_strides_class(r, again):
    """`r`, an error or mismatch, as entry 102's class when `again` (the same path run with
    Inductor's cause of it removed: cond_operands_exact) agrees or is rounding; else `r`."""
    if again["status"] not in ("agree", "excused"):
        return r
    kept = {k: v for k, v in r.items() if k not in ("status", "stage", "first_mismatch")}
    first = (r.get("first_mismatch") or "").split("\n")[0]
    return {**kept, "status": "known_torch_issue", "known_torch_issue": COND_STRIDES,
            "stage": r.get("stage", "run"),
            "detail": (f"{first}; with each torch.cond operand given the strides its branch "
                       "graphs were compiled for, it "
                       f"{'agrees' if again['status'] == 'agree' else 'is rounding'}")[:500]}


@contextlib.contextmanager
def cond_operands_exact():
    """Inductor with found-bugs 102 removed: each operand of a torch.cond given, before the
    branch graphs are called, the strides those graphs were compiled for (the FX node's example
    value's, what the branch graph's input asserts), as while_loop's are; Inductor's caches
    off inside, so that no graph compiled without the change is taken from them."""
    import inspect
    import torch._inductor.config
    from torch._inductor import ir
    from torch._inductor.virtualized import V
    kind = getattr(ir, "Conditional", None) or ir.Switch  # torch 2.6; 2.14.1
    real = kind.__dict__["create"]
    create = real.__func__
    signature = inspect.signature(create)

    def exact(cls, *args, **kwargs):
        bound = signature.bind(cls, *args, **kwargs)
        nodes = V.graph.current_node.args[-1]  # the cond's operands in the FX graph
        bound.arguments["operands"] = [
            ir.ExternKernel.require_exact_strides(op, node.meta["val"].stride(),
                                                  allow_padding=False)
            if isinstance(node, torch.fx.Node) and isinstance(node.meta.get("val"), torch.Tensor)
            else op for op, node in zip(bound.arguments["operands"], nodes)]
        return create(*bound.args, **bound.kwargs)
    kind.create = classmethod(exact)
    try:
        with torch._inductor.config.patch(force_disable_caches=True):
            yield
    finally:
        kind.create = real


def wide_shape(shape):
    """Each dimension WIDE times larger: dimensions of one size stay alike, and a size that is
    the sum of others (a cat, a split, a chunk) still is. Size 1 becomes WIDE too, so a program
    that broadcasts a size-1 dimension against a larger one does not run widened (about a
    quarter of the generated programs)."""
    return [d * WIDE for d in shape]


@contextlib.contextmanager
def widened(p):
    """p.build() makes the model with every parameter and buffer widened as the inputs are
    (wide_shape; values repeated in order); a tensor registered under several names stays one."""
    build = p.build

    def wide_build():
        model = build()
        new = {}  # id of a tensor -> (the tensor, kept alive so its id stays its own; widened)
        for module in model.modules():
            for store in (module._parameters, module._buffers):
                for name, t in list(store.items()):
                    if t is None:
                        continue
                    if id(t) not in new:
                        w = resized(t.detach(), wide_shape(list(t.shape)))
                        new[id(t)] = (t, torch.nn.Parameter(w, requires_grad=t.requires_grad)
                                      if isinstance(t, torch.nn.Parameter) else w)
                    store[name] = new[id(t)][1]
        return model
    with unittest.mock.patch.object(p, "build", wide_build):
        yield p


def broadcast_class(r, again):
    """`r`, a mismatch at some size, as entry 71's class when `again` (the same path run with
    entry 71's cause removed: expand_by_value) agrees or is rounding at every size; else `r`."""
    if again["status"] not in ("agree", "excused"):
        return r
    return {"status": "known_torch_issue", "known_torch_issue": BROADCAST, "stage": "run",
            "sizes": r["sizes"], "shapes": r.get("shapes"),
            "detail": (f"{r.get('first_mismatch')}; with Inductor's ExpandView.make_reindexer "
                       "asking whether a size is 1 by its value, every size agrees or is "
                       "rounding")[:500]}


@contextlib.contextmanager
def caches_on():
    """Inductor's FX graph cache and AOTAutograd's cache on, local only, in a cache directory of
    their own that starts empty and is removed after (torch's fresh_inductor_cache, which also
    empties the in-memory caches before and after). AOTAutograd's cache is off by default in
    torch 2.6 (TORCHINDUCTOR_AUTOGRAD_CACHE=1 turns it on, and with it aliased outputs rebuilt
    by their view metadata, not replayed): set as that variable sets it."""
    import torch._functorch.config
    import torch._inductor.config
    from torch._inductor.utils import fresh_inductor_cache
    aot = torch._functorch.config
    own = {"enable_autograd_cache": True, "enable_remote_autograd_cache": False}
    if not aot.enable_autograd_cache and hasattr(aot, "view_replay_for_aliased_outputs"):
        own["view_replay_for_aliased_outputs"] = False
    with fresh_inductor_cache(), \
            torch._inductor.config.patch(fx_graph_cache=True, fx_graph_remote_cache=False,
                                         force_disable_caches=False), \
            aot.patch({k: v for k, v in own.items() if hasattr(aot, k)}):
        yield


def forget():
    """What a new process would not hold: dynamo's compiled frames and Inductor's in-memory
    caches (the loaded modules and kernels); the cache directory stays."""
    from torch._inductor.utils import clear_inductor_caches
    reset()
    clear_inductor_caches()


def cache_counts(since=None):
    """The cache counters; with `since` (counters read before), those that moved, by how much."""
    from torch._dynamo.utils import counters
    now = {name: counters[group][name] for group, names in CACHE_COUNTERS.items()
           for name in names}
    return now if since is None else {k: v - since[k] for k, v in now.items() if v != since[k]}


def cache_path(p, eager, cache):
    """compile.inductor.cache: the program compiled into empty caches, then a fresh model
    compiled from them after everything in memory is forgotten; that model's calls judged."""
    try:
        with caches_on():
            forget()
            cold = compiled_run(p)
            forget()
            before = cache_counts()
            warm = compiled_run(p)
            took = cache_counts(since=before)
    except Exception as e:  # noqa: BLE001 - Inductor refusing or failing on a program
        return refused(e)
    finally:
        reset()
    extra = {"cache": took}
    if took_nothing(took):
        return {"status": "skipped", "skip": "cache-not-taken: the second compile took nothing "
                f"from the caches ({', '.join(f'{k} {v}' for k, v in took.items()) or 'none'})",
                **extra}
    status, why = judged(p, *warm, eager, cache)
    same = not diff_values(*warm, eager, want_outs=cold[0], want_state=cold[1])
    extra["same_as_cold"] = same
    if status == "mismatch" and not same:
        first = judged(p, *cold, eager, cache)[0]
        if first != "mismatch":
            why = f"{why}; the first compile (caches empty) is {first}: the cache hit differs"
    return {**verdict(status, why), **extra}


def took_nothing(took):
    """A compile that took neither graph cache's entry (`took`: the counters that moved)."""
    return not took.get("fxgraph_cache_hit") and not took.get("autograd_cache_hit")


def cache_dynamic_path(p, eager, cache):
    """compile.inductor.cache.dynamic: every dimension symbolic, compiled at the inputs' own
    sizes into empty caches, then at each other size after everything in memory is forgotten
    (the caches on disk kept); every size judged, the worst result with what each took. A
    mismatch that Inductor with entry 71's cause removed does not give is that class."""
    r = cache_sizes(p, eager, cache)
    if r["status"] == "mismatch":
        with expand_by_value():
            again = cache_sizes(p, eager, cache)
        r = {**broadcast_class(r, again), "cache": r["cache"], "from_cache": r["from_cache"]}
    if all(took_nothing(t) for t in r["cache"][1:]) and r["status"] in ("agree", "excused"):
        return {"status": "skipped", "skip": "cache-not-taken: no size after the first took "
                "anything from the caches", "sizes": r["sizes"], "cache": r["cache"]}
    return r


def cache_sizes(p, eager, cache):
    """cache_dynamic_path's compiles and judgements: the worst size's result, with the sizes
    and what each took from the caches."""
    sizes, worst, took = sizes_judged(p, eager, cache), {"status": "agree"}, []
    try:
        with caches_on():
            for inputs, want, at in sizes:
                forget()
                before = cache_counts()
                r, _ = at_size(p, inputs, want, at, "inductor", judged, dynamic=True)
                took.append(cache_counts(since=before))
                if RANK.get(r["status"], 0) > RANK.get(worst["status"], 0):
                    worst = {**r, "shapes": [list(t.shape) for t in inputs],
                             "from_cache": not took_nothing(took[-1])}
    finally:
        reset()
    return {**worst, "sizes": [[list(t.shape) for t in inputs] for inputs, _, _ in sizes],
            "cache": took}


def run_inductor(p, eager, paths, cache):
    """The Inductor paths of one program, when asked for: {path: result}. An error or a
    mismatch of a path but the cache paths, on a program whose branch op is torch.cond, is
    traced: where the path run again with Inductor giving each torch.cond operand the strides
    its branch graphs were compiled for (cond_operands_exact) agrees or is rounding, it is
    entry 102's class. A mismatch that stays one, where the path's compile fused an add whose
    alpha is not 1 into addmm (watched: addmm_alpha_kept(refuse=False)) or, on a path but the
    cache paths, took a graph from a cache (whose fusions nobody watched), is traced too: where the path run again with that
    fusion refusing such adds (caches off) agrees or is rounding, it is entry 109's class."""
    def one(path):
        # the cache paths take their warm run's graph from their own cold run, watched
        with addmm_watched(count_hits=path not in CACHE_PATHS) as fused:
            r = run_path(path)
        if r["status"] in ("error", "mismatch") and path not in CACHE_PATHS and \
                getattr(p, "_branch", None) is cond_branch:
            with cond_operands_exact():
                again = run_path(path)
            r = cond_strides_class(r, again)
        if r["status"] == "mismatch" and fused:
            r = addmm_class(r, lambda: run_path(path))
        return r

    def run_path(path):
        if path == "compile.inductor.dynamic":
            return dynamic_inductor_path(p, eager, cache)
        if path == "compile.inductor.cache":
            return cache_path(p, eager, cache)
        if path == "compile.inductor.cache.dynamic":
            return cache_dynamic_path(p, eager, cache)
        if path == "compile.inductor.wide":
            return wide_path(p, eager, cache)
        if path in WIDE_SETTINGS:
            return wide_settings_path(p, eager, cache, path)
        if path == "compile.inductor.cpp_wrapper" and cpp_wrapper_available():
            return {"status": "skipped", "skip": cpp_wrapper_available()}
        if path == "compile.inductor.scalar" and scalar_available():
            return {"status": "skipped", "skip": scalar_available()}
        return inductor_path(p, eager, cache, path)
    return run_family(PATHS, paths, one, available())
