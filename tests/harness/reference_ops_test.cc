// Reference kernels (harness/reference_ops.h): the CPU kernels agree with them on generated
// cases, and a kernel perturbed in a test backend (one ulp, or two elements swapped) is caught
// by the oracle although every path, the eager reference included, runs the perturbed kernel.
#include "harness/reference_ops.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <set>

#include "core/base/check.h"
#include "generators/generate.h"
#include "generators/source.h"
#include "harness/oracle.h"
#include "tests/support/cpu_forwarding_backend.h"

namespace flatcheck {
namespace {

// Forwards to the CPU backend; perturbs the outputs of one op: `ulps` added to the first finite
// element (its bits moved along the float line), or the first two elements that differ swapped.
class PerturbingBackend : public CpuForwardingBackend {
 public:
  PerturbingBackend(OpCode op, int ulps, bool swap) : op_(op), ulps_(ulps), swap_(swap) {}
  std::string_view name() const override { return "cpu-perturbed"; }
  void run_kernel(OpCode op, const std::vector<TensorView>& in, const std::vector<Scalar>& sc,
                  const std::vector<TensorView>& out) override {
    CpuForwardingBackend::run_kernel(op, in, sc, out);
    if (op != op_ || out.empty()) return;
    float* d = out[0].data;
    int64_t n = numel(out[0].shape);
    if (swap_) {
      for (int64_t i = 1; i < n; ++i)
        if (float_bits(d[i]) != float_bits(d[0])) {
          std::swap(d[0], d[i]);
          changed_ = true;
          return;
        }
      return;
    }
    for (int64_t i = 0; i < n; ++i)
      if (std::isfinite(d[i])) {
        d[i] = bits_float(float_bits(d[i]) + static_cast<uint32_t>(d[i] < 0 ? -ulps_ : ulps_));
        changed_ = true;
        return;
      }
  }
  bool changed() const { return changed_; }

