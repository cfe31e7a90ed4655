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

The model's branch ops run as the bridge's --branch makes them; a torch.cond is not traceable
by torch.jit, so with --branch cond the paths are skipped.
"""
import contextlib
import io

import torch

from torch_compare import Eager, judge, run_calls, tensors_of
from torch_export import failure, state_after, verdict
from torch_partition import reset_state

PATHS = ("jit.trace", "jit.save", "jit.freeze")


def available():
    """None where torch.jit can trace here; else why not."""
    jit = getattr(torch, "jit", None)
    if jit is None or not all(hasattr(jit, f) for f in ("trace", "save", "load", "freeze")):
        return f"torch {torch.__version__} has no torch.jit trace, save, load and freeze"
    return None


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


def jit_path(p, path, eager, cache):
    """One TorchScript path of one program: the result dict."""
    stage = "trace"
    try:
        module = traced(p)
        want, state = eager, state_after
        if path == "jit.save":
            stage = "save"
            module = saved(module)
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
        return failure(e, stage)
    r = verdict(status, why)
    if path == "jit.freeze":
        r["state_held"] = len(want.final)
    return r


def run_jit(p, eager, paths, cache, branch="python"):
    """The TorchScript paths of one program, when asked for: {path: result}."""
    why = available() or ("torch.jit cannot trace torch.cond (--branch cond)"
                          if branch == "cond" else None)
    return {path: {"status": "skipped", "skip": why} if why else jit_path(p, path, eager, cache)
            for path in PATHS if path in paths}
