#!/usr/bin/env python3
"""flatcheck's bridge to real PyTorch (docs/torch.md). No dependency beyond torch.

    python3 harness/torch/flatcheck_torch.py PROGRAM.py...
        [--paths eager,fx,export,partition,pipeline,compile,aoti,jit,grad]
        [--pass MODULE:FUNCTION] [--quiet] [--device cpu|cuda]
        [--branch python|cond|nograd] [--reads copy|alias|changed]
        [--time SECONDS] [--path-time SECONDS] [--progress SECONDS]

Each PROGRAM.py is written by `flatcheck emit-torch`. For each one, these paths:
  eager    torch's eager run vs flatcheck's eager reference, node by node in every call:
           a node whose inputs were bit-identical must be bit-identical too (NaN payloads
           included), or within its op's bound for exp, tanh, sigmoid (ULPs, measured), sum
           and matmul (an error bound from the summation length). A node that differs within
           its bound makes everything downstream "unchecked". Outputs of every call and the
           final state must then be bit-identical unless a bounded difference occurred.
  fx       torch.fx: symbolic_trace, split with torch's split_module into the runs flatcheck's
           partitioner made (_run_on_acc_* / _run_on_gpu_*), flattened by a pass (built in: every
           run inlined by position; --pass: yours), torch.save/torch.load, the calls: outputs and
           buffers must equal torch eager's bit for bit.
  fx.folder
           torch.fx: symbolic_trace, GraphModule.to_folder (save as a Python package), import
           it back, the calls; vs torch eager, bit for bit (torch_folder.py).
  fx.const_fold
           torch.fx: symbolic_trace, torch.fx.experimental.const_fold.split_const_subgraphs
           (computations on parameters and buffers alone run once and kept), the calls; vs
           torch eager, bit for bit (torch_fold.py).
  fx.merge_matmul
           torch.fx: symbolic_trace, torch.fx.experimental.merge_matmul.merge_matmul (the
           matmuls sharing a right-hand operand merged into one), the calls; vs torch eager,
           bit for bit (torch_merge.py).
  fx.normalize_args, fx.normalize_ops
           torch.fx: symbolic_trace, torch.fx.experimental.normalize's NormalizeArgs (calls'
           arguments by keyword) or NormalizeOperators (torch.add and the other binary
           functions made Python operators), the calls; vs torch eager, bit for bit
           (torch_normalize.py).
  fx.split, fx.split_ordered
           torch.fx: symbolic_trace, then torch's split_module into partitions drawn per
           program (acyclic; seeded by the traced graph), in its default order or with
           keep_original_order=True; the calls; vs torch eager, bit for bit (torch_split.py).
  fx.rewrite
           torch.fx: symbolic_trace, then torch.fx.subgraph_rewriter.replace_pattern of each
           pattern drawn from the trace (one to three connected ops) by an identical copy of
           itself; the calls; vs torch eager, bit for bit (torch_rewrite.py).
  fx.make_fx, fx.reinplace, fx.cse, fx.cse_inplace
           make_fx(torch.func.functionalize(...)) of the model called by functional_call, its
           state graph inputs: the functional ATen graph AOTAutograd traces; then (reinplace)
           torch.fx.passes.reinplace or (cse) the common-subexpression pass CSEPass over it;
           (cse_inplace) CSEPass over make_fx's trace without functionalize, the program's
           in-place ops kept; the calls; vs torch eager, bit for bit (torch_reinplace.py).
  export.strict.module, export.strict.unflatten, export.strict.preserve,
  export.nonstrict.module, export.nonstrict.unflatten, export.nonstrict.preserve,
  export.nonstrict.reexport
           torch.export.export (strict or not), then ep.module(), or save/load and unflatten,
           or (preserve) export with every submodule's call signature preserved and unflatten,
           or (reexport, non-strict only) unflatten, export the unflattened module again and
           unflatten that; the calls; vs torch eager, bit for bit (torch >= 2.5; skipped with
           the reason before).
  export.strict.preserve_some, export.nonstrict.preserve_some
           export with the call signatures of a drawn part of the submodules preserved (each
           module object, all its names, with probability 1/2, at least one and not all;
           --draw's "preserve" pins them), then unflatten as the preserve path does: preserved
           modules below and above unpreserved ones; a program with fewer than two submodule
           objects is skipped (torch_export.py).
  export.strict.decomp, export.nonstrict.decomp,
  export.strict.decomp_preserve, export.nonstrict.decomp_preserve,
  export.strict.decomp_preserve_some, export.nonstrict.decomp_preserve_some
           ExportedProgram.run_decompositions() between the export and the rest: its module()
           judged first, then (decomp) save/load, module() and unflatten, or (decomp_preserve)
           the preserve path's unflatten, or (decomp_preserve_some) the preserve_some path's
           export (its drawn part preserved) and unflatten (torch_decomp.py).
  export.strict.hooked, export.nonstrict.hooked
           each module the model calls, with probability 1/2, given a hook that changes no
           result, of a kind drawn per module (bound: a forward wrapper bound to the module, as
           pipelining's split points install; partial: accelerate's add_hook_to_module form;
           closure; pre_hook, hook: registered identity hooks; compile: Module.compile), then
           export (strict or not) and unflatten; the calls; vs torch eager, bit for bit; then
           the structure (torch_hooked.py).
  export.strict.swap, export.nonstrict.swap
           export preserving every submodule's call signature and unflatten, then what
           preserved signatures are for: modules the model calls, each with probability 1/2,
           swapped for the model's own eager modules holding the unflattened module's tensors;
           the calls; vs torch eager, bit for bit (torch_swap.py).
  export.strict.swap_modules, export.nonstrict.swap_modules
           export preserving every submodule's call signature, then torch's own swap of the
           flat graph, torch.export._swap._swap_modules: modules the model calls once, drawn
           as the swap paths draw them, swapped for the model's own eager modules holding the
           exported module's tensors; the calls; vs torch eager, bit for bit
           (torch_swap_modules.py).
  export.strict.functional_call, export.nonstrict.functional_call
           export, save/load and unflatten, then the calls through torch.func.functional_call
           with a new state (every tensor doubled) under the eager model's names, as a
           checkpoint gives them; vs torch eager with that state written into its own
           tensors, bit for bit; the unflattened module's own tensors put back
           (torch_functional.py).
  export.strict.dynamic, export.nonstrict.dynamic
           export with every input dimension dynamic (Dim.AUTO), save/load, then ep.module()
           and unflatten at the inputs' sizes and at up to three other sizes the program's
           range constraints admit, on the inputs' values repeated; the calls; vs torch eager
           on the same inputs, bit for bit; a size ep.module() refuses with a failed shape
           guard must be refused by the unflattened module too (torch_dynamic.py).
  export.strict.cond, export.nonstrict.cond
           the program's branch op taken by torch.cond on a predicate the graph computes (every
           other path sees export specialize the branch away), export, save/load, then
           ep.module() and unflatten; the calls; vs torch eager of the program as written, bit
           for bit (torch_cond.py).
  partition.splitter, partition.capability
           torch's own partitioners, as Torch-TensorRT's dynamo frontend builds on them, over the
           non-strict exported module: _SplitterBase (`_run_on_acc_*` / `_run_on_gpu_*`
           submodules) or CapabilityBasedPartitioner (fused `_run_on_acc_*` partitions), the
           fallback ops CONFIG["fallback_ops"]; the calls; then flattened by the pass (as fx)
           and the calls again; vs torch eager, bit for bit (torch_partition.py).
  partition.reexport.splitter, partition.reexport.capability
           the partitioned module exported again (non-strict), then unflatten; the calls; vs
           torch eager, bit for bit (torch_partition_export.py).
  pipeline torch.distributed.pipelining.pipeline: the model exported and split into stages at
           split points drawn per program (modules it calls, at their beginning or end), each
           stage's module tree rebuilt with call variants, the Pipe run locally; the calls; vs
           torch eager, bit for bit (torch_pipeline.py; torch >= 2.4).
  compile.eager, compile.aot_eager, compile.dynamic, compile.breaks, compile.regional
           torch.compile of the whole model (fullgraph, static shapes), by dynamo's graph alone
           (backend eager) or through AOTAutograd's functionalization (backend aot_eager), each
           program compiled afresh; or (dynamic) aot_eager with torch.compile's default
           automatic dynamic shapes at the inputs' sizes and then at up to three others eager
           runs, a fresh model each under one compile cache; or (breaks) aot_eager without
           fullgraph, with graph breaks after about a third of the nodes and after every buffer
           update; or (regional) every module below
           the root compiled in place (Module.compile, aot_eager), the root eager; the calls;
           outputs and the model's state vs torch eager on the same inputs, bit for bit
           (torch_compile.py; torch >= 2.0).
  compile.inductor, compile.inductor.dynamic, compile.inductor.freezing,
  compile.inductor.breaks, compile.inductor.cpp_wrapper, compile.inductor.scalar,
  compile.inductor.memory, compile.inductor.wide, compile.inductor.cache,
  compile.inductor.cache.dynamic, compile.inductor.parallel, compile.inductor.loop_order,
  compile.inductor.padding
           torch.compile with Inductor (its C++ kernels for the CPU; needs g++ and torch's
           headers), static shapes, or (dynamic) automatic dynamic shapes at the inputs' sizes
           and then up to three others, as compile.dynamic: kernels for symbolic sizes, or
           (freezing) with Inductor's freezing (the calls, as every path's, under
           torch.no_grad()): state the graph does not
           update folded in as constants, or (breaks) with compile.breaks' graph breaks, or
           (cpp_wrapper) with Inductor's C++ wrapper code around the kernels (pybind11), or
           (scalar) with scalar kernels only (the others use its vector kernels where it can
           build them), or (memory) with Inductor's memory planning
           (buffers carved from pools), or (wide) of the program with every dimension of its
           inputs and state nine times larger, judged against eager on that program, or
           (cache) compiled into empty FX graph and AOTAutograd caches, everything in memory
           forgotten, and a fresh model compiled from those caches, or (cache.dynamic) every
           dimension symbolic, compiled so at the inputs' sizes and then from the caches at up
           to three others, or (parallel) as wide with every loop split across four threads
           however short, or (loop_order) with loop ordering after fusion the other way from
           this torch's setting, or (padding) as wide with every buffer's rows padded to 128
           bytes (Inductor's stride padding, on the CPU and at every size);
           outputs and state vs torch eager bit for bit, or else each differing element
           within rounding of a float64 eager run at that size (torch_inductor.py).
  aoti     AOTInductor: torch.export.export (non-strict) of a fresh model compiled by
           torch._inductor.aoti_compile_and_package into a package, loaded back and called;
           the outputs vs torch eager as compile.inductor judges them; the package's own state
           judged through the later calls' outputs (torch_aoti.py; torch >= 2.6).
  aoti.dynamic
           AOTInductor for symbolic sizes: the dynamic export (as export.nonstrict.dynamic's)
           compiled into one package, loaded afresh and called at the inputs' sizes and up to
           three others; a size outside the program's shape guards is not judged (the package
           running it is a known torch issue).
  jit.trace, jit.save, jit.freeze, jit.convert
           torch.jit.trace of a fresh model (its tensors set back after the trace's own run),
           or that traced module through torch.jit.save and torch.jit.load, or frozen
           (torch.jit.freeze, optimize_numerics off), or converted to an ExportedProgram by
           torch's TorchScript converter (TS2EPConverter; torch >= 2.4) and run as
           ep.module(); the calls with the TensorExpr fuser off
           (its kernels round differently); outputs and state (a frozen module's: the tensors
           it still holds) vs torch eager, bit for bit (torch_jit.py; skipped with --branch
           cond: torch.jit.trace refuses torch.cond).
  grad.compile.aot_eager, grad.compile.inductor, grad.compile.dynamic,
  grad.compile.dynamic_inductor, grad.compile.breaks, grad.compile.breaks_inductor,
  grad.compile.regional, grad.compile.regional_inductor, grad.export.nonstrict,
  grad.export.strict, grad.export.unflatten, grad.export.decomp
           the backward: the calls with float inputs and parameters requiring grad through
           torch.compile (aot_eager, Inductor; dynamic=True; with compile.breaks' graph
           breaks; each module below the root compiled, as compile.regional, with aot_eager
           or Inductor), ep.module()
           of torch.export.export, the
           unflattened non-strict export or its
           run_decompositions(), then one backward of a fixed weighted sum of the float
           outputs; the gradients vs torch eager's own backward, bit for bit, or within float32
           rounding excused; the unflatten and decomp paths only where their forward outputs
           are eager's (torch_grad.py).
--paths takes names or prefixes: `fx` is the fx path, the folder, const_fold, merge_matmul, the
two normalize paths, the two split paths, the rewrite path and the four functional-trace paths, `export` the
twenty-seven export paths, `export.strict` thirteen, `partition` the two partition paths and
their two re-export paths, `compile` the fifteen torch.compile paths (`compile.inductor`
Inductor's ten), `aoti` the two AOTInductor paths, `jit` the four TorchScript paths, `grad` the
six gradient paths; the default is every path.

--branch cond runs every path but eager with the program's branch op taken by torch.cond, as the
cond paths take it (torch_cond.py); each such result says "branch": "cond". --branch nograd
runs them with the value the branch op takes computed again under torch.no_grad(), the region
export records as a higher-order op (`wrap_with_set_grad_enabled`); results say "nograd".

--reads alias runs every path but eager with each state read as the module's own tensor, not a
copy (flatcheck's semantics, which the eager path keeps): a value computed from a buffer by a
view op (reshape, transpose, a chunk) is then a view of the buffer, and a later in-place update
of the buffer shows through it, as in a model that reads `self.buf` and updates it after. Each
path is judged against torch eager of the program read that way; results say "reads": "alias", and
"reads_change": whether torch eager's outputs or final state differ from the program read as
copies (the summary counts such programs: programs_reads_change). --reads changed reads so too,
but runs the paths only on programs whose results change read so (about one in twenty of the
generated ones); the others' paths are skipped with that reason.

--device cuda runs every path but eager with the model's state and the inputs on the GPU
(torch's CUDA kernels), judged against torch eager run on the GPU, bit for bit; the eager path
still compares torch's CPU eager with flatcheck's. Such a result's path ends in `.cuda`
(`export.nonstrict.module.cuda`). --time SECONDS starts no program after SECONDS: the summary
counts the programs checked and those not run; so does SIGTERM or SIGINT (Ctrl-C), which stops
the program under way and counts it not run, the summary saying "stopped". --path-time SECONDS
stops a path that runs longer on one program (export.MODE.module and export.MODE.unflatten,
which share one export, share the limit) and reports it skipped, reason "time limit", with
torch's compile caches reset after it; a limit met in an import waits for the import, and a
path that ends meanwhile is skipped too; a trace's runs of a failing path again are held to it
each.

A path's status: agree; excused (only NaN payloads differ, and exactly as a NaN constant losing
its payload explains: torch_compare.judge); mismatch; error (torch raised); skipped (with its
class and reason); known_torch_issue (docs/torch.md, "Found in torch"). One JSON line per
program and path (--quiet: only mismatches and errors), then a summary line with counts per path
and per op; on stderr, a progress line once a program ends --progress SECONDS (default 30)
after the last one. Exit 1 on any mismatch or error, 2 on bad usage or an unreadable program.
"""
import argparse
import contextlib
import importlib.util
import json
import os
import signal
import sys
import threading
import time
import traceback


