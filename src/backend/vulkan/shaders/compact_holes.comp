/* SPDX-License-Identifier: MIT */
#version 460
/* Compaction, pass 1: every free slot (token 0) of [0, n) appends itself to
 * scratch; state[HOLES] ends as their number (zeroed by the host).
 * Launch: ceil(n / WS_QUEUE_ITEMS) invocations (queue.glsl), or more, or a
 * capped grid whose groups walk the tiles (queue.glsl). */
#include "wavesched/kernel.glsl"
#include "queue.glsl"
#include "compact.glsl"

void main() {
  const uint n = ws_compact_n();
  const uint64_t stride = ws_queue_tile_stride();
  for (uint64_t tile = ws_queue_tile0(); ws_queue_tile_live(tile, 0u, n); tile += stride) {
    uint s[WS_QUEUE_ITEMS], pos[WS_QUEUE_ITEMS];
    bool hole[WS_QUEUE_ITEMS];
    [[unroll]] for (uint j = 0u; j < WS_QUEUE_ITEMS; ++j)
      hole[j] = ws_queue_item_at(tile, 0u, n, j, s[j]) && WS_PTR(uint32_t, P.tokens)[s[j]] == 0u;
    ws_queue_append_items(hole, WS_ADDR(uint32_t, P.state, STATE_HOLES), pos);
    [[unroll]] for (uint j = 0u; j < WS_QUEUE_ITEMS; ++j)
      if (hole[j])
        WS_PTR(uint32_t, P.scratch)[pos[j]] = s[j];
  }
}
