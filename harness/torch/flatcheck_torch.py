#!/usr/bin/env python3
"""flatcheck's bridge to real PyTorch (docs/torch.md). No dependency beyond torch.

    python3 harness/torch/flatcheck_torch.py PROGRAM.py... [--paths eager,fx,export]
                                              [--inline position|name] [--quiet]

Each PROGRAM.py is written by `flatcheck emit-torch`. For each one:
  eager   torch's eager run vs flatcheck's eager reference, node by node in the first call:
          a node whose inputs were bit-identical must be bit-identical too (NaN payloads
          included), or within its op's bound for exp, tanh, sigmoid (ULPs, measured), sum and
          matmul (an error bound from the summation length). A node that differs within its
          bound makes everything downstream "unchecked" (the difference propagates). Outputs
          of every call and the final state must then be bit-identical unless a bounded
          difference occurred.
  fx      torch.fx: symbolic_trace, split with torch's split_module into the runs flatcheck's
          partitioner made (_run_on_acc_* / _run_on_gpu_*), fallback runs inlined by position
          (--inline name: by node name, the old Torch-TensorRT wiring), torch.save/torch.load,
          two calls: outputs and buffers must equal torch eager's bit for bit.
  export  where torch.export exists (torch >= 2.5): export, save, load, unflatten, two calls,
          outputs and buffers vs torch eager, bit for bit; otherwise skipped with the reason.
Prints one JSON line per program and path, then a summary line; exits 1 on any mismatch,
2 on bad usage.
"""
import argparse
import importlib.util
import io
import json
import math
import operator
import os
import struct
import sys

import torch

# ULP bounds between torch's CPU kernels and flatcheck's (measure_ulps.py + bench/results/ulp.md):
# torch exp 1, tanh 1, sigmoid 2; flatcheck (glibc) exp 1, tanh 2, sigmoid 2 (on [-87, 20]).
ULP_BOUNDS = {"exp": 2, "tanh": 3, "sigmoid": 4}
# Ops whose NaN payloads are not compared: the transcendental kernels differ in implementation,
# and torch's maximum/minimum give 0xffffffff in vectorized blocks but 0x7fc00000 in the
# scalar tail of the same tensor (docs/torch.md).
# Binary arithmetic with two NaN operands keeps one payload or the other depending on whether the
# element falls in a vectorized block or the scalar tail (mul: the first operand in the tail,
# the second in vector blocks).
# The same holds with a NaN scalar argument (add_scalar ... div_scalar): mul keeps either payload
# depending on the element's position.
NAN_RELAXED = {"exp", "tanh", "sigmoid", "sum", "matmul", "maximum", "minimum", "add", "sub",
               "mul", "div", "add_scalar", "sub_scalar", "mul_scalar", "div_scalar"}
# Ops whose sign of zero is not compared: torch's vectorized maximum/minimum return the second
# operand on a +0/-0 tie, the scalar tail the first.
ZERO_SIGN_RELAXED = {"maximum", "minimum"}
EPS = 2.0 ** -24


def _bits(t):
    return t.detach().contiguous().reshape(-1).view(torch.int32).to(torch.int64)


def ulp_distance(a, b):
    """Per-element distance on the ordered float line; NaN vs NaN is 0, NaN vs number huge."""
    ai, bi = _bits(a), _bits(b)
    ai = torch.where(ai < 0, -(ai & 0x7FFFFFFF), ai)
    bi = torch.where(bi < 0, -(bi & 0x7FFFFFFF), bi)
    d = (ai - bi).abs()
    an, bn = torch.isnan(a.reshape(-1)), torch.isnan(b.reshape(-1))
    d = torch.where(an & bn, torch.zeros_like(d), d)
    return torch.where(an ^ bn, torch.full_like(d, 1 << 40), d)


def bit_equal(a, b):
    return a.shape == b.shape and bool(torch.equal(_bits(a), _bits(b)))


class Verdict:
    BITWISE, WITHIN, MISMATCH = "bitwise", "within_bound", "mismatch"