def fixed_hash_seed():
    """Runs the bridge again under PYTHONHASHSEED=0 unless it already is: torch code that
    iterates over a set of names (pipelining's aliasing step) otherwise takes another order on
    each run, and one program would give different results run to run. Called before torch's
    import, so only the restarted process imports torch (about 2 s)."""
    if os.environ.get("PYTHONHASHSEED") != "0":
        os.environ["PYTHONHASHSEED"] = "0"
        os.execv(sys.executable, getattr(sys, "orig_argv", [sys.executable] + sys.argv))


class Stopped(BaseException):
    """Raised into the run by SIGTERM or SIGINT (a campaign's limit, a user's Ctrl-C): a
    BaseException, so that no `except Exception` takes it for a path's failure."""


STOP = {"signal": None, "raise": False, "pid": os.getpid()}


def on_stop(signum, frame):
    """Notes SIGTERM or SIGINT and, while a program is being checked, stops it: the summary
    then counts it and those after it not run. Where torch swallows the exception (a weakref
    callback's is printed and dropped), the signal comes again a second later until it lands."""
    if os.getpid() != STOP["pid"]:  # a child forked by torch: not the bridge
        os._exit(128 + signum)
    if STOP["signal"] is None:
        STOP["signal"] = signal.Signals(signum).name
        threading.Thread(target=stop_again, args=(signum,), daemon=True).start()
    if STOP["raise"]:
        raise Stopped()


