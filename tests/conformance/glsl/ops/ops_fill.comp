/* SPDX-License-Identifier: MIT */
#version 460
// ws:args_size 16
/* ops_fill of tests/conformance/ops.kern.h for the Vulkan backend. */
#include "wavesched/kernel.glsl"

struct ops_args {
  uint64_t dst;
  uint value;
  uint pad;
};

WS_KERNEL(ops_fill, ops_args, i, a) { WS_PTR(uint32_t, a.dst)[i] = a.value + i; }
