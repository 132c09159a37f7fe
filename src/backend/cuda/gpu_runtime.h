/* SPDX-License-Identifier: MIT */
/* wavesched — the thin CUDA/HIP mapping header of the CUDA backend.
 *
 * The backend is written against the CUDA runtime API. Compiled by hipcc
 * (__HIPCC__), every cuda* name it uses (cudaMalloc, ...) is mapped to its
 * hip* twin here, and nothing else changes; scripts/hip-check compiles the
 * backend that way for gfx90a in CI (docs/cuda.md: compiled, never run — the
 * project has no AMD GPU).
 *
 * CUB: CUDA ships CUB; HIP's port (hipCUB) is not packaged by Debian, so
 * WS_GPU_HAVE_CUB is 0 under HIP and the backend's own block-aggregated
 * kernels (always compiled, also used on CUDA for small queues) do the work.
 *
 * Warp primitives: CUDA warps have 32 lanes, gfx90a wavefronts 64. The
 * ws_gpu_* helpers below take a lane mask type wide enough for either and
 * must be called by every lane of the warp (uniform control flow): the
 * queue kernels keep all lanes of a warp in the same loop trip for that
 * reason.
 */
#ifndef WAVESCHED_CUDA_GPU_RUNTIME_H
#define WAVESCHED_CUDA_GPU_RUNTIME_H

#include <stdint.h>

#if defined(__HIPCC__)
#include <hip/hip_runtime.h>

#define WS_GPU_API_NAME "hip"
#define WS_GPU_HAVE_CUB 0
/* HIP graphs have no conditional (WHILE/SWITCH) nodes: no device loop */
#define WS_GPU_HAVE_GRAPH_LOOP 0

/* ---- runtime API: CUDA names -> HIP names ---- */
#define cudaError_t hipError_t
#define cudaSuccess hipSuccess
#define cudaErrorMemoryAllocation hipErrorOutOfMemory
#define cudaErrorNoDevice hipErrorNoDevice
#define cudaErrorInsufficientDriver hipErrorInsufficientDriver
#define cudaGetErrorName hipGetErrorName
#define cudaGetErrorString hipGetErrorString
#define cudaGetLastError hipGetLastError
#define cudaGetDeviceCount hipGetDeviceCount
#define cudaGetDevice hipGetDevice
#define cudaSetDevice hipSetDevice
#define cudaDeviceProp hipDeviceProp_t
#define cudaGetDeviceProperties hipGetDeviceProperties
#define cudaDriverGetVersion hipDriverGetVersion
#define cudaRuntimeGetVersion hipRuntimeGetVersion
#define cudaStream_t hipStream_t
#define cudaStreamCreateWithFlags hipStreamCreateWithFlags
#define cudaStreamNonBlocking hipStreamNonBlocking
#define cudaStreamDestroy hipStreamDestroy
#define cudaStreamSynchronize hipStreamSynchronize
#define cudaMalloc hipMalloc
#define cudaFree hipFree
#define cudaHostAlloc hipHostMalloc
#define cudaHostAllocMapped hipHostMallocMapped
#define cudaHostGetDevicePointer hipHostGetDevicePointer
#define cudaFreeHost hipHostFree
#define cudaMemcpyAsync hipMemcpyAsync
#define cudaEvent_t hipEvent_t
#define cudaEventCreate hipEventCreate
#define cudaEventDestroy hipEventDestroy
#define cudaEventRecord hipEventRecord
#define cudaEventElapsedTime hipEventElapsedTime
#define cudaMemsetAsync hipMemsetAsync
#define cudaMemcpyHostToDevice hipMemcpyHostToDevice
#define cudaMemcpyDeviceToHost hipMemcpyDeviceToHost
#define cudaMemGetInfo hipMemGetInfo
#define cudaDeviceGetAttribute hipDeviceGetAttribute
#define cudaDevAttrMultiProcessorCount hipDeviceAttributeMultiprocessorCount
#define cudaOccupancyMaxActiveBlocksPerMultiprocessor hipOccupancyMaxActiveBlocksPerMultiprocessor

/* gfx90a (CDNA2) runs wave64. */
#if defined(__AMDGCN_WAVEFRONT_SIZE)
#define WS_GPU_WARP __AMDGCN_WAVEFRONT_SIZE
#else
#define WS_GPU_WARP 64
#endif
typedef unsigned long long ws_gpu_lanemask;

