/* SPDX-License-Identifier: MIT */
/* Kernels of the fuzzer's table-driven coroutine (see fz.h): one source for
 * the CPU and CUDA backends. */
#include "fz.h"

WS_DEVICE static void fz_check_frame(const ws_item *it, const fz_frame *f, const fz_args *a) {
  if (f->tag != fz_tag(it->id, f->steps) || f->weight != 0.5f * (float)f->steps ||
      f->steps > a->maxlen)
    ws_atomic_add_u32(&WS_PTR(uint32_t, a->errors)[FZ_ERR_FRAME], 1u);
}

WS_DEVICE static void fz_finish(const ws_item *it, const fz_frame *f, const fz_args *a) {
  WS_PTR(uint32_t, a->result)[it->id] = (uint32_t)(f->digest ^ (f->digest >> 32));
  ws_atomic_add_u32(&WS_PTR(uint32_t, a->done)[it->id], 1u);
}

WS_DEVICE static uint32_t fz_entry(const ws_item *it, fz_frame *f, const fz_args *a) {
  f->digest = (uint64_t)(a->seed ^ it->id);
  f->left = fz_path_length(a->seed, it->id, a->maxlen);
  f->steps = 0;
  f->tag = fz_tag(it->id, 0u);
  f->weight = 0.0f;
  f->pubs0 = 0;
  f->pubs1 = 0;
  const uint32_t next = a->entry_next[fz_choice(a->seed, it->id, 0xFFFFu)];
  if (next == 0u)
    fz_finish(it, f, a);
  return next;
}

WS_DEVICE static void fz_publish(const ws_item *it, fz_frame *f, const fz_args *a, uint32_t w,
                                 uint32_t k) {
  const uint32_t n = fz_pub_count(a->seed, it->id, f->steps, w, a->bound[w][k - 1u]);
  for (uint32_t c = 0; c < n; ++c) {
    const uint32_t serial = w == 0u ? f->pubs0++ : f->pubs1++;
    const uint32_t slot = ws_pool_publish(&a->pool[w], a->pub_stage[w][k - 1u]);
    if (slot == WS_POOL_NONE) {
      ws_atomic_add_u32(&WS_PTR(uint32_t, a->errors)[FZ_ERR_PUBLISH], 1u);
      continue;
    }
    fz_item *item = (fz_item *)ws_pool_payload(&a->pool[w], slot);
    item->id = it->id;
    item->serial = (uint16_t)serial;
    item->check = fz_item_check(it->id, serial);
    item->left = (uint8_t)fz_item_budget(a->seed, w, it->id, serial, a->amax[w]);
    item->hops = 0;
  }
}

/* Continuation k (1..K) for one frame. */
WS_DEVICE static uint32_t fz_step(const ws_item *it, fz_frame *f, const fz_args *a, uint32_t k) {
  fz_check_frame(it, f, a);
  ws_atomic_add_u32(&WS_PTR(uint32_t, a->visits)[it->id * FZ_MAX_K + (k - 1u)], 1u);
  f->digest = fz_mix(f->digest, k);
  for (uint32_t w = 0; w < a->work_count; ++w)
    fz_publish(it, f, a, w, k);
  if (k == 1u && a->bad_next != 0u)
    return a->bad_next;
  uint32_t next = 0;
  if (f->left != 0u) {
    next = a->next[k - 1u][fz_choice(a->seed, it->id, f->steps)];
    f->left -= 1u;
    f->steps = (uint16_t)(f->steps + 1u);
    f->tag = fz_tag(it->id, f->steps);
    f->weight = 0.5f * (float)f->steps;
  }
  if (next == 0u)
    fz_finish(it, f, a);
  return next;
}

WS_DEVICE static uint32_t fz_c1(const ws_item *it, fz_frame *f, const fz_args *a) {
  return fz_step(it, f, a, 1u);
}
WS_DEVICE static uint32_t fz_c2(const ws_item *it, fz_frame *f, const fz_args *a) {
  return fz_step(it, f, a, 2u);
}
WS_DEVICE static uint32_t fz_c3(const ws_item *it, fz_frame *f, const fz_args *a) {
  return fz_step(it, f, a, 3u);
}
WS_DEVICE static uint32_t fz_c4(const ws_item *it, fz_frame *f, const fz_args *a) {
  return fz_step(it, f, a, 4u);
}
WS_DEVICE static uint32_t fz_c5(const ws_item *it, fz_frame *f, const fz_args *a) {
  return fz_step(it, f, a, 5u);
}
WS_DEVICE static uint32_t fz_c6(const ws_item *it, fz_frame *f, const fz_args *a) {
  return fz_step(it, f, a, 6u);
}

WS_COROUTINE(fz_main, fz_frame, fz_args, fz_entry, FZ_CONTINUATIONS)

/* One stage of one work, over all C slots of its pool. */
WS_KERNEL(fz_stage, fz_stage_args, slot, sa) {
  const ws_pool_view *v = &sa->pool;
  const uint32_t s = sa->stage;
  if (!ws_pool_in_stage(v, slot, s))
    return;
  fz_item *item = (fz_item *)ws_pool_payload(v, slot);
  if (item->check != fz_item_check(item->id, item->serial)) {
    ws_atomic_add_u32(&WS_PTR(uint32_t, sa->errors)[FZ_ERR_PAYLOAD], 1u);
    ws_pool_release(v, slot, s);
    return;
  }
  ws_atomic_add_u32(&WS_PTR(uint32_t, sa->aux_visits)[item->id * FZ_MAX_STAGES + s], 1u);
  uint32_t to = sa->stage_count; /* release */
  if (item->left != 0u) {
    to = sa->anext[s][fz_item_choice(sa->seed, sa->work, item->id, item->serial, item->hops)];
    item->left = (uint8_t)(item->left - 1u);
    item->hops = (uint8_t)(item->hops + 1u);
  }
  if (to >= sa->stage_count) {
    ws_atomic_add_u32(&WS_PTR(uint32_t, sa->released)[item->id], 1u);
    ws_pool_release(v, slot, s);
  } else {
    ws_pool_move(v, slot, s, to);
  }
}

WS_MODULE_BEGIN(fz_kernels)
WS_MODULE_COROUTINE(fz_main)
WS_MODULE_KERNEL(fz_stage)
WS_MODULE_END(fz_kernels)
