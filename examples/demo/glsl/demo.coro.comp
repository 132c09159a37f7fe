/* SPDX-License-Identifier: MIT */
#version 460
/* The demo coroutine (examples/demo/demo.kern.h) in GLSL for the Vulkan
 * backend: the same frame, arguments, continuations and arithmetic, so every
 * backend prints the same checksum (src/backend/vulkan/check-demo.sh). */
#include "wavesched/kernel.glsl"

/* demo.h DEMO_FIELDS, same order and types */
#define DEMO_FIELDS(X)                                                                     \
  X(uint32_t, remaining)                                                                   \
  X(uint32_t, hash)                                                                        \
  X(float, acc)                                                                            \
  X(uint16_t, blends)

WS_FRAME(demo_frame, DEMO_FIELDS)

/* demo.h struct demo_args (`out` is a GLSL keyword: the name differs, the
 * offset does not) */
WS_ARGS(demo_args) {
  uint64_t out_hash; /* uint32_t[N]: final hash per item */
  uint64_t steps;    /* uint32_t[N]: continuation runs per item */
  uint item_base;    /* the workload's number of item 0 (demo.h) */
  uint pad;
};

#define DEMO_MIX 1u
#define DEMO_BLEND 2u
#define DEMO_FINISH 3u

/* Number of mix steps of item `id`: 90 % take 1..8, 10 % take 64..511. */
uint demo_length(uint id) {
  uint h = id * 2654435761u;
  h ^= h >> 15;
  return (h % 100u) < 90u ? 1u + h % 8u : 64u + h % 448u;
}

uint demo_entry(ws_item it, inout demo_frame f, demo_args a) {
  f.remaining = demo_length(a.item_base + it.id);
  f.hash = a.item_base + it.id;
  f.acc = 0.0;
  f.blends = uint16_t(0);
  return DEMO_MIX;
}

uint demo_mix(ws_item it, inout demo_frame f, demo_args a) {
  WS_PTR(uint32_t, a.steps)[it.id] += 1u;
  f.hash = ws_hash32(f.hash);
  f.remaining -= 1u;
  if (f.remaining == 0u)
    return DEMO_FINISH;
  return (f.hash & 3u) == 0u ? DEMO_BLEND : DEMO_MIX;
}

uint demo_blend(ws_item it, inout demo_frame f, demo_args a) {
  WS_PTR(uint32_t, a.steps)[it.id] += 1u;
  /* precise: evaluated as written, never contracted into an fma (acc does
   * not reach the output, but the twin stays exact) */
  precise float acc = f.acc * 0.5 + float(f.hash & 0xffu);
  f.acc = acc;
  f.blends += uint16_t(1);
  return DEMO_MIX;
}

uint demo_finish(ws_item it, inout demo_frame f, demo_args a) {
  WS_PTR(uint32_t, a.steps)[it.id] += 1u;
  WS_PTR(uint32_t, a.out_hash)[it.id] = f.hash ^ (uint32_t(f.blends) << 24);
  return WS_TERMINATE;
}

#define DEMO_CONTINUATIONS(X)                                                              \
  X(DEMO_MIX, demo_mix)                                                                    \
  X(DEMO_BLEND, demo_blend)                                                                \
  X(DEMO_FINISH, demo_finish)

WS_COROUTINE(demo, demo_frame, demo_args, demo_entry, DEMO_CONTINUATIONS)