__device__ static inline ws_gpu_lanemask ws_gpu_ballot(int pred) {
  return __ballot(pred);
}
__device__ static inline uint32_t ws_gpu_shfl(uint32_t v, int lane) {
  return (uint32_t)__shfl((int)v, lane);
}
__device__ static inline uint32_t ws_gpu_shfl_up(uint32_t v, int delta) {
  return (uint32_t)__shfl_up((int)v, (unsigned)delta);
}
__device__ static inline uint32_t ws_gpu_shfl_xor(uint32_t v, int mask) {
  return (uint32_t)__shfl_xor((int)v, mask);
}
__device__ static inline int ws_gpu_popc(ws_gpu_lanemask m) {
  return __popcll(m);
}
/* 1-based index of the lowest set lane, 0 for an empty mask */
__device__ static inline int ws_gpu_ffs(ws_gpu_lanemask m) {
  return __ffsll((long long int)m);
}
__device__ static inline uint32_t ws_gpu_lane(void) {
  return __lane_id();
}
#define WS_GPU_HAVE_MATCH_ANY 0

#else /* CUDA */
#include <cuda_runtime.h>

#define WS_GPU_API_NAME "cuda"
#define WS_GPU_HAVE_CUB 1
/* the device loop: graphs with WHILE and SWITCH conditional nodes (12.8+) */
#define WS_GPU_HAVE_GRAPH_LOOP (CUDART_VERSION >= 12080)
#define WS_GPU_WARP 32
typedef unsigned int ws_gpu_lanemask;

__device__ static inline ws_gpu_lanemask ws_gpu_ballot(int pred) {
  return __ballot_sync(0xffffffffu, pred);
}
__device__ static inline uint32_t ws_gpu_shfl(uint32_t v, int lane) {
  return __shfl_sync(0xffffffffu, v, lane);
}
__device__ static inline uint32_t ws_gpu_shfl_up(uint32_t v, int delta) {
  return __shfl_up_sync(0xffffffffu, v, (unsigned)delta);
}
__device__ static inline uint32_t ws_gpu_shfl_xor(uint32_t v, int mask) {
  return __shfl_xor_sync(0xffffffffu, v, mask);
}
__device__ static inline int ws_gpu_popc(ws_gpu_lanemask m) {
  return __popc(m);
}
__device__ static inline int ws_gpu_ffs(ws_gpu_lanemask m) {
  return __ffs((int)m);
}
/* Queue kernels run 1-D blocks whose size is a multiple of 32. */
__device__ static inline uint32_t ws_gpu_lane(void) {
  return threadIdx.x & 31u;
}
/* __match_any_sync exists from sm_70 on (Volta); older targets emulate it. */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 700
#define WS_GPU_HAVE_MATCH_ANY 1
#else
#define WS_GPU_HAVE_MATCH_ANY 0
#endif
#endif

/* Sum of v over the warp, in every lane (every lane must call it). */
__device__ static inline uint32_t ws_gpu_warp_sum(uint32_t v) {
  for (int d = WS_GPU_WARP / 2; d > 0; d >>= 1)
    v += ws_gpu_shfl_xor(v, d);
  return v;
}

/* Lanes below this one. */
__device__ static inline ws_gpu_lanemask ws_gpu_lanemask_lt(void) {
  return (((ws_gpu_lanemask)1) << ws_gpu_lane()) - 1u;
}

/* The lanes of this warp whose key equals this lane's key (every lane must
 * call it). One hardware instruction on sm_70+; elsewhere a loop that peels
 * one distinct key per round, so it costs as many rounds as the warp holds
 * distinct keys (few: keys are queue tokens). */
__device__ static inline ws_gpu_lanemask ws_gpu_match_any(uint32_t key) {
#if WS_GPU_HAVE_MATCH_ANY
  return __match_any_sync(0xffffffffu, key);
#else
  ws_gpu_lanemask pending = ws_gpu_ballot(1), mine = 0;
  while (pending) {
    const int leader = ws_gpu_ffs(pending) - 1;
    const uint32_t k = ws_gpu_shfl(key, leader);
    const ws_gpu_lanemask same = ws_gpu_ballot(key == k);
    if (key == k)
      mine = same;
    pending &= ~same;
  }
  return mine;
#endif
}

#endif