def stop_again(signum):
    """The stop request again each second while a program is still being checked."""
    while True:
        time.sleep(1)
        if STOP["raise"]:
            os.kill(STOP["pid"], signum)


if __name__ == "__main__":
    fixed_hash_seed()
    # From here on a stop request is noted (before torch's import, which takes seconds).
    signal.signal(signal.SIGTERM, on_stop)
    signal.signal(signal.SIGINT, on_stop)

import torch  # noqa: E402 - after the restart above

from torch_compare import (Eager, Verdict, bit_equal, compare_node, diff_values, eager_run,
                           first_difference, inputs_after, outputs_of, state_of,
                           storage_groups)
import torch_children
import torch_constants
import torch_names
from torch_export import PATHS as EXPORT_PATHS
from torch_export import failure, run_export
import torch_export
from torch_fx import child_call, flatten_by_position, load_pass, run_fx
from torch_partition import PATHS as PARTITION_PATHS
from torch_partition import run_partition
from torch_fold import PATHS as FOLD_PATHS
from torch_fold import run_fold
from torch_folder import PATHS as FOLDER_PATHS
from torch_folder import run_folder
import torch_hooked
import torch_swap
import torch_dynamic
import torch_pipeline
import torch_rewrite
from torch_hooked import PATHS as HOOKED_PATHS
from torch_hooked import run_hooked
from torch_swap import PATHS as SWAP_PATHS
from torch_partition_export import PATHS as REEXPORT_PATHS
from torch_partition_export import run_partition_export
from torch_swap import run_swap
from torch_swap_modules import PATHS as SWAP_MODULES_PATHS
from torch_swap_modules import run_swap_modules
from torch_functional import PATHS as FUNCTIONAL_PATHS
from torch_functional import run_functional
from torch_dynamic import PATHS as DYNAMIC_PATHS
from torch_dynamic import run_dynamic
from torch_cond import PATHS as COND_PATHS
from torch_cond import BRANCHES, clone_branch, run_cond
from torch_pipeline import PATHS as PIPELINE_PATHS
from torch_pipeline import run_pipeline
from torch_split import PATHS as SPLIT_PATHS
from torch_split import run_split
from torch_rewrite import PATHS as REWRITE_PATHS
from torch_rewrite import run_rewrite
from torch_reinplace import PATHS as REINPLACE_PATHS
from torch_merge import PATHS as MERGE_PATHS
from torch_merge import run_merge
from torch_normalize import PATHS as NORMALIZE_PATHS
from torch_normalize import run_normalize
from torch_reinplace import run_reinplace
from torch_compile import PATHS as COMPILE_PATHS
from torch_compile import run_compile
from torch_inductor import PATHS as INDUCTOR_PATHS
from torch_inductor import run_inductor
import torch_inductor
from torch_aoti import PATHS as AOTI_PATHS
from torch_aoti import run_aoti
from torch_jit import PATHS as JIT_PATHS
from torch_vmap import PATHS as VMAP_PATHS
from torch_vmap import run_vmap
from torch_jit import run_jit
from torch_grad import PATHS as GRAD_PATHS
from torch_grad import INDUCTOR_PATHS as GRAD_INDUCTOR_PATHS
from torch_grad import run_grad
import torch_jit

ALL_PATHS = ("eager", "fx") + FOLDER_PATHS + FOLD_PATHS + MERGE_PATHS + NORMALIZE_PATHS + SPLIT_PATHS + \
    REWRITE_PATHS + REINPLACE_PATHS + \
    EXPORT_PATHS + HOOKED_PATHS + SWAP_PATHS + SWAP_MODULES_PATHS + FUNCTIONAL_PATHS + \
    DYNAMIC_PATHS + COND_PATHS + PARTITION_PATHS + REEXPORT_PATHS + PIPELINE_PATHS + \
    COMPILE_PATHS + INDUCTOR_PATHS + AOTI_PATHS + JIT_PATHS + VMAP_PATHS + GRAD_PATHS