def compare_node(op, got, want, inputs, dim, nan_exact):
    """Compares torch's value of a node with flatcheck's, given bit-identical inputs."""
    if got.shape != want.shape:
        return Verdict.MISMATCH, f"shape {list(got.shape)} vs {list(want.shape)}"
    if bit_equal(got, want):
        return Verdict.BITWISE, ""
    gn, wn = torch.isnan(got), torch.isnan(want)
    if not torch.equal(gn, wn):
        return Verdict.MISMATCH, "NaN in one and not the other"
    if not nan_exact or op in NAN_RELAXED:
        got = torch.where(gn, want, got)  # payloads relaxed
        if bit_equal(got, want):
            return Verdict.WITHIN, "NaN payloads differ"
    if op in ZERO_SIGN_RELAXED:
        got = torch.where((got == 0) & (want == 0), want, got)
        if bit_equal(got, want):
            return Verdict.WITHIN, "NaN payloads or signs of zero differ"
    if op in ULP_BOUNDS:
        d = int(ulp_distance(got, want).max())
        if d <= ULP_BOUNDS[op]:
            return Verdict.WITHIN, f"{d} ulp"
        return Verdict.MISMATCH, f"{d} ulp > bound {ULP_BOUNDS[op]}"
    if op in ("sum", "matmul") and inputs:
        # |torch - flatcheck| <= 2 (n - 1) u sum|terms|: both summation orders are within
        # (n - 1) u sum|terms| of the exact sum.
        if op == "sum":
            terms, n = inputs[0].double().abs().sum(dim=dim), inputs[0].shape[dim]
        else:
            terms, n = inputs[0].double().abs() @ inputs[1].double().abs(), inputs[0].shape[1]
        bound = 2 * max(n - 1, 1) * EPS * terms + 1e-45
        diff = (got.double() - want.double()).abs()
        finite = torch.isfinite(want) & torch.isfinite(got)
        same_inf = torch.where(finite, torch.ones_like(finite), got == want)
        if bool(((diff <= bound) | ~finite).all()) and bool(same_inf.all()):
            return Verdict.WITHIN, f"max {float((diff - bound).max()):.3g} below the bound"
        return Verdict.MISMATCH, "beyond the summation bound"
    d = int(ulp_distance(got, want).max())
    return Verdict.MISMATCH, f"{d} ulp, op {op} is compared bit for bit"


class Recorder:
    """Installed as the program's _R: follows calls as flatcheck's interpreter names them."""

    def __init__(self, program, counts):
        self.p = program
        self.counts = counts  # op -> {verdict: n}
        self.frames = []
        self.calls = {}
        self.pending = None
        self.first = None  # the first mismatch
        self.any_within = False
        self.last_call_taint = False

    def begin(self, names):
        if not self.frames:
            self.frames.append({"key": "", "fqn": "", "taint": {}, "values": {}})
            return
        target, taints = self.pending
        key, fqn = child_call(self.frames[-1]["fqn"], target, self.calls)
        frame = {"key": key, "fqn": fqn, "taint": {}, "values": {}}
        for name, t in zip(names, taints):
            frame["taint"][name] = t
        self.frames.append(frame)

    def attr(self, module, path, buffer):
        return self.p._NoRecorder().attr(module, path, buffer)  # the program's own semantics

    def copy(self, module, path, value):
        self.p._NoRecorder().copy(module, path, value)

    def invoke(self, target, inputs, fn, *args):
        frame = self.frames[-1]
        self.pending = (target, [bool(i is not None and frame["taint"].get(i)) for i in inputs])
        return fn(*args)

    def end(self, outputs, value):
        frame = self.frames.pop()
        self.last_call_taint = any(frame["taint"].get(o, False) for o in outputs)
        return value

    def node(self, name, op, value, inputs, dim=None):
        frame = self.frames[-1]
        origin = f"{frame['key']}/{name}" if frame["key"] else name
        if op == "call_module":
            tainted = self.last_call_taint
        else:
            tainted = any(frame["taint"].get(i, False) for i in inputs)
        frame["values"][name] = value
        expected = self.p.EXPECTED_NODES.get(origin)
        if op == "get_attr" and isinstance(value, torch.Tensor) and expected is not None:
            # A buffer updated earlier from a value that differed within its bound is read
            # here: the read carries the difference on. With no bounded difference before it,
            # a different read is a mismatch.
            same = bit_equal(value.detach(), expected[1])
            frame["taint"][name] = not same
            if not same and not self.any_within and self.first is None:
                self.first = {"node": origin, "op": op, "why": "a state read differs"}
            return value
        if not isinstance(value, torch.Tensor) or expected is None or op == "call_module":
            frame["taint"][name] = tainted
            return value
        c = self.counts.setdefault(op, {})
        if tainted:
            c["unchecked"] = c.get("unchecked", 0) + 1
            frame["taint"][name] = True
            return value
        ins = [frame["values"].get(i) for i in inputs]
        verdict, why = compare_node(op, value.detach(), expected[1], ins, dim,
                                    self.p.CONFIG["nan_exact"])
        c[verdict] = c.get(verdict, 0) + 1
        if verdict == Verdict.WITHIN:
            self.any_within = True
            frame["taint"][name] = True
        elif verdict == Verdict.MISMATCH:
            frame["taint"][name] = True
            if self.first is None:
                self.first = {"node": origin, "op": op, "why": why,
                              "torch": value.detach().reshape(-1)[:8].tolist(),
                              "flatcheck": expected[1].reshape(-1)[:8].tolist()}
        return value


