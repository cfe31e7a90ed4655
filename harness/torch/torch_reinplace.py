"""The bridge's functional-trace paths (docs/torch.md): the model traced to a functional ATen
graph by make_fx(functionalize(...)), as AOTAutograd traces a model before a backend sees it,
then two public passes over that graph: torch.fx.passes.reinplace, which turns out-of-place ops
back into in-place ones where no later use can see the difference, and the common-subexpression
pass torch.fx.passes.dialect.common.cse_pass.CSEPass.

  fx.make_fx     make_fx(torch.func.functionalize(f)) of f(*state, *inputs) =
                 torch.func.functional_call(model, state, inputs): every parameter and buffer a
                 graph input (one per tensor: a tied or shared tensor is one input), every
                 in-place update of a buffer or an input a copy_ into that input at the graph's
                 end, every view a view op or a view-scatter
  fx.reinplace   the same graph after torch.fx.passes.reinplace.reinplace(gm, *sample_args), the
                 pass's documented input ("a functional, ATen graph ... make_fx(functionalize(f))")
  fx.cse         the same graph after CSEPass(banned_ops=get_CSE_banned_ops()), the pass's
                 documented use (its example traces by make_fx; "for functional dialects, user
                 would only need to specify the random ops in ban list")
  fx.cse_inplace CSEPass(banned_ops=get_CSE_banned_ops()) over make_fx(f) of the same f, no
                 functionalize: the graph of the pass's docstring example, which keeps the
                 program's in-place ops (a buffer update is a copy_ where the program makes it,
                 reads after it take copy_'s result); the ban list's in-place ops are there
                 for such graphs

Each runs CONFIG["calls"] calls from the initial state: the state tensors are the graph's
inputs, kept from call to call (a buffer update is the graph's copy_ into them), the inputs
fresh copies each call (fx.cse_inplace's graph updates them where the program does). Outputs,
the inputs after the call (--update-inputs) and the state after the calls must equal torch
eager's bit for bit. The traces are of fresh copies of the initial state and inputs (tracing
with real tensors runs the program's updates on them).

fx.reinplace's result counts the nodes the pass made in-place (`reinplaced`) and the view-scatter
nodes it removed (`scatters_removed`), fx.cse's and fx.cse_inplace's the nodes it merged into an
earlier one (`merged`): a program where the pass changed nothing checks nothing of it beyond the
trace. A mismatch or error of one where its trace of the same program agrees (fx.make_fx's;
for fx.cse_inplace the in-place trace, run as fx.make_fx is) is the pass's (the result says so:
`"traced_graph": "agrees"`).

A failure is traced by its causes, read from the graph the pass made (its own FakeTensor
results): a node it made in-place that has one counts only when the pass run again with those
nodes kept out of place (each given to the pass behind a plain function, which it leaves alone)
agrees:
  reinplace-overlapping-argument (docs/found-bugs.md 75)
      another argument of the node is a view of its first argument (`a - a[:, :1]`,
      `a + a.t()`): the in-place op writes memory it still reads, so the kernel refuses it
      (a partial overlap) or, where the overlap is too hard for it to see (a strided view),
      reads values it already wrote: a silent wrong result. The pass refuses only the same
      node twice (`mul(a, a)`), not an alias of it
  reinplace-broadcast-self (docs/found-bugs.md 76)
      the node's first argument has its result's number of elements but another shape (`[2]`
      against a `[1, 2]` result): the in-place op cannot broadcast its output and raises. The
      pass compares the number of elements and the dtype only
and for fx.cse and fx.cse_inplace, read from the trace by CSEPass's own key (a node merged into
an earlier one of the same target whose arguments compare equal as Python values): a node
merged so counts only when the pass run again with those nodes kept apart (each behind its own
plain function) agrees:
  cse-equal-constants (docs/found-bugs.md 77)
      its arguments differ from its partner's in a constant's type or bits: they compare equal
      in Python but are not the same value: 0.0 and -0.0 (x * 0.0 against x * -0.0, x / 0.0
      against x / -0.0), 1 and 1.0 and True. The pass keys nodes by hash((args, kwargs)) and
      confirms by ==, so it merges them and one of the two results is lost
  cse-across-write (docs/found-bugs.md 81)
      a node between its partner and it writes memory (an op whose schema marks an argument
      written: copy_, add_, ...), or it writes itself: the same op on the same argument node
      reads other values after the write when that node is a view of what was written (a view
      taken before a buffer's update, read again after it), and a merged write is lost. The
      ban list keeps the listed in-place ops themselves (not copy_ or neg_) and no read past
      a write
With --branch cond, a trace that fails is traced too (traced_of): where it runs with the
branches' values cloned in contiguous strides, the class is cond-size-one-stride-rejected
(docs/found-bugs.md 35); where a torch.cond's operands share a storage and the functional trace
runs with each cloned first,
  decomp-cond-operands-share-storage (docs/found-bugs.md 37)
      functionalize's check of torch.cond's branches counts operands that alias one another
      (the halves of a chunk) as "aliasing the input or the output" and raises (torch 2.14.1;
      the branches return clones)
else, where it runs with dynamo's automatic dynamic shapes off,
  functionalize-cond-recompiled-dynamic (docs/found-bugs.md 101)
      torch.func.functionalize of a torch.cond with two operands met again at another size
      (eager torch.cond compiles its branches with dynamo, which compiles a cond seen before
      at other sizes again with symbolic sizes) raises `AssertionError: Expected FakeTensor`
      (torch 2.14.1)
then each of the first two with that one (the classes joined by "+"), and the path goes on with
the trace that ran.
"""
import contextlib
import struct

