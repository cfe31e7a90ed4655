// OracleOptions by effect: the device and backend every path runs on, localize.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>

#include "core/base/check.h"
#include "core/base/faults.h"
#include "core/runtime/cuda/cuda_backend.h"
#include "core/serialize/serialize.h"
#include "generators/examples.h"
#include "generators/generate.h"
#include "harness/campaign.h"
#include "harness/oracle.h"
#include "tests/harness/cli_run.h"
#include "tests/support/recording_backend.h"

namespace flatcheck {
namespace {

// The quick-start case: engines and fallbacks, a child called twice with different static
// arguments (two unflattened variants) and a buffer update, so every path launches kernels.
Case quickstart_case() {
  return load_case_file(std::string(FLATCHECK_SOURCE_DIR) +
                        "/corpus/regression/seed-quickstart.json");
}

TEST(OracleBackendTest, EveryPathLaunchesItsKernelsOnTheBackendItWasGiven) {
  RecordingBackend rec;
  OracleOptions o;
  o.backend = &rec;
  o.on_stage = [&rec](const char* s) { rec.set_stage(s); };
  OracleResult r = check_case(quickstart_case(), o);
  ASSERT_FALSE(r.failure) << r.failure->message;
  EXPECT_EQ(r.backend, "recording");
  EXPECT_EQ(r.coverage.paths, static_cast<int>(path_stages().size()));
  for (Stage s : all_stages())
    EXPECT_GT(rec.launches(std::string(stage_name(s))), 0)
        << "stage " << stage_name(s) << " ran no kernel on the backend";
}

TEST(OracleBackendTest, TheDeviceOptionSelectsTheBackend) {
  OracleResult cpu = check_case(quickstart_case(), OracleOptions{});
  EXPECT_EQ(cpu.backend, "cpu");
  OracleOptions o;
  o.device = Device::kCuda;
  std::string why;
  if (cuda_available(&why)) {
    OracleResult r = check_case(quickstart_case(), o);
    EXPECT_EQ(r.backend, "cuda");
    EXPECT_FALSE(r.failure);
  } else {
    // Without a device the option must not fall back to the CPU silently.
    try {
      check_case(quickstart_case(), o);
      ADD_FAILURE() << "--device cuda ran without a CUDA device";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("cuda"), std::string::npos) << e.what();
    }
  }
}

TEST(OracleBackendTest, LocalizeFindsTheFirstDivergingNodeOnlyWhenOn) {
  Case c;
  c.module = unflatten_example(false);
  c.inputs = {Tensor::full({1}, 1.0f)};
  ScopedFault first_call(Fault::kUnflattenFirstCallGraph);
  OracleOptions on, off;
  off.localize = false;
  OracleResult a = check_case(c, on), b = check_case(c, off);
  ASSERT_TRUE(a.failure && b.failure);
  EXPECT_EQ(a.failure->first_divergence, "n_1");
  EXPECT_EQ(b.failure->first_divergence, "");
}

// A backend that throws from its kernels in one stage only (the eager reference runs fine).
class ThrowingBackend final : public CpuForwardingBackend {
 public:
  ThrowingBackend(std::string stage, bool standard)
      : stage_(std::move(stage)), standard_(standard) {}
  std::string_view name() const override { return "throwing"; }
  void run_kernel(OpCode op, const std::vector<TensorView>& in, const std::vector<Scalar>& sc,
                  const std::vector<TensorView>& out) override {
    if (now_ == stage_) {
      if (standard_) throw std::out_of_range("vector::_M_range_check");
      throw 7;  // not a std::exception at all
    }
    CpuForwardingBackend::run_kernel(op, in, sc, out);
  }
  void set_stage(const char* s) { now_ = s; }

 private:
  std::string stage_, now_;
  bool standard_;
};

TEST(OracleBackendTest, AnyExceptionFromTheSystemUnderTestIsAFindingWithItsStage) {
  for (bool standard : {true, false}) {
    ThrowingBackend b("reloaded", standard);
    OracleOptions o;
    o.backend = &b;
    o.on_stage = [&b](const char* s) { b.set_stage(s); };
    OracleResult r = check_case(quickstart_case(), o);
    ASSERT_TRUE(r.failure) << "an exception from a kernel went unreported";
    EXPECT_EQ(r.failure->property, "exception");
    EXPECT_EQ(r.failure->stage, "reloaded");
    if (standard) EXPECT_NE(r.failure->message.find("_M_range_check"), std::string::npos);
  }
}

// A backend whose kernels return the canonical NaN 0x7fffffff for every NaN, as NVIDIA GPUs do
// (docs/cuda.md), and that says so or not through keeps_nan_payloads().
class CanonicalNanBackend final : public CpuForwardingBackend {
 public:
  explicit CanonicalNanBackend(bool claims_payloads) : claims_(claims_payloads) {}
  std::string_view name() const override { return "canonical-nan"; }
  bool keeps_nan_payloads() const override { return claims_; }
  void run_kernel(OpCode op, const std::vector<TensorView>& in, const std::vector<Scalar>& sc,
                  const std::vector<TensorView>& out) override {
    CpuForwardingBackend::run_kernel(op, in, sc, out);
    const uint32_t canonical = 0x7fffffffu;
    for (const TensorView& t : out)
      for (int64_t i = 0; i < numel(t.shape); ++i)
        if (std::isnan(t.data[i])) std::memcpy(&t.data[i], &canonical, 4);
  }

 private:
  bool claims_;
};

// The reference kernels' NaN payload rules are torch's CPU kernels'; a backend that returns
// canonical NaNs says so (keeps_nan_payloads false), and then its NaNs are checked as NaNs, not
// by payload. Generated cases that compare payloads (nan_exact) and make NaNs: each is a
// reference finding ("another NaN payload") when the backend claims to keep payloads, and
// passes every property when it does not (its paths still agree bit for bit with one another).
TEST(OracleBackendTest, ABackendWithCanonicalNansIsCheckedAgainstTheReferenceByNanNess) {
  int payload_cases = 0;
  for (uint64_t seed = 1; seed <= 400 && payload_cases < 4; ++seed) {
    Case c = generate_case_for_seed(seed);
    if (!c.config.nan_exact) continue;
    CanonicalNanBackend claims(true), honest(false);
    OracleOptions o;
    o.backend = &claims;
    OracleResult r = check_case(c, o);
    if (!r.failure || r.failure->message.find("another NaN payload") == std::string::npos) continue;
    ++payload_cases;
    EXPECT_EQ(r.failure->property, "reference") << r.failure->message;
    o.backend = &honest;
    OracleResult h = check_case(c, o);
    EXPECT_FALSE(h.failure) << "seed " << seed << ": " << h.failure->message;
    EXPECT_EQ(h.backend, "canonical-nan");
  }
  EXPECT_EQ(payload_cases, 4) << "too few generated cases with NaN payloads to check";
}

}  // namespace
}  // namespace flatcheck
