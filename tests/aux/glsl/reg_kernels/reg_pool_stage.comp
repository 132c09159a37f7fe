/* SPDX-License-Identifier: MIT */
#version 460
// ws:args_size 112
/* The library pool's stage kernel (tests/aux/regression.kern.h,
 * reg_pool_stage) over pool.glsl: one invocation per slot, keeps the slots
 * of its stage. */
#include "wavesched/kernel.glsl"
#include "regression.glsl"

WS_KERNEL(reg_pool_stage, reg_stage_args, slot, sa) {
  const reg_args a = sa.a;
  const uint stage = sa.stage;
  if (!ws_pool_in_stage(a.pool, slot, stage))
    return;
  const uint64_t item = ws_pool_payload(a.pool, slot);
  const uint id = WS_REF(reg_item)(item).v.id;
  ws_atomic_add_u32(WS_ADDR(uint32_t, a.visits, 3u * id + stage), 1u);
  const uint next = reg_next_stage(item, stage);
  if (next < REG_STAGES) {
    ws_pool_move(a.pool, slot, stage, next);
    return;
  }
  if (WS_REF(reg_item)(item).v.tag != (WS_REF(reg_item)(item).v.id ^ REG_TAG))
    ws_atomic_add_u32(a.diagnostics, 1u);
  ws_pool_release(a.pool, slot, stage);
}