import torch

from torch_compare import judge, run_calls, tensors_of
from torch_constants import plain_tensors
from torch_cond import (SHARED, STRIDES, cond_branch, operands_unshared, shared_operands,
                        size_one_strides, with_class, with_cond)
from torch_export import failure, verdict

PATHS = ("fx.make_fx", "fx.reinplace", "fx.cse", "fx.cse_inplace")
OVERLAPPING = "reinplace-overlapping-argument"
BROADCAST = "reinplace-broadcast-self"
EQUAL_CONSTANTS = "cse-equal-constants"
ACROSS_WRITE = "cse-across-write"
DYNAMIC_COND = "functionalize-cond-recompiled-dynamic"  # docs/found-bugs.md 101


def available():
    """None when torch has make_fx, torch.func.functionalize and the two passes."""
    try:
        import torch.fx.experimental.proxy_tensor  # noqa: F401
        import torch.fx.passes.dialect.common.cse_pass  # noqa: F401
        import torch.fx.passes.reinplace  # noqa: F401
    except ImportError as e:
        return f"torch {torch.__version__}: {e}"
    if not hasattr(getattr(torch, "func", None), "functionalize"):
        return f"torch {torch.__version__} has no torch.func.functionalize"
    return None


class Traced:
    """A functional trace of program `p`'s model (without `functional`: make_fx's trace of the
    model's own in-place ops), called as the model is: `traced(*inputs)` runs the graph on the
    state it holds (updated in place by the graph's copy_ nodes) and the inputs."""

    def __init__(self, p, functional=True):
        from torch.fx.experimental.proxy_tensor import make_fx
        model = p.build()
        first = {}  # id(tensor) -> (its first FQN, the tensor): one graph input per tensor
        for fqn, t in tensors_of(model).items():
            first.setdefault(id(t), (fqn, t))
        self.fqns = [fqn for fqn, _ in first.values()]
        position = {key: i for i, key in enumerate(first)}
        self.slot = {fqn: position[id(t)] for fqn, t in tensors_of(model).items()}
        self.state = [t.detach().clone() for _, t in first.values()]
        k = len(self.fqns)
        # functional_call ties the names of a parameter or buffer shared by two (tie_weights),
        # not a plain tensor attribute's (emit-torch --tensor-constants): every name of a
        # tensor that a plain attribute holds is given its input itself, else it would stay the
        # model's own tensor
        held = {self.slot[fqn] for fqn in plain_tensors(model)}
        plain = {fqn: i for fqn, i in self.slot.items() if i in held and fqn not in self.fqns}

        def f(*flat):
            state = dict(zip(self.fqns, flat[:k]))
            state.update({fqn: flat[i] for fqn, i in plain.items()})
            return torch.func.functional_call(model, state, tuple(flat[k:]))
        with torch.no_grad():
            self.gm = make_fx(torch.func.functionalize(f) if functional else f)(*self.sample(p))

    def sample(self, p):
        """Fresh copies of the initial state and of the inputs."""
        return [t.clone() for t in self.state] + [t.clone() for t in p.INPUTS]

    def __call__(self, *inputs):
        return self.gm(*self.state, *inputs)

    def state_after(self):
        """{FQN: tensor} for every name the model holds a tensor under."""
        return {fqn: self.state[i].detach().clone() for fqn, i in self.slot.items()}


