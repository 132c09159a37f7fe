/* SPDX-License-Identifier: MIT */
#version 460
// ws:args_size 112
/* The protocol tests' stage kernel (tests/aux/proto.kern.h, proto_stage): one
 * invocation per slot, driven by the transition table, with the switches
 * for a cloning stage and a stage that never lets go. */
#include "wavesched/kernel.glsl"
#include "proto.glsl"

WS_KERNEL(proto_stage, proto_stage_args, slot, sa) {
  const proto_args a = sa.a;
  const uint s = sa.stage;
  if (WS_PTR(uint32_t, a.tokens)[slot] != s + 1u)
    return;
  const uint64_t it = WS_ADDR(proto_item, a.items, slot);
  const uint id = WS_REF(proto_item)(it).v.id;
  ws_atomic_add_u32(WS_ADDR(uint32_t, a.visits, id * PT_MAX_STAGES + s), 1u);
  if (s == a.forever_stage)
    return;
  if (s == a.clone_stage)
    proto_publish(a, id, s);
  if (s == a.loop_stage && WS_REF(proto_item)(it).v.loops > 0u) {
    WS_REF(proto_item)(it).v.loops -= 1u;
    return;
  }
  const uint next = a.next[s];
  if (next < a.stage_count) {
    WS_PTR(uint32_t, a.tokens)[slot] = next + 1u;
    WS_REF(proto_item)(it).v.loops = next == a.loop_stage ? a.loops : 0u;
    ws_atomic_sub_u32(WS_ADDR(uint32_t, a.state, 2u + s), 1u);
    ws_atomic_add_u32(WS_ADDR(uint32_t, a.state, 2u + next), 1u);
    return;
  }
  WS_PTR(uint32_t, a.tokens)[slot] = 0u;
  ws_atomic_sub_u32(WS_ADDR(uint32_t, a.state, 2u + s), 1u);
  const int pos = ws_atomic_add_i32(a.state, 1);
  if (pos < 0 || uint(pos) >= a.capacity) {
    ws_atomic_add_u32(WS_ADDR(uint32_t, a.state, 1u), 1u);
    return;
  }
  WS_PTR(uint32_t, a.stack)[pos] = slot;
}
