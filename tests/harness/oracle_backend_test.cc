// OracleOptions by effect: the device and backend every path runs on, localize.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "core/base/check.h"
#include "core/base/faults.h"
#include "core/runtime/cuda/cuda_backend.h"
#include "core/serialize/serialize.h"
#include "generators/examples.h"
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

}  // namespace
}  // namespace flatcheck
