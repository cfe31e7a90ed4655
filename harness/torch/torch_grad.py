"""The bridge's gradient paths (docs/torch.md, --paths grad). Every other path judges forward
results with autograd off; these judge the backward.

  grad.compile.aot_eager   torch.compile(backend="aot_eager", fullgraph=True) of a fresh model:
                           AOTAutograd's joint graph, its partition into forward and backward
  grad.compile.inductor    the same with Inductor
  grad.compile.dynamic     backend="aot_eager" with dynamic=True: every dimension symbolic from
                           the first compile, so the backward is traced with symbolic sizes
  grad.compile.dynamic_inductor   the same with Inductor (its backward kernels for symbolic
                           sizes)
  grad.compile.breaks      backend="aot_eager" without fullgraph, graph breaks where
                           compile.breaks puts them (torch_compile.breaking): several graphs,
                           each its own AOTAutograd forward and backward, values crossing
                           between them (views of state and of each other among them)
  grad.compile.breaks_inductor   the same with Inductor
  grad.compile.regional    every module below the root compiled in place (Module.compile,
                           aot_eager, as compile.regional), the root eager: autograd joins the
                           compiled modules' backwards through the eager root's
  grad.compile.regional_inductor   the same with Inductor (a compiled module's saved
                           values are Inductor's, which its caller's eager code may update)
  grad.export.nonstrict    ep.module() of torch.export.export(strict=False) of a fresh model
  grad.export.strict       the same, strict
  grad.export.unflatten    torch.export.unflatten of the non-strict export
  grad.export.decomp       ep.run_decompositions().module() of the non-strict export: the
                           backward through the core ATen ops' own derivatives

Each runs the program's calls with every float input, and every float parameter, requiring
grad (each call on its own clone of the inputs: an update of an input stays out of the leaf),
then one backward of a fixed weighted sum of every call's float outputs (loss()). The gradients
of the inputs and of the parameters (under every name of a shared one) must equal torch eager's
(the same program, calls, loss and backward, on the model as written): bit for bit "agree";
within float32 rounding "excused" (close(): AOTAutograd and Inductor may order a gradient's sum
otherwise; a gradient of zeros where eager has None, as AOTAutograd gives a parameter that
reaches no output read); else "mismatch". A program whose eager backward raises with
parameters requiring grad (an in-place update of one) is run with the inputs only requiring
grad; one that raises even so, or with no float output that depends on a float input or
parameter, is skipped. The unflatten and decomp paths judge the backward only: where making
their module raises, or their forward outputs are not eager's (bit for bit or within rounding),
or their forward raises without grad too, the forward paths (export.nonstrict.unflatten,
export.nonstrict.decomp) judge and trace that, and the gradient path says "skipped" with why.
The decomp path's backward raising that an ATen op has no derivative is skipped too: the
decomposed program is functional inference IR (torch.export's docs: run_decompositions lowers
the training IR export gives), where an in-place copy_ becomes aten::copy, an op autograd has
no formula for; and so is a program with torch.no_grad() blocks (--branch nograd), which
run_decompositions inlines (inlined_regions).

Traced (docs/found-bugs.md):
  compile-buffer-grad-unguarded (92)   a compile path's gradients differ from eager's, and the
      same path with dynamo's caches reset before each call after the first (each call compiled
      for its own inputs) gives eager's: torch 2.6 reuses the graph compiled for a buffer that
      did not require grad once an update made it require grad, so the gradient through what
      an earlier call wrote into the buffer is dropped.
  compile-update-zero-tangent (94)   a compile path's gradients differ from eager's, and eager
      gives NaN wherever they differ (the path's NaN there too) once what each call wrote
      into a buffer, or into an input, with a value requiring grad joins the loss times zero
      (the path may show fewer NaN: see below): AOTAutograd makes those updates
      outputs of its graph and gives them zero tangents where eager's backward never reaches
      them, so a non-finite factor on the way (0 * NaN, 0 * inf) turns the gradient into NaN.
      On the paths whose model runs as several graphs (breaks, regional) every graph's
      outputs get such tangents: traced with every live value of the calls joining the loss
      times zero too (zeroing()). That gives more values zero tangents than AOTAutograd does
      (a graph none of whose outputs the loss reads never runs its backward at all; eager
      cannot tell the graphs apart), and a zero tangent only adds NaN, never takes one away:
      so the path's NaN lie within eager's so given, and may be fewer.
  compile-saved-alias-of-updated-input (95)   a compile path's gradients differ from eager's,
      and the same path with every tensor autograd saves copied when it is saved gives eager's:
      what the backward read changed after it was saved without autograd's version check
      seeing it (Inductor saves a view of an input, its own alias of the input's storage, and
      the forward's in-place update of the input then changes it).
  compile-backward-reads-updated-buffer (93)   a compile path's backward raises "modified by an
      inplace operation" naming a tensor of the size of a buffer that the eager calls updated
      with a value requiring grad, or of an input requiring grad that they updated in place,
      where eager's backward runs: the partitioner saved that graph input itself for the
      backward and the compiled forward then updated it.
  compile-output-aliases-updated-input (96)   a compile path's forward outputs, with grad on,
      are not eager's (or its backward raises that an output "of CompiledFunction is a view
      and its base ... has been modified inplace"), and an output the path gave shares storage
      with an input the same call updated in place where eager's output does not: Inductor
      replaces a no-op (x * 1.0) by its operand, so the output is the input and shows the
      input's update.
  compile-region-input-updated-by-caller (98)   a compile path whose model runs as several
      graphs (breaks, regional) raises in its backward that a tensor was "modified by an
      inplace operation" (or that a view "and its base ... has been modified inplace"), where
      eager's backward runs, and the same path with every tensor autograd saves copied when
      saved gives eager's gradients: a compiled graph saved its own input (or a view of it),
      where eager saved a value computed from it, and the code after the graph (the eager
      caller, a later graph) then updated the input in place. On the regional paths it is
      traced first, where a tensor a compiled module's call saved was updated after the call
      returned and none before (updated_after_call: the eager root's update, not the graph's
      own, 93's); on the breaks paths after 93 and 96, which cannot be told from it there.
  compile-chunk-output-not-a-view (99)   an Inductor compile path raises "aot_autograd() does
      not yet handle non-differentiable view input mutations" where the same path with
      aot_eager runs: Inductor returns an output that is a chunk of an input (a multi-output
      view) as a tensor sharing the input's storage but no autograd view of it, and a later
      graph given both it and the input, which it updates in place, refuses them.
  compile-cond-backward-donated-input (97)   a compile path's gradients differ from eager's,
      the program takes its branch op by torch.cond (--branch cond), and the same path with
      AOTAutograd's buffer donation off (torch._functorch.config.donated_buffer) gives eager's:
      Inductor compiles the cond's backward branches as subgraphs that take the outer
      backward's donated input positions for their own, so a branch overwrites the tangent it
      was given, which the outer backward still reads (another input's gradient).

The compile paths' forward outputs are judged too (stage "forward"): no forward path runs a
compiled model with grad on, where AOTAutograd compiles the training graph. A forward mismatch
of an Inductor path is traced as the forward paths trace it:
  inductor-dynamic-size-one-expression-broadcast (71)   an Inductor path's forward outputs are
      not eager's and the same path with Inductor's ExpandView.make_reindexer asking whether a
      size is 1 by its value (torch_inductor.expand_by_value) gives eager's forward outputs
      (seen on grad.compile.dynamic_inductor, torch 2.14.1: generate --seed 182, cases 32, 39).
  inductor-addmm-fusion-drops-alpha (109)   an Inductor path's mismatch (forward or gradients)
      where its compile fused an add whose alpha is not 1 into addmm (or took a graph from a
      cache), and the path run again with that fusion refusing such adds agrees
      (torch_inductor.addmm_class).
"""
import contextlib
import importlib
import re

