// The oracle. Each path gets its own copy of the state, runs `calls` consecutive calls, and is
// compared with the eager reference: outputs of every call, then final parameters and buffers.
// On a mismatch the first diverging node is found by provenance: every node and engine op
// reports its value under its origin key, and the first origin, in the path's execution
// order, whose value differs from the eager one is the divergence.
#include "harness/oracle.h"
#include "core/base/names.h"
#include "harness/case_roundtrip.h"
#include "harness/reference_ops.h"
#include "harness/reference_partition.h"
#include "harness/spelling.h"
#include "harness/structure_check.h"
#include "harness/swap_check.h"
#include "harness/type_check.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "core/base/check.h"
#include "core/base/text.h"
#include "core/ir/fingerprint.h"
#include "core/pipeline/pipeline.h"
#include "core/runtime/interpreter.h"
#include "core/serialize/serialize.h"
#include "harness/pass_rules.h"

namespace flatcheck {

bool same_tensor(const Tensor& a, const Tensor& b, bool nan_exact) {
  if (a.shape != b.shape || a.data.size() != b.data.size()) return false;
  for (size_t i = 0; i < a.data.size(); ++i) {
    if (float_bits(a.data[i]) == float_bits(b.data[i])) continue;
    if (!nan_exact && std::isnan(a.data[i]) && std::isnan(b.data[i])) continue;
    return false;
  }
  return true;
}

namespace {

struct Trace {
  std::vector<std::tuple<std::string, std::string, Tensor>> order;  // origin, op, value
};

struct Observed {
  std::vector<std::vector<Tensor>> outputs;  // per call
  std::map<std::string, Tensor> state;       // final state by FQN
  Trace trace;                               // first call
  std::map<std::string, int> calls_per_fqn;  // first call
};

NodeObserver recorder(Trace& t) {
  return [&t](const std::string& origin, std::string_view op, const Value& v) {
    if (v.kind == ValueType::kTensor) t.order.emplace_back(origin, std::string(op), *v.tensor);
  };
}

// The state of a module tree by FQN; `storage` groups the FQNs that name one tensor (a shared
// parameter), which a program may hold under one of them.
void collect_state(const Module& m, const std::string& prefix, std::map<std::string, Tensor>& out,
                   std::unordered_set<const Module*>& seen,
                   std::map<const Tensor*, std::vector<std::string>>& storage) {
  if (!seen.insert(&m).second) return;
  for (const auto* state : {&m.params, &m.buffers})
    for (const auto& [k, v] : *state) {
      out.emplace(join_fqn(prefix, k), *v);
      storage[v.get()].push_back(join_fqn(prefix, k));
    }
  for (const auto& [k, c] : m.children)
    if (k.find('@') == std::string::npos)
      collect_state(*c, join_fqn(prefix, k), out, seen, storage);
}

// A failure thrown out of a path's body.
struct PathFailure {
  Failure f;
};

[[noreturn]] void raise(std::string property, std::string stage, std::string message,
                        std::string op = "-") {
  throw PathFailure{
      Failure{std::move(property), std::move(stage), std::move(op), std::move(message), "", ""}};
}

std::string tensor_text(const Tensor& t) {
  std::ostringstream os;
  os << t;
  return os.str();
}

class Oracle {
 public:
  Oracle(const Case& c, const OracleOptions& o)
      : c_(c), o_(o), b_(o.backend ? *o.backend : backend_for(o.device)) {}

  OracleResult run() {
    OracleResult r;
    r.backend = std::string(b_.name());
    coverage_static();
    if (o_.on_stage) o_.on_stage("eager");
    try {
      ref_ = run_eager();
    } catch (const std::exception& e) {
      // The loader accepted the case, so every stage must run it (docs/hardening.md): a run
      // that throws is the runtime's failure, not a bad case.
      r.failure = Failure{"runtime", "eager",
                          "-",       std::string("the eager reference does not run: ") + e.what(),
                          "",        ""};
      r.coverage = cov_;
      return r;
    }
    if (auto t = type_breach(*c_.module))  // the core's types vs the generator's derivation
      reference_failure_ = Failure{"types", "exported", t->op, t->message, "", ""};
    if (reference_failure_) {  // a kernel disagrees with the reference kernels
      r.failure = reference_failure_;
      r.coverage = cov_;
      return r;
    }
    for (const auto& [_, n] : ref_.calls_per_fqn) cov_.calls += n;
    try {
      run_paths();
    } catch (const PathFailure& pf) {
      r.failure = pf.f;
    }
    r.coverage = cov_;
    return r;
  }

