/* SPDX-License-Identifier: MIT */
#version 460
// ws:args_size 48
/* Issue 18's stage kernel (tests/aux/append.kern.h, ap_stage): one
 * invocation per slot; at most AP_RELEASE_MAX observed items terminate. */
#include "wavesched/kernel.glsl"
#include "append.glsl"

WS_KERNEL(ap_stage, ap_args, slot, a) {
  if (WS_PTR(uint32_t, a.tokens)[slot] != 1u)
    return;
  ws_atomic_add_u32(WS_ADDR(uint32_t, a.visits, WS_PTR(uint32_t, a.ids)[slot]), 1u);
  if (ws_atomic_add_u32(WS_ADDR(uint32_t, a.state, AP_RELEASED), 1u) >= AP_RELEASE_MAX)
    return;
  WS_PTR(uint32_t, a.tokens)[slot] = 0u;
  ws_atomic_sub_u32(WS_ADDR(uint32_t, a.state, AP_LIVE), 1u);
}
