"""AOTInductor (torch._inductor.aoti_compile_and_package): a model that returns a clone of a
buffer taken before it updates the buffer in place returns the updated buffer. Inductor's
remove_noop_ops removes the clone (same metadata as its source), guarding only against making an
output alias a graph input, and it counts the placeholders alone as inputs; the package holds
the model's buffers as get_attr nodes, so nothing stops it. `old = self.buf.clone();
self.buf.copy_(old + x); return old`: the package returns buf + x. Found by flatcheck's torch
campaign on torch 2.14.1 (seed 129 case 53, path aoti: -4.625 where eager and the float64 run
give -0.875), shrunk from 41 to 4 nodes by `flatcheck shrink`, written by hand from the shrink;
torch 2.6 has it too. torch.compile (Inductor in process) is right: there the buffers are graph
inputs. docs/found-bugs.md 72.
    python3 corpus/torch/aoti-clone-of-updated-buffer-removed.py   # exit 1 while present
"""
import os
import sys
import tempfile

import torch

N = 4096  # large enough that no torch inlines the buffer as a constant (pytorch#169118)


class Old(torch.nn.Module):
    """The shrunk case: the buffer's old value, cloned, returned after the update."""
    def __init__(self):
        super().__init__()
        self.register_buffer("buf", torch.arange(float(N)))

    def forward(self, x):
        old = self.buf.clone()
        self.buf.copy_(old + x)
        return (old,)


class Both(torch.nn.Module):
    """The old value and the new one, each cloned: the first comes back as the second."""
    def __init__(self):
        super().__init__()
        self.register_buffer("buf", torch.arange(float(N)))

    def forward(self, x):
        old = self.buf.clone()
        self.buf.add_(x)
        return old, self.buf.clone()


def main():
    import torch._inductor.config
    torch._inductor.config.compile_threads = 1  # no worker processes (the repro runner forks)
    wrong = 0
    x = torch.ones(N)
    for build in (Old, Both):
        ep = torch.export.export(build(), (x,), strict=False)
        with tempfile.TemporaryDirectory() as folder:
            package = torch._inductor.aoti_compile_and_package(
                ep, package_path=os.path.join(folder, "model.pt2"))
            got = [t[:3].tolist() for t in torch._inductor.aoti_load_package(package)(x)]
        want = [t[:3].tolist() for t in build()(x)]
        if got != want:
            print(f"torch {torch.__version__}: {build.__name__}: the package returns {got}, "
                  f"eager {want} (first elements)")
            wrong += 1
    if wrong:
        return 1
    print(f"torch {torch.__version__}: the packages agree with eager")
    return 0


if __name__ == "__main__":
    sys.exit(main())