 private:
  void add_reach(ReachBits bits) {
    for (int i = 0; i < kNumReach; ++i)
      if (bits & reach_bit(static_cast<Reach>(i))) cov_.reach[static_cast<size_t>(i)] = 1;
  }

  void coverage_static() {
    add_reach(case_reach(c_));
    for_each_module(*c_.module, [&](const std::string&, Module& m) {
      for (Node* n = m.graph.first(); n; n = n->next) {
        if (n->op == NodeOp::kCallFunction) {
          ++cov_.ops[n->target];
          ++cov_.nodes;
        } else if (n->op == NodeOp::kCallModule) {
          ++cov_.nodes;
        }
      }
    });
  }

  Observed run_eager() {
    Observed obs;
    // Not a clone: a run reads the module (run_module takes it const) and writes only tensor
    // values, so putting every tensor back restores it exactly.
    StateSnapshot restore(*c_.module);
    const Module* m = c_.module.get();
    for (int k = 0; k < c_.config.calls; ++k) {
      RunContext ctx;
      ctx.backend = &b_;
      if (k == 0) ctx.observer = recorder(obs.trace);
      ctx.op_observer = [this](const Node& n, const std::string& origin,
                               const std::vector<const Tensor*>& ins,
                               const std::vector<Scalar>& scalars,
                               const std::vector<Tensor>& outs) {
        if (!has_reference(n.fn)) return;
        ++reference_reported_;
        if (reference_failure_) return;
        std::string why = check_against_reference(n.fn, ins, scalars, outs,
                                                  c_.config.nan_exact && b_.keeps_nan_payloads());
        if (!why.empty())
          reference_failure_ =
              Failure{"reference",
                      "eager",
                      n.target,
                      "node %" + n.name + " (" + origin + ") on backend " + std::string(b_.name()) +
                          ": the kernel disagrees with the reference kernels: " + why,
                      origin,
                      origin.rfind('/') == std::string::npos
                          ? ""
                          : strip_variants(origin.substr(0, origin.rfind('/')))};
      };
      std::vector<Value> in;
      for (const auto& t : c_.inputs) in.push_back(Value::of(t));
      std::vector<Tensor> outs;
      for (auto& v : run_module(*m, in, ctx)) outs.push_back(*v.tensor);
      obs.outputs.push_back(std::move(outs));
      if (k == 0) obs.calls_per_fqn = ctx.calls_per_fqn;
    }
    // Every op the graphs run was reported for checking (the count is the module tree's, not
    // the run's): a run that reports fewer leaves kernels unchecked.
    const uint64_t expected = reference_ops_per_call(*m) * static_cast<uint64_t>(c_.config.calls);
    if (!reference_failure_ && reference_reported_ != expected)
      reference_failure_ = Failure{
          "reference",
          "eager",
          "-",
          "the eager run reported " + std::to_string(reference_reported_) +
              " ops to the reference check, of the " + std::to_string(expected) +
              " with a reference kernel that its graphs run (counted "
              "from the module tree, " +
              std::to_string(c_.config.calls) + (c_.config.calls == 1 ? " call" : " calls") +
              "): the others' results went unchecked",
          "",
          ""};
    std::unordered_set<const Module*> seen;
    std::map<const Tensor*, std::vector<std::string>> storage;
    collect_state(*m, "", obs.state, seen, storage);
    for (auto& [_, fqns] : storage)
      for (const auto& f : fqns) aliases_[f] = fqns;
    return obs;
  }

  static std::map<std::string, size_t> ref_origin_index(const Observed& o) {
    std::map<std::string, size_t> idx;
    for (size_t i = 0; i < o.trace.order.size(); ++i) idx.emplace(std::get<0>(o.trace.order[i]), i);
    return idx;
  }

