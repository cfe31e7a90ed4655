"""A cause of wrong results that lies in how torch traces with fake tensors, not in one path:
FakeTensorMode runs an in-place op on real tensors (docs/found-bugs.md 112).

  export-nonstrict-runs-constant-update
                FakeTensorMode's constant propagation (_dispatch_impl) runs an op of the
                `_should_allow_numbers_as_tensors` family (add, sub, mul, div and their in-place
                and out= forms) for real when none of its arguments is a fake tensor. Non-strict
                torch.export fakifies inputs, parameters and buffers but not a module's plain
                tensor attributes (its constants), so an update of such an attribute that reads
                no fake tensor (`self.k.mul_(2.0)`, `self.k.add_(1.0)`) writes the real tensor
                while export traces: the model's state changes by export, and the exported
                program, which holds that tensor as its constant, starts from the changed
                value. Traced when the program holds plain tensor attributes (emit-torch
                --tensor-constants) and the failing paths, run again with that propagation
                refusing ops whose schema is mutable (CAUSE_REMOVED), agree with torch eager,
                or fail only by known classes (joined to this one)
"""
import contextlib

import torch

from torch_compare import known_when_removed, plain_attributes

RUNS_UPDATE = "export-nonstrict-runs-constant-update"
CAUSE_REMOVED = ("FakeTensorMode's constant propagation refusing ops whose schema is mutable "
                 "(in-place and out= forms)")


def plain_tensors(module):
    """{FQN: tensor} of the plain tensor attributes (neither parameters nor buffers) of
    `module` and its submodules, a shared tensor under each of its names."""
    out = {}
    for prefix, mod in module.named_modules(remove_duplicate=False):
        for k, v in plain_attributes(mod).items():
            out.setdefault(f"{prefix}.{k}" if prefix else k, v)
    return out


def holds_constants(p):
    """Whether program `p`'s model holds plain tensor attributes (emit-torch
    --tensor-constants)."""
    try:
        return bool(plain_tensors(p.build()))
    except Exception:  # noqa: BLE001 - a model that does not build: the paths said so
        return False


@contextlib.contextmanager
def mutable_ops_faked():
    """Inside: FakeTensorMode's constant propagation of the numbers-as-tensors ops leaves out
    the ops whose schema is mutable, so an in-place op on real tensors runs on fakes as every
    other op does (the cause removed). A torch without that propagation raises RuntimeError:
    the cause cannot be removed there."""
    try:
        import torch._subclasses.fake_tensor as fake_tensor  # noqa: PLC0415 - torch >= 2.0
    except ImportError as e:
        raise RuntimeError("no torch._subclasses.fake_tensor here") from e
    real = getattr(fake_tensor, "should_allow_numbers_as_tensors", None)
    if real is None:
        raise RuntimeError("FakeTensorMode has no numbers-as-tensors propagation here")

    def allowed(func):
        return real(func) and not func._schema.is_mutable

    fake_tensor.should_allow_numbers_as_tensors = allowed
    try:
        yield
    finally:
        fake_tensor.should_allow_numbers_as_tensors = real


@contextlib.contextmanager
def registered_as_buffers(p):
    """Inside, program `p` builds its model with each plain tensor attribute registered as a
    buffer of its module under its own name instead: what torch's refusal of an updated
    constant asks (`Constant k is mutated in the forward method. Pls register it as
    buffer`)."""
    build = p.build

    def built():
        model = build()
        for _, mod in model.named_modules(remove_duplicate=False):
            for k, v in plain_attributes(mod).items():
                delattr(mod, k)
                mod.register_buffer(k, v)
        return model
    p.build = built
    try:
        yield
    finally:
        p.build = build


def traced(p, group, run, results, skips=False):
    """`results` of the paths `group` ({path: result}) with each mismatch or error traced to
    RUNS_UPDATE where `p` holds plain tensor attributes and the path, run again with the cause
    removed (mutable_ops_faked), agrees, or fails only by known classes (joined). With `skips`,
    a skipped path is traced so too: a rerun of another trace (torch_children's), where a path
    that stops because an earlier stage is wrong (partition.reexport's partitioned module, by
    112 on its export) explains nothing unless that stage's cause is removed as well."""
    bad = ("mismatch", "error") + (("skipped",) if skips else ())
    failing = [x for x in group if results.get(x, {}).get("status") in bad]
    if not failing or not holds_constants(p):
        return results
    try:
        with mutable_ops_faked():
            again = run(failing)
    except Exception:  # noqa: BLE001 - no run to compare with: the results stand
        return results
    return known_when_removed(
        results, again, failing, RUNS_UPDATE,
        lambda x, other: (f"with {CAUSE_REMOVED}, the path " +
                          (f"fails only by {other}" if other else "agrees") +
                          f" ({results[x].get('first_mismatch')})"))
