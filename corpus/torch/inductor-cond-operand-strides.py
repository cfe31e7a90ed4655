"""Inductor computes a torch.cond operand into a buffer laid out with other strides than the
cond's branch graphs were compiled for, and the branches run on it as if it had theirs:
`a = w + w; c = torch.cat([w, a], 1); torch.cond(w.sum() > 0, clone, neg, (a,))` with default
settings: Inductor writes `a` straight into its slice of the cat's output (row stride 8), the
branch graph was compiled for `a`'s own strides (4). torch.compile raises in the branch graph's
input check (`AssertionError: expected size 4==4, stride 8==4 at dim=0`); with the C++ wrapper
(cpp_wrapper), which has no such check, and with AOTInductor (the deployment form), the result
is wrong with no error: 12 of 16 elements. Stride padding gives the same on its own (on by
default for GPUs; here on the CPU with disable_padding_cpu = False): `cond(..., (-x,))` on x of
shape [4, 1030], -x padded to rows of 1,056. The same model with the branch it takes in
place of the cond agrees (the control). torch 2.6 and 2.14.1 (CPU; a GPU not run). Found by
flatcheck's bridge with --branch cond (paths compile.inductor.padding and
compile.inductor.breaks: seed 183 cases 0, 10, 16 and 28), written by hand.
    python3 corpus/torch/inductor-cond-operand-strides.py   # exit 1 while present
"""
import os
import sys
import tempfile

import torch
import torch._inductor.config


def cat_model(w, cond=True):
    a = w + w
    c = torch.cat([w, a], 1)
    if not cond:  # the control: the branch the cond takes here (w.sum() > 0), without it
        return a.clone(), c
    return torch.cond(w.sum() > 0, lambda u: u.clone(), lambda u: u.neg(), (a,)), c


def padded_model(x):
    return torch.cond(x.sum() > 0, lambda a: a.clone(), lambda a: a.neg(), (-x,))


class Cat(torch.nn.Module):
    def forward(self, w):
        return cat_model(w)


def compiled(fn, x, **settings):
    """fn compiled by Inductor under `settings`, from empty caches: its result, or the error."""
    torch._dynamo.reset()
    with torch._inductor.config.patch({"force_disable_caches": True, **settings}):
        try:
            return torch.compile(fn, backend="inductor", fullgraph=True)(x)
        except Exception as e:  # noqa: BLE001 - the finding, reported below
            return f"{type(e).__name__}: {str(e).splitlines()[0]}"


def aoti(x):
    """Cat exported and compiled by AOTInductor into a package, loaded and called."""
    with tempfile.TemporaryDirectory() as d:
        package = torch._inductor.aoti_compile_and_package(
            torch.export.export(Cat(), (x,)), package_path=os.path.join(d, "cat.pt2"))
        return torch._inductor.aoti_load_package(package)(x)


def judged(name, got, want):
    """Whether `got` (a result, or an error's text) differs from `want`; printed."""
    if isinstance(got, str):
        print(f"torch {torch.__version__}: {name}: {got}")
        return True
    wrong = int((got[0] != want[0]).sum())
    print(f"torch {torch.__version__}: {name}: {wrong} of {want[0].numel()} elements differ "
          "from eager's")
    return wrong > 0


def main():
    w = torch.arange(16, dtype=torch.float32).reshape(4, 4) / 16  # sum > 0
    want = cat_model(w)
    control = compiled(lambda v: cat_model(v, cond=False), w)
    if isinstance(control, str) or not torch.equal(control[0], want[0]):
        print(f"torch {torch.__version__}: the control fails ({control!r:.200}): the repro "
              "shows nothing here")
        return 2
    failed = judged("torch.compile", compiled(cat_model, w), want)
    failed |= judged("torch.compile, C++ wrapper", compiled(cat_model, w, cpp_wrapper=True), want)
    failed |= judged("AOTInductor", aoti(w), want)
    x = torch.arange(4 * 1030, dtype=torch.float32).reshape(4, 1030) / 1024  # sum > 0
    failed |= judged("torch.compile, padding", compiled(
        lambda v: (padded_model(v),), x, disable_padding_cpu=False), (padded_model(x),))
    if failed:
        print("FAIL: Inductor runs torch.cond's branches on an operand laid out otherwise")
        return 1
    print("ok: Inductor's torch.cond agrees with eager")
    return 0


if __name__ == "__main__":
    sys.exit(main())
