/* SPDX-License-Identifier: MIT */
#version 460
/* The "t_forkjoin" test coroutine (tests/kernels/t_sched.h, t_sched.kern.h)
 * in GLSL for the Vulkan backend: same frame, arguments and continuations. */
#include "wavesched/kernel.glsl"
#define T_FORKJOIN_FIELDS(X) X(uint32_t, v)
WS_FRAME(t_forkjoin_frame, T_FORKJOIN_FIELDS)
WS_ARGS(t_forkjoin_args) { uint64_t out_; };
#define T_FJ_EVEN 1u
#define T_FJ_ODD 2u
#define T_FJ_JOIN 3u
uint t_fj_entry(ws_item it, inout t_forkjoin_frame f, t_forkjoin_args a) {
  f.v = it.id * 3u;
  return (it.id & 1u) != 0u ? T_FJ_ODD : T_FJ_EVEN;
}
uint t_fj_even(ws_item it, inout t_forkjoin_frame f, t_forkjoin_args a) { f.v += 100u; return T_FJ_JOIN; }
uint t_fj_odd(ws_item it, inout t_forkjoin_frame f, t_forkjoin_args a) { f.v += 200u; return T_FJ_JOIN; }
uint t_fj_join(ws_item it, inout t_forkjoin_frame f, t_forkjoin_args a) {
  WS_PTR(uint32_t, a.out_)[it.id] = f.v * 10u + 7u;
  return WS_TERMINATE;
}
#define T_FORKJOIN_CONTINUATIONS(X) X(T_FJ_EVEN, t_fj_even) X(T_FJ_ODD, t_fj_odd) X(T_FJ_JOIN, t_fj_join)
WS_COROUTINE(t_forkjoin, t_forkjoin_frame, t_forkjoin_args, t_fj_entry, T_FORKJOIN_CONTINUATIONS)
