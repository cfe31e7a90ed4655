"""How the bridge compares torch's values with flatcheck's and with torch eager (docs/torch.md).

Two kinds of comparison:
  - node by node, torch eager against flatcheck's eager reference (`compare_node`): bit for
    bit, except the documented bounds (ULPs for exp/tanh/sigmoid, a summation bound for
    sum/matmul) and the documented payload and sign-of-zero relaxations of some torch kernels;
  - a whole path (fx, export) against torch eager (`diff_values`): bit for bit, NaN payloads
    included. A path whose only differences are NaN payloads is excused only when re-running
    torch eager with the program's NaN constants made canonical (all of them, or, with at most
    four, some of them: a path may keep one constant's payload and lose another's) gives the
    path's bits exactly (`lost_payloads`): the difference is then traced to constants whose
    payloads the path lost, and nothing else.
"""
import contextlib
import itertools
import math
import struct

import torch

# ULP bounds between torch's CPU kernels and flatcheck's (measure_ulps.py + bench/results/ulp.md):
# torch exp 1, tanh 1, sigmoid 2; flatcheck (glibc) exp 1, tanh 2, sigmoid 2 (on [-87, 20]).
ULP_BOUNDS = {"exp": 2, "tanh": 3, "sigmoid": 4}
# Ops whose NaN payloads are not compared node by node: the transcendental kernels differ in
# implementation; torch's maximum/minimum give 0xffffffff in vectorized blocks but 0x7fc00000
# in the scalar tail of the same tensor; binary arithmetic with two NaN operands (or a NaN
# scalar) keeps one payload or the other depending on whether the element falls in a
# vectorized block or the scalar tail; sqrt of a negative number is 0xffc00000 in torch 2.6
# (Debian) and another NaN in torch 2.11's x86 wheel (227 of 2,346 programs, docs/torch.md).
NAN_RELAXED = {"exp", "tanh", "sigmoid", "sum", "matmul", "maximum", "minimum", "add", "sub",
               "mul", "div", "add_scalar", "sub_scalar", "mul_scalar", "div_scalar", "sqrt"}
# Ops whose sign of zero is not compared: torch's vectorized maximum/minimum return the second
# operand on a +0/-0 tie, the scalar tail the first.
ZERO_SIGN_RELAXED = {"maximum", "minimum"}
EPS = 2.0 ** -24
CANONICAL_NAN_BITS = struct.unpack("<I", struct.pack("<f", math.nan))[0]


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
    return a.shape == b.shape and a.dtype == b.dtype and bool(torch.equal(_bits(a), _bits(b)))


def hex_bits(t, n=6):
    return [f"0x{x & 0xffffffff:08x}" for x in _bits(t)[:n].tolist()]


class Verdict:
    BITWISE, WITHIN, MISMATCH = "bitwise", "within_bound", "mismatch"


def first_difference(got, want, inputs, op=None, nan_exact=True):
    """Where a node's torch value first differs from flatcheck's beyond what `op`'s rules allow
    (compare_node: NaN payloads, signs of zero, ULP bounds), else where it first differs at all:
    the element's index, both values' bits and, for an elementwise op, its input elements' bits
    (a report upstream can act on without re-running)."""
    if got.shape != want.shape:
        return {}
    g, w = _bits(got), _bits(want)
    differs = g != w
    allowed = torch.zeros_like(differs)
    gn, wn = torch.isnan(got.reshape(-1)), torch.isnan(want.reshape(-1))
    if not nan_exact or op in NAN_RELAXED:
        allowed |= gn & wn
    if op in ZERO_SIGN_RELAXED:
        allowed |= (got.reshape(-1) == 0) & (want.reshape(-1) == 0)
    if op in ULP_BOUNDS:
        allowed |= ulp_distance(got, want) <= ULP_BOUNDS[op]
    diff = (differs & ~allowed).nonzero()
    if diff.numel() == 0:
        diff = differs.nonzero()
    if diff.numel() == 0:
        return {}
    i = int(diff[0])
    out = {"element": i, "torch_bits": f"0x{int(g[i]) & 0xffffffff:08x}",
           "flatcheck_bits": f"0x{int(w[i]) & 0xffffffff:08x}"}
    same = [t for t in inputs if isinstance(t, torch.Tensor) and t.shape == got.shape]
    if same and len(same) == len(inputs):
        out["input_bits"] = [f"0x{int(_bits(t)[i]) & 0xffffffff:08x}" for t in same]
    return out


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
        # Not finite: the same infinity, or NaN in both (NaN-ness was checked above).
        same_inf = torch.where(finite, torch.ones_like(finite), (got == want) | (gn & wn))
        if bool(((diff <= bound) | ~finite).all()) and bool(same_inf.all()):
            return Verdict.WITHIN, f"max {float((diff - bound).max()):.3g} below the bound"
        return Verdict.MISMATCH, "beyond the summation bound"
    d = int(ulp_distance(got, want).max())
    return Verdict.MISMATCH, f"{d} ulp, op {op} is compared bit for bit"