def traced_of(p, functional=True):
    """(Traced(p), None); or, where that trace fails with the branch op taken by torch.cond
    (--branch cond), the trace with one cause removed, and its class: where a branch's two
    values differ only in a size-1 dimension's stride, the branches' values cloned in
    contiguous strides (STRIDES, docs/found-bugs.md 35: torch 2.6's make_fx of torch.cond
    compares the branches' strides too); where two of a torch.cond's operands share a storage
    (shared_operands) and the trace is functional, each operand cloned first (SHARED,
    docs/found-bugs.md 37: functionalize's check of the branches counts operands aliasing each
    other as aliasing); else dynamo's automatic dynamic shapes off (static_conds_traced,
    DYNAMIC_COND); then each of the first two with the third ("SHARED+DYNAMIC_COND"). The
    first error stands where no such trace runs."""
    try:
        return Traced(p, functional), None
    except Exception as e:  # noqa: BLE001 - traced below, or the path's error
        if getattr(p, "_branch", None) is not cond_branch:
            raise
        removals = []
        if size_one_strides(p):
            removals.append((STRIDES, lambda: with_cond(p, torch.contiguous_format)))
        if functional and shared_operands(p):
            removals.append((SHARED, lambda: operands_unshared(p)))
        for cls, removed in removals:
            try:
                with removed():
                    return Traced(p, functional), cls
            except Exception:  # noqa: BLE001 - not (only) that cause: the next is tried
                pass
        for cls, removed in [(None, contextlib.nullcontext)] + removals:
            try:
                with removed():
                    return static_conds_traced(p, functional), \
                        "+".join(c for c in (cls, DYNAMIC_COND) if c)
            except Exception:  # noqa: BLE001 - not (only) those causes: the next is tried
                pass
        raise e from None


def static_conds_traced(p, functional):
    """Traced(p, functional) from an empty dynamo cache with automatic dynamic shapes off:
    eager torch.cond compiles its branches with dynamo, and a cond met again at another size
    is compiled for that size, not again with symbolic sizes (the cause of DYNAMIC_COND)."""
    import torch._dynamo  # noqa: PLC0415 - torch.cond is there, so dynamo is
    torch._dynamo.reset()
    try:
        with torch._dynamo.config.patch(automatic_dynamic_shapes=False):
            return Traced(p, functional)
    finally:
        torch._dynamo.reset()


REMOVED = {STRIDES: "the branches' values cloned in contiguous strides",
           SHARED: "each torch.cond operand cloned first (no two sharing a storage)",
           DYNAMIC_COND: "dynamo's automatic dynamic shapes off"}  # what traced_of removed


def classed(r, cls):
    """with_class, the class's stage named as this path's: the trace."""
    out = with_class(r, cls)
    if cls and cls != STRIDES and out.get("known_torch_issue") == cls:
        verdict_ = "agrees" if r["status"] == "agree" else "is excused"
        what = "a torch.cond met at a second size" if cls == DYNAMIC_COND else "torch.cond"
        removed = " and ".join(REMOVED[c] for c in cls.split("+"))
        out = {**out, "detail": f"the functional trace of {what} fails; with {removed} it "
                                f"runs, and the path {verdict_}"}
    return {**out, "stage": "trace"} if cls and r["status"] in ("agree", "excused") else out


def inplace_counts(before, gm):
    """(nodes whose target the pass made in-place, nodes it removed): `before` maps each node's
    name to its target before the pass."""
    now = {n.name: n.target for n in gm.graph.nodes}
    changed = sum(1 for name, target in now.items()
                  if name in before and before[name] is not target)
    return changed, sum(1 for name in before if name not in now)


def trace_path(p, eager, cache, functional=True):
    stage = "trace"
    try:
        traced, cls = traced_of(p, functional)
        result = {"nodes": sum(1 for n in traced.gm.graph.nodes if n.op == "call_function")}
        stage = "run"
        status, why = judge(p, run_calls(traced, p), traced.state_after(), eager, cache)
    except Exception as e:  # noqa: BLE001 - torch refusing a program
        return failure(e, stage)
    return classed({**result, **verdict(status, why)}, cls)


