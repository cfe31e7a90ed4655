"""AOTInductor (torch._inductor.aoti_compile_and_package) of a dynamic export: Inductor's lowering
specializes a size export kept symbolic (it adds the guard Eq(s0, 4), the first input's rows, to
the program's shape environment), and the package checks no such guard when it runs: called with
5 rows, it returns a [4, 1] result where eager gives [5, 1], without an error. pytorch#150364
(open) describes the lowering's unchecked specialization. Found by flatcheck's torch campaign on
torch 2.6 (seed 132 case 28, path aoti.dynamic), shrunk from 19 to 5 nodes by `flatcheck shrink`
and written by hand from the shrink (the unused second input is the shrink's: without it, export
specializes the rows itself). The lowering on torch 2.14.1 keeps the size symbolic, and the
script exits 0 there; the issue is still open.
    python3 corpus/torch/aoti-lowering-guard-unchecked.py   # exit 1 while present
"""
import os
import sys
import tempfile

import torch

FIXED_IN = (2, 14)  # torch2_test.sh: 2.14.1 exits 0 (this model); 2.7 to 2.13 not run


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.full((1, 1), 0.5), requires_grad=False)

    def forward(self, x, unused):
        a = torch.chunk(x, 2, dim=1)[0]
        b = torch.chunk(a, 2, dim=1)[1]
        return b @ self.w


def main():
    model = Model()
    x = torch.arange(16.0).reshape(4, 4)
    auto = {0: torch.export.Dim.AUTO, 1: torch.export.Dim.AUTO}
    ep = torch.export.export(model, (x, x.clone()), dynamic_shapes=(auto, auto), strict=False)
    with tempfile.TemporaryDirectory() as folder:
        package = torch._inductor.aoti_compile_and_package(
            ep, package_path=os.path.join(folder, "model.pt2"))
        run = torch._inductor.aoti_load_package(package)
        y = torch.arange(20.0).reshape(5, 4)
        want, got = model(y, x), run(y, x)
    print(f"torch {torch.__version__}: 5 rows: eager {tuple(want.shape)}, "
          f"package {tuple(got.shape)}")
    if want.shape != got.shape or not torch.equal(want, got):
        print("FAIL: the package ran a size its lowering specialized away, without a check")
        return 1
    print("ok: the package's result is eager's")
    return 0


if __name__ == "__main__":
    sys.exit(main())
