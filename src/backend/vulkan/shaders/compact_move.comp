/* SPDX-License-Identifier: MIT */
#version 460
/* Compaction, pass 2: the k-th live frame found in [n, scan) moves into
 * hole scratch[k]: its frame storage, id and token; its old token becomes 0.
 * A k beyond the holes (the live count was wrong) leaves the frame where it
 * is and sets STATE_ERR_COMPACT. Launch: ceil((scan - n) / WS_QUEUE_ITEMS)
 * invocations (queue.glsl), or more, or a capped grid whose groups walk the
 * tiles (queue.glsl); item i is slot n + i. */
#include "wavesched/kernel.glsl"
#include "queue.glsl"
#include "compact.glsl"

void ws_move(uint s, uint token, uint k) {
  if (k >= WS_PTR(uint32_t, P.state)[STATE_HOLES]) {
    atomicOr(WS_PTR(uint32_t, P.state)[STATE_ERROR], STATE_ERR_COMPACT);
    return;
  }
  ws_compact_move_frame(WS_PTR(uint32_t, P.scratch)[k], s, token);
}

void main() {
  const uint n = ws_compact_n(), scan = ws_compact_scan();
  const uint64_t stride = ws_queue_tile_stride();
  for (uint64_t tile = ws_queue_tile0(); ws_queue_tile_live(tile, n, scan); tile += stride) {
    uint s[WS_QUEUE_ITEMS], token[WS_QUEUE_ITEMS], k[WS_QUEUE_ITEMS];
    bool live[WS_QUEUE_ITEMS];
    [[unroll]] for (uint j = 0u; j < WS_QUEUE_ITEMS; ++j) {
      token[j] = ws_queue_item_at(tile, n, scan, j, s[j]) ? WS_PTR(uint32_t, P.tokens)[s[j]] : 0u;
      live[j] = token[j] != 0u;
    }
    ws_queue_append_items(live, WS_ADDR(uint32_t, P.state, STATE_MOVERS), k);
    [[unroll]] for (uint j = 0u; j < WS_QUEUE_ITEMS; ++j)
      if (live[j])
        ws_move(s[j], token[j], k[j]);
  }
}
