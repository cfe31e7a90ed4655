// The CUDA backend's public face: no CUDA type appears here (STYLE.md, habit 7), so core and
// the harness include it whether or not this build has the CUDA runtime.
#pragma once

#include <cstdint>
#include <string>

#include "core/runtime/backend.h"

namespace flatcheck {

// True when this build has the CUDA runtime and a device is present; otherwise false, with
// the reason in *why ("this build has no CUDA runtime", "no CUDA device: ...").
bool cuda_available(std::string* why = nullptr);

// The CUDA backend: one stream, device memory, a kernel for every op. Throws InputError when
// cuda_available() is false.
Backend& cuda_backend();

// Engines launched as CUDA graphs: captured once per engine and arena, then replayed.
void cuda_use_graphs(bool on);

// How many engine runs on this thread replayed a captured CUDA graph (0 without CUDA): the
// observable effect of cuda_use_graphs(true).
int64_t cuda_graph_replays();

// The device's name ("NVIDIA H100 80GB HBM3"), or "" without one.
std::string cuda_device_name();

// The documented bound, in units in the last place, between the CPU and CUDA kernels of an
// op: 0 for ops whose results are correctly rounded on both (arithmetic, sqrt, comparisons,
// data movement), more for exp, tanh and sigmoid, whose device functions differ from glibc's.
int cuda_ulp_bound(OpCode op);

}  // namespace flatcheck