 private:
  OpCode op_;
  int ulps_;
  bool swap_;
  bool changed_ = false;
};

// The ops the reference covers, and a generated case for each that uses it.
std::map<OpCode, Case> one_case_per_op() {
  std::map<OpCode, Case> out;
  for (uint64_t seed = 0; seed < 3000 && out.size() < 24; ++seed) {
    Case c = generate_case_for_seed(mix_seed(404, seed));
    for_each_module(*c.module, [&](const std::string&, Module& m) {
      for (Node* n = m.graph.first(); n; n = n->next)
        if (n->op == NodeOp::kCallFunction && has_reference(n->fn) && !out.count(n->fn))
          out.emplace(n->fn, c);
    });
  }
  return out;
}

TEST(ReferenceOpsTest, TheCpuKernelsAgreeWithTheReferenceOnGeneratedCases) {
  int checked = 0;
  for (uint64_t seed = 0; seed < 300; ++seed) {
    OracleResult r = check_case(generate_case_for_seed(mix_seed(405, seed)));
    EXPECT_FALSE(r.failure && r.failure->property == "reference")
        << "seed " << seed << ": " << r.failure->message;
    ++checked;
  }
  EXPECT_EQ(checked, 300);
}

// Every op with a kernel: one ulp moved is caught for exact ops; two elements swapped for every
// op (exp, tanh, sigmoid are allowed a few ulps; sum and matmul a summation bound); and a
// perturbation past the ulp bound of the transcendental ones.
TEST(ReferenceOpsTest, APerturbedKernelIsCaughtThoughEveryPathSharesIt) {
  std::map<OpCode, Case> cases = one_case_per_op();
  int covered = 0;
  for (int i = 0; i < kNumOps; ++i) {
    OpCode op = static_cast<OpCode>(i);
    if (!has_reference(op)) continue;
    ASSERT_TRUE(cases.count(op)) << op_info(op).name << ": no generated case uses it";
    ++covered;
    bool exact = op != OpCode::kExp && op != OpCode::kTanh && op != OpCode::kSigmoid &&
                 op != OpCode::kSum && op != OpCode::kMatmul;
    struct Try {
      int ulps;
      bool swap;
    };
    std::vector<Try> tries = {{0, true}};
    if (exact) tries.push_back({1, false});
    if (op == OpCode::kExp || op == OpCode::kTanh || op == OpCode::kSigmoid)
      tries.push_back({4, false});
    for (const Try& t : tries) {
      PerturbingBackend b(op, t.ulps, t.swap);
      OracleOptions o;
      o.backend = &b;
      OracleResult r = check_case(cases.at(op), o);
      if (!b.changed()) continue;  // nothing to see (every element equal, none finite)
      ASSERT_TRUE(r.failure) << op_info(op).name << (t.swap ? " swapped" : " +ulps")
                             << ": the perturbation went unnoticed";
      EXPECT_EQ(r.failure->property, "reference") << r.failure->signature();
      EXPECT_EQ(r.failure->op, op_info(op).name) << r.failure->signature();
    }
  }
  EXPECT_EQ(covered, 24);  // every op with a kernel but copy_
}

// A backend whose relu kernel throws: the case is valid (the loader accepts it), so the eager
// run's failure is the runtime's (property runtime), never error, which reads as a bad case.
class ThrowingBackend : public CpuForwardingBackend {
 public:
  std::string_view name() const override { return "cpu-throwing"; }
  void run_kernel(OpCode op, const std::vector<TensorView>& in, const std::vector<Scalar>& sc,
                  const std::vector<TensorView>& out) override {
    if (op == OpCode::kRelu) throw InputError("relu: this backend refuses it");
    CpuForwardingBackend::run_kernel(op, in, sc, out);
  }
};

TEST(ReferenceOpsTest, AValidCaseTheEagerRunCannotRunIsARuntimeFinding) {
  Case c = one_case_per_op().at(OpCode::kRelu);
  ThrowingBackend b;
  OracleOptions o;
  o.backend = &b;
  OracleResult r = check_case(c, o);
  ASSERT_TRUE(r.failure);
  EXPECT_EQ(r.failure->signature(), "runtime:eager:-") << r.failure->message;
  EXPECT_NE(r.failure->message.find("this backend refuses it"), std::string::npos);
}

// The value rules, each against a hand-computed expectation.
TEST(ReferenceOpsTest, NanPayloadsAndSignsOfZeroFollowTorchsScalarPath) {
  auto check = [](OpCode op, std::vector<float> a, std::vector<float> b, std::vector<float> got) {
    Tensor ta({static_cast<int64_t>(a.size())}, a), tb({static_cast<int64_t>(b.size())}, b);
    Tensor out({static_cast<int64_t>(got.size())}, got);
    return check_against_reference(op, {&ta, &tb}, {}, {out}, /*nan_exact=*/true);
  };
  float n1 = bits_float(0x7fc00001), n2 = bits_float(0x7fc00002), canon = bits_float(0x7fc00000);
  EXPECT_EQ(check(OpCode::kAdd, {n1}, {n2}, {n2}), "");  // the second payload
  EXPECT_NE(check(OpCode::kAdd, {n1}, {n2}, {n1}), "");
  EXPECT_EQ(check(OpCode::kDiv, {n1}, {n2}, {n1}), "");  // the first payload
  EXPECT_EQ(check(OpCode::kMaximum, {n1}, {1.0f}, {canon}), "");
  EXPECT_EQ(check(OpCode::kMaximum, {0.0f}, {-0.0f}, {0.0f}), "");  // the first on a tie
  EXPECT_NE(check(OpCode::kMaximum, {0.0f}, {-0.0f}, {-0.0f}), "");
  EXPECT_EQ(check(OpCode::kMinimum, {-0.0f}, {0.0f}, {-0.0f}), "");
  Tensor neg0({1}, {-0.0f}), zero({1}, {0.0f});
  EXPECT_EQ(check_against_reference(OpCode::kRelu, {&neg0}, {}, {neg0}, true), "");  // -0 stays
  EXPECT_NE(check_against_reference(OpCode::kRelu, {&neg0}, {}, {zero}, true), "");
}

// The count of ops the eager run must report for checking, read from the module tree: each
// call of a child counts the child's ops, a shared child once per call; ops without a
// reference (getitem, branch, copy_) and nodes that are not ops count nothing.
TEST(ReferenceOpsTest, OpsPerCallCountEachCallOfEachChild) {
  auto c = std::make_shared<Module>();
  {
    Graph& g = c->graph;
    Node* x = g.placeholder("x", ValueType::tensor({2}));
    Node* r = g.call_function(OpCode::kRelu, {x});
    g.output({g.call_function(OpCode::kNeg, {r})});  // 2 ops
  }
  auto d = std::make_shared<Module>();
  d->children["c"] = c;
  {
    Graph& g = d->graph;
    Node* x = g.placeholder("x", ValueType::tensor({2}));
    Node* m = g.call_function(OpCode::kMul, {x, x});
    g.output({g.call_module("c", {m})});  // 1 + 2 ops
  }
  Module root;
  root.children["c"] = c;
  root.children["d"] = d;
  Graph& g = root.graph;
  Node* x = g.placeholder("x", ValueType::tensor({2}));
  Node* flag = g.placeholder("flag", ValueType::scalar(ValueType::kBool));
  Node* a = g.call_function(OpCode::kAdd, {x, x});                // 1
  Node* c1 = g.call_module("c", {a});                             // 2
  Node* c2 = g.call_module("c", {c1});                            // 2
  Node* d1 = g.call_module("d", {c2});                            // 3
  Node* pick = g.call_function(OpCode::kBranch, {flag, d1, c2});  // none
  g.output({pick});
  EXPECT_EQ(reference_ops_per_call(*c), 2u);
  EXPECT_EQ(reference_ops_per_call(*d), 3u);
  EXPECT_EQ(reference_ops_per_call(root), 8u);
  EXPECT_EQ(reference_ops_per_call(Module{}), 0u);
}

}  // namespace
}  // namespace flatcheck