def child_call(parent_fqn, target, calls):
    """flatcheck's key of a call of `target` from the module at `parent_fqn`: the FQN without
    variant suffixes, and "fqn" for its first call, "fqn@k" for the k-th after it."""
    base = ".".join(part.split("@")[0] for part in target.split("."))
    fqn = f"{parent_fqn}.{base}" if parent_fqn else base
    index = calls.get(fqn, 0)
    calls[fqn] = index + 1
    return (fqn if index == 0 else f"{fqn}@{index}"), fqn


def load_program(path):
    name = "flatcheck_case_" + os.path.basename(path).replace(".", "_").replace("-", "_")
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None:
        raise ValueError(f"{path}: not a Python file")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    for attr in ("build", "INPUTS", "CONFIG", "EXPECTED_OUTPUTS", "EXPECTED_STATE",
                 "EXPECTED_NODES", "PARTITION", "_R"):
        if not hasattr(mod, attr):
            raise ValueError(f"{path}: not a program written by flatcheck emit-torch ({attr})")
    return mod


def outputs_of(value):
    return list(value) if isinstance(value, (tuple, list)) else [value]


def state_of(model):
    """Parameters and buffers under every path (a shared one under each of its FQNs)."""
    state = {}
    for prefix, mod in model.named_modules(remove_duplicate=False):
        for table in (mod._parameters, mod._buffers):
            for k, v in table.items():
                if v is not None:
                    state.setdefault(f"{prefix}.{k}" if prefix else k, v.detach().clone())
    return state


def run_eager(p, counts):
    """torch eager vs flatcheck eager. Returns (result dict, torch eager outputs, state)."""
    model = p.build()
    rec = Recorder(p, counts)
    outs = []
    with torch.no_grad():
        for k in range(p.CONFIG["calls"]):
            p._R = rec if k == 0 else p._NoRecorder()
            rec.frames, rec.calls = [], {}
            outs.append([o.detach().clone() for o in outputs_of(model(*[t.clone() for t in
                                                                        p.INPUTS]))])
    p._R = p._NoRecorder()
    state = state_of(model)
    result = {"path": "eager", "ok": rec.first is None}
    if rec.first:
        result["first_mismatch"] = rec.first
    drift = []
    for k, (got, want) in enumerate(zip(outs, p.EXPECTED_OUTPUTS)):
        if len(got) != len(want):
            drift.append(f"call {k + 1}: {len(got)} outputs, expected {len(want)}")
            continue
        drift += [f"call {k + 1} output {i}" for i, (g, w) in enumerate(zip(got, want))
                  if not bit_equal(g, w)]
    drift += [f"final {f}" for f, w in p.EXPECTED_STATE.items()
              if f not in state or not bit_equal(state[f], w)]
    if drift and not rec.any_within and rec.first is None:
        result["ok"] = False
        result["first_mismatch"] = {"node": None, "why": "every node agrees but " + drift[0]}
    result["bounded_differences"] = rec.any_within
    if drift:
        result["differs_at"] = drift[:4]
    return result, outs, state


# ---------------------------------------------------------------------------------- fx path

