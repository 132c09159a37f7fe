/* SPDX-License-Identifier: MIT */
/* Kernels of the "t_basic" test coroutine (see t_basic.h): one source for
 * the CPU and CUDA backends. */
#include "t_basic.h"

/* Field-by-field comparison with the expected frame: a bit per field. */
WS_DEVICE static uint32_t t_basic_check(uint32_t id, const t_basic_frame *f, uint32_t k) {
  const t_basic_frame e = t_basic_expect(id, k);
  uint32_t bad = 0;
  if (f->tag != e.tag)
    bad |= T_BASIC_BAD_TAG;
  if (f->d != e.d)
    bad |= T_BASIC_BAD_D;
  if (f->steps != e.steps)
    bad |= T_BASIC_BAD_STEPS;
  if (f->f != e.f)
    bad |= T_BASIC_BAD_F;
  if (f->pair.a != e.pair.a || f->pair.b != e.pair.b || f->pair.c != e.pair.c)
    bad |= T_BASIC_BAD_PAIR;
  if (f->big != e.big)
    bad |= T_BASIC_BAD_BIG;
  if (f->remaining != e.remaining)
    bad |= T_BASIC_BAD_REMAINING;
  if (f->tail != e.tail)
    bad |= T_BASIC_BAD_TAIL;
  return bad;
}

/* Where a frame with state k goes next. */
WS_DEVICE static uint32_t t_basic_next(uint32_t id, uint32_t k) {
  return k >= t_basic_len(id) ? (uint32_t)T_BASIC_FINISH : t_basic_step_cont(id, k);
}

WS_DEVICE static uint32_t t_basic_entry(const ws_item *it, t_basic_frame *f,
                                        const t_basic_args *a) {
  WS_PTR(uint32_t, a->entry_runs)[it->id] += 1u;
  *f = t_basic_expect(it->id, 0);
  return t_basic_next(it->id, 0);
}

/* One step: check the frame, then advance it. */
WS_DEVICE static uint32_t t_basic_step(uint32_t src, const ws_item *it, t_basic_frame *f,
                                       const t_basic_args *a) {
  const uint32_t id = it->id;
  const uint32_t k = f->steps;
  ws_atomic_add_u32(WS_PTR(uint32_t, a->total_runs), 1u);
  WS_PTR(uint32_t, a->step_runs)[id] += 1u;
  uint32_t bad = t_basic_check(id, f, k);
  if (k >= t_basic_len(id) || t_basic_step_cont(id, k) != src)
    bad |= T_BASIC_BAD_SRC;
  if (bad) {
    WS_PTR(uint32_t, a->bad)[id] |= bad;
    return WS_TERMINATE;
  }
  *f = t_basic_expect(id, k + 1u);
  return t_basic_next(id, k + 1u);
}

WS_DEVICE static uint32_t t_basic_loop(const ws_item *it, t_basic_frame *f, const t_basic_args *a) {
  return t_basic_step(T_BASIC_LOOP, it, f, a);
}

WS_DEVICE static uint32_t t_basic_alt(const ws_item *it, t_basic_frame *f, const t_basic_args *a) {
  return t_basic_step(T_BASIC_ALT, it, f, a);
}

WS_DEVICE static uint32_t t_basic_finish(const ws_item *it, t_basic_frame *f,
                                         const t_basic_args *a) {
  const uint32_t id = it->id;
  ws_atomic_add_u32(WS_PTR(uint32_t, a->total_runs), 1u);
  WS_PTR(uint32_t, a->finish_runs)[id] += 1u;
  uint32_t bad = t_basic_check(id, f, t_basic_len(id));
  if (bad)
    WS_PTR(uint32_t, a->bad)[id] |= bad;
  WS_PTR(uint32_t, a->out)[id] = t_basic_digest(f);
  return WS_TERMINATE;
}

WS_COROUTINE(t_basic, t_basic_frame, t_basic_args, t_basic_entry, T_BASIC_CONTINUATIONS)

WS_MODULE_BEGIN(t_basic)
WS_MODULE_COROUTINE(t_basic)
WS_MODULE_END(t_basic)