# every path (bridge_units)
DEFAULT_PATHS = "eager,fx,export,partition,pipeline,compile,aoti,jit,func,grad"
STATUSES = ("agree", "excused", "mismatch", "error", "skipped", "known_torch_issue")


class Recorder:
    """Installed as the program's _R: follows calls as flatcheck's interpreter names them."""

    def __init__(self, program, counts):
        self.p = program
        self.counts = counts  # op -> {verdict: n}
        self.frames = []
        self.calls = {}
        self.pending = None
        self.first = None  # the first mismatch
        self.any_within = False
        self.last_call_taint = False
        self.call = 0  # which call of the model runs: EXPECTED_NODES has one table per call
        self.root_inputs = []  # the arguments of the model's call that runs

    def begin(self, names):
        # A call's placeholders hold its arguments: a bound (sum, matmul) reads an op's inputs,
        # and an input can be a placeholder.
        if not self.frames:
            self.frames.append({"key": "", "fqn": "", "taint": {},
                                "values": dict(zip(names, self.root_inputs))})
            return
        target, taints, args = self.pending
        key, fqn = child_call(self.frames[-1]["fqn"], target, self.calls)
        frame = {"key": key, "fqn": fqn, "taint": {}, "values": dict(zip(names, args))}
        for name, t in zip(names, taints):
            frame["taint"][name] = t
        self.frames.append(frame)

    def attr(self, module, path, buffer):
        return self.p._NoRecorder().attr(module, path, buffer)  # the program's own semantics

    def state(self, module, path):
        return self.p._NoRecorder().state(module, path)

    def copy(self, module, path, value, into=None):
        self.p._NoRecorder().copy(module, path, value, into)

    def update(self, module, path, op, other, kwargs, into=None):
        self.p._NoRecorder().update(module, path, op, other, kwargs, into)

    def invoke(self, target, inputs, fn, *args):
        frame = self.frames[-1]
        self.pending = (target, [bool(i is not None and frame["taint"].get(i)) for i in inputs],
                        args)
        return fn(*args)

    def end(self, outputs, value):
        frame = self.frames.pop()
        self.last_call_taint = any(frame["taint"].get(o, False) for o in outputs)
        return value

    def node(self, name, op, value, inputs, dim=None):
        frame = self.frames[-1]
        origin = f"{frame['key']}/{name}" if frame["key"] else name
        if op == "call_module":
            tainted = self.last_call_taint
        else:
            tainted = any(frame["taint"].get(i, False) for i in inputs)
        frame["values"][name] = value
        expected = self.p.EXPECTED_NODES[self.call].get(origin)
        if op == "get_attr" and isinstance(value, torch.Tensor) and expected is not None:
            # A buffer updated earlier from a value that differed within its bound is read
            # here: the read carries the difference on. With no bounded difference before it,
            # a different read is a mismatch.
            same = bit_equal(value.detach(), expected[1])
            frame["taint"][name] = not same
            if not same and not self.any_within and self.first is None:
                self.first = {"node": origin, "op": op, "why": "a state read differs"}
            return value
        if not isinstance(value, torch.Tensor) or expected is None or op == "call_module":
            frame["taint"][name] = tainted
            return value
        c = self.counts.setdefault(op, {})
        if tainted:
            c["unchecked"] = c.get("unchecked", 0) + 1
            frame["taint"][name] = True
            return value
        ins = [frame["values"].get(i) for i in inputs]
        verdict, why = compare_node(op, value.detach(), expected[1], ins, dim,
                                    self.p.CONFIG["nan_exact"])
        c[verdict] = c.get(verdict, 0) + 1
        if verdict == Verdict.WITHIN:
            self.any_within = True
            frame["taint"][name] = True
        elif verdict == Verdict.MISMATCH:
            frame["taint"][name] = True
            if self.first is None:
                self.first = {"node": origin, "call": self.call + 1, "op": op, "why": why,
                              "torch": value.detach().reshape(-1)[:8].tolist(),
                              "flatcheck": expected[1].reshape(-1)[:8].tolist(),
                              **first_difference(value.detach(), expected[1], ins, op,
                                                 self.p.CONFIG["nan_exact"])}
        return value


def load_program(path):
    name = "flatcheck_case_" + os.path.basename(path).replace(".", "_").replace("-", "_")
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None:
        raise ValueError(f"{path}: not a Python file")
    mod = importlib.util.module_from_spec(spec)
    # Importable by its name: torch 2.11's strict export (dynamo) imports the module of the
    # code it traces, and a module missing from sys.modules is a ModuleNotFoundError there.
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    for attr in ("build", "INPUTS", "CONFIG", "EXPECTED_OUTPUTS", "EXPECTED_STATE",
                 "EXPECTED_NODES", "PARTITION", "OPS", "_R"):
        if not hasattr(mod, attr):
            raise ValueError(f"{path}: not a program written by flatcheck emit-torch ({attr})")
    return mod


def forget_program(p):
    """What Python and torch keep of a checked program let go, so a bridge process's memory stays
    flat over thousands of programs: the program's module leaves sys.modules (load_program put it
    there; about 0.6 MB a program), and TorchScript's global compilation unit is made afresh
    (torch_jit.forget; about 4 MB a program that the jit paths traced)."""
    sys.modules.pop(p.__name__, None)
    torch_jit.forget()


def run_eager(p, counts):
    """torch eager vs flatcheck eager. Returns (result dict, Eager: torch's own results)."""
    model = p.build()
    initial = state_of(model)
    groups = storage_groups(model)
    rec = Recorder(p, counts)
    outs = []
    with torch.no_grad():
        for k in range(p.CONFIG["calls"]):
            p._R = rec
            rec.frames, rec.calls, rec.call = [], {}, k
            rec.root_inputs = [t.clone() for t in p.INPUTS]
            outs.append([o.detach().clone() for o in outputs_of(model(*rec.root_inputs))] +
                        inputs_after(p, rec.root_inputs))
    p._R = p._NoRecorder()
    state = state_of(model)
    result = {"path": "eager", "status": "agree" if rec.first is None else "mismatch"}
    if rec.first:
        result["first_mismatch"] = rec.first
    drift = []
    for k, (got, want) in enumerate(zip(outs, p.EXPECTED_OUTPUTS)):
        # the inputs after the call (--update-inputs) are not flatcheck's: judged by the paths
        got = got[:len(got) - len(p.INPUTS)] if p.CONFIG.get("update_inputs") else got
        if len(got) != len(want):
            drift.append(f"call {k + 1}: {len(got)} outputs, expected {len(want)}")
            continue
        drift += [f"call {k + 1} output {i}" for i, (g, w) in enumerate(zip(got, want))
                  if not bit_equal(g, w)]
    drift += [f"final {f}" for f, w in p.EXPECTED_STATE.items()
              if f not in state or not bit_equal(state[f], w)]
    if drift and not rec.any_within and rec.first is None:
        result["status"] = "mismatch"
        result["first_mismatch"] = {"node": None, "why": "every node agrees but " + drift[0]}
    result["bounded_differences"] = rec.any_within
    if drift:
        result["differs_at"] = drift[:4]
    return result, Eager(outs, state, initial, groups)


