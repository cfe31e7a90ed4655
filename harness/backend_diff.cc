// The differential check runs the program through a wrapping backend: every launch goes to the
// reference backend, then (with the reference's inputs, copied to the host) through run_op on
// the other backend, and the outputs are compared. The interpreter's observer, which reports
// each node right after its kernels ran, names the node of the first mismatch.
#include "harness/backend_diff.h"

#include <cmath>
#include <cstring>

#include "core/base/check.h"
#include "core/passes/passes.h"
#include "core/runtime/interpreter.h"

namespace flatcheck {

int64_t ulp_distance(float a, float b) {
  if (std::isnan(a) && std::isnan(b)) return 0;
  if (std::isnan(a) || std::isnan(b)) return INT64_MAX;
  auto key = [](float f) {
    int64_t i = static_cast<int32_t>(float_bits(f));
    return i < 0 ? -(i & 0x7fffffff) : i;
  };
  int64_t d = key(a) - key(b);
  return d < 0 ? -d : d;
}

bool within_bound(float want, float got, int bound) {
  if (std::isnan(want) || std::isnan(got)) return std::isnan(want) && std::isnan(got);
  if (float_bits(want) == float_bits(got)) return true;
  if (want == 0.0f && got == 0.0f) return false;  // +0.0 vs -0.0: the sign of zero is kept
  return ulp_distance(want, got) <= bound;
}

namespace {

class DiffBackend final : public Backend {
 public:
  DiffBackend(Backend& ref, Backend& other, const std::function<int(OpCode)>& bound,
              BackendDiffResult& r)
      : ref_(ref), other_(other), bound_(bound), r_(r) {}

  std::string_view name() const override { return ref_.name(); }
  bool host_visible() const override { return ref_.host_visible(); }
  bool supports(OpCode op) const override { return ref_.supports(op); }
  DeviceBuffer allocate(size_t bytes) override { return ref_.allocate(bytes); }
  void release(DeviceBuffer buf) override { ref_.release(buf); }
  void copy_in(DeviceBuffer dst, size_t off, const float* src, size_t n) override {
    ref_.copy_in(dst, off, src, n);
  }
  void copy_out(float* dst, DeviceBuffer src, size_t off, size_t n) override {
    ref_.copy_out(dst, src, off, n);
  }
  void copy_out_async(float* dst, DeviceBuffer src, size_t off, size_t n) override {
    ref_.copy_out_async(dst, src, off, n);
  }
  void synchronize() override { ref_.synchronize(); }

  void run_kernel(OpCode op, const std::vector<TensorView>& in, const std::vector<Scalar>& sc,
                  const std::vector<TensorView>& out) override {
    ref_.run_kernel(op, in, sc, out);
    if (r_.mismatch) return;
    std::string name(op_info(op).name);
    if (!other_.supports(op)) {
      r_.skipped_ops.insert(name);
      return;
    }
    ref_.synchronize();
    std::vector<Tensor> ins, want;
    for (const auto& v : in) ins.push_back(fetch(v));
    for (const auto& v : out) want.push_back(fetch(v));
    std::vector<const Tensor*> ptrs;
    for (const auto& t : ins) ptrs.push_back(&t);
    std::vector<Tensor> got = run_op(other_, op, ptrs, sc);
    ++r_.kernels;
    ++r_.per_op[name];
    int64_t& worst = r_.max_ulps[name];
    int bound = bound_(op);
    FLATCHECK_CHECK(got.size() == want.size()) << name << ": output counts differ";
    for (size_t k = 0; k < want.size(); ++k) {
      FLATCHECK_CHECK(got[k].shape == want[k].shape) << name << ": output shapes differ";
      for (size_t e = 0; e < want[k].data.size(); ++e) {
        float w = want[k].data[e], g = got[k].data[e];
        int64_t d = ulp_distance(w, g);
        if (d != INT64_MAX) worst = std::max(worst, d);
        if (!r_.mismatch && !within_bound(w, g, bound)) {
          r_.mismatch = KernelMismatch{program_, "", name, k, e, w, g, d, bound};
          awaiting_origin_ = true;
        }
      }
    }
  }

  // The interpreter reports a node after its kernels ran: the first report after a mismatch
  // names the node that launched it.
  void label(const std::string& origin) {
    if (!awaiting_origin_) return;
    r_.mismatch->origin = origin;
    awaiting_origin_ = false;
  }
  void set_program(const char* p) { program_ = p; }

 private:
  Tensor fetch(const TensorView& v) {
    Tensor t = Tensor::zeros(v.shape);
    size_t n = t.data.size();
    if (n == 0) return t;
    if (ref_.host_visible())
      std::memcpy(t.data.data(), v.data, n * sizeof(float));
    else
      ref_.copy_out(t.data.data(), DeviceBuffer{v.data, n * sizeof(float)}, 0, n);
    return t;
  }

  Backend& ref_;
  Backend& other_;
  const std::function<int(OpCode)>& bound_;
  BackendDiffResult& r_;
  std::string program_ = "eager";
  bool awaiting_origin_ = false;
};

}  // namespace

BackendDiffResult diff_backends(const Case& c, Backend& reference, Backend& other,
                                const std::function<int(OpCode)>& bound) {
  BackendDiffResult r;
  r.reference = std::string(reference.name());
  r.other = std::string(other.name());
  DiffBackend diff(reference, other, bound, r);
  RunContext ctx;
  ctx.backend = &diff;
  ctx.observer = [&diff](const std::string& origin, std::string_view, const Value&) {
    diff.label(origin);
  };
  const char* where = "eager";
  try {
    auto m = clone_module(*c.module, /*share_state=*/false);
    for (int k = 0; k < c.config.calls && !r.mismatch; ++k) {
      std::vector<Value> in;
      for (const auto& t : c.inputs) in.push_back(Value::of(t));
      run_module(*m, in, ctx);
    }
    where = "flattened";
    diff.set_program("flattened");
    Pipeline pipeline(c.module, c.config);
    Program p = clone_program(*pipeline.build(Stage::kFlattened).program);
    for (int k = 0; k < c.config.calls && !r.mismatch; ++k) {
      RunContext pctx;
      pctx.backend = &diff;
      pctx.observer = ctx.observer;
      run_program(p, c.inputs, pctx);
    }
  } catch (const InputError& e) {
    r.error = std::string(where) + ": " + e.what();
  }
  return r;
}

}  // namespace flatcheck
