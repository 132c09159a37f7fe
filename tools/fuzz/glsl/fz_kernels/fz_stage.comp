/* SPDX-License-Identifier: MIT */
#version 460
// ws:args_size 96
/* One stage of one auxiliary work over all C slots of its pool
 * (tools/fuzz/fz_kernels.kern.h fz_stage). */
#include "wavesched/kernel.glsl"
#include "fz.glsl"

WS_KERNEL(fz_stage, fz_stage_args, slot, sa) {
  const ws_pool_view v = sa.pool;
  const uint s = sa.stage;
  if (!ws_pool_in_stage(v, slot, s))
    return;
  const uint64_t item = ws_pool_payload(v, slot);
  const uint id = WS_REF(uint32_t)(item + FZ_ITEM_ID).v;
  const uint serial = uint(WS_REF(uint16_t)(item + FZ_ITEM_SERIAL).v);
  if (WS_REF(uint32_t)(item + FZ_ITEM_CHECK).v != fz_item_check(id, serial)) {
    ws_atomic_add_u32(WS_ADDR(uint32_t, sa.errors, FZ_ERR_PAYLOAD), 1u);
    ws_pool_release(v, slot, s);
    return;
  }
  ws_atomic_add_u32(WS_ADDR(uint32_t, sa.aux_visits, id * FZ_MAX_STAGES + s), 1u);
  uint to = sa.stage_count; /* release */
  const uint left = uint(WS_REF(uint8_t)(item + FZ_ITEM_LEFT).v);
  const uint hops = uint(WS_REF(uint8_t)(item + FZ_ITEM_HOPS).v);
  if (left != 0u) {
    to = fz_anext(sa, s, fz_item_choice(sa.seed, sa.work, id, serial, hops));
    WS_REF(uint8_t)(item + FZ_ITEM_LEFT).v = uint8_t(left - 1u);
    WS_REF(uint8_t)(item + FZ_ITEM_HOPS).v = uint8_t(hops + 1u);
  }
  if (to >= sa.stage_count) {
    ws_atomic_add_u32(WS_ADDR(uint32_t, sa.released, id), 1u);
    ws_pool_release(v, slot, s);
  } else {
    ws_pool_move(v, slot, s, to);
  }
}