import torch

from torch_compare import outputs_of
from torch_compile import available as compile_available
from torch_compile import broken, compile_regions
from torch_cond import cond_branch, nograd_branch
from torch_export import available, export_program, failure, grad_regions
from torch_inductor import BROADCAST, addmm_class, addmm_watched, expand_by_value
from torch_inductor import available as inductor_available

PATHS = ("grad.compile.aot_eager", "grad.compile.inductor", "grad.compile.dynamic",
         "grad.compile.dynamic_inductor", "grad.compile.breaks", "grad.compile.breaks_inductor",
         "grad.compile.regional", "grad.compile.regional_inductor", "grad.export.nonstrict",
         "grad.export.strict", "grad.export.unflatten", "grad.export.decomp")
# paths whose forward has known wrong results of its own (the forward paths judge those): the
# backward is judged only where the forward outputs are eager's
FORWARD_GATED = ("grad.export.unflatten", "grad.export.decomp")
COMPILE_PATHS = tuple(x for x in PATHS if x.startswith("grad.compile."))
INDUCTOR_PATHS = tuple(x for x in COMPILE_PATHS if "inductor" in x)
BREAKS_PATHS = ("grad.compile.breaks", "grad.compile.breaks_inductor")
# paths whose model runs as several compiled graphs: ZEROED is traced with every live value
# given a zero tangent (zeroing()), not only the updates
REGIONAL_PATHS = ("grad.compile.regional", "grad.compile.regional_inductor")
GRAPHS_PATHS = BREAKS_PATHS + REGIONAL_PATHS
UNGUARDED = "compile-buffer-grad-unguarded"
SAVED_UPDATED = "compile-backward-reads-updated-buffer"
ZEROED = "compile-update-zero-tangent"
SAVED_ALIAS = "compile-saved-alias-of-updated-input"
OUTPUT_ALIAS = "compile-output-aliases-updated-input"
DONATED = "compile-cond-backward-donated-input"
REGION_INPUT = "compile-region-input-updated-by-caller"
NOT_A_VIEW = "compile-chunk-output-not-a-view"
# each Inductor path's aot_eager twin: the same graphs, eager kernels
AOT_TWIN = {"grad.compile.inductor": "grad.compile.aot_eager",
            **{x: x.replace("_inductor", "") for x in PATHS if x.endswith("_inductor")}}
