// The build function of every stage in core/base/stages.def.
#include "core/pipeline/pipeline.h"

#include <algorithm>
#include <string>
#include <unordered_set>
#include <vector>

#include "core/base/check.h"
#include "core/serialize/serialize.h"

namespace flatcheck {
namespace {

Artifact of_program(Stage s, Program p) {
  Artifact a;
  a.stage = s;
  a.program = std::move(p);
  return a;
}

// Saves `p`, loads it back, and records both texts for the round-trip check. The program is the
// pipeline's own, bounded by the case's expansion budget: it is read under the hard maxima of
// the load limits, so a `--limit` that just admits the case does not refuse what it becomes.
Program reload(const Program& p, Artifact& record) {
  record.saved = save_program(p);
  Program re = load_program(record.saved, hard_load_limits());
  record.resaved = save_program(re);
  return re;
}

Artifact build_exported(const Artifact& eager, const PipelineConfig&) {
  return of_program(Stage::kExported, export_program(*eager.module));
}

Artifact build_partitioned(const Artifact& exported, const PipelineConfig& config) {
  return of_program(Stage::kPartitioned, partition(*exported.program, partition_options(config)));
}

Artifact build_flattened(const Artifact& partitioned, const PipelineConfig&) {
  return of_program(Stage::kFlattened, flatten(*partitioned.program));
}

Artifact build_reloaded(const Artifact& flattened, const PipelineConfig&) {
  Artifact a;
  a.stage = Stage::kReloaded;
  a.program = reload(*flattened.program, a);
  return a;
}

Artifact build_unflattened(const Artifact& exported, const PipelineConfig&) {
  Artifact a;
  a.stage = Stage::kUnflattened;
  Program re = reload(*exported.program, a);
  a.module = unflatten(re);
  return a;
}

using BuildFn = Artifact (*)(const Artifact& input, const PipelineConfig& config);

BuildFn build_function(Stage s) {
  switch (s) {
#define X(e, name, from, fn, doc) \
  case Stage::e:                  \
    return fn;
#include "core/base/stages.def"
#undef X
  }
  return nullptr;
}

// An override is a user's pass: what it built may hold what no built-in pass builds and every
// later step would dereference or walk forever (a null root, child, tensor or engine; a module
// that holds itself). Throws InputError naming the first such place.
// `open`: the modules on the path to `m`; `done`: those already checked whole (a module shared
// by many paths, as unflatten's variants share children, is walked once, not once per path).
void check_pointers(const Module& m, const std::string& path, std::vector<const Module*>& open,
                    std::unordered_set<const Module*>& done) {
  auto where = [&](const std::string& name) { return path.empty() ? name : path + "." + name; };
  FLATCHECK_INPUT(std::find(open.begin(), open.end(), &m) == open.end(),
                  "a module tree that holds itself: '" << path << "' is its own ancestor");
  if (done.count(&m)) return;
  for (const auto* held : {&m.params, &m.buffers})
    for (const auto& [name, t] : *held) FLATCHECK_INPUT(t, "a null tensor '" << where(name) << "'");
  for (const auto& [name, e] : m.engines)
    FLATCHECK_INPUT(e, "a null engine '" << where(name) << "'");
  open.push_back(&m);
  for (const auto& [name, child] : m.children) {
    FLATCHECK_INPUT(child, "a null child '" << where(name) << "'");
    check_pointers(*child, where(name), open, done);
  }
  open.pop_back();
  done.insert(&m);
}

void check_override_output(Stage s, const Artifact& a) {
  std::vector<const Module*> open;
  std::unordered_set<const Module*> done;
  try {
    if (a.module) check_pointers(*a.module, "", open, done);
    if (!a.program) return;
    FLATCHECK_INPUT(a.program->root, "a program without a root module");
    check_pointers(*a.program->root, "", open, done);
    for (const auto& [name, t] : a.program->state)
      FLATCHECK_INPUT(t, "a null state tensor '" << name << "'");
  } catch (const InputError& e) {
    throw InputError("the override of stage " + std::string(stage_name(s)) + " returned " +
                     e.what());
  }
}

}  // namespace

PartitionOptions partition_options(const PipelineConfig& config) {
  PartitionOptions o;
  o.fallback_ops = config.fallback_ops;
  o.min_block_size = config.min_block_size;
  return o;
}

StageBuild program_pass(Stage s, std::function<Program(const Program&)> pass) {
  return [s, pass = std::move(pass)](const Artifact& input, const PipelineConfig&) {
    FLATCHECK_INPUT(input.program, "stage " << stage_name(s) << " is built from "
                                            << stage_name(input.stage)
                                            << ", a module tree, not a program");
    return of_program(s, pass(*input.program));
  };
}

Pipeline::Pipeline(std::shared_ptr<const Module> eager, PipelineConfig config,
                   StageOverrides overrides)
    : config_(std::move(config)), overrides_(std::move(overrides)) {
  FLATCHECK_CHECK(eager) << "a pipeline needs an eager module";
  FLATCHECK_INPUT(!overrides_.count(Stage::kEager), "the eager reference cannot be replaced");
  for (const auto& [s, fn] : overrides_)
    FLATCHECK_INPUT(fn, "the override of stage " << stage_name(s) << " is empty");
  Artifact a;
  a.stage = Stage::kEager;
  a.module = std::move(eager);
  built_.emplace(Stage::kEager, std::move(a));
}

const Artifact& Pipeline::build(Stage s) {
  if (auto it = built_.find(s); it != built_.end()) return it->second;
  const Artifact& input = build(stage_input(s));
  Artifact a;
  if (auto it = overrides_.find(s); it != overrides_.end()) {
    a = it->second(input, config_);
    check_override_output(s, a);
  } else {
    BuildFn fn = build_function(s);
    FLATCHECK_CHECK(fn) << "stage " << stage_name(s) << " has no build function";
    a = fn(input, config_);
  }
  FLATCHECK_INPUT(
      a.stage == s && (a.program.has_value() != (a.module != nullptr)),
      "stage " << stage_name(s) << " built an artifact of stage " << stage_name(a.stage)
               << (a.program || a.module ? "" : " with neither a program nor a module"));
  return built_.emplace(s, std::move(a)).first->second;
}

}  // namespace flatcheck
