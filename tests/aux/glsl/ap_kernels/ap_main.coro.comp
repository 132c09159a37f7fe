/* SPDX-License-Identifier: MIT */
#version 460
/* Issue 18's main coroutine (tests/aux/append.kern.h, ap_main) in GLSL:
 * entry -> produce (x3, one append publication each) -> terminate. */
#include "wavesched/kernel.glsl"
#include "append.glsl"

#define AP_FIELDS(X) X(uint32_t, runs)
WS_FRAME(ap_frame, AP_FIELDS)

WS_ARGS(ap_args_ref) { ap_args a; };

#define AP_PRODUCE 1u

void ap_publish(ap_args a, uint id) {
  const uint slot = ws_atomic_add_u32(WS_ADDR(uint32_t, a.state, AP_EXTENT), 1u);
  if (slot >= a.capacity) {
    ws_atomic_add_u32(WS_ADDR(uint32_t, a.state, AP_ERRORS), 1u);
    return;
  }
  WS_PTR(uint32_t, a.ids)[slot] = id;
  WS_PTR(uint32_t, a.tokens)[slot] = 1u;
  ws_atomic_add_u32(WS_ADDR(uint32_t, a.state, AP_LIVE), 1u);
}

uint ap_entry(ws_item it, inout ap_frame f, ap_args_ref r) {
  f.runs = 0u;
  return AP_PRODUCE;
}

uint ap_produce(ws_item it, inout ap_frame f, ap_args_ref r) {
  const ap_args a = r.a;
  ap_publish(a, it.id);
  f.runs += 1u;
  if (f.runs < AP_PUBLISHES)
    return AP_PRODUCE;
  ws_atomic_add_u32(WS_ADDR(uint32_t, a.done, it.id), 1u);
  return WS_TERMINATE;
}

#define AP_CONTINUATIONS(X) X(AP_PRODUCE, ap_produce)

WS_COROUTINE(ap_main, ap_frame, ap_args_ref, ap_entry, AP_CONTINUATIONS)