COMPILED_VIEW = "of CompiledFunction is a view and its base"
VIEW_CHANGED = "is a view and its base or another view of its base has been modified inplace"
NON_DIFF_VIEWS = "does not yet handle non-differentiable view input mutations"
INPLACE = "modified by an inplace operation"
NO_DERIVATIVE = re.compile(r"derivative for (aten::\w+) is not implemented")
RTOL, ATOL = 1e-4, 1e-5  # close(): float32 rounding of a reordered sum, not a wrong gradient


def is_float(t):
    return isinstance(t, torch.Tensor) and t.is_floating_point()


def loss_of(outs):
    """Sum of each float output requiring grad times fixed weights (its position's own draw);
    NaN and infinities weighted to 0 so one does not hide the rest. None when there is none."""
    loss = None
    for i, o in enumerate(outs):
        if is_float(o) and o.requires_grad:
            weights = torch.rand(o.shape, generator=torch.Generator().manual_seed(7 + i),
                                 dtype=o.dtype)
            term = (o * weights).nan_to_num(0.0, 0.0, 0.0).sum()
            loss = term if loss is None else loss + term
    return loss


class Run:
    """One run of a program's calls and backward: `grads` {"input I" | "param FQN": tensor or
    None}, `updated` the shapes of the buffers that hold a value requiring grad after the calls
    (an update wrote one into them) and of the inputs requiring grad a call updated in place
    (emit-torch --update-inputs), `outs` every call's outputs (detached)."""

    def __init__(self, grads, updated, aliases, outs=()):
        self.grads, self.updated, self.aliases, self.outs = grads, updated, aliases, outs


def kept_as_saved(t):
    """A saved tensor's copy, made when autograd saves it, in its own strides (Inductor's
    backward asserts them): what the backward reads is then the value as it was saved."""
    return torch.empty_strided(t.size(), t.stride(), dtype=t.dtype, device=t.device).copy_(t)


def prepared(p, make, params):
    """A fresh model from `make()`, its float parameters requiring grad where `params`, and the
    leaves: each float input's clone requiring grad (each call then runs on clones of them)."""
    module = make()
    if params:  # torch.compile's wrapper gives its model's; ep.module() holds its own
        for t in module.parameters():
            if is_float(t):
                t.requires_grad_(True)
    return module, [t.clone().requires_grad_(True) if is_float(t) else t.clone()
                    for t in p.INPUTS]


def zeroing(p, breaks=()):
    """A recorder for the program's `_R` that, as each call of a module ends, adds each live
    value of the call to `terms` times zero (a zero tangent): its results, the values of the
    nodes named in `breaks` (the graph breaks at the recorder's call with the value, which is
    then an output of the graph before it), and backwards from them and from the nodes that
    act (a buffer update, a module call) every value a live node reads. Where a graph ends (a
    graph break, a compiled module's return) its live values are its outputs, and AOTAutograd
    gives each output a zero tangent where the loss reads none; dead values are left out, as a
    compiled graph drops them. Values otherwise pass through."""
    class Zeroing(p._NoRecorder):
        def __init__(self):
            self.frames, self.terms = [], []

        def begin(self, names):
            self.frames.append({})

        def node(self, name, op, value, inputs, dim=None):
            self.frames[-1][name] = (op, value, inputs)
            return value

        def end(self, outputs, value):
            frame = self.frames.pop()
            todo = list(outputs) + [n for n in frame if n in breaks] + [
                n for op, _, inputs in frame.values() if op in ("copy_", "call_module")
                for n in inputs]
            live = set()
            while todo:
                name = todo.pop()
                if name in frame and name not in live:
                    live.add(name)
                    todo += frame[name][2]
            for name in live:
                held = frame[name][1]
                for t in held if isinstance(held, (tuple, list)) else (held,):
                    if is_float(t) and t.requires_grad:
                        self.terms.append((t * 0.0).sum())
            return value
    return Zeroing()


