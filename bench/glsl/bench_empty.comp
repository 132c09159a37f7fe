/* SPDX-License-Identifier: MIT */
#version 460
/* bench_empty (bench.kern.h) for the Vulkan backend: does nothing (the
 * launch floor of bench_loop). */
// ws:args_size 8
#include "wavesched/kernel.glsl"

struct bench_empty_args {
  uint64_t unused;
};

WS_KERNEL(bench_empty, bench_empty_args, i, a) {}
