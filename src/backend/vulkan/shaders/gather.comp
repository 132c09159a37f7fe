/* SPDX-License-Identifier: MIT */
#version 460
/* slots[0..m) = the slots s < scan with tokens[s] == token, in any order;
 * counter[0] = m (the host zeroed it first).
 * Launch: n = ceil(scan / WS_QUEUE_ITEMS) (queue.glsl), or more, or a
 * capped grid whose groups walk the tiles (queue.glsl). */
#include "wavesched/kernel.glsl"
#include "queue.glsl"
#include "loop.glsl"

layout(push_constant, scalar) uniform gather_pc {
  layout(offset = 0) uint64_t tokens;
  layout(offset = 8) uint64_t slots;
  layout(offset = 16) uint64_t counter;
  layout(offset = 24) uint scan;
  layout(offset = 28) uint token;
  layout(offset = 32) uint64_t dyn; /* device loop: scan and token from its words */
} P;

void main() {
  const bool d = P.dyn != 0ul;
  const uint scan = d ? ws_dl_word(P.dyn, WS_DL_GATHER_SCAN) : P.scan;
  const uint token = d ? ws_dl_word(P.dyn, WS_DL_GATHER_TOKEN) : P.token;
  const uint64_t stride = ws_queue_tile_stride();
  for (uint64_t tile = ws_queue_tile0(); ws_queue_tile_live(tile, 0u, scan); tile += stride) {
    uint s[WS_QUEUE_ITEMS], pos[WS_QUEUE_ITEMS];
    bool hit[WS_QUEUE_ITEMS];
    [[unroll]] for (uint j = 0u; j < WS_QUEUE_ITEMS; ++j)
      hit[j] = ws_queue_item_at(tile, 0u, scan, j, s[j]) && WS_PTR(uint32_t, P.tokens)[s[j]] == token;
    ws_queue_append_items(hit, P.counter, pos);
    [[unroll]] for (uint j = 0u; j < WS_QUEUE_ITEMS; ++j)
      if (hit[j])
        WS_PTR(uint32_t, P.slots)[pos[j]] = s[j];
  }
}