  // Runs a program path `calls` times and compares it with the reference.
  void check_program(Program& p, const std::string& stage) {
    Observed obs;
    for (int k = 0; k < c_.config.calls; ++k) {
      RunContext ctx;
      ctx.backend = &b_;
      if (k == 0 && o_.localize) ctx.observer = recorder(obs.trace);
      try {
        obs.outputs.push_back(run_program(p, c_.inputs, ctx));
      } catch (const std::exception& e) {
        raise(error_property(e), stage, std::string("running: ") + e.what(), last_op(obs.trace));
      } catch (...) {
        raise("exception", stage, "running: a non-standard exception", last_op(obs.trace));
      }
    }
    for (const auto& [fqn, t] : p.state) obs.state.emplace(fqn, *t);
    compare(obs, stage);
    ++cov_.paths;
  }

  void check_module(const Module& m, const std::string& stage) {
    Observed obs;
    std::map<std::string, int> calls;
    for (int k = 0; k < c_.config.calls; ++k) {
      RunContext ctx;
      ctx.backend = &b_;
      if (k == 0 && o_.localize) ctx.observer = recorder(obs.trace);
      std::vector<Value> in;
      for (const auto& t : c_.inputs) in.push_back(Value::of(t));
      try {
        std::vector<Tensor> outs;
        for (auto& v : run_module(m, in, ctx)) outs.push_back(*v.tensor);
        obs.outputs.push_back(std::move(outs));
      } catch (const std::exception& e) {
        raise(error_property(e), stage, std::string("running: ") + e.what(), last_op(obs.trace));
      } catch (...) {
        raise("exception", stage, "running: a non-standard exception", last_op(obs.trace));
      }
      if (k == 0) calls = ctx.calls_per_fqn;
    }
    check_call_counts(calls);
    for (const auto& [fqn, _] : ref_.state)
      if (auto t = m.attribute(fqn)) obs.state.emplace(fqn, *t);
    compare(obs, stage);
    ++cov_.paths;
  }

  // InputError is a pass rejecting its input ("error"); anything else escaped the system under
  // test ("exception": bad_alloc, out_of_range, a logic error).
  static std::string error_property(const std::exception& e) {
    return dynamic_cast<const InputError*>(&e) ? "error" : "exception";
  }

  static std::string last_op(const Trace& t) {
    return t.order.empty() ? "-" : std::get<1>(t.order.back());
  }

  void compare(const Observed& obs, const std::string& stage) {
    bool exact = c_.config.nan_exact;
    for (size_t k = 0; k < ref_.outputs.size(); ++k) {
      const auto& want = ref_.outputs[k];
      const auto& got = obs.outputs.at(k);
      if (want.size() != got.size())
        mismatch(obs, stage,
                 "call " + std::to_string(k + 1) + ": " + std::to_string(got.size()) +
                     " outputs, expected " + std::to_string(want.size()));
      for (size_t i = 0; i < want.size(); ++i)
        if (!same_tensor(want[i], got[i], exact))
          mismatch(obs, stage,
                   "call " + std::to_string(k + 1) + ", output " + std::to_string(i) +
                       ": expected " + tensor_text(want[i]) + ", got " + tensor_text(got[i]));
    }
    for (const auto& [fqn, want] : ref_.state) {
      const auto& names = aliases_.at(fqn);
      if (std::none_of(names.begin(), names.end(),
                       [&](const auto& n) { return obs.state.count(n); }))
        raise("missing-state", stage, "the eager module's state '" + fqn + "' is missing");
    }
    for (const auto& [fqn, t] : obs.state) {
      auto it = ref_.state.find(fqn);
      if (it == ref_.state.end()) continue;
      if (!same_tensor(it->second, t, exact))
        mismatch(obs, stage,
                 "final state '" + fqn + "' after " + std::to_string(c_.config.calls) +
                     " calls: expected " + tensor_text(it->second) + ", got " + tensor_text(t));
    }
  }