def select_paths(spec, parser):
    """--paths: names or prefixes, in order; an item `-NAME` leaves out the paths NAME names
    (`fx,-fx.rewrite`: the fx paths but the rewrite one)."""
    chosen = []
    for item in spec.split(","):
        name = item[1:] if item.startswith("-") else item
        match = [p for p in ALL_PATHS if p == name or p.startswith(name + ".")]
        if not match:
            parser.error(f"--paths: unknown path '{name}' (paths: {', '.join(ALL_PATHS)}; "
                         "a prefix such as 'export' or 'export.strict' names several; -NAME "
                         "leaves out what NAME names)")
        if item.startswith("-"):
            chosen = [p for p in chosen if p not in match]
        else:
            chosen += [p for p in match if p not in chosen]
    if not chosen:
        parser.error(f"--paths: '{spec}' leaves no path")
    return chosen


def program_ops(p):
    return list(p.OPS)


def on_device(p, device):
    """Puts program `p` on `device`: every tensor its `_t` makes (the state: one tensor shared by
    two modules stays one tensor) and its inputs. Returns torch eager's results there."""
    make = p._t
    p._t = lambda b64, shape: make(b64, shape).to(device)
    p.INPUTS = [t.to(device) for t in p.INPUTS]
    return eager_run(p)


class PathTimeout(BaseException):
    """Raised into a path that ran past --path-time: a BaseException, so that no `except
    Exception` of torch's or of a path takes it for the path's own failure."""


IMPORT_GRACE = 0.05  # seconds: how often an expired limit looks again while an import runs


def importing(frame):
    """Whether `frame` (or a caller of it) is running an import: the import machinery's own
    frames (importlib._bootstrap) on the stack. A PathTimeout raised there leaves the module
    half initialized in sys.modules (seen: sympy without `core`, so every later strict export
    of the process failed)."""
    while frame is not None:
        if frame.f_code.co_filename.startswith("<frozen importlib._bootstrap"):
            return True
        frame = frame.f_back
    return False


@contextlib.contextmanager
def time_limit(seconds):
    """Raises PathTimeout in the block once it has run `seconds` (None: no limit), or as soon as
    no import is running after that (importing). Yields a dict whose "expired" says whether the
    limit passed: a block that ends in an import's grace, its limit passed, is past it too."""
    state = {"expired": False}
    if seconds is None:
        yield state
        return

    def expire(signum, frame):
        state["expired"] = True
        if importing(frame):  # a module half imported would stay broken for every later path
            signal.setitimer(signal.ITIMER_REAL, IMPORT_GRACE)
            return
        raise PathTimeout()

    old = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield state
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def path_groups(paths):
    """The paths run (and timed) together: export.MODE.module and export.MODE.unflatten share
    one export; every other path runs alone."""
    groups = {}
    for path in paths:
        shared = path in EXPORT_PATHS and path.split(".")[2] in ("module", "unflatten")
        groups.setdefault(path.rsplit(".", 1)[0] if shared else path, []).append(path)
    return list(groups.values())


def reset_compile_caches():
    """torch's compile caches (dynamo's) emptied: a program is judged as if it ran alone. Eager
    torch.cond compiles its branches with dynamo, which traces a cond it met before at other
    sizes with symbolic ones, so a program's result could depend on the programs before it."""
    try:
        importlib.import_module("torch._dynamo").reset()
    except ImportError:  # torch 1.x: no dynamo, no compile caches to reset
        pass


CONFIGS_SEEN = {}  # a torch config module's name -> its values when first met between paths


def torch_configs():
    """torch's config modules imported so far (torch._dynamo.config, torch._inductor.config,
    torch._functorch.config, ...): name -> module, each one with get_config_copy."""
    return {name: mod for name, mod in list(sys.modules.items())
            if name.startswith("torch.") and name.rsplit(".", 1)[-1] in ("config", "_config")
            and isinstance(getattr(mod, "__dict__", {}).get("_config"), dict)}


def global_state():
    """What a path's code sets for a while and must set back, as far as torch shows it: the
    grad mode and the depths of the dispatch and function mode stacks. Each config module
    imported so far is noted the first time it is met (between paths, so unpatched)."""
    for name, mod in torch_configs().items():
        if name not in CONFIGS_SEEN:
            CONFIGS_SEEN[name] = mod.get_config_copy()
    c = torch._C
    return (torch.is_grad_enabled(),
            c._len_torch_dispatch_stack() if hasattr(c, "_len_torch_dispatch_stack") else 0,
            c._len_torch_function_stack() if hasattr(c, "_len_torch_function_stack") else 0)


def restore_global_state(before):
    """What a path stopped part-way left set, set back to `before` (global_state()): the
    PathTimeout can land inside a `config.patch` block's entry or exit, where torch does not
    undo it (seen: strict export stopped at its entry left dynamo's automatic dynamic shapes
    off and every size dynamic for the rest of the process, so later programs' torch.cond and
    vmap paths gave other results). Returns the config keys set back, "module.key" each."""
    restored = []
    for name, values in CONFIGS_SEEN.items():
        mod = sys.modules.get(name)
        for key, value in values.items() if mod is not None else ():
            try:
                if getattr(mod, key) != value:
                    setattr(mod, key, value)
                    restored.append(f"{name}.{key}")
            except Exception:  # noqa: BLE001,S112 - a key this torch cannot set back stays
                continue
    grad, dispatch, function = before
    c = torch._C
    while hasattr(c, "_len_torch_dispatch_stack") and c._len_torch_dispatch_stack() > dispatch:
        c._pop_torch_dispatch_stack()
    while hasattr(c, "_len_torch_function_stack") and c._len_torch_function_stack() > function:
        c._pop_torch_function_stack()
    c._set_grad_enabled(grad)  # after the modes: a function mode left pushed would take it
    return restored