def gradients(p, make, params, recompile=False, zero_tangents=False, keep_saved=False,
              donation=True):
    """The calls of the callable `make()` gives (from a fresh model), then the backward: a Run,
    or None when no float output requires grad. `params`: the float parameters require grad
    too. `recompile`: dynamo's caches reset before each call after the first, so each call is
    compiled for its own inputs (UNGUARDED's cause removed). `zero_tangents`: what each call
    left in a buffer or an input it updated with a value requiring grad joins the loss times
    zero, a zero tangent, as AOTAutograd gives the outputs it makes of those updates (ZEROED's
    cause put into eager); "live": so does every live value of the calls, where the program
    has a recorder (zeroing(p): a graph of compile.breaks ends at a graph break, a compiled
    module's at its return, and AOTAutograd gives each output there a zero tangent where the
    loss reads none). `keep_saved`: every tensor autograd saves is copied when saved
    (SAVED_ALIAS's cause removed). `donation` False: AOTAutograd's buffer donation off while
    the calls compile (DONATED's cause removed)."""
    if keep_saved:
        with torch.autograd.graph.saved_tensors_hooks(kept_as_saved, lambda t: t):
            return gradients(p, make, params, recompile, zero_tangents, donation=donation)
    config = None if donation else importlib.import_module("torch._functorch.config")
    if config is not None and hasattr(config, "donated_buffer"):  # (torch 2.5 on)
        with config.patch(donated_buffer=False):
            return gradients(p, make, params, recompile, zero_tangents)
    if zero_tangents == "live" and hasattr(p, "_R") and not hasattr(p._R, "terms"):
        own = p._R  # compile.breaks' recorder while a breaks path runs: its breaks are kept
        p._R = zeroing(p, getattr(own, "BREAKS", ()))
        try:
            return gradients(p, make, params, recompile, zero_tangents)
        finally:
            p._R = own
    module, leaves = prepared(p, make, params)
    outs, updated, written = [], set(), []
    with torch.enable_grad():
        for k in range(p.CONFIG["calls"]):
            if recompile and k:
                torch._dynamo.reset()
            args = [t.clone() for t in leaves]
            outs += outputs_of(module(*args))
            changed = [a for a in args if is_float(a) and a.requires_grad and a._version]
            updated |= {tuple(a.shape) for a in changed}  # an input the call updated in place
            if zero_tangents:  # a clone keeps this call's value apart from later updates
                written += [t.clone() for t in changed + list(module.buffers())
                            if is_float(t) and t.requires_grad]
        loss = loss_of(outs)
        if loss is None:
            return None
        for t in written:
            loss = loss + (t * 0.0).sum()
        for term in getattr(getattr(p, "_R", None), "terms", ()):
            loss = loss + term
        updated |= {tuple(b.shape) for b in module.buffers() if b.requires_grad}
        loss.backward()
    grads = {f"input {i}": None if t.grad is None else t.grad.detach().clone()
             for i, t in enumerate(leaves) if is_float(t)}
    # torch.compile's wrapper: the model's names (not any module's child named `_orig_mod`, as
    # emit-torch --hostile-child-names names one)
    held = module._orig_mod if isinstance(module, torch._dynamo.eval_frame.OptimizedModule) \
        else module
    names = {}
    for name, t in held.named_parameters(remove_duplicate=False):
        if params and is_float(t):
            grads[f"param {name}"] = None if t.grad is None else t.grad.detach().clone()
            names.setdefault(id(t), []).append(f"param {name}")
    return Run(grads, updated, {k: group for group in names.values() for k in group},
               [o.detach() if isinstance(o, torch.Tensor) else o for o in outs])


def equal(a, b):
    """Bit for bit, NaN in the same places."""
    if a is None or b is None or a.shape != b.shape:
        return a is None and b is None
    nan_a, nan_b = torch.isnan(a), torch.isnan(b)
    return torch.equal(nan_a, nan_b) and torch.equal(a[~nan_a], b[~nan_b])


def close(a, b):
    """Within float32 rounding; or a zero gradient where the other has none (AOTAutograd gives
    a parameter of its graph that reaches no output read a gradient of zeros, eager None)."""
    if a is None or b is None:
        other = b if a is None else a
        return other is not None and not bool(other.any())
    return a.shape == b.shape and torch.allclose(a, b, rtol=RTOL, atol=ATOL, equal_nan=True)


def differences(want, got, aliases=None):
    """The gradients of `got` (a dict) not equal to `want`'s: [(key, close)]. A parameter
    `got` does not hold under a name is judged by another name of its tensor (`aliases`,
    want's: strict export keeps one name of a shared parameter) where got holds one."""
    aliases = aliases or {}
    return [(k, close(w, got.get(k))) for k, w in want.items()
            if not (k not in got and any(a in got for a in aliases.get(k, ())))
            and not equal(w, got.get(k))]