  [[noreturn]] void mismatch(const Observed& obs, const std::string& stage,
                             const std::string& what) {
    Failure f{"mismatch", stage, "-", "", "", ""};
    auto idx = ref_origin_index(ref_);
    for (const auto& [origin, op, value] : obs.trace.order) {
      auto it = idx.find(origin);
      if (it == idx.end()) continue;
      const Tensor& want = std::get<2>(ref_.trace.order[it->second]);
      if (!same_tensor(want, value, c_.config.nan_exact)) {
        f.first_divergence = origin;
        f.op = op;
        size_t slash = origin.rfind('/');
        f.module = slash == std::string::npos ? "" : strip_variants(origin.substr(0, slash));
        f.message += "; first diverging node: " + origin + " (" + op + "): expected " +
                     tensor_text(want) + ", got " + tensor_text(value);
        break;
      }
    }
    if (f.first_divergence.empty())
      f.message += "; every traced node matches: the outputs are wired wrong";
    f.message = what + (f.message.empty() ? "" : f.message);
    throw PathFailure{f};
  }

  template <class F>
  auto stage(const std::string& name, F&& body) -> decltype(body()) {
    if (o_.on_stage) o_.on_stage(name.c_str());
    try {
      return body();
    } catch (const PathFailure&) {
      throw;
    } catch (const std::exception& e) {
      std::string msg = e.what();
      std::string property = msg.rfind("lint:", 0) == 0 ? "lint" : error_property(e);
      raise(property, name, msg);
    } catch (...) {
      raise("exception", name, "a non-standard exception");
    }
  }

  // Builds, checks, runs and compares every path of the pipeline table, in table order.
  void run_paths() {
    Pipeline pipeline(c_.module, c_.config, o_.stages);
    std::vector<std::pair<const Artifact*, Digest>> prints;
    // Fingerprints: structural digests of the objects in memory (core/ir/fingerprint.h).
    Digest eager_print = stage("eager", [&] { return fingerprint_module(*c_.module); });
    for (Stage s : path_stages()) {
      std::string name(stage_name(s));
      const Artifact& a = stage(name, [&]() -> const Artifact& { return pipeline.build(s); });
      if (a.saved != a.resaved) roundtrip_failure(a, name);
      check_spelling(a, name);
      after_build(pipeline, a);
      std::shared_ptr<Module> fresh;  // the unflattened module before its runs, for swaps
      if (a.program) {
        Program p = copy_for_run(*a.program);  // a run that writes to the tree is mutated-input
        check_program(p, name);
      } else {
        if (s == Stage::kUnflattened && o_.swap) fresh = clone_module(*a.module, false);
        check_module(*a.module, name);
      }
      check_rules(pipeline, a);
      if (fresh) check_swap(*fresh, a);
      // Programs are run on copies of their state (sharing the module tree), so their
      // fingerprint changes if a later pass writes to its input, or a run to the tree. A module
      // stage is run in place and is nobody's input.
      if (a.program)
        prints.emplace_back(&a, stage(name, [&] { return fingerprint_program(*a.program); }));
    }
    // No pass may modify its input: every program, and the eager module, as built.
    if (stage("eager", [&] { return fingerprint_module(*c_.module); }) != eager_print)
      raise("mutated-input", "eager", "the eager module changed while the passes ran");
    for (const auto& [art, print] : prints) {
      std::string name(stage_name(art->stage));
      const Program& p = *art->program;
      if (stage(name, [&p] { return fingerprint_program(p); }) != print)
        raise(
            "mutated-input", name,
            "the " + name + " program changed after it was built: a later pass wrote to its input");
    }
    // Last, so that a fault a path shows is reported by that path: the case document itself,
    // in the cases --spelling-every picks (by the eager fingerprint: no text to digest yet).
    if (o_.spelling_every <= 0 || eager_print.lo % static_cast<uint64_t>(o_.spelling_every)) return;
    ++cov_.case_roundtrips;
    if (auto b = stage("eager", [&] { return case_roundtrip_breach(c_); }))
      raise("roundtrip", "eager", *b);
  }