FX_OPS = {torch.add: "add", torch.sub: "sub", torch.mul: "mul", torch.div: "div",
          torch.maximum: "maximum", torch.minimum: "minimum", torch.neg: "neg",
          torch.relu: "relu", torch.abs: "abs", torch.exp: "exp", torch.tanh: "tanh",
          torch.sigmoid: "sigmoid", torch.sqrt: "sqrt", torch.clone: "clone",
          torch.matmul: "matmul", torch.sum: "sum", torch.reshape: "reshape",
          torch.transpose: "transpose", torch.cat: "concat", torch.chunk: "split",
          operator.getitem: "getitem"}


class TraceRecorder:
    """During symbolic tracing: tags each proxy's node with flatcheck's provenance key, and
    turns attribute reads and buffer updates into get_attr / clone / copy_ nodes (a plain
    attribute read would be traced as a constant)."""

    def __init__(self, tracer):
        self.tracer = tracer
        self.frames, self.calls, self.pending = [], {}, None

    def _get_attr(self, module, path):
        prefix = self.tracer.path_of_module(module)
        return self.tracer.create_proxy("get_attr", f"{prefix}.{path}" if prefix else path, (),
                                        {})

    def attr(self, module, path, buffer):
        proxy = self._get_attr(module, path)
        return proxy.clone() if buffer else proxy

    def copy(self, module, path, value):
        self._get_attr(module, path).copy_(value)

    def begin(self, names):
        if not self.frames:
            self.frames.append(("", ""))
            return
        self.frames.append(child_call(self.frames[-1][1], self.pending, self.calls))

    def invoke(self, target, inputs, fn, *args):
        self.pending = target
        return fn(*args)

    def end(self, outputs, value):
        self.frames.pop()
        return value

    def node(self, name, op, value, inputs, dim=None):
        key = self.frames[-1][0]
        if isinstance(value, torch.fx.Proxy) and op not in ("get_attr", "call_module"):
            # branch and copy_ return a value another node made: keep that node's key.
            value.node.meta.setdefault("flatcheck_origin", f"{key}/{name}" if key else name)
        return value


def split_like_flatcheck(gm, p):
    """torch's split_module with flatcheck's runs: each node goes where flatcheck put it."""
    from torch.fx.passes.split_module import split_module
    last = [None]
    assign = {}
    for n in gm.graph.nodes:
        if n.op in ("placeholder", "get_attr", "output"):
            continue
        run = p.PARTITION.get(n.meta.get("flatcheck_origin", ""))
        if run is None:  # getitems, buffer reads and updates: with their neighbour
            run = last[0]
        last[0] = run
        assign[n] = run
    first = next((r for r in assign.values() if r is not None), "_run_on_gpu_0")
    for n, r in assign.items():
        if r is None:
            assign[n] = first
    try:
        return split_module(gm, gm, lambda n: assign[n], keep_original_order=True)
    except IndexError:
        # torch 1.13's split_module indexes the first output of every partition; a partition
        # whose values nobody reads (dead nodes, a buffer copy_) has none.
        outputs = {r: False for r in assign.values()}
        for n, r in assign.items():
            outputs[r] |= any(assign.get(u) != r for u in n.users)
        silent = sorted(r for r, has in outputs.items() if not has)
        if silent:
            raise KnownTorchIssue(f"split_module fails on partitions without outputs: {silent}")
        raise


class KnownTorchIssue(Exception):
    """A limitation of the installed torch that stops a path (docs/torch.md)."""


def inline_runs(split, marker, by_name):
    """Copies the body of every run whose name contains `marker` before its call, in graph
    order, its placeholders wired by position to the call's arguments or (by_name, the old
    Torch-TensorRT wiring) to the parent node that has the placeholder's name. Names of copied
    nodes are minted by the parent graph's namespace, so they can collide and be renamed."""
    g = split.graph
    for call in list(g.nodes):
        if call.op != "call_module" or marker not in call.target:
            continue
        sub = getattr(split, call.target)
        named = {n.name: n for n in g.nodes}
        env = {}
        phs = [n for n in sub.graph.nodes if n.op == "placeholder"]
        for i, ph in enumerate(phs):
            env[ph] = named.get(ph.name, call.args[i]) if by_name else call.args[i]
        result = None
        with g.inserting_before(call):
            for n in sub.graph.nodes:
                if n.op == "placeholder":
                    continue
                if n.op == "output":
                    result = torch.fx.graph.map_arg(n.args[0], lambda x: env[x])
                    continue
                if n.op == "get_attr":
                    new = g.get_attr(f"{call.target}.{n.target}")
                else:
                    new = g.node_copy(n, lambda x: env[x])
                env[n] = new
        if isinstance(result, torch.fx.Node):
            call.replace_all_uses_with(result)
        else:
            for user in list(call.users):
                if user.op == "call_function" and user.target is operator.getitem:
                    user.replace_all_uses_with(result[user.args[1]])
                    g.erase_node(user)
        g.erase_node(call)
    return split