def within(seconds, group, run):
    """run(group), or each path of the group skipped with the reason "time limit" when it ran
    past `seconds` (stopped there, or ended in an import's grace after it: either way past it);
    torch's compile caches (dynamo's, left mid-trace) are reset then, and torch's global state
    the path left set (restore_global_state) set back. An exception a path's own code lets out
    (the bridge's fault, or torch's in code the bridge did not guard) is an error of each path
    of the group, stage "bridge", with where it was raised: the program's other paths and the
    programs after it still run."""
    before = global_state()
    # dynamo's frame callback as it was: a PathTimeout landing in dynamo's own code (strict
    # export) can leave it set, and then the next Python frame (the cleanup's) is compiled;
    # set back inline (a call of a Python function would be a frame)
    frames = getattr(getattr(sys.modules.get("torch._C"), "_dynamo", None), "eval_frame", None)
    callback = frames.get_eval_frame_callback() if frames is not None else None
    try:
        with time_limit(seconds) as limit:
            results = run(group)
        if limit["expired"]:
            raise PathTimeout()
        return results
    except PathTimeout:
        if frames is not None:
            frames.set_eval_frame(callback)
        reset_compile_caches()
        restore_global_state(before)
        why = f"time limit: ran past --path-time {seconds:g} s on this program"
        return {path: {"status": "skipped", "skip": why} for path in group}
    except Exception as e:  # noqa: BLE001 - reported as the paths' error, never lost
        if frames is not None:
            frames.set_eval_frame(callback)
        reset_compile_caches()
        restore_global_state(before)
        where = traceback.extract_tb(e.__traceback__)[-1]
        why = (f"the bridge raised {type(e).__name__}: {e} (at {os.path.basename(where.filename)}:"
               f"{where.lineno}, {where.name})")
        return {path: {"status": "error", "stage": "bridge", "first_mismatch": why[:600]}
                for path in group}


# torch's refusal of an in-place op whose input and output overlap in part.
OVERLAP = "some elements of the input tensor and the written-to tensor refer to a single memory"


def alias_reads(p):
    """Program `p` with every state read the module's own tensor, not a copy (--reads alias):
    every recorder the paths install reads through the program's _NoRecorder class, and the fx
    trace asks READS_ALIAS. The branch op then takes a clone of its value (clone_branch): a
    torch.cond branch may not return its operand, so the cond paths' branches clone, and a
    branch value that aliased a buffer would see the buffer's later updates where theirs does
    not."""
    def attr(self, module, path, buffer):
        return self.state(module, path)  # the tensor itself

    p._NoRecorder.attr = attr
    p.READS_ALIAS = True
    p._branch = clone_branch


def check_program(p, paths, flatten, pass_name, counts, device="cpu", branch="python",
                  path_time=None, reads="copy"):
    """Every requested path of one program: a list of result dicts. With a device other than
    the CPU, every path but eager runs there, judged against torch eager on that device. With
    `branch` "cond", every path but eager takes the branch op by torch.cond, with "nograd"
    its value computed again under torch.no_grad() (torch_cond.py; the results are the same
    values, so torch eager of the program as written is the expectation). With `reads`
    "alias", every path but eager reads state as the module's own tensor (alias_reads()),
    judged against torch eager of the program read so; with "changed" so too, but only where
    that changes torch eager's results (the other paths skipped). `path_time`: the seconds a
    group of paths may run (within())."""
    eager_result = None
    try:
        eager_result, eager = run_eager(p, counts)
        changes = None
        if reads != "copy":
            alias_reads(p)
            copied, eager = eager, eager_run(p)
            changes = bool(diff_values(eager.outs, eager.final, copied))
        if device != "cpu":
            eager = on_device(p, device)
        if branch != "python":
            p._branch = BRANCHES[branch]
    except Exception as e:  # noqa: BLE001 - the program or the bridge failing: one program's
        # error, not the end of the run; no path can be judged without torch eager's results
        why = f"the eager run raised {type(e).__name__}: {e}"[:600]
        if eager_result is not None and reads != "copy" and OVERLAP in str(e):
            # Read as aliases, an update whose value is a view of the buffer it writes (copy_
            # of b's transpose into b) is one torch refuses: nothing to judge the paths by.
            skip = ("--reads alias: torch eager refuses the program (an update copies from a "
                    "view of the buffer it writes)")
            return skipped_but_eager(paths, eager_result, skip, reads, device)
        return on_device_names([{"path": x, "status": "error", "stage": "eager",
                                 "first_mismatch": why} for x in paths], device)
    if reads == "changed" and not changes:
        return skipped_but_eager(paths, eager_result, "--reads changed: torch eager gives the "
                                 "same results with state read as aliases", reads, device)
    results = [eager_result] if "eager" in paths else []
    cache = {}
    def fx(_):
        try:
            return {"fx": run_fx(p, eager, flatten, pass_name, cache)}
        except Exception as e:  # noqa: BLE001 - torch (or the pass) refusing a program: an
            # error, or a torch issue listed by its message (torch.cond's, with --branch cond)
            return {"fx": failure(e, "fx")}

    families = [(("fx",), fx),
                (FOLDER_PATHS, lambda w: run_folder(p, eager, w, cache)),
                (FOLD_PATHS, lambda w: run_fold(p, eager, w, cache)),
                (MERGE_PATHS, lambda w: run_merge(p, eager, w, cache)),
                (NORMALIZE_PATHS, lambda w: run_normalize(p, eager, w, cache)),
                (SPLIT_PATHS, lambda w: run_split(p, eager, w, cache)),
                (REWRITE_PATHS, lambda w: run_rewrite(p, eager, w, cache)),
                (REINPLACE_PATHS, lambda w: run_reinplace(p, eager, w, cache)),
                (EXPORT_PATHS, lambda w: run_export(p, eager, w, cache)),
                (HOOKED_PATHS, lambda w: run_hooked(p, eager, w, cache)),
                (SWAP_PATHS, lambda w: run_swap(p, eager, w, cache)),
                (SWAP_MODULES_PATHS, lambda w: run_swap_modules(p, eager, w, cache)),
                (FUNCTIONAL_PATHS, lambda w: run_functional(p, eager, w, cache)),
                (DYNAMIC_PATHS, lambda w: run_dynamic(p, eager, w, cache)),
                (COND_PATHS, lambda w: run_cond(p, eager, w, cache)),
                (PARTITION_PATHS, lambda w: run_partition(p, eager, w, flatten, cache)),
                (REEXPORT_PATHS, lambda w: run_partition_export(p, eager, w, cache)),
                (PIPELINE_PATHS, lambda w: run_pipeline(p, eager, w, cache)),
                (COMPILE_PATHS, lambda w: run_compile(p, eager, w, cache)),
                (INDUCTOR_PATHS, lambda w: run_inductor(p, eager, w, cache)),
                (AOTI_PATHS, lambda w: run_aoti(p, eager, w, cache)),
                (JIT_PATHS, lambda w: run_jit(p, eager, w, cache, branch)),
                (VMAP_PATHS, lambda w: run_vmap(p, eager, w, cache)),
                (GRAD_PATHS, lambda w: run_grad(p, eager, w, cache))]
    for family, run in families:
        for group in path_groups([x for x in paths if x in family]):
            def limited(paths, run=run):  # a trace's runs again, each held to --path-time
                return within(path_time, paths, run)
            def constants_traced(paths, limited=limited):  # a rerun traced to 112 too
                return torch_constants.traced(p, paths, limited, limited(paths), skips=True)
            got = torch_names.traced(p, group, limited, limited(group))
            # the children's trace reruns with flatcheck's names; a rerun that fails by 112
            # alone then is both causes (joined), so it is traced to 112 too
            got = torch_children.traced(p, group, constants_traced, got, eager, cache)

            def children_traced(paths, limited=limited):  # and 112's rerun through children's
                return torch_children.traced(p, paths, limited, limited(paths), eager, cache)
            got = torch_constants.traced(p, group, children_traced, got)
            results += [{"path": path, **r} for path, r in got.items()]
    for r in results:
        r.update({"update_args": True} if getattr(p, "CONFIG", {}).get("update_args") else {})
        r.update({"update_inputs": True} if getattr(p, "CONFIG", {}).get("update_inputs")
                 else {})
        for form in ("kwargs", "dict_outputs", "packed_args", "op_kwargs",  # emit-torch's forms
                     "hostile_names", "hostile_child_names", "non_persistent_buffers",
                     "tensor_constants", "inplace_updates", "step_counters"):
            r.update({form: True} if getattr(p, "CONFIG", {}).get(form) else {})
        if r["path"] != "eager":
            r.update({"branch": branch} if branch != "python" else {})
            r.update({"reads": reads, "reads_change": changes} if reads != "copy" else {})
    return on_device_names(results, device)


