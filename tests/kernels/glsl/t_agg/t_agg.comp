/* SPDX-License-Identifier: MIT */
#version 460
// ws:args_size 24
/* The GLSL twin of tests/kernels/t_agg.kern.h (24 = sizeof(t_agg_args)). */
#include "wavesched/kernel.glsl"

struct t_agg_args {
  uint64_t counters;
  uint64_t old;
  uint keys;
  uint uniform_values;
};

uint t_agg_key(uint i, uint keys) { return ((i * 2654435761u) >> 7) % keys; }
uint t_agg_value(uint i, uint uniform_values) { return uniform_values != 0u ? 1u : 1u + i % 3u; }

WS_KERNEL(t_agg, t_agg_args, i, a) {
  const uint64_t c = WS_ADDR(uint32_t, a.counters, t_agg_key(i, a.keys));
  WS_PTR(uint32_t, a.old)[i] = ws_atomic_add_u32_agg(c, t_agg_value(i, a.uniform_values));
}
