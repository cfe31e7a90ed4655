// The backend interface (DESIGN §3 "Runtime"): allocate, copy in and out, run a kernel,
// synchronize. Each backend fills it in once (CPU always; CUDA in flatcheck::core_cuda).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "core/base/tensor.h"
#include "core/ops/ops.h"

namespace flatcheck {

// Device memory owned by a backend. `ptr` is a device address (host memory on the CPU).
struct DeviceBuffer {
  void* ptr = nullptr;
  size_t bytes = 0;
};

// A tensor in backend memory: shape plus a pointer to its first float.
struct TensorView {
  float* data = nullptr;
  Shape shape;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string_view name() const = 0;
  // True when device memory is host memory, so kernels can run on host tensors directly.
  virtual bool host_visible() const = 0;

  virtual DeviceBuffer allocate(size_t bytes) = 0;
  virtual void release(DeviceBuffer buf) = 0;
  virtual void copy_in(DeviceBuffer dst, size_t offset_floats, const float* src, size_t n) = 0;
  virtual void copy_out(float* dst, DeviceBuffer src, size_t offset_floats, size_t n) = 0;
  // Runs op `op` on inputs already in device memory, writing outputs (shapes given) there.
  // Outputs never alias inputs unless the memory plan is wrong.
  virtual void run_kernel(OpCode op, const std::vector<TensorView>& in,
                          const std::vector<Scalar>& scalars,
                          const std::vector<TensorView>& out) = 0;
  virtual void synchronize() = 0;

  // An asynchronous copy out: `dst` holds the data only after the next synchronize(). On the
  // CPU it is immediate.
  virtual void copy_out_async(float* dst, DeviceBuffer src, size_t offset_floats, size_t n) {
    copy_out(dst, src, offset_floats, n);
  }

  // Whether this backend has a kernel for `op` (a differential check skips, loudly, what a
  // backend lacks).
  virtual bool supports(OpCode op) const {
    (void)op;
    return true;
  }

  // Whether NaN payloads follow torch's CPU kernels (docs/torch.md): a NaN operand comes back
  // quieted with its payload, of two the documented one. The reference kernels' payload rules
  // hold only then. NVIDIA GPUs return the canonical NaN 0x7fffffff instead (docs/cuda.md), so
  // the CUDA backend says false and the oracle's reference check compares NaN-ness, not
  // payloads, on it; its paths still compare one another bit for bit, payloads included.
  virtual bool keeps_nan_payloads() const { return true; }

  // Graph capture of an engine's op list (CUDA graphs). `engine_id` (Engine::id, never reused
  // within a process) and `arena` identify one captured launch sequence. replay_ops returns
  // true when a captured graph ran in place of the op list; otherwise run_engine brackets its
  // launches with begin_ops/end_ops, or begin_ops/abort_ops when a launch throws.
  virtual bool replay_ops(uint64_t engine_id, const void* arena) {
    (void)engine_id, (void)arena;
    return false;
  }
  virtual void begin_ops(uint64_t engine_id, const void* arena) { (void)engine_id, (void)arena; }
  virtual void end_ops(uint64_t engine_id, const void* arena) { (void)engine_id, (void)arena; }
  // Ends a capture begun by begin_ops without keeping it: the stream is usable again.
  virtual void abort_ops() {}
};

// RAII device memory.
class DeviceMemory {
 public:
  DeviceMemory(Backend& b, size_t bytes) : b_(b), buf_(b.allocate(bytes)) {}
  ~DeviceMemory() { b_.release(buf_); }
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;
  const DeviceBuffer& buffer() const { return buf_; }
  float* floats() const { return static_cast<float*>(buf_.ptr); }

 private:
  Backend& b_;
  DeviceBuffer buf_;
};

// The CPU backend (always built).
Backend& cpu_backend();

// Runs one op on host tensors through a backend (copying in and out when the backend's
// memory is not host memory). Output shapes come from the op's shape rule.
std::vector<Tensor> run_op(Backend& b, OpCode op, const std::vector<const Tensor*>& in,
                           const std::vector<Scalar>& scalars);

}  // namespace flatcheck
