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
import os
import tempfile

import torch

from torch_compare import run_calls
from torch_decomp import TIED_MUTATED, tied_buffer_updated, untied_copy
from torch_export import classify, export_program, failure, run_family, verdict
from torch_inductor import available as inductor_available
from torch_inductor import judged

PATHS = ("aoti",)
# AOTInductor inlines a small buffer into the package as a constant though the graph updates it
# in place: no call sees an earlier call's update (pytorch#169118; fixed by pytorch#169347,
# 2025-12; torch 2.6 has it, 2.14.1 not). Removed: inductor_configs
# always_keep_tensor_constants=True, which keeps every tensor a constant of its own.
INLINED = "aoti-small-mutated-buffer-inlined"


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
    elif kept_constants_agree(p, eager, cache, folder):
        cls = INLINED
    if cls is None:
        return failure(e, "compile")
    return {"status": "known_torch_issue", "known_torch_issue": cls, "stage": "compile",
            "detail": f"{type(e).__name__}: {e}"[:300]}


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
        if status == "mismatch" and kept_constants_agree(p, eager, cache, folder):
            return {"status": "known_torch_issue", "known_torch_issue": INLINED, "stage": "run",
                    "detail": f"{why}; compiled with always_keep_tensor_constants, it agrees"}
    return {**verdict(status, why), "state": "judged through the later calls' outputs"}


def kept_constants_agree(p, eager, cache, folder):
    """Whether the program exported and compiled again with every tensor kept a constant of its
    own (INLINED removed) agrees with eager, or differs by rounding only."""
    try:
        kept = os.path.join(folder, "kept")
        os.mkdir(kept)
        runner = compiled(export_program(p, "nonstrict"), kept,
                          {"always_keep_tensor_constants": True})
        outs = run_calls(runner, p)
    except Exception:  # noqa: BLE001 - not this cause
        return False
    return judged(p, outs, None, eager, cache)[0] in ("agree", "excused")


def run_aoti(p, eager, paths, cache):
    """The AOTInductor path of one program, when asked for: {path: result}."""
    return run_family(PATHS, paths, lambda _: aoti_path(p, eager, cache), available())
