/* SPDX-License-Identifier: MIT */
/* Kernels of the permanent regression (SPEC §6): one source, CPU and CUDA. */
#include "regression.h"

/* ---- the hand-written client's device side ---- */

WS_DEVICE static void reg_raw_publish(const reg_args *a, uint32_t id, uint32_t stage) {
  int32_t *free_count = WS_PTR(int32_t, a->raw.state);
  uint32_t *diag = WS_PTR(uint32_t, a->diagnostics);
  int32_t old = ws_atomic_add_i32(free_count, -1);
  if (old <= 0) {
    ws_atomic_add_i32(free_count, 1);
    ws_atomic_add_u32(&diag[0], 1u);
    return;
  }
  uint32_t slot = WS_PTR(uint32_t, a->raw.stack)[old - 1];
  reg_item *it = &WS_PTR(reg_item, a->raw.items)[slot];
  it->id = id;
  it->tag = id ^ REG_TAG;
  it->pending = 1u;
  WS_PTR(uint32_t, a->raw.tokens)[slot] = stage + 1u;
  ws_atomic_add_u32(&WS_PTR(uint32_t, a->raw.state)[1 + stage], 1u);
}

WS_DEVICE static void reg_pool_publish(const reg_args *a, uint32_t id, uint32_t stage) {
  uint32_t slot = ws_pool_publish(&a->pool, stage);
  if (slot == WS_POOL_NONE) {
    ws_atomic_add_u32(&WS_PTR(uint32_t, a->diagnostics)[0], 1u);
    return;
  }
  reg_item *it = (reg_item *)ws_pool_payload(&a->pool, slot);
  it->id = id;
  it->tag = id ^ REG_TAG;
  it->pending = 1u;
}

WS_DEVICE static void reg_publish(const reg_args *a, uint32_t id, uint32_t stage) {
  if (a->use_pool)
    reg_pool_publish(a, id, stage);
  else
    reg_raw_publish(a, id, stage);
}

WS_DEVICE static int reg_items_live(const reg_args *a) {
  int32_t free_count = a->use_pool ? WS_PTR(const int32_t, a->pool.state)[0]
                                   : WS_PTR(const int32_t, a->raw.state)[0];
  return free_count != (int32_t)a->capacity;
}

/* ---- main coroutine ---- */

WS_DEVICE static uint32_t reg_entry(const ws_item *it, reg_frame *f, const reg_args *a) {
  (void)it;
  (void)a;
  f->published = 0;
  return REG_SPARSE;
}

WS_DEVICE static uint32_t reg_sparse_publish(const ws_item *it, reg_frame *f, const reg_args *a) {
  if (it->id % 8u == 0u) {
    reg_publish(a, it->id, REG_FINISH);
    f->published += 1;
  }
  return REG_DENSE;
}

WS_DEVICE static uint32_t reg_dense_publish(const ws_item *it, reg_frame *f, const reg_args *a) {
  reg_publish(a, it->id, REG_PREPARE);
  f->published += 1;
  return REG_AFTER;
}

WS_DEVICE static uint32_t reg_main_after_publish(const ws_item *it, reg_frame *f,
                                                 const reg_args *a) {
  (void)f;
  uint32_t *diag = WS_PTR(uint32_t, a->diagnostics);
  if (reg_items_live(a))
    ws_atomic_add_u32(&diag[1], 1u);
  ws_atomic_add_u32(&diag[2 + it->id], 1u);
  return WS_TERMINATE;
}

WS_COROUTINE(reg_main, reg_frame, reg_args, reg_entry, REG_CONTINUATIONS)

/* ---- stage kernels: one thread per slot, keeps the slots of its stage ---- */

/* Next stage of an item leaving `stage`, or REG_STAGES for termination. */
WS_DEVICE static uint32_t reg_next_stage(reg_item *item, uint32_t stage) {
  if (stage == REG_PREPARE)
    return item->id % 3u == 0u ? REG_FINISH : REG_ITERATE;
  if (stage == REG_ITERATE) {
    if (item->pending) {
      item->pending = 0u;
      return REG_ITERATE;
    }
    return REG_FINISH;
  }
  return REG_STAGES;
}

WS_KERNEL(reg_raw_stage, reg_stage_args, slot, sa) {
  const reg_args *a = &sa->a;
  uint32_t *tokens = WS_PTR(uint32_t, a->raw.tokens);
  uint32_t *state = WS_PTR(uint32_t, a->raw.state);
  uint32_t *diag = WS_PTR(uint32_t, a->diagnostics);
  const uint32_t stage = sa->stage;
  if (tokens[slot] != stage + 1u)
    return;
  reg_item *item = &WS_PTR(reg_item, a->raw.items)[slot];
  ws_atomic_add_u32(&WS_PTR(uint32_t, a->visits)[3u * item->id + stage], 1u);
  const uint32_t next = reg_next_stage(item, stage);
  if (next < REG_STAGES) {
    tokens[slot] = next + 1u;
    if (next != stage) {
      ws_atomic_sub_u32(&state[1 + stage], 1u);
      ws_atomic_add_u32(&state[1 + next], 1u);
    }
    return;
  }
  /* terminal release: payload check, then the slot goes back on the stack */
  if (item->tag != (item->id ^ REG_TAG))
    ws_atomic_add_u32(&diag[0], 1u);
  tokens[slot] = 0u;
  ws_atomic_sub_u32(&state[1 + stage], 1u);
  int32_t pos = ws_atomic_add_i32(WS_PTR(int32_t, a->raw.state), 1);
  if (pos < 0 || (uint32_t)pos >= a->capacity) {
    ws_atomic_add_u32(&diag[0], 1u);
    return;
  }
  WS_PTR(uint32_t, a->raw.stack)[pos] = slot;
}

WS_KERNEL(reg_pool_stage, reg_stage_args, slot, sa) {
  const reg_args *a = &sa->a;
  const uint32_t stage = sa->stage;
  if (!ws_pool_in_stage(&a->pool, slot, stage))
    return;
  reg_item *item = (reg_item *)ws_pool_payload(&a->pool, slot);
  ws_atomic_add_u32(&WS_PTR(uint32_t, a->visits)[3u * item->id + stage], 1u);
  const uint32_t next = reg_next_stage(item, stage);
  if (next < REG_STAGES) {
    ws_pool_move(&a->pool, slot, stage, next);
    return;
  }
  if (item->tag != (item->id ^ REG_TAG))
    ws_atomic_add_u32(&WS_PTR(uint32_t, a->diagnostics)[0], 1u);
  ws_pool_release(&a->pool, slot, stage);
}

WS_MODULE_BEGIN(reg_kernels)
WS_MODULE_COROUTINE(reg_main)
WS_MODULE_KERNEL(reg_raw_stage)
WS_MODULE_KERNEL(reg_pool_stage)
WS_MODULE_END(reg_kernels)