def element_span(t):
    """(first, last) element of `t`'s storage it can reach."""
    reach = sum((n - 1) * abs(st) for n, st in zip(t.shape, t.stride()))
    return t.storage_offset(), t.storage_offset() + reach


def overlaps(a, b):
    """Whether tensors `a` and `b` may share an element: one storage, spans that meet (an
    interleaving of two strided views counts)."""
    if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)) or \
            not a.numel() or not b.numel() or \
            a.untyped_storage().data_ptr() != b.untyped_storage().data_ptr():
        return False
    (a0, a1), (b0, b1) = element_span(a), element_span(b)
    return a0 <= b1 and b0 <= a1


class Causes(torch.fx.Interpreter):
    """Runs the graph the pass made on real tensors and reads, before each node it made
    in-place (its target differs from `before`'s), the causes of the module's docstring from
    the node's real arguments. Such a node with a cause runs as its out-of-place op, the result
    copied into its first argument where the shapes allow (what the in-place op means), so the
    run goes on to later nodes. `found`: {node name: [cause, ...]}."""

    def __init__(self, gm, before):
        super().__init__(gm)
        self.before, self.found = before, {}

    def run_node(self, n):
        op = self.before.get(n.name, n.target)
        if n.op != "call_function" or op is n.target or not n.args:
            return super().run_node(n)
        args, kwargs = self.fetch_args_kwargs_from_env(n)
        own = args[0]
        if not isinstance(own, torch.Tensor):
            return super().run_node(n)
        why = [OVERLAPPING] if any(overlaps(own, a) for a in args[1:]) else []
        out = op(*args, **kwargs)
        if isinstance(out, torch.Tensor) and out.shape != own.shape:
            why.append(BROADCAST)
        if not why:
            return super().run_node(n)
        self.found[n.name] = why
        if isinstance(out, torch.Tensor) and out.shape == own.shape and out.dtype == own.dtype:
            own.copy_(out)
            return own
        return out


def causes(p, traced, before):
    """{node name: [cause, ...]} of the graph the pass made (Causes), run from the initial
    state on the inputs; {} when that run fails (the failure has another cause)."""
    finder = Causes(traced.gm, before)
    try:
        with torch.no_grad():
            finder.run(*traced.sample(p))
    except Exception:  # noqa: BLE001 - nothing to trace the failure by
        return {}
    return finder.found


@contextlib.contextmanager
def kept_out_of_place(graph, names):
    """The nodes of `graph` named in `names` behind a plain function while a pass runs, their
    own targets again after (its module recompiled): reinplace makes only an OpOverload
    in-place, and a CSE pass merges only nodes of one target (each node gets a function of its
    own, which names the op it runs as `kept_op`)."""
    held = {}
    for n in graph.nodes:
        if n.name in names:
            op = n.target
            held[n.name] = op

            def kept(*args, _op=op, **kwargs):
                return _op(*args, **kwargs)
            kept.kept_op = op
            n.target = kept
    try:
        yield
    finally:
        for n in graph.nodes:
            if n.name in held:
                n.target = held[n.name]
        if graph.owning_module is not None:
            graph.owning_module.recompile()


def reinplaced(p, traced, keep=()):
    """Each node's target before the pass, after running it over the trace `traced` of `p` (the
    nodes named in `keep` kept out of place)."""
    from torch.fx.passes.reinplace import reinplace
    before = {n.name: n.target for n in traced.gm.graph.nodes}
    with kept_out_of_place(traced.gm.graph, keep), torch.no_grad():
        reinplace(traced.gm, *traced.sample(p))
    return before


def exact(v):
    """A constant as a key that tells apart what Python's == does not: its type, and a float's
    or complex's bits (0.0 and -0.0; 1, 1.0 and True)."""
    if isinstance(v, float):
        return ("float", struct.pack(">d", v))
    if isinstance(v, complex):
        return ("complex", struct.pack(">dd", v.real, v.imag))
    if isinstance(v, (bool, int)):
        return (type(v).__name__, v)
    return v


