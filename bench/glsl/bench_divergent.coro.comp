/* SPDX-License-Identifier: MIT */
#version 460
/* The bench_divergent coroutine (bench.kern.h, bench_kernels.h) for the
 * Vulkan backend: same frame, arguments, continuations and arithmetic.
 * Lavapipe stops an invocation's loops after about 65,535 iterations in
 * total: a long item's megakernel thread runs about 511 continuations and
 * ~128 heavy chains, so keep --heavy-fmas small there (the smoke run uses 50). */
#include "wavesched/kernel.glsl"

/* BENCH_DV_FIELDS, same order and types */
#define BENCH_DV_FIELDS(X)                                                                 \
  X(float, x)                                                                              \
  X(uint32_t, remaining)                                                                   \
  X(uint32_t, hash)                                                                        \
  X(uint32_t, steps)

WS_FRAME(bench_dv_frame, BENCH_DV_FIELDS)

WS_ARGS(bench_dv_args) {
  uint64_t out_hash; /* uint32_t[N]: final hash ^ bits(x) per item */
  uint64_t steps;    /* uint32_t[N]: continuations run per item */
  uint32_t heavy_fmas;
  uint32_t long_percent;
};

#define BENCH_DV_HEAVY 1u
#define BENCH_DV_LIGHT 2u

uint bench_dv_length(uint id, uint long_percent) {
  uint h = id * 2654435761u;
  h ^= h >> 15;
  return (h % 100u) < 100u - long_percent ? 1u + h % 8u : 64u + h % 448u;
}

uint bench_dv_pick(uint hash) { return (hash & 3u) == 0u ? BENCH_DV_HEAVY : BENCH_DV_LIGHT; }

uint bench_dv_entry(ws_item it, inout bench_dv_frame f, bench_dv_args a) {
  f.x = 0.0;
  f.remaining = bench_dv_length(it.id, a.long_percent);
  f.hash = ws_hash32(it.id ^ 0x9e3779b9u);
  f.steps = 0u;
  return bench_dv_pick(f.hash);
}

uint bench_dv_after(ws_item it, inout bench_dv_frame f, bench_dv_args a) {
  f.steps += 1u;
  f.remaining -= 1u;
  if (f.remaining == 0u) {
    WS_PTR(uint32_t, a.out_hash)[it.id] = f.hash ^ floatBitsToUint(f.x);
    WS_PTR(uint32_t, a.steps)[it.id] = f.steps;
    return WS_TERMINATE;
  }
  return bench_dv_pick(f.hash);
}

uint bench_dv_heavy(ws_item it, inout bench_dv_frame f, bench_dv_args a) {
  /* precise: fma() is one operation with the same rounding wherever it is
   * used, so the step kernel and the megakernel agree bit for bit */
  precise float x = f.x;
  const float b = float(f.hash & 0xffu) * (1.0 / 256.0);
  for (uint k = 0u; k < a.heavy_fmas; ++k)
    x = fma(x, 0.9990234375, b);
  f.x = x;
  f.hash = ws_hash32(f.hash ^ floatBitsToUint(x));
  return bench_dv_after(it, f, a);
}

uint bench_dv_light(ws_item it, inout bench_dv_frame f, bench_dv_args a) {
  f.hash = ws_hash32(f.hash + 1u);
  return bench_dv_after(it, f, a);
}

#define BENCH_DV_CONTINUATIONS(X)                                                          \
  X(BENCH_DV_HEAVY, bench_dv_heavy)                                                        \
  X(BENCH_DV_LIGHT, bench_dv_light)

WS_COROUTINE(bench_divergent, bench_dv_frame, bench_dv_args, bench_dv_entry,
             BENCH_DV_CONTINUATIONS)