def described(key, want, got):
    w, g = want.get(key), got.get(key)
    if key not in got:
        return f"{key}: not held by the path's module"
    if w is None or g is None:
        return f"{key}: {'no gradient' if g is None else 'a gradient'} where eager has " \
               f"{'none' if w is None else 'one'}"
    if w.shape != g.shape:
        return f"{key}: gradient of shape {tuple(g.shape)}, eager's {tuple(w.shape)}"
    gap = (w - g).abs().nan_to_num(float("inf"))  # NaN on one side only: the widest gap
    gap[torch.isnan(w) & torch.isnan(g)] = 0
    i = int(torch.argmax(gap).item())
    return f"{key}: gradient {g.flatten()[i].item()!r} at {i}, eager's {w.flatten()[i].item()!r}"


def judged(want, got):
    diffs = differences(want.grads, got.grads, want.aliases)
    if not diffs:
        return {"status": "agree"}
    far = [k for k, near in diffs if not near]
    if not far:
        zeros = [k for k, _ in diffs if want.grads[k] is None]
        return {"status": "excused", "detail": "; ".join(
            ([f"within float32 rounding of eager's gradients (rtol {RTOL}, atol {ATOL}): "
              f"{described(k, want.grads, got.grads)}"
              for k, _ in diffs if k not in zeros][:1]) +
            ([f"zeros where eager has no gradient ({', '.join(zeros[:3])}"
              f"{', ...' if len(zeros) > 3 else ''})"] if zeros else []))}
    return {"status": "mismatch", "first_mismatch": described(far[0], want.grads, got.grads)}


def compiler(p, backend, dynamic=False, fullgraph=True):
    def make():
        torch._dynamo.reset()
        return torch.compile(p.build(), backend=backend, fullgraph=fullgraph, dynamic=dynamic)
    return make


def regional(p, backend="aot_eager"):
    def make():
        torch._dynamo.reset()
        return compile_regions(p.build(), backend)[0]
    return make


def exporter(p, mode):
    return lambda: export_program(p, mode).module()


def unflattener(p):
    return lambda: torch.export.unflatten(export_program(p, "nonstrict"))


def decomposer(p):
    return lambda: export_program(p, "nonstrict").run_decompositions().module()


def forward_differs(want, got):
    """The first output of `got` that is not eager's (bit for bit or within close()), as a
    text; None when every output is."""
    if len(want.outs) != len(got.outs):
        return f"{len(got.outs)} outputs, eager's {len(want.outs)}"
    for i, (w, g) in enumerate(zip(want.outs, got.outs)):
        if isinstance(w, torch.Tensor) != isinstance(g, torch.Tensor):
            return f"output {i}: {type(g).__name__}, eager's {type(w).__name__}"
        if not isinstance(w, torch.Tensor):
            same = w == g or (w != w and g != g)  # noqa: PLR0124 - NaN
        elif w.is_floating_point() and g.is_floating_point():
            same = equal(w, g) or close(w, g)
        else:
            same = w.dtype == g.dtype and w.shape == g.shape and torch.equal(w, g)
        if not same:
            return f"output {i} differs from eager's"
    return None


def inplace_shape(e):
    """The shape autograd's "modified by an inplace operation" error names, or None."""
    m = re.search(r"\[torch\.\w+ \[([0-9, ]*)\]\]", str(e))
    return tuple(int(x) for x in m.group(1).split(",") if x.strip()) if m else None


def aliased_outputs(p, make, params):
    """The positions (over every call) of the float outputs that share storage with an input
    the same call updated in place, the calls run with grad on as gradients() runs them."""
    module, leaves = prepared(p, make, params)
    found, k = set(), 0
    with torch.enable_grad():
        for _ in range(p.CONFIG["calls"]):
            args = [t.clone() for t in leaves]
            outs = outputs_of(module(*args))
            updated = {a.untyped_storage().data_ptr() for a in args if is_float(a) and a._version}
            for o in outs:
                if is_float(o) and o.untyped_storage().data_ptr() in updated:
                    found.add(k)
                k += 1
    return found


def output_alias(p, make, params):
    """OUTPUT_ALIAS's cause: the first output the path's calls give as an alias of an input
    they updated where eager's calls give none, as a text; None when there is none (or the
    run that would show it raises)."""
    try:
        extra = aliased_outputs(p, make, params) - aliased_outputs(p, p.build, params)
    except Exception:  # noqa: BLE001 - the run does not go: it shows nothing
        return None
    return f"output {min(extra)} shares storage with an input the call updated" if extra \
        else None


