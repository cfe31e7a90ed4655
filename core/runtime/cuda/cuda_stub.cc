// The CUDA backend in builds without a CUDA compiler: nothing is available.
#include "core/base/check.h"
#include "core/runtime/cuda/cuda_backend.h"

namespace flatcheck {

bool cuda_available(std::string* why) {
  if (why)
    *why = "this build has no CUDA runtime (configure with -DFLATCHECK_CUDA=ON where nvcc exists)";
  return false;
}

Backend& cuda_backend() {
  std::string why;
  cuda_available(&why);
  throw InputError("--device cuda: " + why);
}

void cuda_use_graphs(bool) {}

int64_t cuda_graph_replays() {
  return 0;
}

std::string cuda_device_name() {
  return "";
}

}  // namespace flatcheck
