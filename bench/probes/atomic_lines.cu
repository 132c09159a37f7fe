// SPDX-License-Identifier: MIT
// What one block-per-tile queue pass pays for its per-tile global atomics
// (issue 14: the Vulkan queue shaders run one workgroup per 2048 slots and
// reserve each queue's run with one atomic per workgroup on K adjacent
// words). A pass over 2^24 tokens (64 MiB read, 64 MiB written), 8192
// blocks of 256 threads, 8 tokens per thread; per block K = 4 atomics by
// threads 0..3 on cursor (block % K) * stride:
//   none      no atomic (the bandwidth of the pass itself)
//   ret/1     returning atomicAdd, the K words adjacent (one 32-byte sector)
//   ret/32    returning atomicAdd, the K words 128 bytes apart
//   red/1     the result unused (a reduction), adjacent
//   red/32    a reduction, 128 bytes apart
// Each block's stores wait for its atomics (a __syncthreads after them), as
// the shaders' scatter does. Median of 21 timed passes (CUDA events).
#include "probe.h"

#include <cstdint>

enum { N_LOG2 = 24, ITEMS = 8, BLOCK = 256, K = 4 };

template <int MODE> // 0 none, 1 returning, 2 reduction
__global__ void __launch_bounds__(BLOCK) pass(const uint32_t *in, uint32_t *out, uint32_t *cur,
                                              uint32_t stride) {
  __shared__ uint32_t base[K];
  const uint32_t t0 = blockIdx.x * BLOCK * ITEMS;
  uint32_t v[ITEMS];
#pragma unroll
  for (int j = 0; j < ITEMS; ++j)
    v[j] = in[t0 + j * BLOCK + threadIdx.x];
  if (threadIdx.x < K) {
    uint32_t b = threadIdx.x;
    if (MODE == 1)
      b = atomicAdd(&cur[threadIdx.x * stride], BLOCK * ITEMS / K);
    else if (MODE == 2)
      atomicAdd(&cur[threadIdx.x * stride], BLOCK * ITEMS / K);
    base[threadIdx.x] = b;
  }
  __syncthreads();
#pragma unroll
  for (int j = 0; j < ITEMS; ++j)
    out[t0 + j * BLOCK + threadIdx.x] = v[j] + base[j & (K - 1)];
}

template <int MODE>
static int timed(const char *name, const uint32_t *in, uint32_t *out, uint32_t *cur,
                 uint32_t stride) {
  const uint32_t blocks = (1u << N_LOG2) / (BLOCK * ITEMS);
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  std::vector<double> t;
  for (int r = 0; r < 22; ++r) {
    CK(cudaEventRecord(a));
    pass<MODE><<<blocks, BLOCK>>>(in, out, cur, stride);
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, a, b));
    if (r) // the first pass warms up
      t.push_back(1e3 * ms);
  }
  const double us = median(t);
  printf("%-8s %8.2f us  %7.1f GB/s (read + write)\n", name, us,
         2.0 * 4.0 * (double)(1u << N_LOG2) / (us * 1e3));
  return 0;
}

int main() {
  const size_t n = (size_t)1 << N_LOG2;
  uint32_t *in, *out, *cur;
  CK(cudaMalloc(&in, 4 * n));
  CK(cudaMalloc(&out, 4 * n));
  CK(cudaMalloc(&cur, 4 * 32 * K));
  CK(cudaMemset(in, 1, 4 * n));
  CK(cudaMemset(cur, 0, 4 * 32 * K));
  printf("atomic_lines: 2^%d tokens, %u blocks of %d, %d tokens per thread, K = %d\n", N_LOG2,
         (unsigned)(n / (BLOCK * ITEMS)), BLOCK, ITEMS, K);
  return timed<0>("none", in, out, cur, 1) || timed<1>("ret/1", in, out, cur, 1) ||
         timed<1>("ret/32", in, out, cur, 32) || timed<2>("red/1", in, out, cur, 1) ||
         timed<2>("red/32", in, out, cur, 32) || timed<0>("none", in, out, cur, 1);
}
