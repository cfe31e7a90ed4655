"""The bridge's torch.fx path (docs/torch.md): trace, split into flatcheck's runs, flatten with a
pass (the built-in positional inliner, or a user's `--pass MODULE:FUNCTION`), save, load, run.

A flatten pass is a function `flatten(split: torch.fx.GraphModule) -> torch.fx.GraphModule`:
`split` is torch's `split_module` result, one `call_module` of a `_run_on_acc_<k>` or
`_run_on_gpu_<k>` submodule per run (Torch-TensorRT's names), and the pass returns the module
with those calls replaced by the runs' bodies. It may change `split` in place and return it.
"""
import importlib
import importlib.util
import io
import operator
import os

import torch

from torch_compare import judge, run_calls, tensors_of


class KnownTorchIssue(Exception):
    """A limitation of the installed torch that stops a path (docs/torch.md)."""


def child_call(parent_fqn, target, calls):
    """flatcheck's key of a call of `target` from the module at `parent_fqn`: the FQN without
    variant suffixes, and "fqn" for its first call, "fqn@k" for the k-th after it."""
    base = ".".join(part.split("@")[0] for part in target.split("."))
    fqn = f"{parent_fqn}.{base}" if parent_fqn else base
    index = calls.get(fqn, 0)
    calls[fqn] = index + 1
    return (fqn if index == 0 else f"{fqn}@{index}"), fqn


class TraceRecorder:
    """During symbolic tracing: tags each proxy's node with flatcheck's provenance key, and
    turns attribute reads and buffer updates into get_attr / clone / copy_ nodes (a plain
    attribute read would be traced as a constant; a buffer read is the buffer itself, not a
    clone, where the program reads state as aliases: READS_ALIAS, flatcheck_torch --reads)."""

    def __init__(self, tracer, alias=False):
        self.tracer, self.alias = tracer, alias
        self.frames, self.calls, self.pending = [], {}, None

    def _get_attr(self, module, path):
        prefix = self.tracer.path_of_module(module)
        return self.tracer.create_proxy("get_attr", f"{prefix}.{path}" if prefix else path, (),
                                        {})

    def attr(self, module, path, buffer):
        proxy = self._get_attr(module, path)
        return proxy.clone() if buffer and not self.alias else proxy

    def state(self, module, path):
        return self._get_attr(module, path)

    def copy(self, module, path, value, into=None):
        (self._get_attr(module, path) if into is None else into).copy_(value)

    def update(self, module, path, op, other, kwargs, into=None):
        getattr(self._get_attr(module, path) if into is None else into, op)(other, **kwargs)

    def begin(self, names):
        if not self.frames:
            self.frames.append(("", ""))
            return
        self.frames.append(child_call(self.frames[-1][1], self.pending, self.calls))

    def invoke(self, target, inputs, fn, *args):
        self.pending = target
        return fn(*args)

    def end(self, outputs, value):
        self.frames.pop()
        return value

    def node(self, name, op, value, inputs, dim=None):
        key = self.frames[-1][0]
        if isinstance(value, torch.fx.Proxy) and op not in ("get_attr", "call_module"):
            # branch and copy_ return a value another node made: keep that node's key.
            value.node.meta.setdefault("flatcheck_origin", f"{key}/{name}" if key else name)
        return value


def split_like_flatcheck(gm, p):
    """torch's split_module with flatcheck's runs: each node goes where flatcheck put it."""
    last = [None]
    assign = {}
    for n in gm.graph.nodes:
        if n.op in ("placeholder", "get_attr", "output"):
            continue
        run = p.PARTITION.get(n.meta.get("flatcheck_origin", ""))
        if run is None:  # getitems, buffer reads and updates: with their neighbour
            run = last[0]
        last[0] = run
        assign[n] = run
    first = next((r for r in assign.values() if r is not None), "_run_on_gpu_0")
    for n, r in assign.items():
        if r is None:
            assign[n] = first
    return split_by(gm, assign, True)


ATTR_OUTPUT = "split-module-ordered-output-attr-keyerror"


class OutputAttr(Exception):
    """split_module (keep_original_order=True) raised on an attribute the graph returns: `cls`
    is the class and its cause (a path's known_torch_issue; docs/found-bugs.md 23)."""

    def __init__(self, text):
        super().__init__(text)
        self.cls = text


def returned_attrs(gm, assign):
    """The get_attr nodes the output reads that no compute node of `assign` reads, by name."""
    output = next(n for n in gm.graph.nodes if n.op == "output")
    read = {a for n in assign for a in n.all_input_nodes}
    return {a.name: a.target for a in output.all_input_nodes
            if a.op == "get_attr" and a not in read}


