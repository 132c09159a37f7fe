/* SPDX-License-Identifier: MIT */
/* Kernels of the scheduling-decision test coroutines (see t_sched.h): one
 * source for the CPU and CUDA backends. */
#include "t_sched.h"

/* ---- t_order ---- */
WS_DEVICE static uint32_t t_order_entry(const ws_item *it, t_order_frame *f,
                                        const t_order_args *a) {
  (void)a;
  f->unused = it->id;
  return it->id == 0 ? (uint32_t)T_ORDER_SMALL : (uint32_t)T_ORDER_LARGE;
}
WS_DEVICE static uint32_t t_order_finish(uint32_t src, const ws_item *it, const t_order_args *a) {
  WS_PTR(uint32_t, a->runs)[it->id] += 1u;
  WS_PTR(uint32_t, a->kind)[it->id] = src;
  WS_PTR(uint32_t, a->rank)[it->id] = ws_atomic_add_u32(WS_PTR(uint32_t, a->counter), 1u) + 1u;
  return WS_TERMINATE;
}
WS_DEVICE static uint32_t t_order_small(const ws_item *it, t_order_frame *f,
                                        const t_order_args *a) {
  (void)f;
  return t_order_finish(T_ORDER_SMALL, it, a);
}
WS_DEVICE static uint32_t t_order_large(const ws_item *it, t_order_frame *f,
                                        const t_order_args *a) {
  (void)f;
  return t_order_finish(T_ORDER_LARGE, it, a);
}
WS_COROUTINE(t_order, t_order_frame, t_order_args, t_order_entry, T_ORDER_CONTINUATIONS)

/* ---- t_forkjoin ---- */
WS_DEVICE static uint32_t t_fj_entry(const ws_item *it, t_forkjoin_frame *f,
                                     const t_forkjoin_args *a) {
  (void)a;
  f->v = it->id * 3u;
  return (it->id & 1u) ? (uint32_t)T_FJ_ODD : (uint32_t)T_FJ_EVEN;
}
WS_DEVICE static uint32_t t_fj_even(const ws_item *it, t_forkjoin_frame *f,
                                    const t_forkjoin_args *a) {
  (void)it;
  (void)a;
  f->v += 100u;
  return T_FJ_JOIN;
}
WS_DEVICE static uint32_t t_fj_odd(const ws_item *it, t_forkjoin_frame *f,
                                   const t_forkjoin_args *a) {
  (void)it;
  (void)a;
  f->v += 200u;
  return T_FJ_JOIN;
}
WS_DEVICE static uint32_t t_fj_join(const ws_item *it, t_forkjoin_frame *f,
                                    const t_forkjoin_args *a) {
  WS_PTR(uint32_t, a->out)[it->id] = f->v * 10u + 7u;
  return WS_TERMINATE;
}
WS_COROUTINE(t_forkjoin, t_forkjoin_frame, t_forkjoin_args, t_fj_entry, T_FORKJOIN_CONTINUATIONS)

/* ---- t_align ---- */
WS_DEVICE static uint32_t t_align_log(const t_align_args *a, uint32_t id, uint32_t src,
                                      uint32_t next) {
  const uint32_t t = ws_atomic_add_u32(WS_PTR(uint32_t, a->ticket), 1u);
  if (t < a->capacity) {
    uint32_t *e = WS_PTR(uint32_t, a->log) + 3u * t;
    e[0] = id;
    e[1] = src;
    e[2] = next;
  }
  return next;
}
WS_DEVICE static uint32_t t_align_entry(const ws_item *it, t_align_frame *f,
                                        const t_align_args *a) {
  f->k = 0;
  f->acc = it->id * 1000u;
  return t_align_log(a, it->id, 0u, it->id % 4u == 0u ? (uint32_t)T_ALIGN_B : (uint32_t)T_ALIGN_A);
}
WS_DEVICE static uint32_t t_align_a(const ws_item *it, t_align_frame *f, const t_align_args *a) {
  f->acc += 1u;
  if (f->k < t_align_len_a(it->id)) {
    f->k += 1u;
    return t_align_log(a, it->id, T_ALIGN_A, T_ALIGN_A);
  }
  f->k = 0;
  return t_align_log(a, it->id, T_ALIGN_A, T_ALIGN_C);
}
WS_DEVICE static uint32_t t_align_c(const ws_item *it, t_align_frame *f, const t_align_args *a) {
  f->acc += 1u;
  return t_align_log(a, it->id, T_ALIGN_C, T_ALIGN_B);
}
WS_DEVICE static uint32_t t_align_b(const ws_item *it, t_align_frame *f, const t_align_args *a) {
  f->acc += 1u;
  f->k += 1u;
  if (f->k < t_align_len_b(it->id))
    return t_align_log(a, it->id, T_ALIGN_B, T_ALIGN_B);
  WS_PTR(uint32_t, a->out)[it->id] = f->acc;
  return t_align_log(a, it->id, T_ALIGN_B, WS_TERMINATE);
}
WS_COROUTINE(t_align, t_align_frame, t_align_args, t_align_entry, T_ALIGN_CONTINUATIONS)

