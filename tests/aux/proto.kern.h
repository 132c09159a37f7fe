/* SPDX-License-Identifier: MIT */
/* Kernels of the protocol tests: one source, CPU and CUDA. */
#include "proto.h"

WS_DEVICE static void proto_publish(const proto_args *a, uint32_t id, uint32_t stage) {
  uint32_t *state = WS_PTR(uint32_t, a->state);
  int32_t old = ws_atomic_add_i32(WS_PTR(int32_t, a->state), -1);
  if (old <= 0) { /* the overflow guard: the shared allocation is exhausted */
    ws_atomic_add_i32(WS_PTR(int32_t, a->state), 1);
    ws_atomic_add_u32(&state[1], 1u);
    return;
  }
  uint32_t slot = WS_PTR(uint32_t, a->stack)[old - 1];
  proto_item *it = &WS_PTR(proto_item, a->items)[slot];
  it->id = id;
  it->loops = stage == a->loop_stage ? a->loops : 0u;
  WS_PTR(uint32_t, a->tokens)[slot] = stage + 1u;
  ws_atomic_add_u32(&state[2 + stage], 1u);
}

WS_DEVICE static uint32_t proto_entry(const ws_item *it, proto_frame *f, const proto_args *a) {
  (void)it;
  (void)a;
  f->unused = 0;
  return PT_SPARSE;
}

WS_DEVICE static uint32_t proto_sparse(const ws_item *it, proto_frame *f, const proto_args *a) {
  (void)f;
  if (a->sparse_stage != PT_NONE && it->id % a->sparse_mod == 0u)
    proto_publish(a, it->id, a->sparse_stage);
  return PT_DENSE;
}

WS_DEVICE static uint32_t proto_dense(const ws_item *it, proto_frame *f, const proto_args *a) {
  (void)f;
  for (uint32_t k = 0; k < a->dense_copies; ++k)
    proto_publish(a, it->id, a->dense_stage);
  return PT_AFTER;
}

WS_DEVICE static uint32_t proto_after(const ws_item *it, proto_frame *f, const proto_args *a) {
  (void)f;
  ws_atomic_add_u32(&WS_PTR(uint32_t, a->done)[it->id], 1u);
  return WS_TERMINATE;
}

WS_COROUTINE(proto_main, proto_frame, proto_args, proto_entry, PT_CONTINUATIONS)

WS_KERNEL(proto_stage, proto_stage_args, slot, sa) {
  const proto_args *a = &sa->a;
  const uint32_t s = sa->stage;
  uint32_t *tokens = WS_PTR(uint32_t, a->tokens);
  uint32_t *state = WS_PTR(uint32_t, a->state);
  if (tokens[slot] != s + 1u)
    return;
  proto_item *it = &WS_PTR(proto_item, a->items)[slot];
  ws_atomic_add_u32(&WS_PTR(uint32_t, a->visits)[it->id * PT_MAX_STAGES + s], 1u);
  if (s == a->forever_stage)
    return;
  if (s == a->clone_stage)
    proto_publish(a, it->id, s);
  if (s == a->loop_stage && it->loops > 0u) {
    it->loops -= 1u;
    return;
  }
  const uint32_t next = a->next[s];
  if (next < a->stage_count) {
    tokens[slot] = next + 1u;
    it->loops = next == a->loop_stage ? a->loops : 0u;
    ws_atomic_sub_u32(&state[2 + s], 1u);
    ws_atomic_add_u32(&state[2 + next], 1u);
    return;
  }
  tokens[slot] = 0u;
  ws_atomic_sub_u32(&state[2 + s], 1u);
  int32_t pos = ws_atomic_add_i32(WS_PTR(int32_t, a->state), 1);
  if (pos < 0 || (uint32_t)pos >= a->capacity) {
    ws_atomic_add_u32(&state[1], 1u);
    return;
  }
  WS_PTR(uint32_t, a->stack)[pos] = slot;
}

WS_MODULE_BEGIN(proto_kernels)
WS_MODULE_COROUTINE(proto_main)
WS_MODULE_KERNEL(proto_stage)
WS_MODULE_END(proto_kernels)
