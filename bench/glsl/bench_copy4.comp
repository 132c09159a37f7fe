/* SPDX-License-Identifier: MIT */
#version 460
/* bench_copy4 (bench.kern.h) for the Vulkan backend: dst[i] = src[i] over
 * 4-byte elements (bench_queue restores token arrays with it). */
// ws:args_size 16
#include "wavesched/kernel.glsl"

struct bench_copy_args {
  uint64_t src;
  uint64_t dst;
};

WS_KERNEL(bench_copy4, bench_copy_args, i, a) {
  WS_PTR(uint32_t, a.dst)[i] = WS_PTR(uint32_t, a.src)[i];
}