def outputs_of(value):
    return list(value) if isinstance(value, (tuple, list)) else [value]


def strip_variants(fqn):
    """`a@1.b@2.buf` -> `a.b.buf`: unflatten's call variants share their base's state."""
    return ".".join(part.split("@")[0] for part in fqn.split("."))


def plain_attributes(module):
    """{name: tensor} of `module`'s own plain tensor attributes: neither parameters nor buffers
    (emit-torch --tensor-constants)."""
    return {k: v for k, v in vars(module).items() if isinstance(v, torch.Tensor)}


def tensors_of(module, params=True):
    """Every (FQN, tensor) a module holds, a shared tensor under each of its names: its
    parameters (unless `params` is false), buffers and plain tensor attributes (emit-torch
    --tensor-constants; a path's module may hold others, which eager's state does not name)."""
    out = {}
    for prefix, mod in module.named_modules(remove_duplicate=False):
        plain = plain_attributes(mod)
        tables = (mod._parameters, mod._buffers, plain) if params else (mod._buffers, plain)
        for table in tables:
            for k, v in table.items():
                if v is not None:
                    out.setdefault(f"{prefix}.{k}" if prefix else k, v)
    return out


def state_of(model):
    """Parameters and buffers under every path, copied (the state after a run)."""
    return {k: v.detach().clone() for k, v in tensors_of(model).items()}


def run_calls(module, p):
    """Calls `module` CONFIG["calls"] times on fresh copies of the inputs: outputs per call.
    A program that updates its inputs (emit-torch --update-inputs) has each call's inputs, as
    the call left them, after its outputs: judged as outputs are (input_updates names them)."""
    outs = []
    with torch.no_grad():
        for _ in range(p.CONFIG["calls"]):
            inputs = [t.clone() for t in p.INPUTS]
            got = outputs_of(module(*inputs))
            outs.append([o.detach().clone() for o in got] + inputs_after(p, inputs))
    return outs


def inputs_after(p, inputs):
    """The inputs as a call left them, for a program that updates them (else none)."""
    return [t.detach().clone() for t in inputs] if p.CONFIG.get("update_inputs") else []


def input_updates(p, where):
    """`where` ("call K output I") named as the input it is when I is past the program's own
    outputs (run_calls puts the inputs after a call there)."""
    parts = where.split()
    if not p.CONFIG.get("update_inputs") or len(parts) != 4 or parts[2] != "output":
        return where
    own = len(p.EXPECTED_OUTPUTS[int(parts[1]) - 1])
    i = int(parts[3])
    return where if i < own else f"call {parts[1]} input {i - own} after the call"


def storage_groups(model):
    """FQN -> a key shared by every FQN of one tensor (a shared parameter or buffer)."""
    return {fqn: t.data_ptr() for fqn, t in tensors_of(model).items()}


class Eager:
    """torch eager's results for one program: outputs per call, final state, initial state, and
    which FQNs name one tensor."""

    def __init__(self, outs, final, initial, groups):
        self.outs, self.final, self.initial, self.groups = outs, final, initial, groups


def known_when_removed(results, again, failing, cls, detail):
    """`results` ({path: result}) with each path of `failing` that, run `again` with the cause
    of class `cls` removed, agrees, is excused or fails only by known classes made the known
    torch issue `cls` (joined with those classes); `detail(path, other)` says why (`other`: the
    classes the run again still showed, or None)."""
    out = dict(results)
    for x in failing:
        status = again.get(x, {}).get("status")
        if status in ("agree", "excused", "known_torch_issue"):
            other = again[x].get("known_torch_issue") if status == "known_torch_issue" else None
            out[x] = {"status": "known_torch_issue",
                      "known_torch_issue": "+".join([cls] + ([other] if other else [])),
                      "detail": detail(x, other)[:500]}
    return out


def eager_run(p):
    """torch eager's results for program `p` on a fresh model, without the node recorder."""
    model = p.build()
    initial, groups = state_of(model), storage_groups(model)
    outs = run_calls(model, p)
    return Eager(outs, state_of(model), initial, groups)


def diff_values(outs, state, eager, want_outs=None, want_state=None):
    """Differences of a path's outputs and state from torch eager's: a list of (where, kind),
    kind "payload" (only NaN payloads differ) or a description.

    State: every FQN the path holds (variants `n@1` map to `n`) must equal eager's final value,
    and a buffer eager changed must be found under at least one of its FQNs. `state` None: a
    path whose state cannot be read (the AOTInductor package's): the outputs alone."""
    want_outs = eager.outs if want_outs is None else want_outs
    want_state = eager.final if want_state is None else want_state
    diffs = []
    for k, (got, want) in enumerate(zip(outs, want_outs)):
        if len(got) != len(want):
            diffs.append((f"call {k + 1}", f"{len(got)} outputs, expected {len(want)}"))
            continue
        for i, (g, w) in enumerate(zip(got, want)):
            kind = tensor_diff(g, w)
            if kind:
                diffs.append((f"call {k + 1} output {i}", kind))
    if state is None:
        return diffs
    found = set()
    for fqn, value in state.items():
        base = strip_variants(fqn)
        if base not in want_state:
            continue
        found.add(eager.groups.get(base))
        kind = tensor_diff(value, want_state[base])
        if kind:
            diffs.append((f"final state {fqn}", kind))
    for fqn, want in want_state.items():
        changed = not bit_equal(want, eager.initial[fqn])
        if changed and eager.groups.get(fqn) not in found:
            diffs.append((f"final state {fqn}", "a buffer eager updates is missing"))
            found.add(eager.groups.get(fqn))  # once per tensor
    return diffs


