// flatcheck benchmarks (Google Benchmark).
//
//   Pass/<pass>/<nodes>     each pass at 8, 32, 128, 256 and 1024 nodes on a synthetic program:
//                           a chain of mixed ops named to collide, relu fallbacks every few
//                           nodes, a child module called twice with different flags.
//   Pipeline/<stage>/<nodes>  each path of the pipeline table built from its input stage.
//   NameCollision/<n>       n nodes all named getitem: time per name must stay flat.
//   NameSuffixes/<n>        n names of one base asked for with random numeric suffixes
//                           (getitem_<r>, r < n, and getitem): time per name must stay flat.
//   NameTables/<n>          the hash-table work of NameSuffixes without its search: how much
//                           of the growth in time per name the memory hierarchy explains.
//   EndToEnd                generate + check one default case (all paths): cases per second.
//   TextFloor/<what>/<max-nodes>  the text a case's oracle must read back, against the per-case
//                           budget of the throughput goals: the two program documents it loads
//                           (the reloaded and the unflattened paths), for the first 100 cases of
//                           `fuzz --seed 1 --max-nodes N`. `accept` only tokenizes and checks
//                           them with nlohmann::json::accept (the floor of any reader built on
//                           nlohmann's lexer, DOM or SAX); `tape` is flatcheck's strict reader
//                           alone (parse_doc: the documents parsed and checked into its tape, no
//                           IR built); `simdjson` parses them with simdjson's DOM parser (when
//                           the build found simdjson); `load` is flatcheck's loader; `save`
//                           writes the four texts of the two round trips; `case` checks the
//                           whole case on every path. Per case, not per document.
// bench/run.sh runs them and writes bench/results/*.md.
#include <benchmark/benchmark.h>

#include <map>
#include <unordered_map>
#include <unordered_set>

#include <nlohmann/json.hpp>
#ifdef FLATCHECK_BENCH_SIMDJSON
#include <simdjson.h>
#endif

#include "core/ir/engine.h"
#include "core/ir/namespace.h"
#include "core/passes/passes.h"
#include "core/pipeline/pipeline.h"
#include "core/runtime/cuda/cuda_backend.h"
#include "core/runtime/interpreter.h"
#include "core/serialize/serialize.h"
#include "generators/examples.h"
#include "generators/generate.h"
#include "harness/allocator.h"
#include "harness/campaign.h"
#include "harness/oracle.h"

