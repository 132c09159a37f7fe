/* SPDX-License-Identifier: MIT */
#version 460
/* The "t_align" test coroutine (tests/kernels/t_sched.h, t_sched.kern.h) in
 * GLSL for the Vulkan backend: same frame, arguments, continuations and
 * event log. (`log` and `out` are GLSL names: log_ and out_ keep the offsets.) */
#include "wavesched/kernel.glsl"
#define T_ALIGN_FIELDS(X) X(uint32_t, k) X(uint32_t, acc)
WS_FRAME(t_align_frame, T_ALIGN_FIELDS)
WS_ARGS(t_align_args) { uint64_t log_; uint64_t ticket; uint64_t out_; uint capacity; uint pad; };
#define T_ALIGN_A 1u
#define T_ALIGN_B 2u
#define T_ALIGN_C 3u
uint t_align_len_a(uint id) { return (id * 7u) % 5u; }
uint t_align_len_b(uint id) { return 1u + (id * 5u) % 3u; }
uint t_align_log(t_align_args a, uint id, uint src, uint next) {
  const uint t = ws_atomic_add_u32(a.ticket, 1u);
  if (t < a.capacity) {
    WS_PTR(uint32_t, a.log_)[3u * t] = id;
    WS_PTR(uint32_t, a.log_)[3u * t + 1u] = src;
    WS_PTR(uint32_t, a.log_)[3u * t + 2u] = next;
  }
  return next;
}
uint t_align_entry(ws_item it, inout t_align_frame f, t_align_args a) {
  f.k = 0u;
  f.acc = it.id * 1000u;
  return t_align_log(a, it.id, 0u, it.id % 4u == 0u ? T_ALIGN_B : T_ALIGN_A);
}
uint t_align_a(ws_item it, inout t_align_frame f, t_align_args a) {
  f.acc += 1u;
  if (f.k < t_align_len_a(it.id)) { f.k += 1u; return t_align_log(a, it.id, T_ALIGN_A, T_ALIGN_A); }
  f.k = 0u;
  return t_align_log(a, it.id, T_ALIGN_A, T_ALIGN_C);
}
uint t_align_c(ws_item it, inout t_align_frame f, t_align_args a) { f.acc += 1u; return t_align_log(a, it.id, T_ALIGN_C, T_ALIGN_B); }
uint t_align_b(ws_item it, inout t_align_frame f, t_align_args a) {
  f.acc += 1u;
  f.k += 1u;
  if (f.k < t_align_len_b(it.id)) return t_align_log(a, it.id, T_ALIGN_B, T_ALIGN_B);
  WS_PTR(uint32_t, a.out_)[it.id] = f.acc;
  return t_align_log(a, it.id, T_ALIGN_B, WS_TERMINATE);
}
#define T_ALIGN_CONTINUATIONS(X) X(T_ALIGN_A, t_align_a) X(T_ALIGN_B, t_align_b) X(T_ALIGN_C, t_align_c)
WS_COROUTINE(t_align, t_align_frame, t_align_args, t_align_entry, T_ALIGN_CONTINUATIONS)
