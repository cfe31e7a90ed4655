// The passes under test (DESIGN §3): export, partition (with engine compilation), flatten and
// unflatten (the analyses they share are in core/ir/analysis.h). Each is a function from a
// program to a program; none mutates its input.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "core/ir/analysis.h"
#include "core/ir/engine.h"
#include "core/ir/ir.h"
#include "core/ir/program.h"

namespace flatcheck {

// ------------------------------------------------------------------------------ export
// Inlines the eager module tree into one flat graph. Parameters and buffers become
// placeholders `p_<fqn>` / `b_<fqn>` (first; a tensor shared under two FQNs is lifted once),
// then user inputs. Static call arguments are substituted as constants and `branch` folded, so
// each call is specialized. In-place buffer updates become buffer-mutation outputs. Every node
// records its nn_module_stack (keys carry the call index: "n", "n@1") and its origin.
// The returned program shares state tensors with `root`; clone_program() before running both.
Program export_program(const Module& root);

// ------------------------------------------------------------------------------ partition
struct PartitionOptions {
  std::set<std::string> fallback_ops;  // op names run as PyTorch fallbacks, e.g. {"relu"}
  int min_block_size = 5;              // acc runs with fewer nodes are demoted to fallback
};

// Splits the exported program's graph (Torch-TensorRT's fast partitioner rules) into children
// `_run_on_gpu_<k>` (fallbacks) and `_run_on_acc_<k>` (compiled to engines). Each acc child's
// graph becomes a wrapper: `get_attr engine` + `execute_engine` + getitems, with the engine
// attached; parameters it reads are folded into the engine as constants.
Program partition(const Program& exported, const PartitionOptions& opts);

// ------------------------------------------------------------------------------ flatten
// Torch-TensorRT's save-time transform: inline_engines then inline_fallbacks, remove unused
// children, eliminate dead code, lint.
Program flatten(const Program& partitioned);
// The two halves, exposed for tests. They modify `p` in place.
void inline_engines(Program& p);
void inline_fallbacks(Program& p);

// ------------------------------------------------------------------------------ unflatten
// Rebuilds the module tree from nn_module_stack (PyTorch's unflatten after #137013): one graph
// per call; calls of one FQN with equal graphs share a module; different ones become siblings
// `n`, `n@1`, ...; all variants share parameters and buffers.
std::shared_ptr<Module> unflatten(const Program& exported);

// Paths of every variant of `fqn` in an unflattened tree: {"n", "n@1"}, {"a.b", "a@1.b@2"}.
std::vector<std::string> fqn_variants(const Module& root, const std::string& fqn);
// Replaces the module at every variant path of `fqn` by `replacement`.
void swap_module(Module& root, const std::string& fqn, std::shared_ptr<Module> replacement);
// Sets the parameter or buffer `attr` of every variant of `fqn` that holds it to the shared
// `value` (a variant whose graph never reads an attribute does not hold it). Throws InputError
// when no variant holds it.
void set_attr_all(Module& root, const std::string& fqn, const std::string& attr,
                  const TensorPtr& value);

// ------------------------------------------------------------------------------ engines
// Compiles a subgraph module (placeholders, call_function nodes, output) to an engine.
// `folded[i]`, when non-null, is the constant value of the i-th placeholder: it is folded into
// the engine and is not an input binding. Throws InputError for unsupported nodes.
Engine compile_engine(const Module& sub, const std::string& name,
                      const std::vector<TensorPtr>& folded);

}  // namespace flatcheck
