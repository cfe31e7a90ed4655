// flatcheck_ulp: measures each backend's kernels against a correctly rounded reference
// (long double on the host, rounded once to float) and prints a Markdown table of the largest
// error per op, in units in the last place. The CPU-vs-CUDA bounds in cuda_ulp_bound() and
// docs/cuda.md come from this table: bound(op) >= cpu error + cuda error.
//
//   flatcheck_ulp [--stride K]     sample every K-th float bit pattern (default 61) inside the
//                                  op's measured domain, plus 2^21 evenly spaced points of its
//                                  dense range
//
// Backends without a device are reported as not measured, with the reason.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "core/runtime/cuda/cuda_backend.h"
#include "harness/backend_diff.h"

namespace flatcheck {
namespace {

struct Target {
  OpCode op;
  const char* name;
  std::function<long double(long double)> ref;
  float lo, hi;  // the dense range, also the measured domain (sigmoid: where 1/(1+exp(-x))
                 // is normal; below it the formula underflows on every backend)
};

float bits_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

std::vector<float> samples(const Target& t, uint32_t stride) {
  std::vector<float> xs;
  for (uint64_t u = 0; u <= 0xffffffffu; u += stride) {
    float f = bits_float(static_cast<uint32_t>(u));
    if (f >= t.lo && f <= t.hi) xs.push_back(f);
  }
  const int dense = 1 << 21;
  for (int i = 0; i <= dense; ++i)
    xs.push_back(t.lo + (t.hi - t.lo) * static_cast<float>(i) / static_cast<float>(dense));
  return xs;
}

struct Measured {
  int64_t max_ulps = 0;
  float worst_x = 0;
  size_t n = 0;
};

Measured measure(Backend& b, const Target& t, const std::vector<float>& xs) {
  Measured m;
  const size_t chunk = 1 << 20;
  for (size_t at = 0; at < xs.size(); at += chunk) {
    size_t n = std::min(chunk, xs.size() - at);
    Tensor in = Tensor::zeros({static_cast<int64_t>(n)});
    std::memcpy(in.data.data(), xs.data() + at, n * 4);
    std::vector<Tensor> out = run_op(b, t.op, {&in}, {});
    for (size_t i = 0; i < n; ++i) {
      float x = xs[at + i];
      float want = static_cast<float>(t.ref(static_cast<long double>(x)));
      int64_t d = ulp_distance(want, out[0].data[i]);
      if (d > m.max_ulps) {
        m.max_ulps = d;
        m.worst_x = x;
      }
    }
    m.n += n;
  }
  return m;
}

int run(int argc, char** argv) {
  uint32_t stride = 61;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::string(argv[i]) == "--stride") stride = static_cast<uint32_t>(std::atoi(argv[i + 1]));
  if (stride == 0) stride = 61;
  const std::vector<Target> targets = {
      {OpCode::kExp, "exp", [](long double x) { return std::exp(x); }, -104.0f, 89.0f},
      {OpCode::kTanh, "tanh", [](long double x) { return std::tanh(x); }, -10.0f, 10.0f},
      {OpCode::kSigmoid, "sigmoid", [](long double x) { return 1.0L / (1.0L + std::exp(-x)); },
       -87.0f, 20.0f},
      {OpCode::kSqrt, "sqrt", [](long double x) { return std::sqrt(x); }, 0.0f, 1e30f},
  };
  std::string why;
  bool cuda = cuda_available(&why);
  std::printf("stride %u; reference: long double (64-bit mantissa), rounded once to float\n\n",
              stride);
  std::printf(
      "| op | domain | samples | cpu max ulp (at x) | cuda max ulp (at x) | bound used |\n");
  std::printf("|---|---|---|---|---|---|\n");
  for (const auto& t : targets) {
    auto xs = samples(t, stride);
    Measured c = measure(cpu_backend(), t, xs);
    std::string g = "not measured (" + why + ")";
    if (cuda) {
      Measured d = measure(cuda_backend(), t, xs);
      char buf[96];
      std::snprintf(buf, sizeof buf, "%lld (%.9g)", static_cast<long long>(d.max_ulps),
                    static_cast<double>(d.worst_x));
      g = buf;
    }
    std::printf("| %s | [%g, %g] | %zu | %lld (%.9g) | %s | %d |\n", t.name,
                static_cast<double>(t.lo), static_cast<double>(t.hi), c.n,
                static_cast<long long>(c.max_ulps), static_cast<double>(c.worst_x), g.c_str(),
                cuda_ulp_bound(t.op));
  }
  return 0;
}

}  // namespace
}  // namespace flatcheck

int main(int argc, char** argv) {
  return flatcheck::run(argc, argv);
}
