/* SPDX-License-Identifier: MIT */
#version 460
// ws:args_size 112
/* The hand-written client's stage kernel (tests/aux/regression.kern.h,
 * reg_raw_stage): one invocation per slot, keeps the slots of its stage. */
#include "wavesched/kernel.glsl"
#include "regression.glsl"

WS_KERNEL(reg_raw_stage, reg_stage_args, slot, sa) {
  const reg_args a = sa.a;
  const uint stage = sa.stage;
  if (WS_PTR(uint32_t, a.raw.tokens)[slot] != stage + 1u)
    return;
  const uint64_t item = WS_ADDR(reg_item, a.raw.items, slot);
  const uint id = WS_REF(reg_item)(item).v.id;
  ws_atomic_add_u32(WS_ADDR(uint32_t, a.visits, 3u * id + stage), 1u);
  const uint next = reg_next_stage(item, stage);
  if (next < REG_STAGES) {
    WS_PTR(uint32_t, a.raw.tokens)[slot] = next + 1u;
    if (next != stage) {
      ws_atomic_sub_u32(WS_ADDR(uint32_t, a.raw.state, 1u + stage), 1u);
      ws_atomic_add_u32(WS_ADDR(uint32_t, a.raw.state, 1u + next), 1u);
    }
    return;
  }
  /* terminal release: payload check, then the slot goes back on the stack */
  if (WS_REF(reg_item)(item).v.tag != (WS_REF(reg_item)(item).v.id ^ REG_TAG))
    ws_atomic_add_u32(a.diagnostics, 1u);
  WS_PTR(uint32_t, a.raw.tokens)[slot] = 0u;
  ws_atomic_sub_u32(WS_ADDR(uint32_t, a.raw.state, 1u + stage), 1u);
  const int pos = ws_atomic_add_i32(a.raw.state, 1);
  if (pos < 0 || uint(pos) >= a.capacity) {
    ws_atomic_add_u32(a.diagnostics, 1u);
    return;
  }
  WS_PTR(uint32_t, a.raw.stack)[pos] = slot;
}
