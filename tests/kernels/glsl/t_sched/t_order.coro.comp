/* SPDX-License-Identifier: MIT */
#version 460
/* The "t_order" test coroutine (tests/kernels/t_sched.h, t_sched.kern.h) in
 * GLSL for the Vulkan backend: same frame, arguments and continuations. */
#include "wavesched/kernel.glsl"
#define T_ORDER_FIELDS(X) X(uint32_t, unused)
WS_FRAME(t_order_frame, T_ORDER_FIELDS)
WS_ARGS(t_order_args) { uint64_t rank; uint64_t kind; uint64_t runs; uint64_t counter; };
#define T_ORDER_SMALL 1u
#define T_ORDER_LARGE 2u
uint t_order_entry(ws_item it, inout t_order_frame f, t_order_args a) {
  f.unused = it.id;
  return it.id == 0u ? T_ORDER_SMALL : T_ORDER_LARGE;
}
uint t_order_finish(uint src, ws_item it, t_order_args a) {
  WS_PTR(uint32_t, a.runs)[it.id] += 1u;
  WS_PTR(uint32_t, a.kind)[it.id] = src;
  WS_PTR(uint32_t, a.rank)[it.id] = ws_atomic_add_u32(a.counter, 1u) + 1u;
  return WS_TERMINATE;
}
uint t_order_small(ws_item it, inout t_order_frame f, t_order_args a) { return t_order_finish(T_ORDER_SMALL, it, a); }
uint t_order_large(ws_item it, inout t_order_frame f, t_order_args a) { return t_order_finish(T_ORDER_LARGE, it, a); }
#define T_ORDER_CONTINUATIONS(X) X(T_ORDER_SMALL, t_order_small) X(T_ORDER_LARGE, t_order_large)
WS_COROUTINE(t_order, t_order_frame, t_order_args, t_order_entry, T_ORDER_CONTINUATIONS)