def inline_fallbacks(split, by_name):
    """Torch-TensorRT's flatten over a split GraphModule: engines (acc runs) first, by
    position, then fallbacks (gpu runs) by position or by name."""
    inline_runs(split, "_run_on_acc_", by_name=False)
    inline_runs(split, "_run_on_gpu_", by_name)
    split.graph.lint()
    split.recompile()
    return split


def run_fx(p, eager_outs, eager_state, by_name):
    model = p.build()
    tracer = torch.fx.Tracer()
    p._R = TraceRecorder(tracer)
    try:
        gm = torch.fx.GraphModule(model, tracer.trace(model))
    finally:
        p._R = p._NoRecorder()
    if p.PARTITION is None:
        return {"path": "fx", "ok": True, "skipped": "flatcheck could not partition the case"}
    runs = sorted({r for r in p.PARTITION.values()})
    result = {"path": "fx", "runs": runs, "inline": "name" if by_name else "position"}
    try:
        split = inline_fallbacks(split_like_flatcheck(gm, p), by_name)
    except KnownTorchIssue as e:
        result.update(ok=True, skipped=f"torch {torch.__version__}: {e}", known_torch_issue=str(e))
        return result
    buf = io.BytesIO()
    torch.save(split, buf)  # before it runs: the saved state is the case's
    buf.seek(0)
    diffs = compare_with_eager(p, split, eager_outs, eager_state, "split+inlined")
    loaded = torch.load(buf)
    reload_diffs = compare_with_eager(p, loaded, eager_outs, eager_state, "reloaded")
    frozen = sorted(n.target for n in loaded.graph.nodes
                    if n.op == "get_attr" and n.target.startswith("_tensor_constant")
                    and not hasattr(split, n.target))
    if reload_diffs and frozen and not diffs:
        # torch.load re-traces a GraphModule's code; a buffer read through a tensor method
        # (buf.clone()) runs eagerly in that trace and is frozen into a constant
        # (docs/torch.md, "Found in torch"). Counted apart, not as flatcheck's mismatch.
        result["known_torch_issue"] = ("reload froze buffer reads into " + ", ".join(frozen) +
                                       ": " + reload_diffs[0])
        reload_diffs = []
    diffs += reload_diffs
    lost = nan_constants(gm)
    if diffs and lost:
        # torch.fx writes a graph's float constants into its Python code with repr(): a NaN
        # argument becomes `nan`, its payload and sign lost (docs/torch.md, "Found in torch").
        result["known_torch_issue"] = ("fx code generation loses the payload of NaN constants in "
                                       + ", ".join(lost) + ": " + diffs[0])
        diffs = []
    result["ok"] = not diffs
    if diffs:
        result["first_mismatch"] = {"why": "differs from torch eager: " + diffs[0]}
    return result


def nan_constants(gm):
    """Nodes with a NaN float constant argument whose bits are not the canonical NaN's."""
    canonical = struct.pack("<f", float("nan"))
    return [n.name for n in gm.graph.nodes
            if any(isinstance(a, float) and math.isnan(a) and struct.pack("<f", a) != canonical
                   for a in n.args)]


