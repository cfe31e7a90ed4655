// A case as a self-contained PyTorch program (flatcheck emit-torch; docs/torch.md).
//
// The program mirrors the module tree: one nn.Module class per distinct module object, static
// call arguments as Python arguments, `branch` as a conditional expression, buffer updates as
// `copy_` (or, with `update_args`, `copy_` into a forward argument holding the buffer),
// parameters and buffers shared exactly where flatcheck shares their storage. Inputs,
// state and flatcheck's own eager results (outputs of every call, final state, and the value of
// every node in the first call, by provenance key) are embedded bit-exact as base64.
//
// Every node goes through a recorder `_R` (a no-op unless harness/torch installs one), which is
// how the bridge compares torch with flatcheck node by node.
//
// Deliberate difference, kept explicit in the program: a buffer read is `.clone()`, because
// flatcheck's eager semantics read buffers by value (as export's functionalized graph does);
// eager PyTorch would alias the buffer.
#pragma once

#include <string>

#include "generators/case.h"

namespace flatcheck {

struct EmitOptions {
  // Each buffer a module below the root updates comes in as a forward argument (`_u0=None`,
  // ...) that the caller fills with the buffer itself, and is updated in place through it: the
  // same eager results, with torch seeing an update of a submodule's input.
  bool update_args = false;
  // The root, once its results are made, clones them and updates each input (float32) in place
  // by the first result's sum: the caller's tensors change, as torch.export records a user
  // input mutation. The results are flatcheck's; the inputs after each call are judged against
  // torch eager's (harness/torch: run_calls).
  bool update_inputs = false;
  // Each call of a child passes some of its arguments by keyword: the first k by position, the
  // rest by their parameters' names, k chosen per module from its Python class's name
  // (fnv1a64 of it modulo the argument count + 1; every call of one module alike, as
  // torch.export's preserved signatures require). The same eager results; torch sees keyword
  // arguments in module calls (a preserved call's in_spec holds them).
  bool kwargs = false;
  // Each module below the root with more than one result returns them as a dict, result i
  // under key "o<i>", and its callers read them by key: the same eager results; torch sees
  // dict outputs of module calls (a preserved call's out_spec holds a dict).
  bool dict_outputs = false;
  // Each module below the root that takes arguments takes them as one tuple (`forward(self,
  // _args)`, unpacked first), its callers packing them: the same eager results; torch sees a
  // tuple argument in module calls (a preserved call's in_spec holds a nested tuple).
  bool packed_args = false;
  // Each op spelled with keyword arguments that keep its result bit for bit: an addition as
  // the subtraction of the other with alpha=-1 (`torch.sub(a, b, alpha=-1)`), a subtraction as
  // `torch.add(a, b, alpha=-1)` (tensor and scalar forms alike), a division with
  // `rounding_mode=None`: the same eager results (alpha=-1 negates exactly); torch sees keyword
  // arguments of ops, and a pass that drops them changes the results.
  bool op_kwargs = false;
  // Each forward's parameters named from names torch itself makes or reads, not "v_<node>":
  // the names torch.fx and torch.export give nodes and placeholders (add, getitem_1, output,
  // _tensor_constant0, arg0_1, L_x_, p_<param FQN>, b_<buffer FQN>, the case's placeholders'
  // own names, the module's own node names), Python builtins and the globals torch.fx's generated
  // code imports (input, sum, operator, fx_pytree, device): placeholder i of a module takes
  // pool[(fnv1a64(its class name) + i) % size] of one sorted pool. The same eager results; torch
  // must rename what collides. Left out: nan and inf (the constants torch.fx's code spells as bare
  // names; a parameter so named shadows them, a known upstream class) and the names the program's
  // own code reads (torch, getattr, self, _R, ...).
  bool hostile_names = false;
  // Children named from names torch's own modules and values use, not flatcheck's: about two
  // of each three children of a module take a name torch gives its own values and modules or
  // its generated code reads (L__self__, submod_0, _run_on_acc_0, torch, pytree, ...), and in
  // one program of three also attributes of the GraphModule that ep.module() and
  // torch.fx.symbolic_trace build and of unflatten's modules (graph, code, meta, ivals, ...),
  // drawn by fnv1a64 of the parent's flatcheck type and the child's name, none taken twice in a
  // module nor taken from its state. The program holds
  // the names in CHILD_NAMES ("M<i>.<flatcheck name>" -> the Python name), through which build()
  // and every forward reach the children, and EXPECTED_STATE is keyed by the Python FQNs; the
  // bridge runs a failing path again with CHILD_NAMES made flatcheck's (harness/torch/
  // torch_children.py). The same eager results. Left out: names with '@' (unflatten's and the
  // bridge's own call-index mark) and nn.Module's own attributes (add_module refuses them).
  bool hostile_child_names = false;
  // About two of each three buffer registrations made with persistent=False: registration k of
  // class C is non-persistent unless fnv1a64("C.k") % 3 == 0, so a tensor two modules hold
  // may be non-persistent under both names or under one. The same eager results; torch keeps
  // such buffers out of the state dict (torch.export: in the program's constants).
  bool non_persistent_buffers = false;
  // About two of each three buffers held as plain tensor attributes (`setattr(self, k, t)`),
  // not registered: buffer k of class C is so held unless fnv1a64("const C.k") % 3 == 0 (a
  // tensor two modules hold may be a buffer under one name and a plain attribute under the
  // other). The same eager results; torch sees tensor constants (torch.export lifts them as
  // CONSTANT_TENSOR inputs, outside the state dict). EXPORT_NAMES is None then: flatcheck's
  // export models buffers, not constants.
  bool tensor_constants = false;
  // Each buffer update `copy_(b, op(b', y))` whose op is an addition, subtraction,
  // multiplication or division taking a read b' of the same buffer first and keeping the
  // buffer's shape, with no module call and no other update between the read and the update,
  // written as the in-place op (`b.add_(y)`, `b.mul_(2.0)`) where the copy_ was: the buffer
  // still holds what was read, so the same eager results; torch sees in-place ops on state
  // (aten.add_, ...) where it otherwise sees copy_.
  bool inplace_updates = false;
  // About two of each three classes keep a step counter like BatchNorm's num_batches_tracked:
  // an int64 0-dim buffer `num_steps` (a free name: `num_steps_`, ... where the module has
  // that name) that each run of the module's forward raises by one in place
  // (`_R.update(self, "num_steps", "add_", 1, {})`), at its start or before its return, drawn
  // by fnv1a64 of the class name. Registered by the draws of --non-persistent-buffers and
  // --tensor-constants like any buffer. No output reads it; EXPECTED_STATE holds its final
  // value (the module's runs in one call of the root, times CONFIG["calls"]: a module under two
  // names, or called twice, counts every run), and EXPORT_NAMES is None (flatcheck's export
  // does not model the counters). Torch sees state updated from numbers alone, in every module
  // that a path may copy, share, inline or unflatten into `n` and `n@1`.
  bool step_counters = false;
};

// The Python source for `c`. `source` names where the case came from (a file, a seed).
// Throws InputError when the case does not run (its expected results cannot be computed).
std::string emit_torch(const Case& c, const std::string& source, const EmitOptions& options = {});

}  // namespace flatcheck
