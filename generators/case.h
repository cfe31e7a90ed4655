// A Case: one eager program with its inputs and pipeline configuration, the unit the oracle
// checks, the minimizer shrinks and the corpus stores (one JSON file each; docs/case-format.md).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/ir/ir.h"
#include "core/pipeline/pipeline.h"
#include "core/serialize/serialize.h"

namespace flatcheck {

// A failure the case is known to show (corpus files of seeded faults, minimized findings).
struct Expectation {
  std::string property, stage, op;
  std::string module;  // the first diverging node's module path, when not the root
  // property:stage:op[:module], as Failure::signature() writes it.
  std::string signature() const {
    return property + ":" + stage + ":" + op + (module.empty() ? "" : ":" + module);
  }
  bool operator==(const Expectation&) const = default;
};

struct Case {
  std::shared_ptr<Module> module;
  std::vector<Tensor> inputs;
  PipelineConfig config;
  std::optional<Expectation> expect;  // the failure it shows (replay --expect requires it)
  std::string note;                   // free text: what the case is, where it came from
  std::optional<uint64_t> seed;       // the generator seed, when generated
};

// Deep copy (own state tensors).
Case clone_case(const Case& c);

// Case files: {"format": "flatcheck-case", "version": 1, ...}.
// `compact`: one line, not canonical (the in-flight copy a worker writes before each case).
std::string save_case(const Case& c, bool compact = false);
Case load_case(std::string_view text, const LoadLimits& limits = default_load_limits());
Case load_case_file(const std::string& path);

// Nodes that compute something (call_function and call_module) over the module tree: the
// size measure of minimized repros.
size_t case_size(const Case& c);

}  // namespace flatcheck