  // Each pass's rules (harness/pass_rules.h), after its results matched: a pass that did not do
  // its job (an identity partition or flatten) computes the right numbers.
  void check_rules(Pipeline& pipeline, const Artifact& a) {
    std::optional<RuleBreach> b;
    if (a.stage == Stage::kPartitioned)
      b = partition_breach(*pipeline.build(Stage::kExported).program, *a.program,
                           c_.config.fallback_ops, c_.config.min_block_size);
    else if (a.stage == Stage::kFlattened)
      b = flatten_breach(*pipeline.build(Stage::kPartitioned).program, *a.program);
    if (b) raise("rule", std::string(stage_name(a.stage)), b->message, b->op);
    // The runs themselves, against the reference partitioner (harness/reference_partition.h).
    if (a.stage == Stage::kPartitioned)
      b = partition_spec_breach(*pipeline.build(Stage::kExported).program, *a.program,
                                c_.config.fallback_ops, c_.config.min_block_size);
    if (b) raise("partition-spec", std::string(stage_name(a.stage)), b->message, b->op);
  }

  // The structural properties and coverage of particular stages; a new path needs nothing here.
  void after_build(Pipeline& pipeline, const Artifact& a) {
    switch (a.stage) {
      case Stage::kExported:
        for (Node* n = a.program->root->graph.first(); n; n = n->next)
          cov_.flat_nodes += n->op == NodeOp::kCallFunction;
        for (const auto& s : a.program->sig.outputs)
          cov_.buffer_mutations += s.kind == OutputSpec::kBufferMutation;
        break;
      case Stage::kPartitioned:
        for (const auto& [k, _] : a.program->root->children)
          (k.rfind("_run_on_acc_", 0) == 0 ? cov_.acc_partitions : cov_.fallback_partitions)++;
        add_reach(partition_reach(*a.program));
        break;
      case Stage::kFlattened:
        for (Node* n = a.program->root->graph.first(); n; n = n->next) {
          size_t us = n->name.rfind('_');
          if (us != std::string::npos && us + 1 < n->name.size() &&
              n->name.find_first_not_of("0123456789", us + 1) == std::string::npos)
            ++cov_.renamed_nodes;
        }
        check_names(*pipeline.build(Stage::kPartitioned).program, *a.program);
        break;
      case Stage::kUnflattened:
        check_structure(*a.module);
        add_reach(unflatten_reach(*a.module));
        break;
      default:
        break;
    }
  }

  // The saved document in the canonical layout, and re-spelled another valid way it loads to
  // the same program (harness/spelling.h).
  void check_spelling(const Artifact& a, const std::string& name) {
    if (a.saved.empty() || o_.spelling_every <= 0) return;
    uint64_t pick = digest_bytes(a.saved).lo;
    if (pick % static_cast<uint64_t>(o_.spelling_every) != 0) return;
    if (auto b = canonical_layout_breach(a.saved))
      raise("spelling", name,
            "the saved document breaks the canonical layout (docs/format.md): " + *b);
    Respelled r = respell(a.saved, pick);
    std::string again;
    try {
      again = save_program(load_program(r.text, hard_load_limits()));
    } catch (const InputError& e) {
      raise("spelling", name,
            "the saved document re-spelled (" + r.how + ") is rejected: " + e.what());
    }
    const std::string& canonical = a.resaved;
    if (again != canonical)
      raise("spelling", name,
            "the saved document re-spelled (" + r.how +
                ") loads to another program: its save differs at line " +
                std::to_string(first_differing_line(canonical, again)));
  }

  // unflatten's variant API against the same edit of the eager module (harness/swap_check.h).
  void check_swap(const Module& unflattened, const Artifact& a) {
    SwapResult r;
    try {
      std::optional<uint64_t> pick;
      if (!o_.swap_all) pick = digest_bytes(a.saved).lo;
      r = check_swaps(c_, unflattened, b_, pick);
    } catch (const std::exception& e) {
      raise("swap", "unflattened", std::string("the variant API fails: ") + e.what());
    }
    if (r.module_variants > 0) add_reach(reach_bit(Reach::kSwapModule));
    if (r.attr_variants > 0) add_reach(reach_bit(Reach::kSwapAttr));
    if (r.module_variants > 1 || r.attr_variants > 1) add_reach(reach_bit(Reach::kSwapVariants));
    if (r.breach) raise("swap", "unflattened", r.breach->what + ": " + r.breach->message);
  }

