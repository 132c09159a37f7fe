/* SPDX-License-Identifier: MIT */
#version 460
/* The regression's main coroutine (tests/aux/regression.kern.h, reg_main)
 * in GLSL: entry -> sparse_publish -> dense_publish -> main_after_publish,
 * publishing into the hand-written client's storage or the library's pool
 * (pool.glsl) as reg_args.use_pool says. */
#include "wavesched/kernel.glsl"
#include "regression.glsl"

#define REG_FIELDS(X) X(uint32_t, published)
WS_FRAME(reg_frame, REG_FIELDS)

/* The argument block at ws_launch.args: the C struct reg_args. */
WS_ARGS(reg_args_ref) { reg_args a; };

#define REG_SPARSE 1u
#define REG_DENSE 2u
#define REG_AFTER 3u

/* ---- the hand-written client's device side ---- */

void reg_raw_publish(reg_args a, uint id, uint stage) {
  const int old = ws_atomic_add_i32(a.raw.state, -1);
  if (old <= 0) {
    ws_atomic_add_i32(a.raw.state, 1);
    ws_atomic_add_u32(a.diagnostics, 1u);
    return;
  }
  const uint slot = WS_PTR(uint32_t, a.raw.stack)[old - 1];
  WS_PTR(reg_item, a.raw.items)[slot].id = id;
  WS_PTR(reg_item, a.raw.items)[slot].tag = id ^ REG_TAG;
  WS_PTR(reg_item, a.raw.items)[slot].pending = 1u;
  WS_PTR(uint32_t, a.raw.tokens)[slot] = stage + 1u;
  ws_atomic_add_u32(WS_ADDR(uint32_t, a.raw.state, 1u + stage), 1u);
}

void reg_pool_publish(reg_args a, uint id, uint stage) {
  const uint slot = ws_pool_publish(a.pool, stage);
  if (slot == WS_POOL_NONE) {
    ws_atomic_add_u32(a.diagnostics, 1u);
    return;
  }
  const uint64_t item = ws_pool_payload(a.pool, slot);
  WS_REF(reg_item)(item).v.id = id;
  WS_REF(reg_item)(item).v.tag = id ^ REG_TAG;
  WS_REF(reg_item)(item).v.pending = 1u;
}

void reg_publish(reg_args a, uint id, uint stage) {
  if (a.use_pool != 0u)
    reg_pool_publish(a, id, stage);
  else
    reg_raw_publish(a, id, stage);
}

bool reg_items_live(reg_args a) {
  const int free_count = a.use_pool != 0u ? WS_PTR(int32_t, a.pool.state)[0]
                                          : WS_PTR(int32_t, a.raw.state)[0];
  return free_count != int(a.capacity);
}

/* ---- main coroutine ---- */

uint reg_entry(ws_item it, inout reg_frame f, reg_args_ref r) {
  f.published = 0u;
  return REG_SPARSE;
}

uint reg_sparse_publish(ws_item it, inout reg_frame f, reg_args_ref r) {
  if (it.id % 8u == 0u) {
    reg_publish(r.a, it.id, REG_FINISH);
    f.published += 1u;
  }
  return REG_DENSE;
}

uint reg_dense_publish(ws_item it, inout reg_frame f, reg_args_ref r) {
  reg_publish(r.a, it.id, REG_PREPARE);
  f.published += 1u;
  return REG_AFTER;
}

uint reg_main_after_publish(ws_item it, inout reg_frame f, reg_args_ref r) {
  const reg_args a = r.a;
  if (reg_items_live(a))
    ws_atomic_add_u32(WS_ADDR(uint32_t, a.diagnostics, 1u), 1u);
  ws_atomic_add_u32(WS_ADDR(uint32_t, a.diagnostics, 2u + it.id), 1u);
  return WS_TERMINATE;
}

#define REG_CONTINUATIONS(X)                                                               \
  X(REG_SPARSE, reg_sparse_publish)                                                        \
  X(REG_DENSE, reg_dense_publish)                                                          \
  X(REG_AFTER, reg_main_after_publish)

WS_COROUTINE(reg_main, reg_frame, reg_args_ref, reg_entry, REG_CONTINUATIONS)
