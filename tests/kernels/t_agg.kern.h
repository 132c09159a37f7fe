/* SPDX-License-Identifier: MIT */
/* Test kernel "t_agg": the warp-aggregated atomics of kernel.h (and
 * kernel.glsl, glsl/t_agg) with many distinct words per warp: index i adds
 * t_agg_value(i) to counters[t_agg_key(i)] and writes the old value it got
 * to old[i]. Per word, the ranges [old, old + value) of its indices must
 * tile [0, final count) (tests/core/test_atomics.c). */
#include "t_agg.h"

WS_KERNEL(t_agg, t_agg_args, i, a) {
  uint32_t *c = WS_PTR(uint32_t, a->counters) + t_agg_key(i, a->keys);
  WS_PTR(uint32_t, a->old)[i] = ws_atomic_add_u32_agg(c, t_agg_value(i, a->uniform));
}

WS_MODULE(t_agg, WS_MODULE_KERNEL(t_agg))