def writes(n):
    """Whether node `n` runs an op whose schema marks an argument written (copy_, add_, an
    out= overload)."""
    schema = getattr(n.target, "_schema", None)
    return n.op == "call_function" and schema is not None and any(
        a.alias_info is not None and a.alias_info.is_write for a in schema.arguments)


def merged_unequal(graph, banned):
    """{node name: [cause, ...]} for each node of `graph` a CSE pass keyed as CSEPass is (and
    torch 2.6's fx_graph_cse) would merge into an earlier one of the same target whose
    arguments equal its own by Python's == (flattened arguments and their structure): the
    causes of the module's docstring, EQUAL_CONSTANTS where they differ by `exact`,
    ACROSS_WRITE where a node between the two writes memory or the node does."""
    from torch.utils._pytree import tree_flatten
    env, first, found = {}, {}, {}
    written = 0  # nodes so far that write memory, merged or not
    for n in graph.nodes:
        target = getattr(n.target, "overloadpacket", n.target)
        if n.op in ("placeholder", "output", "get_attr") or target in banned:
            written += writes(n)
            continue
        flat, spec = tree_flatten((n.args, n.kwargs))
        flat = tuple(env.get(a, a) if isinstance(a, torch.fx.Node) else a for a in flat)
        key = (n.target, flat, str(spec))
        try:
            hash(key)
        except TypeError:
            written += writes(n)
            continue
        exact_key = (n.target, tuple(exact(a) for a in flat), str(spec))
        if key not in first:
            written += writes(n)
            first[key] = (n, exact_key, written)
            continue
        env[n] = first[key][0]
        why = [EQUAL_CONSTANTS] if first[key][1] != exact_key else []
        if written > first[key][2] or writes(n):
            why.append(ACROSS_WRITE)
        if why:
            found[n.name] = why
    return found


def get_banned_ops():
    """The ops the CSE paths ban, as CSEPass's docstring uses it: get_CSE_banned_ops()."""
    from torch.fx.passes.dialect.common.cse_pass import get_CSE_banned_ops
    return get_CSE_banned_ops()


def csed(traced, keep=()):
    """Runs CSEPass over the trace `traced` (the nodes named in `keep` kept apart) and puts the
    graph it made in the trace's place. Returns (nodes merged, {node name: [cause]} read from
    the trace before the pass: merged_unequal)."""
    from torch.fx.passes.dialect.common.cse_pass import CSEPass
    banned = get_banned_ops()
    found = merged_unequal(traced.gm.graph, banned)
    count = len(traced.gm.graph.nodes)
    with kept_out_of_place(traced.gm.graph, keep), torch.no_grad():
        gm = CSEPass(banned_ops=banned)(traced.gm).graph_module
    traced.gm = gm
    return count - len(gm.graph.nodes), found


@contextlib.contextmanager
def exact_cse(found):
    """torch.compile's fx_graph_cse, where Inductor's freezing calls it, with docs/found-bugs.md
    77 removed: the nodes merged_unequal finds kept apart while it runs (kept_out_of_place),
    their own ops again in the graph it makes; their names added to the set `found`.
    Inductor's caches off inside, so that no graph compiled without the change is taken."""
    import torch._functorch.compile_utils as compile_utils
    import torch._inductor.config
    import torch._inductor.freezing as freezing
    real = freezing.fx_graph_cse

    def cse(fx_g, *args, **kwargs):
        apart = merged_unequal(fx_g, getattr(compile_utils, "rand_ops", ()))
        found.update(apart)
        with kept_out_of_place(fx_g, apart):
            new = real(fx_g, *args, **kwargs)
        for n in new.nodes:
            n.target = getattr(n.target, "kept_op", n.target)
        return new
    freezing.fx_graph_cse = cse
    try:
        with torch._inductor.config.patch(force_disable_caches=True):
            yield
    finally:
        freezing.fx_graph_cse = real