def updated_after_call(p, make, params):
    """Whether, on a regional path (the root eager), a tensor that a call of a compiled module
    below the root saved for the backward was updated in place after that call returned and
    none before: the eager caller's update (REGION_INPUT's cause), not the compiled graph's
    own (SAVED_UPDATED's). The calls run with grad on, each saved tensor recorded with its
    version (not copied); False where the run raises."""
    frames, saved, inside = [], [], []

    def pack(t):
        if frames:
            frames[-1].append((t, t._version))
        return t

    def watched(inner):
        def call(*args, **kwargs):
            frames.append([])
            try:
                return inner(*args, **kwargs)
            finally:
                mine = frames.pop()
                inside.extend(t._version != v for t, v in mine)
                saved.extend(mine)
        return call

    try:
        module, leaves = prepared(p, make, params)
        for child in {id(c): c for c in module.children()}.values():
            if getattr(child, "_compiled_call_impl", None) is not None:
                child._compiled_call_impl = watched(child._compiled_call_impl)
        with torch.enable_grad(), torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            for _ in range(p.CONFIG["calls"]):
                module(*[t.clone() for t in leaves])
    except Exception:  # noqa: BLE001 - the run does not go: it shows nothing
        return False
    return not any(inside) and any(t._version != v for t, v in saved)


def known(cls, stage, e, before=""):
    """The result of a path whose exception `e` at `stage` is the known class `cls`."""
    return {"status": "known_torch_issue", "known_torch_issue": cls, "stage": stage,
            "detail": f"{before}{type(e).__name__}: {e}"[:300]}


def traced_error(e, path, want, alias=lambda: None, kept=lambda: False, twin=lambda: False,
                 after=lambda: False):
    """A compile path's backward raising SAVED_UPDATED's error, or OUTPUT_ALIAS's where
    `alias()` (output_alias of the path) shows its cause, or REGION_INPUT's where `kept()`
    (the path with every saved tensor copied when saved gives eager's gradients) shows its
    (on a regional path first where `after()`, updated_after_call, tells it from
    SAVED_UPDATED's), or an Inductor path raising NOT_A_VIEW's where `twin()` (its aot_eager
    twin runs) shows its; else failure()'s reading."""
    if path in AOT_TWIN and NON_DIFF_VIEWS in str(e) and twin():
        return known(NOT_A_VIEW, path, e)
    changed = INPLACE in str(e) or VIEW_CHANGED in str(e)
    if path in REGIONAL_PATHS and changed and after() and kept():
        return known(REGION_INPUT, "backward", e)
    if path in COMPILE_PATHS and INPLACE in str(e) and inplace_shape(e) in want.updated:
        return known(SAVED_UPDATED, "backward", e)
    shown = path in COMPILE_PATHS and COMPILED_VIEW in str(e) and alias()
    if shown:
        return known(OUTPUT_ALIAS, "forward", e, f"{shown}; ")
    if path in BREAKS_PATHS and changed and kept():
        return known(REGION_INPUT, "backward", e)
    return failure(e, "backward" if changed else path)


def path_verdict(p, path, make, want, params, got):
    """The result of a path whose Run is `got`, before traced(): skipped where a forward gated
    path's forward is not eager's, a forward mismatch (forward_judged), else judged."""
    differs = forward_differs(want, got) if got and path in FORWARD_GATED else None
    r = {"status": "skipped", "skip": f"the forward is not eager's ({differs}): the forward "
         "paths judge it"} if differs else judged(want, got) if got else {
        "status": "mismatch", "first_mismatch": "no float output requires grad"}
    return (got and forward_judged(p, path, make, want, params, got)) or r


def again(p, path, make, want, params):
    """The path run again from empty compile caches: its path_verdict."""
    torch._dynamo.reset()
    return path_verdict(p, path, make, want, params, gradients(p, make, params))


def forward_judged(p, path, make, want, params, got):
    """A compile path's forward outputs (with grad on) that are not eager's: a mismatch at
    stage forward, OUTPUT_ALIAS where its cause shows; None when they are eager's."""
    differs = forward_differs(want, got) if path in COMPILE_PATHS else None
    if not differs:
        return None
    alias = output_alias(p, make, params)
    if alias:
        return {"status": "known_torch_issue", "known_torch_issue": OUTPUT_ALIAS,
                "stage": "forward", "detail": f"{differs}: {alias}"}
    if path in INDUCTOR_PATHS and broadcast_removed(p, make, want, params):
        return {"status": "known_torch_issue", "known_torch_issue": BROADCAST,
                "stage": "forward", "detail": f"{differs}; with Inductor's ExpandView."
                "make_reindexer asking whether a size is 1 by its value, the forward is eager's"}
    return {"status": "mismatch", "stage": "forward", "first_mismatch": differs}


def broadcast_removed(p, make, want, params):
    """Whether the path made by `make` gives eager's forward outputs with found-bugs 71's
    cause removed (expand_by_value); False where that run raises or gives no outputs."""
    try:
        with expand_by_value():
            got = gradients(p, make, params)
    except Exception:  # noqa: BLE001 - the run does not go: it shows nothing
        return False
    finally:
        torch._dynamo.reset()
    return bool(got) and forward_differs(want, got) is None