def split_by(gm, assign, ordered, **options):
    """torch's split_module of `gm` by `assign` (node -> partition). Two failures are known, by
    cause: torch 1.13 indexes the first output of every partition, and a partition whose values
    nobody reads (dead nodes, a buffer copy_) has none (KnownTorchIssue: the path is skipped);
    with keep_original_order=True the base graph gets an attribute only when a partition takes
    it as an input, so an attribute the graph returns directly is a KeyError (OutputAttr)."""
    from torch.fx.passes.split_module import split_module
    try:
        return split_module(gm, gm, lambda n: assign[n], keep_original_order=ordered, **options)
    except IndexError:
        outputs = {r: False for r in assign.values()}
        for n, r in assign.items():
            outputs[r] |= any(assign.get(u) != r for u in n.users)
        silent = sorted(r for r, has in outputs.items() if not has)
        if silent:
            raise KnownTorchIssue(f"split_module fails on partitions without outputs: {silent}")
        raise
    except KeyError as e:
        attrs = returned_attrs(gm, assign)
        if ordered and e.args and e.args[0] in attrs:
            raise OutputAttr(f"{ATTR_OUTPUT}: the graph returns {e.args[0]} "
                             f"({attrs[e.args[0]]}), which no partition reads; split_module "
                             f"raises KeyError: {e}") from e
        raise


def inline_runs(split, marker, placeholder_source):
    """Copies the body of every run whose name contains `marker` before its call, in graph
    order. `placeholder_source(call, index, placeholder, parent_nodes_by_name)` says which
    parent node feeds each placeholder. Names of copied nodes are minted by the parent graph's
    namespace, so they can collide and be renamed."""
    g = split.graph
    for call in list(g.nodes):
        if call.op != "call_module" or marker not in call.target:
            continue
        sub = getattr(split, call.target)
        named = {n.name: n for n in g.nodes}
        env = {}
        phs = [n for n in sub.graph.nodes if n.op == "placeholder"]
        for i, ph in enumerate(phs):
            env[ph] = placeholder_source(call, i, ph, named)
        result = None
        with g.inserting_before(call):
            for n in sub.graph.nodes:
                if n.op == "placeholder":
                    continue
                if n.op == "output":
                    result = torch.fx.graph.map_arg(n.args[0], lambda x: env[x])
                    continue
                if n.op == "get_attr":
                    new = g.get_attr(f"{call.target}.{n.target}")
                elif n.op == "call_module":  # a module the run holds (torch 2.11's _guards_fn)
                    new = g.node_copy(n, lambda x: env[x])
                    new.target = f"{call.target}.{n.target}"
                else:
                    new = g.node_copy(n, lambda x: env[x])
                env[n] = new
        if isinstance(result, torch.fx.Node):
            call.replace_all_uses_with(result)
        else:
            for user in list(call.users):
                if user.op == "call_function" and user.target is operator.getitem:
                    user.replace_all_uses_with(result[user.args[1]])
                    g.erase_node(user)
        g.erase_node(call)
    return split


def by_position(call, index, placeholder, named):
    """The fix of Torch-TensorRT #4446: a run's i-th placeholder is its call's i-th argument."""
    return call.args[index]


def flatten_by_position(split):
    """The built-in flatten pass: engines (acc runs), then fallbacks (gpu runs), by position."""
    inline_runs(split, "_run_on_acc_", by_position)
    inline_runs(split, "_run_on_gpu_", by_position)
    split.graph.lint()
    split.recompile()
    return split


def load_pass(spec):
    """`path/to/file.py:function` or `package.module:function` -> the function."""
    module_name, sep, func = spec.rpartition(":")
    if not sep or not module_name or not func:
        raise ValueError(f"--pass takes MODULE:FUNCTION, got '{spec}'")
    if module_name.endswith(".py") or os.sep in module_name:
        if not os.path.isfile(module_name):
            raise ValueError(f"--pass: no file {module_name}")
        loader_spec = importlib.util.spec_from_file_location(
            "flatcheck_pass_" + os.path.basename(module_name)[:-3], module_name)
        mod = importlib.util.module_from_spec(loader_spec)
        loader_spec.loader.exec_module(mod)
    else:
        mod = importlib.import_module(module_name)
    fn = getattr(mod, func, None)
    if not callable(fn):
        raise ValueError(f"--pass: {module_name} has no function {func}")
    return fn