  [[noreturn]] static void roundtrip_failure(const Artifact& a, const std::string& stage_name) {
    raise("roundtrip", stage_name,
          "save(load(s)) differs from s at line " +
              std::to_string(first_differing_line(a.saved, a.resaved)));
  }

  // Every eager call that leaves a live node is one call in the unflattened module: calls are
  // neither merged nor dropped (PyTorch #132993). The count comes from the eager tree alone.
  void check_call_counts(const std::map<std::string, int>& raw) {
    std::map<std::string, int> got;
    for (const auto& [fqn, n] : raw) got[strip_variants(fqn)] += n;
    std::map<std::string, int> want = expected_live_calls(*c_.module);
    for (const auto& [fqn, n] : got)
      if (!want.count(fqn)) want[fqn] = 0;
    for (const auto& [fqn, n] : want)
      if (got[fqn] != n)
        raise("structure", "unflattened",
              "'" + fqn + "' is called " + std::to_string(got[fqn]) + " times; the eager run has " +
                  std::to_string(n) + " live calls");
  }

  // Erased names stay reserved: a name the partitioned parent graph had must, after flatten,
  // still mean the same value or be gone.
  void check_names(const Program& before, const Program& after) {
    std::unordered_map<std::string, const Node*> old;
    for (Node* n = before.root->graph.first(); n; n = n->next) old[n->name] = n;
    for (Node* n = after.root->graph.first(); n; n = n->next) {
      auto it = old.find(n->name);
      if (it == old.end()) continue;
      const Node* o = it->second;
      bool same = o->op == n->op && o->target == n->target && o->meta.origin == n->meta.origin;
      bool rewired_getitem = o->op == NodeOp::kCallFunction && o->fn == OpCode::kGetitem &&
                             n->op == NodeOp::kCallFunction && n->fn == OpCode::kGetitem;
      if (!same && !rewired_getitem)
        raise("naming", "flattened",
              "name '" + n->name + "' was " + std::string(node_op_name(o->op)) + "[" + o->target +
                  "] and now names " + std::string(node_op_name(n->op)) + "[" + n->target +
                  "]: an erased name was handed out again",
              n->op == NodeOp::kCallFunction ? n->target : "-");
    }
  }

  // The unflattened tree against the eager one (harness/structure_check.h).
  void check_structure(const Module& root) {
    int specialized = 0;
    if (auto b = unflatten_structure_breach(*c_.module, root, ref_.calls_per_fqn, &specialized))
      raise(b->property, "unflattened", b->message);
    cov_.specialized_fqns += specialized;
  }

  const Case& c_;
  const OracleOptions& o_;
  Backend& b_;  // every path runs here
  Observed ref_;
  std::optional<Failure> reference_failure_;  // the eager run's first op the reference refutes
  uint64_t reference_reported_ = 0;           // ops with a reference the eager runs reported to it
  std::map<std::string, std::vector<std::string>> aliases_;  // FQN -> FQNs of its tensor
  Coverage cov_;
};

}  // namespace

OracleResult check_case(const Case& c, const OracleOptions& opts) {
  OracleResult r = Oracle(c, opts).run();
  // A message can quote the exception of a user's pass, any bytes; it is printed and written
  // into JSON (a worker's result, SARIF) and into the finding's note, which all need UTF-8.
  if (r.failure) r.failure->message = printable_text(r.failure->message, /*keep_layout=*/true);
  return r;
}

void add_coverage(Coverage& a, const Coverage& b) {
  for (const auto& [k, v] : b.ops) a.ops[k] += v;
  a.nodes += b.nodes;
  a.calls += b.calls;
  a.flat_nodes += b.flat_nodes;
  a.acc_partitions += b.acc_partitions;
  a.fallback_partitions += b.fallback_partitions;
  a.renamed_nodes += b.renamed_nodes;
  a.specialized_fqns += b.specialized_fqns;
  a.buffer_mutations += b.buffer_mutations;
  for (size_t i = 0; i < a.reach.size(); ++i) a.reach[i] += b.reach[i];
  a.paths += b.paths;
  a.case_roundtrips += b.case_roundtrips;
}

}  // namespace flatcheck
