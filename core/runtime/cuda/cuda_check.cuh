// CUDA_CHECK(expr): every CUDA runtime call is checked; a failure prints the statement, file,
// line and CUDA's message, and aborts (an internal invariant: the device is broken).
#pragma once

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#define CUDA_CHECK(expr)                                                           \
  do {                                                                             \
    cudaError_t flatcheck_err_ = (expr);                                           \
    if (flatcheck_err_ != cudaSuccess) {                                           \
      std::fprintf(stderr, "flatcheck: CUDA error %s in `%s` at %s:%d\n",          \
                   cudaGetErrorString(flatcheck_err_), #expr, __FILE__, __LINE__); \
      std::abort();                                                                \
    }                                                                              \
  } while (0)
