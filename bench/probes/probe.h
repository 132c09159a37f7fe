// SPDX-License-Identifier: MIT
// What the probes in this folder share: each is still one program, built
// alone with `nvcc -O2 -arch=sm_90 -o NAME bench/probes/NAME.cu`.
#ifndef WAVESCHED_PROBE_H
#define WAVESCHED_PROBE_H
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>

// Returns 1 from the calling function on a CUDA error, naming the call.
#define CK(x)                                                                                      \
  do {                                                                                             \
    cudaError_t e_ = (x);                                                                          \
    if (e_ != cudaSuccess) {                                                                       \
      printf("CUDA error %s at %d: %s\n", #x, __LINE__, cudaGetErrorString(e_));                   \
      return 1;                                                                                    \
    }                                                                                              \
  } while (0)

static inline double now_us() {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The median of the samples (sorts them).
static inline double median(std::vector<double> &r) {
  std::sort(r.begin(), r.end());
  return r[r.size() / 2];
}

// The probes' stand-in for a step's work on one word (an LCG step).
__host__ __device__ static inline unsigned probe_step(unsigned x) {
  return x * 1664525u + 1013904223u;
}
#endif
