// The device choice (`--device cpu|cuda`): which backend runs every path of a case. The
// backend for a device is resolved on the calling thread, because the CUDA backend (and its
// stream) is per thread: a campaign's worker resolves its own.
#pragma once

#include <optional>
#include <string_view>

#include "core/runtime/backend.h"

namespace flatcheck {

enum class Device { kCpu, kCuda };

// "cpu" -> kCpu, "cuda" -> kCuda, anything else -> nullopt.
std::optional<Device> device_by_name(std::string_view name);

// "cpu" or "cuda": the name reports use for the backend that ran.
const char* device_name(Device d);

// The backend for `d` on the calling thread: cpu_backend(), or this thread's CUDA backend.
// Throws InputError with the reason ("--device cuda: no CUDA device: ...") when `d` is not
// available in this build or on this machine.
Backend& backend_for(Device d);

}  // namespace flatcheck
