// The oracle: runs every path of DESIGN §2 on a case and demands bit-identical outputs and
// final buffers over consecutive calls, plus the structural properties (lint after every pass,
// canonical round trips, the unflattened module structure, shared state across variants).
#pragma once

#include <array>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/base/stage.h"
#include "core/pipeline/pipeline.h"
#include "core/runtime/backend.h"
#include "core/runtime/cuda/device.h"
#include "generators/case.h"
#include "harness/reach.h"

namespace flatcheck {

// A failure found on a case. Its signature `property:stage:op[:module]` is what findings are
// deduplicated by; the minimizer keeps its kind `property:stage:op`.
struct Failure {
  std::string property;  // mismatch, error, exception, lint, roundtrip, rule, structure,
                         // missing-state, mutated-input, naming, shared-state, crash, timeout
  std::string stage;  // a stage_name() (core/base/stages.def); "eager" when the case does not run
  std::string op = "-";          // the op of the first diverging node, or where the error arose
  std::string message;           // the details, for people
  std::string first_divergence;  // provenance of the first diverging node ("n@1/add")
  std::string module;            // its module path, variants merged ("n"; "" at the root)
  // What the minimizer keeps while it shrinks: property:stage:op.
  std::string kind() const { return property + ":" + stage + ":" + op; }
  // What findings are told apart by: the kind, and the module path when it is not the root
  // ("mismatch:flattened:add:n.layer0").
  std::string signature() const { return module.empty() ? kind() : kind() + ":" + module; }
};

// What a case exercised (the campaign summary adds these up).
struct Coverage {
  std::map<std::string, int> ops;  // call_function ops in the eager program
  int nodes = 0;                   // eager nodes (call_function + call_module)
  int calls = 0;                   // call_module executions in one eager run
  int flat_nodes = 0;  // call_function nodes of the exported program (every call inlined)
  int acc_partitions = 0, fallback_partitions = 0;
  int renamed_nodes = 0;     // flattened nodes whose name carries a collision suffix
  int specialized_fqns = 0;  // FQNs unflattened into two or more variants
  int buffer_mutations = 0;
  int paths = 0;            // paths run to completion
  int case_roundtrips = 0;  // case documents saved, loaded and compared (--spelling-every)
  std::array<int, kNumReach> reach{};  // cases with each shape of harness/reach.def
};

struct OracleResult {
  std::optional<Failure> failure;
  Coverage coverage;
  std::string backend;  // the name of the backend every path ran on ("cpu", "cuda", ...)
};

struct OracleOptions {
  // The device every path (eager reference included) runs on (--device). Its backend is
  // resolved on the thread that calls check_case: the CUDA backend is per thread.
  Device device = Device::kCpu;
  // When set, every path runs on this backend instead of the device's (a test's recording
  // backend, a user's own backend).
  Backend* backend = nullptr;
  // Replacement build functions for stages of the pipeline table: a user's own pass checked
  // by the same oracle (docs/library.md). Its rules, naming and fingerprint checks apply as to
  // the built-in pass of that stage.
  StageOverrides stages;
  bool localize = true;  // find the first diverging node on a mismatch
  // The documents a case saves (stages through the file) are checked against the canonical
  // layout and re-spelled (property `spelling`, harness/spelling.h) in one case of this many,
  // picked by the saved text's digest, and the case document itself is saved, loaded and
  // compared (`roundtrip:eager`, harness/case_roundtrip.h) in one case of this many, picked by
  // the eager module's fingerprint; 1: every case (replay, shrink), 0: never. Campaigns set it
  // from CampaignOptions::spelling_every.
  int spelling_every = 1;
  // The swap property (harness/swap_check.h): after the unflattened path, one child swapped and
  // one attribute set through unflatten's variant API, against the same edit of the eager module.
  bool swap = true;
  // Every candidate swap (up to eight of each kind), not one picked by the case's digest: replay
  // and shrink, where a finding must not move to another candidate as the case changes.
  // Campaigns check one of each per case.
  bool swap_all = true;
  // Called as each stage starts (all_stages() in order, by name): an isolated worker records it so
  // a crash or hang can be attributed to its stage.
  std::function<void(const char* stage)> on_stage;
};

// Adds `b` into `a`.
void add_coverage(Coverage& a, const Coverage& b);

// Never throws for problems in the system under test: they become failures. Throws InputError
// when the device is not available here ("--device cuda: no CUDA device: ...").
OracleResult check_case(const Case& c, const OracleOptions& opts = {});

// Bitwise equality; with nan_exact false, any NaN equals any NaN.
bool same_tensor(const Tensor& a, const Tensor& b, bool nan_exact);

}  // namespace flatcheck
