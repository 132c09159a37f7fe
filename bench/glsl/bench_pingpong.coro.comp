/* SPDX-License-Identifier: MIT */
#version 460
/* The bench_pingpong coroutine (bench.kern.h, bench_kernels.h) for the
 * Vulkan backend: same frame, arguments, continuations and arithmetic. */
#include "wavesched/kernel.glsl"

/* BENCH_PP_FIELDS, same order and types */
#define BENCH_PP_FIELDS(X)                                                                 \
  X(uint32_t, left)                                                                        \
  X(uint32_t, acc)

WS_FRAME(bench_pp_frame, BENCH_PP_FIELDS)

/* struct bench_pp_args (`out` is a GLSL keyword: the name differs, the
 * offset does not) */
WS_ARGS(bench_pp_args) {
  uint64_t out_acc; /* uint32_t[N]: final accumulator per item */
  uint32_t bounces;
  uint32_t pad;
};

#define BENCH_PP_PING 1u
#define BENCH_PP_PONG 2u

uint bench_pp_entry(ws_item it, inout bench_pp_frame f, bench_pp_args a) {
  f.left = a.bounces;
  f.acc = it.id;
  return BENCH_PP_PING;
}

uint bench_pp_bounce(ws_item it, inout bench_pp_frame f, bench_pp_args a, uint other) {
  f.acc = f.acc * 3u + 1u; /* bench_pp_step */
  f.left -= 1u;
  if (f.left == 0u) {
    WS_PTR(uint32_t, a.out_acc)[it.id] = f.acc;
    return WS_TERMINATE;
  }
  return other;
}

uint bench_pp_ping(ws_item it, inout bench_pp_frame f, bench_pp_args a) {
  return bench_pp_bounce(it, f, a, BENCH_PP_PONG);
}

uint bench_pp_pong(ws_item it, inout bench_pp_frame f, bench_pp_args a) {
  return bench_pp_bounce(it, f, a, BENCH_PP_PING);
}

#define BENCH_PP_CONTINUATIONS(X)                                                          \
  X(BENCH_PP_PING, bench_pp_ping)                                                          \
  X(BENCH_PP_PONG, bench_pp_pong)

WS_COROUTINE(bench_pingpong, bench_pp_frame, bench_pp_args, bench_pp_entry,
             BENCH_PP_CONTINUATIONS)
