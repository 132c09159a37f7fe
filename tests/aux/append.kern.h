/* SPDX-License-Identifier: MIT */
/* Kernels of issue 18's test (append.h): one source for CPU and CUDA. */
#include "append.h"

/* Append allocation: the slot at the extent. A full extent counts an error
 * (admission against the available slots makes it impossible). */
WS_DEVICE static void ap_publish(const ap_args *a, uint32_t id) {
  uint32_t *state = WS_PTR(uint32_t, a->state);
  const uint32_t slot = ws_atomic_add_u32(&state[AP_EXTENT], 1u);
  if (slot >= a->capacity) {
    ws_atomic_add_u32(&state[AP_ERRORS], 1u);
    return;
  }
  WS_PTR(uint32_t, a->ids)[slot] = id;
  WS_PTR(uint32_t, a->tokens)[slot] = 1u;
  ws_atomic_add_u32(&state[AP_LIVE], 1u);
}

WS_DEVICE static uint32_t ap_entry(const ws_item *it, ap_frame *f, const ap_args *a) {
  (void)it;
  (void)a;
  f->runs = 0;
  return AP_PRODUCE;
}

WS_DEVICE static uint32_t ap_produce(const ws_item *it, ap_frame *f, const ap_args *a) {
  ap_publish(a, it->id);
  f->runs += 1u;
  if (f->runs < AP_PUBLISHES)
    return AP_PRODUCE;
  ws_atomic_add_u32(&WS_PTR(uint32_t, a->done)[it->id], 1u);
  return WS_TERMINATE;
}

WS_COROUTINE(ap_main, ap_frame, ap_args, ap_entry, AP_CONTINUATIONS)

/* The stage, over all C slots: at most AP_RELEASE_MAX of the observed items
 * terminate (state[AP_RELEASED] counts them; the host zeroes it before each
 * dispatch), the others stay. */
WS_KERNEL(ap_stage, ap_args, slot, a) {
  uint32_t *tokens = WS_PTR(uint32_t, a->tokens);
  uint32_t *state = WS_PTR(uint32_t, a->state);
  if (tokens[slot] != 1u)
    return;
  ws_atomic_add_u32(&WS_PTR(uint32_t, a->visits)[WS_PTR(uint32_t, a->ids)[slot]], 1u);
  if (ws_atomic_add_u32(&state[AP_RELEASED], 1u) >= AP_RELEASE_MAX)
    return;
  tokens[slot] = 0u;
  ws_atomic_sub_u32(&state[AP_LIVE], 1u);
}

WS_MODULE_BEGIN(ap_kernels)
WS_MODULE_COROUTINE(ap_main)
WS_MODULE_KERNEL(ap_stage)
WS_MODULE_END(ap_kernels)
