// emit-torch's forms of state and of its updates (harness/torch_emit.h): which buffers a class
// registers non-persistent or holds as plain tensor attributes, which updates are written as
// in-place ops, and the spelling of the arithmetic ops those share with their out-of-place form.
#pragma once

#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/ir/ir.h"
#include "harness/torch_emit.h"

namespace flatcheck {

// --non-persistent-buffers: whether class `cls` registers its buffer `key` with
// persistent=False (two of each three registrations, by the class and the name).
bool emit_non_persistent(const EmitOptions& options, const std::string& cls,
                         const std::string& key);

// --tensor-constants: whether class `cls` holds its buffer `key` as a plain tensor attribute
// (two of each three, by the class and the name, apart from the non-persistent draw).
bool emit_tensor_constant(const EmitOptions& options, const std::string& cls,
                          const std::string& key);

// An arithmetic op (add, sub, div, mul and their scalar forms) as torch spells it: its name
// and its keyword argument, if any (--op-kwargs: x + y as x - (-1) y and x - y as x + (-1) y,
// exact; x / y with its default rounding mode spelled out; a multiplication has none).
struct ArithSpelling {
  std::string op, key, value;
};
ArithSpelling arith_spelling(OpCode fn, bool op_kwargs);
// `torch.<op>(x, y[, key=value])`.
std::string arith_call(OpCode fn, bool op_kwargs, const std::string& x, const std::string& y);

// The buffers a module's own graph updates (`copy_` targets), each once, in graph order.
std::vector<std::string> updated_paths(const Module& m);

// --inplace-updates: the updates of module `m` that can be written in place, each copy_
// mapped to the op whose value it writes: an arithmetic op taking a read of the same buffer
// first, of the buffer's own type, with no module called and nothing updated between that read
// and the copy_, so at the copy_ the buffer still holds what was read and the in-place op there
// (same operands, same op) gives the op's value bit for bit.
std::unordered_map<const Node*, const Node*> inplace_updates(const Module& m);

// --step-counters: whether class `cls` keeps a step counter, and its name in module `m` (the
// first of num_steps, num_steps_, ... that `m` gives no parameter, buffer or child).
bool emit_step_counter(const EmitOptions& options, const std::string& cls);
std::string step_counter_name(const Module& m);
// --step-counters: whether class `cls` counts at the start of its forward (else before it
// returns).
bool step_counter_first(const std::string& cls);

// How many times each module runs in one call of `root` (a module called twice, or from a
// module that runs twice, counts each run), modulo 2^64 as torch's int64 counter wraps.
std::unordered_map<const Module*, uint64_t> runs_per_call(const Module& root);

// The line of `__init__` that gives class `cls` its buffer `key` made by `expr`: a plain
// attribute (--tensor-constants' draw) or a registration, non-persistent by its draw.
std::string buffer_line(const EmitOptions& options, const std::string& cls, const std::string& key,
                        const std::string& expr, bool& constant);

// Counts the FQNs of state in the tree, a module under two names counted under both; `tensors`
// collects the tensors.
size_t state_fqns(const Module& m, std::unordered_set<const Tensor*>& tensors, int depth = 0);

}  // namespace flatcheck