/* ---- t_bad ---- */
WS_DEVICE static uint32_t t_bad_entry(const ws_item *it, t_bad_frame *f, const t_bad_args *a) {
  (void)it;
  f->n = 0;
  return a->mode == 1u ? (uint32_t)T_BAD_SPIN : (uint32_t)T_BAD_X;
}
WS_DEVICE static uint32_t t_bad_x(const ws_item *it, t_bad_frame *f, const t_bad_args *a) {
  (void)f;
  ws_atomic_add_u32(WS_PTR(uint32_t, a->runs), 1u);
  return it->id == a->bad_id ? (uint32_t)T_BAD_OUT_OF_RANGE : WS_TERMINATE;
}
WS_DEVICE static uint32_t t_bad_spin(const ws_item *it, t_bad_frame *f, const t_bad_args *a) {
  (void)it;
  ws_atomic_add_u32(WS_PTR(uint32_t, a->runs), 1u);
  f->n += 1u;
  return T_BAD_SPIN;
}
WS_COROUTINE(t_bad, t_bad_frame, t_bad_args, t_bad_entry, T_BAD_CONTINUATIONS)

/* ---- t_steps ---- */
WS_DEVICE static uint32_t t_steps_entry(const ws_item *it, t_steps_frame *f,
                                        const t_steps_args *a) {
  (void)it;
  (void)a;
  f->acc = 0;
  f->pass = 0;
  return T_STEPS_WALK;
}
WS_DEVICE static void t_steps_begin(const ws_item *it, const t_steps_frame *f,
                                    const t_steps_args *a, t_steps_state *s) {
  (void)a;
  s->v = t_steps_start(it->id, f->pass);
  s->n = 0;
}
/* one Collatz step of the walk; 0 once it reached 1 */
WS_DEVICE static inline int t_steps_advance(t_steps_state *s) {
  if (s->v == 1u)
    return 0;
  s->v = t_steps_next(s->v);
  s->n += 1u;
  return 1;
}
WS_DEVICE static int t_steps_step(t_steps_state *s, const t_steps_args *a) {
  (void)a;
  return t_steps_advance(s);
}
WS_DEVICE static uint32_t t_steps_end(const ws_item *it, t_steps_frame *f, const t_steps_args *a,
                                      t_steps_state *s) {
  (void)a;
  f->acc += s->n;
  f->pass += 1u;
  if (f->pass >= t_steps_passes(it->id))
    return T_STEPS_DONE;
  return (f->pass & 1u) ? (uint32_t)T_STEPS_WALK_OF : (uint32_t)T_STEPS_WALK;
}
WS_CONTINUATION_STEPS(t_steps_walk, t_steps_frame, t_steps_args, T_STEPS_WALK, t_steps_state,
                      t_steps_begin, t_steps_step, t_steps_end)
/* the same walk written in one call by hand: what the CPU, GLSL, the tail and
 * the megakernel run for "walk_of"; CUDA's launches run its steps */
WS_DEVICE static uint32_t t_steps_walk_of(const ws_item *it, t_steps_frame *f,
                                          const t_steps_args *a) {
  t_steps_state s;
  t_steps_begin(it, f, a, &s);
  while (t_steps_advance(&s)) {
  }
  return t_steps_end(it, f, a, &s);
}
WS_CONTINUATION_STEPS_OF(t_steps_walk_of, t_steps_frame, t_steps_args, T_STEPS_WALK_OF,
                         t_steps_state, t_steps_begin, t_steps_step, t_steps_end)
WS_DEVICE static uint32_t t_steps_done(const ws_item *it, t_steps_frame *f,
                                       const t_steps_args *a) {
  WS_PTR(uint32_t, a->out)[it->id] = f->acc * 4u + f->pass;
  return WS_TERMINATE;
}
WS_COROUTINE(t_steps, t_steps_frame, t_steps_args, t_steps_entry, T_STEPS_CONTINUATIONS)
WS_DEVICE static int t_steps_k_begin(uint32_t i, const t_steps_kernel_args *a, t_steps_state *s) {
  (void)a;
  if (i % 5u == 0u)
    return 0;
  s->v = t_steps_start(i, 7u);
  s->n = 0;
  return 1;
}
WS_DEVICE static int t_steps_k_step(t_steps_state *s, const t_steps_kernel_args *a) {
  (void)a;
  return t_steps_advance(s);
}
WS_DEVICE static void t_steps_k_end(uint32_t i, const t_steps_kernel_args *a, t_steps_state *s) {
  WS_PTR(uint32_t, a->out)[i] = s->n;
}
WS_KERNEL_STEPS(t_steps_kernel, t_steps_kernel_args, t_steps_state, t_steps_k_begin,
                t_steps_k_step, t_steps_k_end)

WS_MODULE_BEGIN(t_sched)
WS_MODULE_COROUTINE(t_order)
WS_MODULE_COROUTINE(t_forkjoin)
WS_MODULE_COROUTINE(t_align)
WS_MODULE_COROUTINE(t_bad)
WS_MODULE_COROUTINE(t_steps)
WS_MODULE_KERNEL(t_steps_kernel)
WS_MODULE_END(t_sched)