def skipped_but_eager(paths, eager_result, skip, reads, device):
    """The eager path's result, and every other path skipped with the reason `skip`."""
    rest = [{"path": x, "status": "skipped", "skip": skip, "reads": reads}
            for x in paths if x != "eager"]
    return on_device_names([eager_result] * ("eager" in paths) + rest, device)


def on_device_names(results, device):
    """Every path but eager that ran on a device other than the CPU is named PATH.<device>."""
    for r in results:
        if device != "cpu" and r["path"] != "eager":
            r["path"] += f".{device}"
    return results


def tally(summary, r, ops):
    st = summary["paths"].setdefault(r["path"], {s: 0 for s in STATUSES})
    st[r["status"]] += 1
    for key in ("skip", "known_torch_issue"):
        if key in r:
            reasons = summary.setdefault(key + "_reasons", {}).setdefault(r["path"], {})
            label = r[key].split(":")[0] if key == "known_torch_issue" else r[key]
            reasons[label] = reasons.get(label, 0) + 1
    per_op = summary["ops_per_path"].setdefault(r["path"], {})
    for op in ops:
        c = per_op.setdefault(op, {})
        c[r["status"]] = c.get(r["status"], 0) + 1


def pin_draws(draws):
    """Fixes the pipeline path's split points, the hooked and swap paths' modules, the
    dynamic paths' sizes, the rewrite path's patterns and the modules whose call signatures
    the preserve_some and decomp_preserve_some paths keep (--draw)."""
    if not isinstance(draws, dict) or \
            set(draws) - {"pipeline", "hooked", "swap", "dynamic", "rewrite", "preserve"}:
        raise ValueError(f"an object with the keys pipeline, hooked, swap, dynamic, rewrite and "
                         f"preserve, got {draws!r}")
    if "preserve" in draws:
        fqns = draws["preserve"]
        if not isinstance(fqns, list) or not all(isinstance(f, str) and f for f in fqns):
            raise ValueError(f"preserve: a list of submodule FQNs, got {fqns!r}")
        torch_export.PRESERVED = list(fqns)
    if "pipeline" in draws:
        spec = draws["pipeline"]
        if not isinstance(spec, dict) or not all(
                isinstance(k, str) and v in ("BEGINNING", "END") for k, v in spec.items()):
            raise ValueError(f"pipeline: {{FQN: \"BEGINNING\" or \"END\"}}, got {spec!r}")
        torch_pipeline.PINNED = dict(spec)
    if "hooked" in draws:
        fqns = draws["hooked"]
        if not (isinstance(fqns, list) and all(isinstance(f, str) for f in fqns) or
                isinstance(fqns, dict) and all(
                    isinstance(f, str) and k in torch_hooked.KINDS for f, k in fqns.items())):
            raise ValueError(f"hooked: {{FQN: kind}} (a kind of "
                             f"{', '.join(torch_hooked.KINDS)}) or a list of FQNs (each hooked "
                             f"bound), got {fqns!r}")
        torch_hooked.PINNED = torch_hooked.as_hooks(fqns)
    if "swap" in draws:
        fqns = draws["swap"]
        if not isinstance(fqns, list) or not all(isinstance(f, str) for f in fqns) or \
                fqns != torch_swap.outermost(fqns):
            raise ValueError(f"swap: a list of FQNs, none below another, got {fqns!r}")
        torch_swap.PINNED = list(fqns)
    if "dynamic" in draws:
        sizes = draws["dynamic"]
        if not isinstance(sizes, list) or not all(
                isinstance(shapes, list) and all(
                    isinstance(shape, list) and all(
                        type(d) is int and 0 <= d <= 1 << 16 for d in shape) for shape in shapes)
                for shapes in sizes):
            raise ValueError(f"dynamic: a list of sizes, each a list of input shapes (lists of "
                             f"ints from 0 to 65536), got {sizes!r}")
        torch_dynamic.PINNED = [[list(shape) for shape in shapes] for shapes in sizes]
    if "rewrite" in draws:
        patterns = draws["rewrite"]
        if not isinstance(patterns, list) or not all(isinstance(s, str) for s in patterns):
            raise ValueError(f"rewrite: a list of patterns as results give them, got "
                             f"{patterns!r}")
        torch_rewrite.PINNED = list(patterns)


