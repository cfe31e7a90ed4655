#include "core/runtime/cuda/device.h"

#include "core/runtime/cuda/cuda_backend.h"

namespace flatcheck {

std::optional<Device> device_by_name(std::string_view name) {
  if (name == "cpu") return Device::kCpu;
  if (name == "cuda") return Device::kCuda;
  return std::nullopt;
}

const char* device_name(Device d) {
  return d == Device::kCuda ? "cuda" : "cpu";
}

Backend& backend_for(Device d) {
  return d == Device::kCuda ? cuda_backend() : cpu_backend();
}

}  // namespace flatcheck