def traced_causes(p, eager, cache, found, apply, what, functional=True):
    """The known classes of a failure whose graph has the causes `found`: the pass run again
    (`apply(traced, keep)`, over the trace traced_of(p, functional)) with their nodes kept out
    of its reach must agree; else None. Where the causes are of several classes, the nodes of
    one class alone are tried first, class by class: the first that suffices is the failure's
    class (a cause read from the graph may be harmless: a read merged across a write to other
    memory); else all of them together. `what`: (what the pass did to them, how they were
    kept)."""
    classes = sorted({c for why in found.values() for c in why})
    tries = [{n: [c] for n, why in found.items() if c in why} for c in classes] \
        if len(classes) > 1 else []
    for keep in tries + [found]:
        try:
            traced, _ = traced_of(p, functional)
            apply(traced, set(keep))
            status, _ = judge(p, run_calls(traced, p), traced.state_after(), eager, cache)
        except Exception:  # noqa: BLE001 - the failure has another cause too
            continue
        if status == "mismatch":
            continue
        shown = sorted({c for why in keep.values() for c in why})
        nodes = ", ".join(f"{name} ({', '.join(why)})" for name, why in sorted(keep.items()))
        return f"{'; '.join(shown)}: {what[0]}: {nodes}; {what[1]}, the graph agrees"
    return None


def reinplaced_counts(p, traced):
    """reinplace over `traced`: (the result's counts, the causes read from its graph)."""
    before = reinplaced(p, traced)
    changed, removed = inplace_counts(before, traced.gm)
    return {"reinplaced": changed, "scatters_removed": removed}, causes(p, traced, before)


def csed_counts(_, traced):
    """CSEPass over `traced`: (the result's counts, the causes read from the trace)."""
    merged, found = csed(traced)
    return {"merged": merged}, found


# A pass path: (its stage's name, run(p, traced), again(p) -> apply(traced, keep) for the
# confirmation, (what the pass did to the nodes of a cause, how they were kept), whether the
# trace is functional).
REINPLACE = ("reinplace", reinplaced_counts,
             lambda p: lambda traced, keep: reinplaced(p, traced, keep),
             ("made in-place", "kept out of place"), True)
CSE = ("cse", csed_counts, lambda _: csed, ("merged into an earlier node", "kept apart"), True)
# fx.cse_inplace: the same pass over the in-place trace
CSE_INPLACE = CSE[:4] + (False,)


def pass_path(p, eager, cache, traced_status, which):
    """One pass over the trace (`which`: REINPLACE, CSE or CSE_INPLACE), judged, a failure
    traced."""
    name, run_pass, again, what, functional = which
    stage = "trace"
    found, cls = {}, None
    try:
        traced, cls = traced_of(p, functional)
        stage = name
        result, found = run_pass(p, traced)
        stage = "run"
        status, why = judge(p, run_calls(traced, p), traced.state_after(), eager, cache)
    except Exception as e:  # noqa: BLE001 - torch refusing a program
        out = failure(e, stage)
        known = traced_causes(p, eager, cache, found, again(p), what, functional) if found and \
            out["status"] == "error" else None
        if known:
            return classed({"status": "known_torch_issue", "known_torch_issue": known,
                               "stage": stage, "detail": out["first_mismatch"][:300]}, cls)
        return {**out, "traced_graph": traced_status} if stage != "trace" else out
    out = {**result, **verdict(status, why)}
    if status != "mismatch":
        return classed(out, cls)
    known = traced_causes(p, eager, cache, found, again(p), what, functional) if found else None
    if known:
        return classed({**result, "status": "known_torch_issue", "known_torch_issue": known,
                           "detail": why}, cls)
    return {**out, "traced_graph": traced_status}


def run_reinplace(p, eager, paths, cache):
    """Every requested functional-trace path of one program: {path: result}."""
    why = available()
    if why:
        return {path: {"status": "skipped", "skip": why} for path in PATHS if path in paths}
    out = {}
    said = {}  # per trace (functional or not), how it fared on its own

    def traced_status(functional):
        if functional not in said:
            traced = trace_path(p, eager, cache, functional)
            if functional and "fx.make_fx" in paths:
                out["fx.make_fx"] = traced
            status = traced["status"]
            said[functional] = "agrees" if status in ("agree", "excused") else \
                f"{status}: {traced.get('first_mismatch', traced.get('skip', ''))}"[:300]
        return said[functional]
    if "fx.make_fx" in paths:
        traced_status(True)
    for path, which in (("fx.reinplace", REINPLACE), ("fx.cse", CSE),
                        ("fx.cse_inplace", CSE_INPLACE)):
        if path in paths:
            out[path] = pass_path(p, eager, cache, traced_status(which[4]), which)
    return out
