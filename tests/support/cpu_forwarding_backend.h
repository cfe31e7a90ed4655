// A test backend that forwards everything to the CPU backend; tests override what they watch
// or change (run_kernel, capture calls).
#pragma once

#include <vector>

#include "core/runtime/backend.h"

namespace flatcheck {

class CpuForwardingBackend : public Backend {
 public:
  bool host_visible() const override { return true; }
  DeviceBuffer allocate(size_t bytes) override { return cpu_backend().allocate(bytes); }
  void release(DeviceBuffer buf) override { cpu_backend().release(buf); }
  void copy_in(DeviceBuffer dst, size_t off, const float* src, size_t n) override {
    cpu_backend().copy_in(dst, off, src, n);
  }
  void copy_out(float* dst, DeviceBuffer src, size_t off, size_t n) override {
    cpu_backend().copy_out(dst, src, off, n);
  }
  void synchronize() override {}
  void run_kernel(OpCode op, const std::vector<TensorView>& in, const std::vector<Scalar>& sc,
                  const std::vector<TensorView>& out) override {
    cpu_backend().run_kernel(op, in, sc, out);
  }
};

}  // namespace flatcheck
