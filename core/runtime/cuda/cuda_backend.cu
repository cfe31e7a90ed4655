// The CUDA backend (ggml's split: one small interface, filled in once). Device memory and
// pinned staging memory are RAII-owned; every runtime call goes through CUDA_CHECK; each
// thread gets its own backend and stream; kernels live in kernels/*.cu, one launcher per op,
// dispatched through a table generated from ops.def.
#include <cuda_runtime.h>

#include <atomic>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "core/base/check.h"
#include "core/base/faults.h"
#include "core/runtime/cuda/cuda_backend.h"
#include "core/runtime/cuda/cuda_check.cuh"
#include "core/runtime/cuda/kernels/launch.cuh"

namespace flatcheck {
namespace {

#define LAUNCHER_true(code) &cuda::launch_##code
#define LAUNCHER_false(code) nullptr
constexpr cuda::Launcher kLaunchers[] = {
#define X(code, name, sig, outs, pure, kernel, weight) LAUNCHER_##kernel(code),
#include "core/ops/ops.def"
#undef X
};
#undef LAUNCHER_true
#undef LAUNCHER_false
static_assert(sizeof(kLaunchers) / sizeof(kLaunchers[0]) == kNumOps,
              "every op in ops.def needs an entry in the CUDA launcher table");

std::atomic<bool> g_use_graphs{false};  // read by every worker thread
thread_local int64_t g_replays = 0;

// Pinned host memory, grown on demand.
class PinnedBuffer {
 public:
  ~PinnedBuffer() {
    if (p_) cudaFreeHost(p_);
  }
  float* reserve(size_t floats) {
    if (floats > cap_) {
      if (p_) CUDA_CHECK(cudaFreeHost(p_));
      cap_ = std::max(floats, cap_ * 2);
      CUDA_CHECK(cudaMallocHost(&p_, cap_ * sizeof(float)));
    }
    return static_cast<float*>(p_);
  }

