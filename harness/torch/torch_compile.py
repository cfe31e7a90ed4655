"""The bridge's torch.compile paths (docs/torch.md): the model compiled whole, as a backend such as
Torch-TensorRT's torch.compile backend receives it, run by backends that keep torch's own kernels
so that the results stay bit for bit comparable.

  compile.eager      torch.compile(model, backend="eager", fullgraph=True, dynamic=False): dynamo's
                     capture of the whole forward (module state, buffer updates, the calls of
                     shared modules inlined), its graph run as captured; the calls
  compile.aot_eager  backend="aot_eager": dynamo's graph through AOTAutograd (functionalization:
                     buffer updates made graph outputs and written back after it; the aten graph
                     run by torch's kernels, no code generation); the calls

Each program is compiled afresh (torch._dynamo.reset() before and after), its model's own
tensors judged after the calls: outputs and state must equal torch eager's bit for bit. Inductor
is not a path: its generated kernels change results by rounding, which a bit-for-bit judge
cannot tell from a wrong result.

Known classes are read from the message (torch_export.KNOWN_ERRORS): an AOT backend refusing a
torch.cond whose operands are views of one tensor (docs/found-bugs.md 37, with --branch cond).
"""
import torch

from torch_compare import judge, run_calls
from torch_export import failure, run_family, state_after, verdict

PATHS = ("compile.eager", "compile.aot_eager")


def available():
    """None where torch.compile can run here; else why not (torch 1.x has no torch.compile)."""
    if not hasattr(torch, "compile"):
        return f"torch {torch.__version__} has no torch.compile (needs >= 2.0)"
    return None


def reset():
    import torch._dynamo
    torch._dynamo.reset()


def compile_path(p, backend, eager, cache):
    try:
        reset()
        model = p.build()
        compiled = torch.compile(model, backend=backend, fullgraph=True, dynamic=False)
        status, why = judge(p, run_calls(compiled, p), state_after(model), eager, cache)
        return verdict(status, why)
    except Exception as e:  # noqa: BLE001 - torch refusing a program. The first call compiles:
        # an error of dynamo's (or of the backend, which dynamo wraps) is stage "compile"
        return failure(e, "compile" if type(e).__module__.startswith("torch._dynamo") else "run")
    finally:
        reset()


def run_compile(p, eager, paths, cache):
    """The torch.compile paths of one program, when asked for: {path: result}."""
    return run_family(PATHS, paths,
                      lambda path: compile_path(p, path.split(".")[1], eager, cache),
                      available())
