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

from torch_compare import run_calls
from torch_decomp import TIED_MUTATED, known, tied_buffer_updated, untied_copy
from torch_export import classify, export_program, failure, run_family, verdict
from torch_inductor import available as inductor_available
from torch_inductor import judged

PATHS = ("aoti",)
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
    written: torch 2.6's `NotImplementedError: Constant` lowering the copy_); else the failure
    as it is."""
    if classify(e):
        return failure(e, "compile")
    cls = None
    if tied_buffer_updated(ep):
        try:
            compiled(untied_copy(ep), folder)
            cls = TIED_MUTATED
        except Exception:  # noqa: BLE001 - not (only) this cause
            pass
    elif removed_agrees(p, eager, cache, os.path.join(folder, "kept"), contextlib.nullcontext,
                        KEEP):
        cls = INLINED
    if cls is None:
        return failure(e, "compile")
    return known(cls, "compile", f"{type(e).__name__}: {e}")


def aoti_path(p, eager, cache):
    """aoti: a fresh model exported, compiled into a package, loaded back, the calls judged."""
    try:
        ep = export_program(p, "nonstrict")
    except Exception as e:  # noqa: BLE001 - export refusing the program
        return failure(e, "export")
    with tempfile.TemporaryDirectory() as folder:
        try:
            runner = compiled(ep, folder)
        except Exception as e:  # noqa: BLE001 - AOTInductor refusing or failing
            return traced(p, eager, cache, ep, folder, e)
        try:
            outs = run_calls(runner, p)
        except Exception as e:  # noqa: BLE001
            return failure(e, "run")
        status, why = judged(p, outs, None, eager, cache)
        cls = cause(p, eager, cache, folder) if status == "mismatch" else None
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


def cause(p, eager, cache, folder):
    """The class of a mismatch: the causes (CLONE, INLINED, FOLDED; one, then two, then all
    three, joined by '+') whose removal together makes the program compiled again agree with
    eager (or differ by rounding only); None when none does."""
    removals = ((CLONE, {}), (INLINED, KEEP), (FOLDED, UNFOLDED))
    tries = [c for k in (1, 2, 3) for c in itertools.combinations(removals, k)]
    for i, chosen in enumerate(tries):
        names = [name for name, _ in chosen]
        context = state_counted_as_inputs if CLONE in names else contextlib.nullcontext
        configs = {k: v for _, c in chosen for k, v in c.items()}
        if removed_agrees(p, eager, cache, os.path.join(folder, f"removed{i}"), context, configs):
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


def run_aoti(p, eager, paths, cache):
    """The AOTInductor path of one program, when asked for: {path: result}."""
    return run_family(PATHS, paths, lambda _: aoti_path(p, eager, cache), available())