def load_graph_module(buf):
    """torch.load of a pickled GraphModule. torch 2.6 loads weights only by default and refuses
    a GraphModule (it is code, reduce_graph_module); the bridge wrote the bytes itself."""
    try:
        return torch.load(buf, weights_only=False)
    except TypeError:  # a torch without the argument
        buf.seek(0)
        return torch.load(buf)


def trace(p):
    model = p.build()
    tracer = torch.fx.Tracer()
    p._R = TraceRecorder(tracer, getattr(p, "READS_ALIAS", False))
    try:
        return torch.fx.GraphModule(model, tracer.trace(model))
    finally:
        p._R = p._NoRecorder()


def live_state(module):
    """The buffers some graph of `module` reads or writes (get_attr targets), by FQN; those
    under a run that split_module made (`submod_<run>.<fqn>`) under the FQN itself. split_module
    can leave stale copies of a buffer in submodules that never touch them."""
    live = set()
    for prefix, mod in module.named_modules(remove_duplicate=False):
        if isinstance(mod, torch.fx.GraphModule):
            for n in mod.graph.nodes:
                if n.op == "get_attr":
                    live.add(f"{prefix}.{n.target}" if prefix else n.target)
    out = {}
    for fqn, t in tensors_of(module, params=False).items():
        if fqn in live:
            key = fqn.split(".", 1)[1] if fqn.startswith("submod_") and "." in fqn else fqn
            out.setdefault(key, t.detach().clone())
    return out


def run_fx(p, eager, flatten, pass_name, cache):
    """The fx path of one program; `flatten` is the pass. Returns the result dict."""
    gm = trace(p)
    if p.PARTITION is None:
        return {"path": "fx", "status": "skipped", "skip": "flatcheck could not partition the case"}
    runs = sorted({r for r in p.PARTITION.values()})
    result = {"path": "fx", "runs": runs, "pass": pass_name}
    try:
        split = split_like_flatcheck(gm, p)
    except KnownTorchIssue as e:
        result.update(status="skipped", skip=f"torch {torch.__version__}: {e}")
        return result
    except OutputAttr as e:
        result.update(status="known_torch_issue", known_torch_issue=e.cls, stage="split")
        return result
    split = flatten(split)
    if not isinstance(split, torch.fx.GraphModule):
        raise TypeError(f"the flatten pass returned {type(split).__name__}, not a GraphModule")
    leftover = [n.target for n in split.graph.nodes
                if n.op == "call_module" and ("_run_on_acc_" in n.target or
                                              "_run_on_gpu_" in n.target)]
    if leftover:
        result["not_inlined"] = leftover[:4]
    buf = io.BytesIO()
    torch.save(split, buf)  # before it runs: the saved state is the case's
    buf.seek(0)
    status, why = judge(p, run_calls(split, p), live_state(split), eager, cache)
    loaded = load_graph_module(buf)
    reload_status, reload_why = judge(p, run_calls(loaded, p), live_state(loaded), eager, cache)
    frozen = sorted(n.target for n in loaded.graph.nodes
                    if n.op == "get_attr" and n.target.startswith("_tensor_constant")
                    and not hasattr(split, n.target))
    lost = sorted(set(live_state(split)) - set(live_state(loaded)))
    from torch_partition import in_place  # torch_partition imports torch_export, which needs us
    dropped = sum(map(in_place, split.graph.nodes)) - sum(map(in_place, loaded.graph.nodes))
    if reload_status == "mismatch" and (frozen or lost or dropped > 0) and status != "mismatch":
        # torch.load re-traces a GraphModule's code, and buffer reads and updates through
        # tensor methods are not traced: a read is frozen into a constant, an update dropped
        # (docs/found-bugs.md; corpus/torch/fx-reload-freezes-buffer-read.py).
        what = ([f"reads frozen into {', '.join(frozen)}"] if frozen else []) + \
               ([f"buffers no longer read or updated: {', '.join(lost)}"] if lost else []) + \
               ([f"{dropped} in-place updates dropped"] if dropped > 0 and not lost else [])
        result.update(status="known_torch_issue",
                      known_torch_issue="fx-reload-freezes-buffer-read: " + "; ".join(what),
                      detail=reload_why)
        return result
    worst = max((status, why), (reload_status, reload_why),
                key=lambda sw: ("agree", "excused", "mismatch").index(sw[0]))
    result["status"] = worst[0]
    if worst[1]:
        where = "split+flattened" if worst == (status, why) else "reloaded"
        result["detail" if worst[0] == "excused" else "first_mismatch"] = f"{where}: {worst[1]}"
    return result
