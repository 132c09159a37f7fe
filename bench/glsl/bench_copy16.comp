/* SPDX-License-Identifier: MIT */
#version 460
/* bench_copy16 (bench.kern.h) for the Vulkan backend: dst[i] = src[i] over
 * 16-byte elements (bench_queue's device-to-device copy baseline). */
// ws:args_size 16
#include "wavesched/kernel.glsl"

struct bench_copy_args {
  uint64_t src;
  uint64_t dst;
};

WS_KERNEL(bench_copy16, bench_copy_args, i, a) {
  WS_PTR(uvec4, a.dst)[i] = WS_PTR(uvec4, a.src)[i];
}
