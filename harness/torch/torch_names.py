"""A cause of wrong results that lies in the program's parameter names, not in a path: torch.fx
generated code for a placeholder whose node name differs from its parameter's name (docs/found-
bugs.md 88).

  fx-placeholder-rename-chain  torch.fx names a placeholder after its parameter, renamed where
                               the name is a builtin (sum -> sum_1), and writes `sum_1 = sum`
                               into the code it generates before the next parameter's line:
                               a parameter named sum_1 is then read as `sum_2 = sum_1`, the
                               first argument. Every path whose module runs such code (the fx
                               trace, ep.module(), the partitioned modules, ...) computes with
                               one argument twice. Traced when the program has such a
                               signature and the path, run again with every forward's
                               parameters renamed (RENAMED + name: no builtin, no chain),
                               agrees with torch eager, or fails only by known classes
                               (joined to this one)
"""
import contextlib
import types

import torch

from torch_compare import known_when_removed

CHAIN = "fx-placeholder-rename-chain"
RENAMED = "_fcr_"


def module_classes(p):
    """The nn.Module classes program `p` defines (its M0, M1, ...)."""
    return [c for c in vars(p).values() if isinstance(c, type) and
            issubclass(c, torch.nn.Module) and "forward" in vars(c)]


def parameters(fn):
    code = fn.__code__
    return list(code.co_varnames[1:code.co_argcount])


def chains(p):
    """(class, parameter, the placeholder name torch.fx gives it) for each parameter of a forward
    of `p` that torch.fx names after another of the same forward's parameters."""
    found = []
    for cls in module_classes(p):
        names = parameters(cls.forward)
        namespace = torch.fx.graph._Namespace()
        for name in names:
            given = namespace.create_name(name, None)
            if given != name and given in names:
                found.append((cls.__name__, name, given))
    return found


def renamed(fn):
    """`fn` with its parameters (not self) named RENAMED + name: the same code."""
    code = fn.__code__
    n = code.co_argcount
    names = code.co_varnames
    new = names[:1] + tuple(RENAMED + v for v in names[1:n]) + names[n:]
    out = types.FunctionType(code.replace(co_varnames=new), fn.__globals__, fn.__name__,
                             fn.__defaults__, fn.__closure__)
    out.__qualname__ = fn.__qualname__
    return out


@contextlib.contextmanager
def parameters_renamed(p):
    """Program `p` with every forward's parameters renamed (and its keyword calls, `_call`'s
    names, alike): the cause of CHAIN removed."""
    kept = {cls: cls.forward for cls in module_classes(p)}
    call = getattr(p, "_call", None)
    try:
        for cls, fn in kept.items():
            cls.forward = renamed(fn)
        if call is not None:
            p._call = lambda module, packed, names, first: call(
                module, packed, tuple(RENAMED + n for n in names), first)
        yield
    finally:
        for cls, fn in kept.items():
            cls.forward = fn
        if call is not None:
            p._call = call


def traced(p, group, run, results):
    """`results` of the paths `group` ({path: result}) with each mismatch or error traced to
    CHAIN where `p` has such a signature and the path agrees once the parameters are renamed."""
    failing = [x for x in group if results.get(x, {}).get("status") in ("mismatch", "error")]
    found = chains(p) if failing else []
    if not found:
        return results
    try:
        with parameters_renamed(p):
            again = run(failing)
    except Exception:  # noqa: BLE001 - no run to compare with: the results stand
        return results
    # renamed, the path agrees, or fails only by known classes: CHAIN joined with them (a path
    # whose renamed run reaches a step the chain's wrong values had hidden)
    cls, name, given = found[0]
    return known_when_removed(
        results, again, failing, CHAIN,
        lambda x, other: (f"{cls}.forward's parameter {name} is placeholder {given}, another "
                          "parameter's name; with the parameters renamed, the path " +
                          (f"fails only by {other}" if other else "agrees") +
                          f" ({results[x].get('first_mismatch')})"))