 private:
  void* p_ = nullptr;
  size_t cap_ = 0;
};

class CudaBackend final : public Backend {
 public:
  CudaBackend() { CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
  ~CudaBackend() override {
    for (auto& [k, exec] : graphs_) cudaGraphExecDestroy(exec);
    cudaStreamDestroy(stream_);
  }

  std::string_view name() const override { return "cuda"; }
  bool host_visible() const override { return false; }

  DeviceBuffer allocate(size_t bytes) override {
    void* p = nullptr;
    if (bytes) CUDA_CHECK(cudaMallocAsync(&p, bytes, stream_));
    return {p, bytes};
  }
  void release(DeviceBuffer buf) override {
    if (buf.ptr) CUDA_CHECK(cudaFreeAsync(buf.ptr, stream_));
  }
  void copy_in(DeviceBuffer dst, size_t off, const float* src, size_t n) override {
    if (!n) return;
    // Through pinned staging, so the host buffer may be reused as soon as this returns.
    float* stage = staging_in_.reserve(n);
    CUDA_CHECK(cudaStreamSynchronize(stream_));
    std::memcpy(stage, src, n * sizeof(float));
    CUDA_CHECK(cudaMemcpyAsync(static_cast<float*>(dst.ptr) + off, stage, n * sizeof(float),
                               cudaMemcpyHostToDevice, stream_));
    CUDA_CHECK(cudaStreamSynchronize(stream_));
  }
  void copy_out(float* dst, DeviceBuffer src, size_t off, size_t n) override {
    if (!n) return;
    float* stage = staging_out_.reserve(n);
    CUDA_CHECK(cudaMemcpyAsync(stage, static_cast<const float*>(src.ptr) + off, n * sizeof(float),
                               cudaMemcpyDeviceToHost, stream_));
    CUDA_CHECK(cudaStreamSynchronize(stream_));
    std::memcpy(dst, stage, n * sizeof(float));
  }
  void copy_out_async(float* dst, DeviceBuffer src, size_t off, size_t n) override {
    if (!n) return;
    size_t at = pending_floats_;
    float* stage = pending_stage(at + n) + at;
    CUDA_CHECK(cudaMemcpyAsync(stage, static_cast<const float*>(src.ptr) + off, n * sizeof(float),
                               cudaMemcpyDeviceToHost, stream_));
    if (fault_on(Fault::kCudaMissingSync)) {
      // Fault: the host reads the staging memory before the copy has landed.
      std::memcpy(dst, stage, n * sizeof(float));
      return;
    }
    pending_.push_back({dst, at, n});
    pending_floats_ = at + n;
  }
  void run_kernel(OpCode op, const std::vector<TensorView>& in, const std::vector<Scalar>& sc,
                  const std::vector<TensorView>& out) override {
    cuda::Launcher l = kLaunchers[static_cast<size_t>(op)];
    FLATCHECK_CHECK(l != nullptr) << "no CUDA kernel for " << op_info(op).name;
    if (numel(out.at(0).shape) == 0) return;
    l(cuda::Launch{in, sc, out, stream_});
    CUDA_CHECK(cudaGetLastError());
  }
  void synchronize() override {
    CUDA_CHECK(cudaStreamSynchronize(stream_));
    for (const auto& p : pending_)
      std::memcpy(p.dst, pending_buf_.reserve(pending_floats_) + p.at, p.n * sizeof(float));
    pending_.clear();
    pending_floats_ = 0;
  }

  bool supports(OpCode op) const override { return kLaunchers[static_cast<size_t>(op)] != nullptr; }
  bool keeps_nan_payloads() const override { return false; }  // every NaN is 0x7fffffff

  bool replay_ops(uint64_t engine_id, const void* arena) override {
    if (!g_use_graphs) return false;
    auto it = graphs_.find({engine_id, arena});
    if (it == graphs_.end()) return false;
    CUDA_CHECK(cudaGraphLaunch(it->second, stream_));
    ++g_replays;
    return true;
  }
  void begin_ops(uint64_t, const void*) override {
    if (!g_use_graphs) return;
    CUDA_CHECK(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
    capturing_ = true;
  }
  void abort_ops() override {
    if (!capturing_) return;
    capturing_ = false;
    cudaGraph_t graph = nullptr;
    cudaStreamEndCapture(stream_, &graph);  // invalidated captures end with an error: ignored
    if (graph) cudaGraphDestroy(graph);
    cudaGetLastError();  // clear the sticky-free error state the failed capture left
  }
  void end_ops(uint64_t engine_id, const void* arena) override {
    if (!g_use_graphs) return;
    capturing_ = false;
    cudaGraph_t graph = nullptr;
    CUDA_CHECK(cudaStreamEndCapture(stream_, &graph));
    cudaGraphExec_t exec = nullptr;
    CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    CUDA_CHECK(cudaGraphDestroy(graph));
    if (graphs_.size() > 256) {  // arenas come and go: keep the cache bounded
      for (auto& [k, e] : graphs_) cudaGraphExecDestroy(e);
      graphs_.clear();
    }
    auto [it, inserted] = graphs_.emplace(std::make_pair(engine_id, arena), exec);
    if (!inserted) {
      CUDA_CHECK(cudaGraphExecDestroy(it->second));
      it->second = exec;
    }
    CUDA_CHECK(cudaGraphLaunch(exec, stream_));
  }

 private:
  struct Pending {
    float* dst;
    size_t at, n;
  };

  float* pending_stage(size_t floats) {
    if (floats > pending_cap_) {
      // Growing would move pending copies: land them first.
      synchronize();
      pending_cap_ = std::max(floats, pending_cap_ * 2);
    }
    return pending_buf_.reserve(pending_cap_);
  }

  cudaStream_t stream_ = nullptr;
  PinnedBuffer staging_in_, staging_out_, pending_buf_;
  std::vector<Pending> pending_;
  size_t pending_floats_ = 0, pending_cap_ = 0;
  // Keyed by the engine's process-unique id (never an address that a freed engine may leave
  // behind) and the arena the captured launches read and write.
  std::map<std::pair<uint64_t, const void*>, cudaGraphExec_t> graphs_;
  bool capturing_ = false;
};

}  // namespace

bool cuda_available(std::string* why) {
  int n = 0;
  cudaError_t err = cudaGetDeviceCount(&n);
  if (err != cudaSuccess || n == 0) {
    if (why)
      *why = std::string("no CUDA device: ") +
             (err != cudaSuccess ? cudaGetErrorString(err) : "none found");
    return false;
  }
  return true;
}

Backend& cuda_backend() {
  std::string why;
  if (!cuda_available(&why)) throw InputError("--device cuda: " + why);
  thread_local CudaBackend backend;  // one backend and stream per thread
  return backend;
}

void cuda_use_graphs(bool on) {
  g_use_graphs = on;
}

int64_t cuda_graph_replays() {
  return g_replays;
}

std::string cuda_device_name() {
  if (!cuda_available()) return "";
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  return prop.name;
}

}  // namespace flatcheck