def runs(run):
    """Whether `run()` returns without raising."""
    try:
        run()
    except Exception:  # noqa: BLE001 - any refusal is the answer
        return False
    return True


def same_as(want, run, aliases):
    """Whether the Run `run()` gives the gradients of the Run `want` (bit for bit or within
    rounding); False where it raises or has no gradients."""
    try:
        got = run()
    except Exception:  # noqa: BLE001 - the run does not go: it shows nothing
        return False
    return bool(got) and all(near for _, near in differences(want.grads, got.grads, aliases))


def only_where_nan(want, got, run):
    """Whether every gradient element of the Run `got` that is not `want`'s (within rounding; a
    missing gradient read as zeros) is NaN, and NaN in the Run `run()` gives too: the
    difference is NaN where ZEROED's cause makes NaN. `run()` may give more values zero
    tangents than the path's graphs do (zeroing()), and a zero tangent only adds NaN, so the
    path's NaN may be fewer; False where run() raises."""
    try:
        nan = run()
    except Exception:  # noqa: BLE001 - the run does not go: it shows nothing
        return False
    if not nan:
        return False
    for k, w in want.grads.items():
        g, n = got.grads.get(k), nan.grads.get(k)
        ref = next((t for t in (w, g, n) if t is not None), None)
        if ref is None:
            continue
        w, g, n = (torch.zeros_like(ref) if t is None else t for t in (w, g, n))
        if not w.shape == g.shape == n.shape:
            return False
        differs = ~torch.isclose(w, g, rtol=RTOL, atol=ATOL, equal_nan=True)
        if not bool((torch.isnan(g[differs]) & torch.isnan(n[differs])).all()):
            return False
    return True


def traced(p, path, make, want, params, r, got):
    """A compile path's mismatch `r` (its Run `got`), traced: ZEROED where eager given zero
    tangents for what the calls wrote into buffers and inputs (on GRAPHS_PATHS, or for every
    live value too) gives NaN wherever the path's gradients are not eager's (only_where_nan);
    UNGUARDED where the path with each call compiled afresh gives eager's; SAVED_ALIAS where
    the path with every saved tensor copied when saved gives eager's; DONATED where the
    program takes its branch op by torch.cond and the path with buffer donation off gives
    eager's; `r` as it is where none holds (or the run that would show it raises)."""
    if r["status"] != "mismatch" or not path.startswith("grad.compile"):
        return r
    causes = [(ZEROED, lambda: got and any(only_where_nan(
                   want, got, lambda: gradients(p, p.build, params, zero_tangents=how))
                   for how in (True, "live")[:2 if path in GRAPHS_PATHS else 1])),
              (UNGUARDED, lambda: p.CONFIG["calls"] >= 2 and same_as(
                   want, lambda: gradients(p, make, params, recompile=True), want.aliases)),
              (SAVED_ALIAS, lambda: same_as(
                   want, lambda: gradients(p, make, params, keep_saved=True), want.aliases)),
              (DONATED, lambda: getattr(p, "_branch", None) is cond_branch and same_as(
                   want, lambda: gradients(p, make, params, donation=False), want.aliases))]
    for cls, shown in causes:
        if shown():
            return {"status": "known_torch_issue", "known_torch_issue": cls,
                    "stage": "backward", "detail": r["first_mismatch"]}
    return r


def eager_reference(p):
    """Eager's Run and whether the parameters require grad in it; (None, why) to skip."""
    for params in (True, False):
        try:
            run = gradients(p, p.build, params)
        except RuntimeError as e:
            why = f"torch eager's backward raises {type(e).__name__}: {e}"[:300]
            continue
        if run is None:
            return None, "no float output depends on a float input or parameter"
        return (run, params), None
    return None, why


def forward_raises(p, make):
    """For a FORWARD_GATED path: why the forward paths judge this program and not the gradient
    path (making the module raises, or its calls raise without grad too); None when neither."""
    try:
        module = make()
    except Exception as e:  # noqa: BLE001 - the forward paths' failure, judged there
        return f"making the module raises {type(e).__name__}: {' '.join(str(e).split())}"[:200]
    try:
        with torch.no_grad():
            for _ in range(p.CONFIG["calls"]):
                module(*[t.clone() for t in p.INPUTS])
    except Exception as e:  # noqa: BLE001 - the same
        return f"the forward raises without grad too, {type(e).__name__}: " \
               f"{' '.join(str(e).split())}"[:200]
    return None


