"""The bridge's normalizing paths (docs/torch.md): torch.fx.experimental.normalize, the
Transformers that rewrite an fx graph's calls into a canonical form.

  fx.normalize_args  the fx trace through NormalizeArgs (every call's arguments by keyword, as
                     its schema names them), the calls; outputs and state must equal torch
                     eager's bit for bit
  fx.normalize_ops   the same trace through NormalizeOperators (torch.add, torch.sub,
                     torch.div and the other binary functions made the Python operators of
                     their magic methods: operator.add, ...), the calls; judged the same way

One cause of a failure is known (docs/found-bugs.md 85). It counts only when the pass run again
with its cause removed gives no such failure:
  normalize-ops-drops-kwargs  NormalizeOperators rewrites a call of two positional arguments to
                              its operator with kwargs={}: torch.sub(a, b, alpha=-1) becomes
                              a - b, torch.div(a, b, rounding_mode="floor") a / b (programs
                              emitted with emit-torch --op-kwargs); removed: a call with keyword
                              arguments left as it is
"""
import torch

from torch_compare import judge, run_calls
from torch_export import failure, state_after, verdict
from torch_fx import trace

PATHS = ("fx.normalize_args", "fx.normalize_ops")
DROPS = "normalize-ops-drops-kwargs"


def normalized(gm, path, kwargs_kept=False):
    """`gm` through the path's Transformer; with `kwargs_kept`, NormalizeOperators leaves a call
    with keyword arguments as it is (the cause of DROPS removed)."""
    from torch.fx.experimental import normalize  # noqa: PLC0415 - torch >= 1.8
    if path == "fx.normalize_args":
        return normalize.NormalizeArgs(gm).transform()
    if not kwargs_kept:
        return normalize.NormalizeOperators(gm).transform()

    class KwargsKept(normalize.NormalizeOperators):
        def call_function(self, target, args, kwargs):
            if kwargs:  # the parent's call (AnnotateTypesWithSchema): the call unmapped
                return super(normalize.NormalizeOperators, self).call_function(target, args,
                                                                               kwargs)
            return super().call_function(target, args, kwargs)
    return KwargsKept(gm).transform()


def keyword_calls(gm):
    """The calls of the functions NormalizeOperators remaps that have keyword arguments."""
    from torch.fx.experimental import normalize  # noqa: PLC0415
    remap = normalize.NormalizeOperators.binary_magic_method_remap
    return sum(1 for n in gm.graph.nodes if n.op == "call_function" and n.kwargs and
               n.target in remap and len(n.args) == 2)


def normalize_path(p, eager, path, cache):
    stage = "trace"
    try:
        gm = trace(p)
        stage = "normalize"
        m = normalized(gm, path)
        stage = "run"
        status, why = judge(p, run_calls(m, p), state_after(m), eager, cache)
        if status != "mismatch" or path != "fx.normalize_ops" or not keyword_calls(gm):
            return verdict(status, why)
        fixed = normalized(trace(p), path, kwargs_kept=True)  # a fresh model: fresh state
        if judge(p, run_calls(fixed, p), state_after(fixed), eager, cache)[0] == "mismatch":
            return verdict(status, why)
    except Exception as e:  # noqa: BLE001 - torch refusing a program
        return failure(e, stage)
    return {"status": "known_torch_issue", "first_mismatch": why,
            "known_torch_issue": f"{DROPS}: {keyword_calls(gm)} calls with keyword arguments "
            "made operators without them; with those calls left as they are, it agrees"}


def available():
    """None where torch has torch.fx.experimental.normalize; else why not."""
    try:
        from torch.fx.experimental import normalize  # noqa: F401, PLC0415
    except ImportError as e:
        return f"torch {torch.__version__} has no torch.fx.experimental.normalize ({e})"
    return None


def run_normalize(p, eager, paths, cache):
    """The normalizing paths of one program that were asked for: {path: result}."""
    why = available()
    return {path: ({"status": "skipped", "skip": why} if why else
                   normalize_path(p, eager, path, cache)) for path in PATHS if path in paths}