def compare_with_eager(p, module, eager_outs, eager_state, what):
    diffs = []
    with torch.no_grad():
        for k in range(p.CONFIG["calls"]):
            got = outputs_of(module(*[t.clone() for t in p.INPUTS]))
            want = eager_outs[k]
            if len(got) != len(want):
                diffs.append(f"{what}: call {k + 1}: {len(got)} outputs, expected {len(want)}")
            diffs += [f"{what}: call {k + 1} output {i}" for i, (g, w) in enumerate(zip(got, want))
                      if not bit_equal(g, w)]
    state = {}  # every path to every buffer (torch 1.13 has no remove_duplicate there)
    for prefix, mod in module.named_modules(remove_duplicate=False):
        for k, v in mod._buffers.items():
            if v is not None:
                state.setdefault(f"{prefix}.{k}" if prefix else k, v)
    # Live buffers: those some graph reads or writes (get_attr targets). split_module can leave
    # stale copies of a buffer in submodules that never touch them.
    live = set()
    for prefix, mod in module.named_modules(remove_duplicate=False):
        if isinstance(mod, torch.fx.GraphModule):
            for n in mod.graph.nodes:
                if n.op == "get_attr":
                    live.add(f"{prefix}.{n.target}" if prefix else n.target)
    buffers = set(state_of(p.build()))
    for fqn, want in eager_state.items():
        if fqn not in buffers or fqn in dict(p.build().named_parameters()):
            continue  # parameters are never updated
        # Under its FQN, or under a run that split_module made ("submod_<run>.<fqn>").
        found = [v for k, v in state.items() if k in live and
                 (k == fqn or (k.startswith("submod_") and k.split(".", 1)[1:] == [fqn]))]
        if found and not all(bit_equal(v, want) for v in found):
            diffs.append(f"{what}: final buffer {fqn}")
    return diffs


# ---------------------------------------------------------------------------------- export path

def run_export(p, eager_outs, eager_state):
    if not hasattr(torch, "export") or not hasattr(torch.export, "unflatten"):
        return {"path": "export", "ok": True,
                "skipped": f"torch {torch.__version__} has no torch.export.unflatten (needs >= 2.5)"}
    model = p.build()
    ep = torch.export.export(model, tuple(t.clone() for t in p.INPUTS))
    buf = io.BytesIO()
    torch.export.save(ep, buf)
    buf.seek(0)
    unflat = torch.export.unflatten(torch.export.load(buf))
    diffs = []
    with torch.no_grad():
        for k in range(p.CONFIG["calls"]):
            got = outputs_of(unflat(*[t.clone() for t in p.INPUTS]))
            diffs += [f"call {k + 1} output {i}" for i, (g, w) in enumerate(zip(got,
                                                                                eager_outs[k]))
                      if not bit_equal(g, w)]
    state = dict(unflat.named_buffers())
    diffs += [f"final buffer {f}" for f, w in eager_state.items()
              if f in state and not bit_equal(state[f], w)]
    result = {"path": "export", "ok": not diffs}
    if diffs:
        result["first_mismatch"] = {"why": "differs from torch eager: " + diffs[0]}
    return result


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("programs", nargs="+", help="programs written by flatcheck emit-torch")
    ap.add_argument("--paths", default="eager,fx,export")
    ap.add_argument("--inline", choices=["position", "name"], default="position")
    ap.add_argument("--quiet", action="store_true", help="print only failures and the summary")
    args = ap.parse_args()
    paths = set(args.paths.split(","))
    if not paths <= {"eager", "fx", "export"}:
        ap.error(f"--paths takes eager, fx and export, got {args.paths}")
    torch.set_num_threads(1)
    counts, per_path, failed = {}, {}, 0
    for path in args.programs:
        try:
            p = load_program(path)
        except Exception as e:  # noqa: BLE001 - an unreadable program is bad input
            print(json.dumps({"program": path, "error": str(e)}))
            return 2
        results = []
        eager, outs, state = run_eager(p, counts)
        results.append(eager)
        for name, fn in (("fx", lambda: run_fx(p, outs, state, args.inline == "name")),
                         ("export", lambda: run_export(p, outs, state))):
            if name not in paths:
                continue
            try:
                results.append(fn())
            except Exception as e:  # noqa: BLE001 - torch refusing a program is a finding
                results.append({"path": name, "ok": False,
                                "first_mismatch": {"why": f"{type(e).__name__}: {e}"[:400]}})
        if "eager" not in paths:
            results = results[1:]
        for r in results:
            r["program"] = path
            st = per_path.setdefault(r["path"], {"agree": 0, "mismatch": 0, "skipped": 0,
                                                 "known_torch_issue": 0})
            known = "known_torch_issue" in r
            st["skipped" if "skipped" in r else "known_torch_issue" if known else
               "agree" if r["ok"] else "mismatch"] += 1
            if not r["ok"]:
                failed += 1
            if not args.quiet or not r["ok"]:
                print(json.dumps(r))
    print(json.dumps({"summary": True, "torch": torch.__version__, "programs": len(args.programs),
                      "paths": per_path, "nodes_per_op": counts}, sort_keys=True))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