def inlined_regions(p):
    """Why the decomp path does not judge a program with torch.no_grad() blocks (--branch
    nograd; the non-strict export holds them as wrap_with_set_grad_enabled nodes):
    run_decompositions lowers to inference IR and inlines the blocks, so gradients flow where
    eager's stop (torch's own test_export_with_set_grad_enabled expects it to fail after
    run_decompositions: "set_grad disappears after decomp"); None when it holds none."""
    if getattr(p, "_branch", None) is not nograd_branch:
        return None
    try:
        regions = grad_regions(export_program(p, "nonstrict"))
    except Exception:  # noqa: BLE001 - the path's own error, judged there
        return None
    if not regions:
        return None
    return "run_decompositions inlines the program's torch.no_grad() blocks: inference IR, " \
           "gradients flow where eager's stop"


def refused(p, path, make, e):
    """Why the error `e` of a FORWARD_GATED path is not the gradient path's to judge (see
    forward_raises; the decomp path's op without a derivative); None when it is."""
    why = forward_raises(p, make) if path in FORWARD_GATED else None
    if why:
        return f"{why}: the forward paths judge it"
    op = NO_DERIVATIVE.search(str(e)) if path == "grad.export.decomp" else None
    return op and f"the decomposed program is inference IR: {op.group(1)} has no derivative"


def run_grad(p, eager, paths, cache):
    """Every requested gradient path of one program: {path: result}. `eager` and `cache`, the
    forward paths' reference, are not read: the reference is eager's own backward."""
    del eager, cache
    wanted = [x for x in PATHS if x in paths]
    why = available() or compile_available()
    reference, skip = (None, why) if why else eager_reference(p)
    if reference is None:
        return {x: {"status": "skipped", "skip": skip} for x in wanted}
    want, params = reference
    no_inductor = inductor_available() if set(INDUCTOR_PATHS) & set(wanted) else None
    makers = {"grad.compile.aot_eager": compiler(p, "aot_eager"),
              "grad.compile.inductor": compiler(p, "inductor"),
              "grad.compile.dynamic": compiler(p, "aot_eager", dynamic=True),
              "grad.compile.dynamic_inductor": compiler(p, "inductor", dynamic=True),
              "grad.compile.breaks": compiler(p, "aot_eager", fullgraph=False),
              "grad.compile.breaks_inductor": compiler(p, "inductor", fullgraph=False),
              "grad.compile.regional": regional(p),
              "grad.compile.regional_inductor": regional(p, "inductor"),
              "grad.export.nonstrict": exporter(p, "nonstrict"),
              "grad.export.strict": exporter(p, "strict"),
              "grad.export.unflatten": unflattener(p),
              "grad.export.decomp": decomposer(p)}
    results = {}
    for path in wanted:
        if path in BREAKS_PATHS and not hasattr(p, "_NoRecorder"):
            results[path] = {"status": "skipped", "skip": "the program has no recorder (_R) "
                             "to break the graph in: not written by emit-torch"}
        elif path in BREAKS_PATHS:  # the path's calls (and its traces' reruns) break the graph
            with broken(p) as breaks:
                results[path] = {**one_path(p, path, makers[path], want, params, no_inductor,
                                            makers.get(AOT_TWIN.get(path))),
                                 "breaks": breaks}
        else:
            results[path] = one_path(p, path, makers[path], want, params, no_inductor,
                                     makers.get(AOT_TWIN.get(path)))
    return results


def one_path(p, path, make, want, params, no_inductor, twin=None):
    """One gradient path's result for a program whose eager Run is `want`; `twin` makes the
    model of the path's aot_eager twin (an Inductor path's), else None."""
    if path in INDUCTOR_PATHS and no_inductor:
        return {"status": "skipped", "skip": no_inductor}
    inlined = inlined_regions(p) if path == "grad.export.decomp" else None
    if inlined:
        return {"status": "skipped", "skip": inlined}
    try:
        watch = addmm_watched() if path in INDUCTOR_PATHS else contextlib.nullcontext(set())
        with watch as fused:
            got = gradients(p, make, params)
        r = path_verdict(p, path, make, want, params, got)
        if r["status"] == "mismatch" and r.get("stage") != "forward":
            r = traced(p, path, make, want, params, r, got)
        if r["status"] == "mismatch" and fused:  # docs/found-bugs.md 109's cause met
            r = addmm_class(r, lambda: again(p, path, make, want, params))
    except Exception as e:  # noqa: BLE001 - torch refusing the program: traced, else an error
        why = refused(p, path, make, e)
        r = {"status": "skipped", "skip": why} if why else traced_error(
            e, path, want, lambda: output_alias(p, make, params), lambda: same_as(
                want, lambda: gradients(p, make, params, keep_saved=True), want.aliases),
            lambda: twin is not None and runs(lambda: gradients(p, twin, params)),
            lambda: updated_after_call(p, make, params))
    finally:
        torch._dynamo.reset()
    return {**r, "params_require_grad": params}
