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

// A conditional node (WHILE, IF or SWITCH of `size` branches) on handle h in
// graph g after `dep` (NULL: none); its branch graphs in *bodies.
static inline int probe_conditional(cudaGraph_t g, const cudaGraphNode_t *dep,
                                    cudaGraphConditionalHandle h,
                                    cudaGraphConditionalNodeType type, unsigned size,
                                    cudaGraph_t **bodies) {
  cudaGraphNodeParams p = {};
  p.type = cudaGraphNodeTypeConditional;
  p.conditional.handle = h;
  p.conditional.type = type;
  p.conditional.size = size;
  cudaGraphNode_t n;
  CK(cudaGraphAddNode(&n, g, dep, NULL, dep ? 1 : 0, &p));
  *bodies = p.conditional.phGraph_out;
  return 0;
}

// µs per iteration of `iters` iterations: the median of five launches of
// ge after a warm-up one, the state at st (bytes) reset to init before each.
static inline int probe_time_graph(cudaGraphExec_t ge, cudaStream_t s, void *st,
                                   const void *init, size_t bytes, long iters, double *us) {
  std::vector<double> r;
  for (int rep = 0; rep < 6; rep++) {
    CK(cudaMemcpy(st, init, bytes, cudaMemcpyHostToDevice));
    CK(cudaDeviceSynchronize());
    const double t = now_us();
    CK(cudaGraphLaunch(ge, s));
    CK(cudaStreamSynchronize(s));
    if (rep)
      r.push_back((now_us() - t) / iters);
  }
  *us = median(r);
  return 0;
}

// The probes' stand-in for a step's work on one word (an LCG step).
__host__ __device__ static inline unsigned probe_step(unsigned x) {
  return x * 1664525u + 1013904223u;
}
#endif