def records_stream():
    """The stream the bridge's records go to: its stdout, which from here on holds them alone.
    What torch or a pass writes to stdout while the paths run (torch 2.14.1's unflatten prints a
    debug line, docs/found-bugs.md 74), by print or to file descriptor 1, goes to stderr."""
    try:
        out = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # stdout is no file (an embedding caller's)
        return sys.stdout
    sys.stdout.flush()
    records = os.fdopen(os.dup(out), "w")
    os.dup2(sys.stderr.fileno(), out)
    return records


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("programs", nargs="+", help="programs written by flatcheck emit-torch")
    ap.add_argument("--paths", default=DEFAULT_PATHS,
                    help="the paths run: names or prefixes (export.strict: its thirteen), comma "
                         "separated; -NAME leaves out what NAME names (fx,-fx.rewrite)")
    ap.add_argument("--pass", dest="flatten_pass", metavar="MODULE:FUNCTION",
                    help="the flatten pass of the fx and partition paths: file.py:function or "
                         "package.module:function, taking the split GraphModule and returning "
                         "the flattened one (default: the built-in positional inliner)")
    ap.add_argument("--quiet", action="store_true", help="print only failures and the summary")
    ap.add_argument("--interesting", metavar="PATH:STATUS[:TEXT]",
                    help="an interestingness test for `flatcheck shrink --predicate`: exit 0 "
                         "when a program's PATH ends in STATUS (and its first mismatch, skip or "
                         "known-issue class contains TEXT), else 1")
    ap.add_argument("--device", default="cpu",
                    help="where every path but eager runs: cpu (default) or cuda (judged "
                         "against torch eager on that device; results named PATH.cuda)")
    ap.add_argument("--branch", choices=("python", "cond", "nograd"), default="python",
                    help="how every path but eager takes the program's branch op: python, a "
                         "conditional export specializes away (default); cond, torch.cond "
                         "on a predicate the graph computes, as the cond paths take it; or "
                         "nograd, the value taken computed again under torch.no_grad() (each "
                         "result then says \"branch\": and the choice)")
    ap.add_argument("--reads", choices=("copy", "alias", "changed"), default="copy",
                    help="how every path but eager reads the model's state: copy, a copy of "
                         "the buffer as flatcheck reads it (default); or alias, the buffer "
                         "itself, so a view of it sees its later in-place updates (each result "
                         "then says \"reads\": \"alias\"); or changed, alias on the programs "
                         "whose results change read so, the others' paths skipped")
    ap.add_argument("--time", type=float, metavar="SECONDS",
                    help="start no program after SECONDS; the summary counts those not run")
    ap.add_argument("--path-time", type=float, metavar="SECONDS",
                    help="stop a path (export.MODE.module and .unflatten: together) that runs "
                         "longer on one program and report it skipped, reason \"time limit\"")
    ap.add_argument("--progress", type=float, default=30, metavar="SECONDS",
                    help="a line on stderr (programs checked, results failing, seconds) after "
                         "the first program that ends SECONDS or more after the last line "
                         "(default 30; 0: none)")
    ap.add_argument("--draw", metavar="JSON",
                    help="the per-program draws fixed instead of drawn, as a result reports "
                         "them: {\"pipeline\": {FQN: \"BEGINNING\"|\"END\"}, "
                         "\"hooked\": {FQN: KIND} (or [FQN, ...], each bound), "
                         "\"swap\": [FQN, ...], "
                         "\"dynamic\": [[SHAPE, ...], ...], \"rewrite\": [PATTERN, ...], "
                         "\"preserve\": [FQN, ...]} (any "
                         "of the keys; the modules of both hooked paths and their hooks' kinds, "
                         "of the four swap paths "
                         "(swap, swap_modules), the input shapes of each size both dynamic "
                         "paths judge, the patterns fx.rewrite tries (its results' "
                         "\"pattern\"), the modules whose call signatures the preserve_some "
                         "and decomp_preserve_some paths keep (their results' \"preserved\"); "
                         "for `flatcheck shrink`, "
                         "whose smaller cases would draw otherwise)")
    args = ap.parse_args()
    if args.draw:
        try:
            pin_draws(json.loads(args.draw))
        except (ValueError, TypeError) as e:
            ap.error(f"--draw: {e}")
    if args.device not in ("cpu", "cuda"):
        ap.error(f"--device: cpu or cuda, got '{args.device}'")
    if args.device == "cuda" and not torch.cuda.is_available():
        ap.error(f"--device cuda: torch {torch.__version__} sees no CUDA device")
    if args.time is not None and args.time < 0:
        ap.error("--time: SECONDS must not be negative")
    if args.path_time is not None and not args.path_time > 0:
        ap.error("--path-time: SECONDS must be positive")
    if not args.progress >= 0:
        ap.error("--progress: SECONDS must not be negative")
    want = None
    if args.interesting:
        want = (args.interesting.split(":", 2) + [""])[:3]
        if want[0] not in ALL_PATHS or want[1] not in STATUSES:
            ap.error(f"--interesting: PATH:STATUS[:TEXT] with a path of {', '.join(ALL_PATHS)} "
                     f"and a status of {', '.join(STATUSES)}, got '{args.interesting}'")
    paths = select_paths(want[0] if want else args.paths, ap)
    flatten, pass_name = flatten_by_position, "built-in: by position"
    if args.flatten_pass:
        try:
            flatten, pass_name = load_pass(args.flatten_pass), args.flatten_pass
        except Exception as e:  # noqa: BLE001 - a pass that does not load is bad usage
            ap.error(str(e))
    torch.set_num_threads(1)
    counts = {}
    summary = {"summary": True, "torch": torch.__version__, "branch": args.branch,
               "reads": args.reads, "programs": len(args.programs),
               "programs_not_run": 0, "paths": {}, "ops_per_path": {}}
    # The paths first: available() imports torch.utils.cpp_extension (0.5 s on torch 2.6).
    if any(x in INDUCTOR_PATHS + AOTI_PATHS + GRAD_INDUCTOR_PATHS for x in paths) and \
            torch_inductor.available() is None:
        summary["inductor_vector_isa"] = torch_inductor.vector_isa()  # None: scalar kernels
    records = records_stream()
    failed, hits = 0, 0
    if args.reads != "copy":
        summary["programs_reads_change"] = 0
    start = time.monotonic()
    shown = start
    for i, path in enumerate(args.programs):
        if STOP["signal"] or args.time is not None and time.monotonic() - start >= args.time:
            summary["programs_not_run"] = len(args.programs) - i
            break
        try:
            p = load_program(path)
        except Exception as e:  # noqa: BLE001 - an unreadable program is bad input
            print(json.dumps({"program": path, "error": str(e)}), file=records, flush=True)
            return 2
        ops = program_ops(p)
        reset_compile_caches()
        try:
            STOP["raise"] = True  # a stop request ends this program's check part way
            if STOP["signal"]:
                raise Stopped()
            results = check_program(p, paths, flatten, pass_name, counts, args.device,
                                    args.branch, args.path_time, args.reads)
            STOP["raise"] = False  # its results are counted whole or not at all
        except Stopped:
            STOP["raise"] = False
            summary["programs_not_run"] = len(args.programs) - i
            break
        forget_program(p)
        if any(r.get("reads_change") for r in results):
            summary["programs_reads_change"] += 1
        for r in results:
            r["program"] = path
            tally(summary, r, ops)
            bad = r["status"] in ("mismatch", "error")
            failed += bad
            hits += bool(want) and r["path"] == want[0] and r["status"] == want[1] and \
                want[2] in json.dumps([r.get(k, "") for k in ("first_mismatch", "skip",
                                                               "known_torch_issue")])
            if not args.quiet or bad:
                print(json.dumps(r), file=records, flush=True)
        if args.progress and time.monotonic() - shown >= args.progress:
            shown = time.monotonic()
            print(f"flatcheck_torch: {i + 1}/{len(args.programs)} programs, {failed} results "
                  f"failing, {shown - start:.0f} s", file=sys.stderr, flush=True)
    summary["nodes_per_op"] = counts
    for sig in (signal.SIGTERM, signal.SIGINT):  # the checking is over: exit with the summary
        signal.signal(sig, signal.SIG_IGN)
    if STOP["signal"] and summary["programs_not_run"]:
        summary["stopped"] = STOP["signal"]
        print(f"flatcheck_torch: stopped by {STOP['signal']}: {summary['programs_not_run']} "
              f"programs not run", file=sys.stderr)
    print(json.dumps(summary, sort_keys=True), file=records, flush=True)
    if want:
        return 0 if hits else 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
