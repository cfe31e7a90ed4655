// The pipeline object: the stages of core/base/stages.def built from an eager module, each from
// its input stage, once. The oracle, `show`, the bench and the tests build stages through it,
// so the order of the passes and how a configuration becomes pass options live here only.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "core/base/stage.h"
#include "core/ir/ir.h"
#include "core/ir/program.h"
#include "core/passes/passes.h"

namespace flatcheck {

// How the pipeline is configured for a case.
struct PipelineConfig {
  std::set<std::string> fallback_ops{"relu"};  // ops partitioned as fallbacks
  int min_block_size = 5;
  int calls = 2;          // consecutive calls per path (state persists between them)
  bool nan_exact = true;  // NaN payloads must match (false: any NaN equals any NaN)
  bool operator==(const PipelineConfig&) const = default;
};

// The partitioner's options for a configuration (the one place this conversion is written).
PartitionOptions partition_options(const PipelineConfig& config);

// What a stage produces: a program (run with run_program) or a module tree (run_module).
struct Artifact {
  Stage stage = Stage::kEager;
  std::optional<Program> program;
  std::shared_ptr<const Module> module;  // set when `program` is not
  // For stages that go through the file format: the saved text, and the text the loaded
  // program saves to; the two must be equal (the canonical round trip).
  std::string saved, resaved;
};

// A stage's build function: the artifact of one stage from the artifact of its input stage
// (stage_input()). The table's functions are the system under test's; a user checking their
// own pass replaces one (docs/library.md).
using StageBuild = std::function<Artifact(const Artifact& input, const PipelineConfig& config)>;
// Replacement build functions by stage; a stage not named here uses the table's.
using StageOverrides = std::map<Stage, StageBuild>;

// A build function from a program-to-program pass: `pass` gets the input stage's program
// (which it must not modify) and its result becomes stage `s`. Throws InputError when the
// input stage is a module tree (kEager).
StageBuild program_pass(Stage s, std::function<Program(const Program&)> pass);

class Pipeline {
 public:
  // `overrides` replaces the build function of the stages it names; the eager reference
  // cannot be replaced.
  Pipeline(std::shared_ptr<const Module> eager, PipelineConfig config,
           StageOverrides overrides = {});

  // The artifact of `s`, building it (and the stages it is built from) on first use. Throws
  // InputError from the pass that rejects its input; a throwing stage is retried on next use.
  const Artifact& build(Stage s);

  const PipelineConfig& config() const { return config_; }

 private:
  PipelineConfig config_;
  StageOverrides overrides_;
  std::map<Stage, Artifact> built_;
};

}  // namespace flatcheck