def tensor_diff(got, want):
    """None when bit-identical; "payload" when only NaN payloads differ; else a description."""
    if got.shape != want.shape:
        return f"shape {list(got.shape)} vs {list(want.shape)}"
    if got.dtype != want.dtype:
        return f"dtype {got.dtype} vs {want.dtype}"
    if bit_equal(got, want):
        return None
    gn, wn = torch.isnan(got), torch.isnan(want)
    if torch.equal(gn, wn) and bit_equal(torch.where(gn, want, got), want):
        return "payload"
    return (f"bits differ: got {hex_bits(got)} want {hex_bits(want)}")


def lossy_nan_constants(p):
    """The program's module-level NaN constants (`_F<bits>`) whose payload is not canonical."""
    out = {}
    for name, value in vars(p).items():
        if name.startswith("_F") and isinstance(value, float) and math.isnan(value):
            bits = struct.unpack("<I", struct.pack("<f", value))[0]
            if bits != CANONICAL_NAN_BITS:
                out[name] = bits
    return out


@contextlib.contextmanager
def canonical_constants(p, names):
    """The program's NaN constants `names` replaced by math.nan inside (what code generation by
    repr() and export's serializer write); their payloads put back after."""
    saved = {name: getattr(p, name) for name in names}
    try:
        for name in names:
            setattr(p, name, math.nan)
        yield
    finally:
        for name, value in saved.items():
            setattr(p, name, value)


def canonical_nan_eager(p, names):
    """torch eager's outputs and final state with the program's NaN constants `names`
    canonical (canonical_constants)."""
    with canonical_constants(p, names):
        e = eager_run(p)
    return e.outs, e.final


# A path may lose the payload of some NaN constants and keep others' (the pipeline path did, on
# case 50 of seed 7): with at most this many such constants, every subset is tried.
MAX_SUBSETS_OF = 4


def lost_payloads(p, outs, state, eager, cache):
    """The program's NaN constants whose payloads, made canonical, give torch eager exactly the
    path's outputs and state: all of them first, then (with at most MAX_SUBSETS_OF such
    constants) each smaller set, smallest first; as (names, True). Failing that, (all of them,
    False) when each output and state value the path got is exactly that value of torch eager
    or of one of those runs: a constant used by several nodes can keep its payload in some and
    lose it in others (seen on the capability re-export). None when neither holds."""
    lossy = sorted(lossy_nan_constants(p))
    sets = [tuple(lossy)] if lossy else []
    if 1 < len(lossy) <= MAX_SUBSETS_OF:
        sets += [c for k in range(1, len(lossy)) for c in itertools.combinations(lossy, k)]
    unexplained = {where for where, _ in diff_values(outs, state, eager)}
    for names in sets:
        key = ("canon",) + names
        if key not in cache:
            cache[key] = canonical_nan_eager(p, names)
        canon = cache[key]
        left = diff_values(outs, state, eager, canon[0], canon[1])
        if not left:
            return names, True
        unexplained &= {where for where, _ in left}
    return (tuple(lossy), False) if sets and not unexplained else None


# judge()'s mismatch text when only NaN payloads differ but no lost constant explains it (a path
# may excuse it otherwise: torch_swap_modules.canonical_agrees)
UNEXPLAINED_PAYLOADS = "only NaN payloads differ, and not as losing a constant's payload explains"


def judge(p, outs, state, eager, cache):
    """A path's verdict against torch eager: ("agree" | "excused" | "mismatch", details).
    `cache` keeps the canonical-NaN run between the paths of one program."""
    diffs = diff_values(outs, state, eager)
    if not diffs:
        return "agree", None
    if all(kind == "payload" for _, kind in diffs):
        lost = lost_payloads(p, outs, state, eager, cache)
        if lost:
            bits = lossy_nan_constants(p)
            names = ", ".join(f"0x{bits[n]:08x}" for n in lost[0])
            if lost[1]:
                return "excused", (f"NaN payloads only, exactly torch eager's result with the NaN "
                                   f"constants ({names}) made canonical: the path lost their "
                                   f"payloads ({diffs[0][0]})")
            return "excused", (f"NaN payloads only, each value exactly torch eager's with or "
                               f"without the NaN constants ({names}) made canonical: the path "
                               f"lost their payloads in some uses ({diffs[0][0]})")
    where, kind = next(((w, k) for w, k in diffs if k != "payload"), diffs[0])
    if kind == "payload":
        kind = UNEXPLAINED_PAYLOADS
    return "mismatch", f"{input_updates(p, where)}: {kind}"
