/* SPDX-License-Identifier: MIT */
#version 460
/* The "t_bad" test coroutine (tests/kernels/t_sched.h, t_sched.kern.h) in
 * GLSL for the Vulkan backend: same frame, arguments and continuations. */
#include "wavesched/kernel.glsl"
#define T_BAD_FIELDS(X) X(uint32_t, n)
WS_FRAME(t_bad_frame, T_BAD_FIELDS)
WS_ARGS(t_bad_args) { uint mode; uint bad_id; uint64_t runs; };
#define T_BAD_X 1u
#define T_BAD_SPIN 2u
#define T_BAD_OUT_OF_RANGE 7u
uint t_bad_entry(ws_item it, inout t_bad_frame f, t_bad_args a) { f.n = 0u; return a.mode == 1u ? T_BAD_SPIN : T_BAD_X; }
uint t_bad_x(ws_item it, inout t_bad_frame f, t_bad_args a) {
  ws_atomic_add_u32(a.runs, 1u);
  return it.id == a.bad_id ? T_BAD_OUT_OF_RANGE : WS_TERMINATE;
}
uint t_bad_spin(ws_item it, inout t_bad_frame f, t_bad_args a) { ws_atomic_add_u32(a.runs, 1u); f.n += 1u; return T_BAD_SPIN; }
#define T_BAD_CONTINUATIONS(X) X(T_BAD_X, t_bad_x) X(T_BAD_SPIN, t_bad_spin)
WS_COROUTINE(t_bad, t_bad_frame, t_bad_args, t_bad_entry, T_BAD_CONTINUATIONS)
