"""An example flatten pass for `flatcheck_torch.py --pass` (docs/torch.md): the wiring
Torch-TensorRT's `inline_torch_modules` used before #4446, which matched a fallback run's
placeholders to parent nodes **by name**. After the engines are inlined, the parent holds new
getitems whose names the fallback's placeholders also have, so a fallback op is wired to the
wrong value: a silent wrong result, or a graph that fails lint. flatcheck's graph-break example
shows it on real torch.fx:

    python3 harness/torch/flatcheck_torch.py gb.py --paths fx \
        --pass harness/torch/passes/by_name.py:flatten        # exit 1: a mismatch

A pass takes the split GraphModule (one `_run_on_acc_*` / `_run_on_gpu_*` submodule per run) and
returns the flattened GraphModule.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from torch_fx import by_position, inline_runs  # noqa: E402


def by_name(call, index, placeholder, named):
    """The old wiring: the parent node with the placeholder's name, if there is one."""
    return named.get(placeholder.name, call.args[index])


def flatten(split):
    inline_runs(split, "_run_on_acc_", by_position)  # engines were always inlined by position
    inline_runs(split, "_run_on_gpu_", by_name)
    split.graph.lint()
    split.recompile()
    return split