namespace flatcheck {
namespace {

// A program with about `n` call_function nodes.
Case synthetic(int n) {
  auto child = std::make_shared<Module>();
  child->type = "Block";
  {
    Graph& g = child->graph;
    Node* x = g.placeholder("x", ValueType::tensor({4, 4}));
    Node* flag = g.placeholder("flag", ValueType::scalar(ValueType::kBool));
    Node* a = g.call_function(OpCode::kTanh, {x}, "getitem");
    Node* b = g.call_function(OpCode::kMulScalar, {x, 0.5f}, "getitem");
    g.output({g.call_function(OpCode::kBranch, {flag, a, b})});
  }
  auto root = std::make_shared<Module>();
  root->type = "Model";
  root->children["block"] = child;
  root->params["w"] = std::make_shared<Tensor>(Tensor::full({4, 4}, 0.25f));
  Graph& g = root->graph;
  Node* v = g.placeholder("x", ValueType::tensor({4, 4}));
  Node* w = g.get_attr("w");
  static const OpCode kCycle[] = {OpCode::kAdd,    OpCode::kMul,  OpCode::kTanh,   OpCode::kSub,
                                  OpCode::kMatmul, OpCode::kRelu, OpCode::kSigmoid};
  int nodes = 0;
  for (int i = 0; nodes < n; ++i) {
    if (i % 50 == 10) {
      v = g.call_module("block", {v, (i / 50) % 2 == 0});
      nodes += 1;
      continue;
    }
    if (i % 13 == 12) {
      Node* s = g.call_function(OpCode::kSplit, {v, int64_t{0}, int64_t{2}}, "getitem");
      Node* a = g.call_function(OpCode::kGetitem, {s, int64_t{1}});
      Node* b = g.call_function(OpCode::kGetitem, {s, int64_t{0}});
      v = g.call_function(OpCode::kConcat, {a, b, int64_t{0}}, "getitem_1");
      nodes += 4;
      continue;
    }
    OpCode op = kCycle[i % 7];
    std::string_view sig = op_info(op).sig;
    v = sig == "T" ? g.call_function(op, {v}, "getitem") : g.call_function(op, {v, w}, "getitem");
    ++nodes;
  }
  g.output({v});
  infer_types(*root);
  Case c;
  c.module = root;
  c.inputs = {Tensor::full({4, 4}, 0.5f)};
  c.config.fallback_ops = {"relu"};
  c.config.min_block_size = 3;
  return c;
}

PartitionOptions popts(const Case& c) {
  return partition_options(c.config);
}

void Pass(benchmark::State& state, const char* stage) {
  int n = static_cast<int>(state.range(0));
  Case c = synthetic(n);
  Program ep = export_program(*c.module);
  Program pm = partition(ep, popts(c));
  Program fl = flatten(pm);
  std::string saved = save_program(fl);
  std::string s(stage);
  size_t nodes = case_size(c);
  for (auto _ : state) {
    if (s == "generate") {
      GenOptions o;
      o.max_nodes = n;
      o.max_depth = 0;
      Rng rng(static_cast<uint64_t>(state.iterations()));
      SwarmConfig sw = draw_swarm(rng, o);
      sw.nodes = n;
      Case g = build_case(rng, sw, o);
      nodes = case_size(g);
      benchmark::DoNotOptimize(g);
    } else if (s == "export") {
      benchmark::DoNotOptimize(export_program(*c.module));
    } else if (s == "partition") {
      benchmark::DoNotOptimize(partition(ep, popts(c)));
    } else if (s == "flatten") {
      benchmark::DoNotOptimize(flatten(pm));
    } else if (s == "save") {
      benchmark::DoNotOptimize(save_program(fl));
    } else if (s == "load") {
      benchmark::DoNotOptimize(load_program(saved));
    } else if (s == "unflatten") {
      benchmark::DoNotOptimize(unflatten(ep));
    } else if (s == "run") {
      Program p = clone_program(fl);
      benchmark::DoNotOptimize(run_program(p, c.inputs));
    }
  }
  state.counters["nodes"] = static_cast<double>(nodes);
  state.counters["ns_per_node"] =
      benchmark::Counter(static_cast<double>(nodes), benchmark::Counter::kIsIterationInvariantRate |
                                                         benchmark::Counter::kInvert);
}

#define PASS(name)                     \
  BENCHMARK_CAPTURE(Pass, name, #name) \
      ->Arg(8)                         \
      ->Arg(32)                        \
      ->Arg(128)                       \
      ->Arg(256)                       \
      ->Arg(1024)                      \
      ->Unit(benchmark::kMicrosecond)
PASS(generate);
PASS(export);
PASS(partition);
PASS(flatten);
PASS(save);
PASS(load);
PASS(unflatten);
PASS(run);

// Pipeline/<stage>/<nodes>: building one stage of the pipeline table from its (prebuilt) input
// stage, for every path in core/base/stages.def.
void PipelineStage(benchmark::State& state, Stage stage) {
  Case c = synthetic(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    state.PauseTiming();
    Pipeline p(c.module, c.config);
    p.build(stage_input(stage));
    state.ResumeTiming();
    benchmark::DoNotOptimize(p.build(stage));
  }
  state.counters["nodes"] = static_cast<double>(case_size(c));
}
const bool kPipelineRegistered = [] {
  for (Stage s : path_stages())
    benchmark::RegisterBenchmark(("Pipeline/" + std::string(stage_name(s))).c_str(), PipelineStage,
                                 s)
        ->Arg(64)
        ->Arg(1024)
        ->Unit(benchmark::kMicrosecond);
  return true;
}();

// The name benchmarks: n names per iteration, reported as ns per name, at n = 10^3 ... 10^6.
void report_ns_per_name(benchmark::State& state, int64_t n) {
  state.counters["ns_per_name"] =
      benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsIterationInvariantRate |
                                                     benchmark::Counter::kInvert);
}
void name_sizes(benchmark::internal::Benchmark* b) {
  for (int64_t n = 1000; n <= 1000000; n *= 10) b->Arg(n);
  b->Unit(benchmark::kMillisecond);
}

void NameCollision(benchmark::State& state) {
  int64_t n = state.range(0);
  for (auto _ : state) {
    Namespace ns;
    for (int64_t i = 0; i < n; ++i) benchmark::DoNotOptimize(ns.create_name("getitem"));
  }
  report_ns_per_name(state, n);
}
BENCHMARK(NameCollision)->Apply(name_sizes);

// The names NameSuffixes asks for: getitem_<r> with r < n, and one in eight plain getitem.
std::vector<std::string> suffixed_names(int64_t n) {
  std::vector<std::string> asked;
  Rng rng(7);
  for (int64_t i = 0; i < n; ++i)
    asked.push_back(rng.below(8) == 0
                        ? "getitem"
                        : "getitem_" + std::to_string(rng.below(static_cast<uint64_t>(n))));
  return asked;
}

void NameSuffixes(benchmark::State& state) {
  int64_t n = state.range(0);
  std::vector<std::string> asked = suffixed_names(n);
  for (auto _ : state) {
    Namespace ns;
    for (const auto& a : asked) benchmark::DoNotOptimize(ns.create_name(a));
  }
  report_ns_per_name(state, n);
}
BENCHMARK(NameSuffixes)->Apply(name_sizes);

// The table work of NameSuffixes with no search: per name, a lookup and an insert of the string
// in a set and of its number in a map, over tables that grow to n entries. Each operation is
// O(1) on average, so this row's growth in ns per name from 10^3 to 10^6 is the memory
// hierarchy's (tables outgrowing the caches), not an algorithm's: NameSuffixes is linear when
// its ns per name grows no faster than this row's.
void NameTables(benchmark::State& state) {
  int64_t n = state.range(0);
  std::vector<std::string> asked = suffixed_names(n);
  for (auto _ : state) {
    std::unordered_set<std::string> used;
    std::unordered_map<int64_t, int64_t> numbers;
    int64_t i = 0;
    for (const auto& a : asked) {
      benchmark::DoNotOptimize(used.count(a));
      used.insert(a + "_" + std::to_string(i));
      numbers.try_emplace(i, i + 1);
      ++i;
    }
    benchmark::DoNotOptimize(used.size() + numbers.size());
  }
  report_ns_per_name(state, n);
}
BENCHMARK(NameTables)->Apply(name_sizes);

void EndToEnd(benchmark::State& state) {
  int64_t i = 0;
  for (auto _ : state) {
    Case c = generate_case_for_seed(mix_seed(1, static_cast<uint64_t>(i++)));
    benchmark::DoNotOptimize(check_case(c));
  }
  state.counters["cases_per_sec"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(EndToEnd)->Unit(benchmark::kMicrosecond)->MinTime(2.0);

// The first 100 cases of `fuzz --seed 1 --max-nodes N`, with the two texts each one's oracle
// loads and the programs loaded from them.
struct FloorCases {
  std::vector<Case> cases;
  std::vector<std::string> texts;  // two per case: the flattened and the exported program
  std::vector<Program> loaded;     // one per text
  size_t bytes = 0;
};

const FloorCases& floor_cases(int max_nodes) {
  static std::map<int, FloorCases> built;
  auto [it, fresh] = built.try_emplace(max_nodes);
  FloorCases& f = it->second;
  if (!fresh) return f;
  GenOptions o;
  o.max_nodes = max_nodes;
  for (int64_t i = 0; i < 100; ++i) {
    Case c = generate_case_for_seed(case_seed(1, i), o);
    Pipeline p(c.module, c.config);
    for (Stage s : {Stage::kReloaded, Stage::kUnflattened}) {
      f.texts.push_back(p.build(s).saved);
      f.bytes += f.texts.back().size();
      f.loaded.push_back(load_program(f.texts.back()));
    }
    f.cases.push_back(std::move(c));
  }
  return f;
}

#ifdef FLATCHECK_BENCH_SIMDJSON
// One parser for the run: simdjson reuses its buffers between documents, as a reader would.
simdjson::dom::parser& simdjson_parser() {
  static simdjson::dom::parser p;
  return p;
}
#endif

void TextFloor(benchmark::State& state, const char* what) {
  const FloorCases& f = floor_cases(static_cast<int>(state.range(0)));
  const LoadLimits limits = default_load_limits();
  std::string w(what);
  for (auto _ : state) {
    if (w == "accept") {
      for (const auto& t : f.texts) benchmark::DoNotOptimize(nlohmann::json::accept(t));
    } else if (w == "tape") {
      for (const auto& t : f.texts) benchmark::DoNotOptimize(parse_doc(t, limits));
    } else if (w == "simdjson") {
#ifdef FLATCHECK_BENCH_SIMDJSON
      for (const auto& t : f.texts) {
        simdjson::dom::element e;
        if (simdjson_parser().parse(t).get(e)) state.SkipWithError("simdjson rejects a document");
        benchmark::DoNotOptimize(e);
      }
#else
      state.SkipWithError("built without simdjson");
      break;
#endif
    } else if (w == "load") {
      for (const auto& t : f.texts) benchmark::DoNotOptimize(load_program(t));
    } else if (w == "save") {
      for (size_t i = 0; i < f.texts.size(); ++i) {
        benchmark::DoNotOptimize(save_program(f.loaded[i]));  // the text saved
        benchmark::DoNotOptimize(save_program(f.loaded[i]));  // and the one the round trip resaves
      }
    } else {
      for (const auto& c : f.cases) benchmark::DoNotOptimize(check_case(c));
    }
  }
  auto cases = static_cast<double>(f.cases.size());
  state.counters["us_per_case"] = benchmark::Counter(
      cases * 1e-6, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  state.counters["bytes_per_case"] = static_cast<double>(f.bytes) / cases;
}
#define FLOOR(what)                         \
  BENCHMARK_CAPTURE(TextFloor, what, #what) \
      ->Arg(8)                              \
      ->Arg(20)                             \
      ->Arg(32)                             \
      ->Arg(128)                            \
      ->Unit(benchmark::kMillisecond)
FLOOR(accept);
FLOOR(tape);
FLOOR(simdjson);
FLOOR(load);
FLOOR(save);
FLOOR(case);

// Engine launch cost: one engine of the graph-break example, run on a backend (the CUDA rows
// are skipped with the reason when there is no device).
void EngineLaunch(benchmark::State& state, const char* device, bool graphs) {
  std::string why;
  if (std::string(device) == "cuda" && !cuda_available(&why)) {
    state.SkipWithError(("no GPU run was made: " + why).c_str());
    return;
  }
  Backend& b = std::string(device) == "cuda" ? cuda_backend() : cpu_backend();
  cuda_use_graphs(graphs);
  Program pm = partition(export_program(*graph_break_example()), {{"relu"}, 5});
  auto engine = pm.root->children.at("_run_on_acc_2")->engine("engine");
  Tensor x = Tensor::full({2, 4}, 0.5f);
  for (auto _ : state) benchmark::DoNotOptimize(run_engine(b, *engine, {&x}));
  cuda_use_graphs(false);
}
BENCHMARK_CAPTURE(EngineLaunch, cpu, "cpu", false)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(EngineLaunch, cuda, "cuda", false)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(EngineLaunch, cuda_graph, "cuda", true)->Unit(benchmark::kMicrosecond);

void EndToEndCuda(benchmark::State& state) {
  std::string why;
  if (!cuda_available(&why)) {
    state.SkipWithError(("no GPU run was made: " + why).c_str());
    return;
  }
  OracleOptions o;
  o.device = Device::kCuda;
  int64_t i = 0;
  for (auto _ : state) {
    Case c = generate_case_for_seed(mix_seed(1, static_cast<uint64_t>(i++)));
    benchmark::DoNotOptimize(check_case(c, o));
  }
  state.counters["cases_per_sec"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(EndToEndCuda)->Unit(benchmark::kMicrosecond)->MinTime(2.0);

}  // namespace
}  // namespace flatcheck

int main(int argc, char** argv) {
  // The context block of the report (and of --benchmark_format=json) names the allocator.
  benchmark::AddCustomContext("allocator", flatcheck::allocator_description());
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
