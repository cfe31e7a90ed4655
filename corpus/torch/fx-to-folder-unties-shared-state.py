"""torch.fx.GraphModule.to_folder writes a module whose children share a buffer (or a
parameter) so that, imported back, each child holds its own copy: an in-place update through
one name is no longer seen through the other — a silent wrong result (found by flatcheck's
torch campaign, path fx.folder; torch 1.13, 2.6 and 2.14.1).

to_folder pickles each child module into a file of its own (`a.pt`, `b.pt`) and loads the
state dict after: two pickles cannot share a tensor, and load_state_dict copies values into
the tensors the module holds, so the tie is lost. Here `a.buf` and `b.buf` are one tensor; the
graph adds to it through `a` and reads it through `b`.
    python3 corpus/torch/fx-to-folder-unties-shared-state.py   # exit 1 while present
"""
import importlib
import os
import sys
import tempfile
import warnings

import torch


def traced():
    """A GraphModule over two children holding one buffer tensor: a.buf updated, b.buf read."""
    root = torch.nn.Module()
    shared = torch.zeros(2)
    root.a, root.b = torch.nn.Module(), torch.nn.Module()
    root.a.register_buffer("buf", shared)
    root.b.register_buffer("buf", shared)
    g = torch.fx.Graph()
    x = g.placeholder("x")
    g.call_method("add_", (g.get_attr("a.buf"), x))
    g.output(g.call_method("clone", (g.get_attr("b.buf"),)))
    return torch.fx.GraphModule(root, g)


def main():
    gm = traced()
    folder = tempfile.mkdtemp()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # it warns that it pickles the children
        gm.to_folder(os.path.join(folder, "tied_folder"), "TiedFolder")
    sys.path.insert(0, folder)
    loaded = importlib.import_module("tied_folder").TiedFolder()
    x = torch.ones(2)
    want, got = gm(x), loaded(x)
    print("torch", torch.__version__, "traced:", want.tolist(), "to_folder:", got.tolist(),
          "a.buf is b.buf:", gm.a.buf is gm.b.buf, "after to_folder:", loaded.a.buf is loaded.b.buf)
    return 0 if torch.equal(want, got) else 1


if __name__ == "__main__":
    sys.exit(main())
