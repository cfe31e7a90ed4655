"""torch.fx.GraphModule.to_folder writes a module whose __init__ registers every buffer as a
persistent one and then loads the state dict it saved (strict), but a graph module's state dict
leaves out its non-persistent buffers: the written module cannot be built
(RuntimeError: Missing key(s) in state_dict). torch 2.14.1's symbolic_trace keeps a buffer's
non-persistence, so any traced model with a non-persistent buffer cannot go through to_folder;
torch 2.6 made such a buffer persistent when tracing (the state dict then holds it, and the
folder loads). The control, the same model with a persistent buffer, loads and gives eager's
numbers. Found by flatcheck: generated programs emitted with non-persistent buffers (seed 216),
path fx.folder, torch 2.14.1.

    python3 corpus/torch/folder-drops-non-persistent-buffer.py   # exit 1 while present
"""
import importlib.util
import sys
import tempfile
import warnings

import torch

warnings.simplefilter("ignore")
PRESENT_FROM = (2, 14)  # 2.6's symbolic_trace made the buffer persistent


class Model(torch.nn.Module):
    def __init__(self, persistent):
        super().__init__()
        self.register_buffer("buf", torch.full((2,), 3.0), persistent=persistent)

    def forward(self, x):
        return x + self.buf


def from_folder(persistent, x):
    """The traced model written with to_folder, imported and called; or the error."""
    with tempfile.TemporaryDirectory() as folder:
        torch.fx.symbolic_trace(Model(persistent)).to_folder(folder, "FolderModule")
        spec = importlib.util.spec_from_file_location("folder_module", f"{folder}/module.py")
        module = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(module)
            return module.FolderModule()(x)
        except Exception as e:  # noqa: BLE001 - the bug shown
            return e


def main():
    x = torch.ones(2)
    want = Model(False)(x)
    print(f"torch {torch.__version__}: eager {want.tolist()}")
    control = from_folder(True, x)
    got = from_folder(False, x)
    for name, r in (("persistent (control)", control), ("non-persistent", got)):
        print(f"  {name}: " + (f"{type(r).__name__}: {str(r).strip()}"
                                if isinstance(r, Exception) else str(r.tolist())))
    if isinstance(control, Exception) or not torch.equal(control, want):
        print("FAIL: the control does not load to eager's result: not this bug")
        return 2
    if isinstance(got, Exception) or not torch.equal(got, want):
        print("FAIL: the folder's module cannot hold its non-persistent buffer (bug present)")
        return 1
    print("ok: the folder's module loads and gives eager's result")
    return 0


if __name__ == "__main__":
    sys.exit(main())
