/* SPDX-License-Identifier: MIT */
#version 460
/* counts[t] += |{s < scan : tokens[s] == t}| for t in 0..K (the host zeroed
 * counts[0..K] first; counts[K+1] is not touched). Tokens above K cannot be
 * written by the wrappers and are not counted, as on the CPU.
 * Launch: n = ceil(scan / WS_QUEUE_ITEMS) (queue.glsl), or more, or a
 * capped grid whose groups walk the tiles (queue.glsl). */
#include "wavesched/kernel.glsl"
#include "queue.glsl"
#include "loop.glsl"

layout(push_constant, scalar) uniform count_pc {
  layout(offset = 0) uint64_t tokens;
  layout(offset = 8) uint64_t counts;
  layout(offset = 16) uint scan;
  layout(offset = 20) uint queue_count;
  layout(offset = 24) uint64_t dyn; /* device loop: scan from its words (loop.glsl) */
} P;

/* This tile's tokens (~0u past scan: no token). */
void load_tile(uint64_t tile, uint scan, out uint t[WS_QUEUE_ITEMS]) {
  [[unroll]] for (uint j = 0u; j < WS_QUEUE_ITEMS; ++j) {
    uint s;
    t[j] = ws_queue_item_at(tile, 0u, scan, j, s) ? WS_PTR(uint32_t, P.tokens)[s] : ~0u;
  }
}

void main() {
  const uint scan = P.dyn != 0ul ? ws_dl_word(P.dyn, WS_DL_OBS_SCAN) : P.scan;
  const uint64_t tile0 = ws_queue_tile0(), stride = ws_queue_tile_stride();
  uint t[WS_QUEUE_ITEMS];
  /* uniform branches: every invocation of the workgroup takes the same
   * side and walks the same tiles, so the barriers inside are reached by
   * all of them; a group's histogram is flushed once, after its last tile */
  if (P.queue_count < WS_QUEUE_REG_TOKENS) {
    ws_queue_hist_clear(P.queue_count);
    uint cnt[WS_QUEUE_REG_TOKENS];
    [[unroll]] for (uint k = 0u; k < WS_QUEUE_REG_TOKENS; ++k)
      cnt[k] = 0u;
    for (uint64_t tile = tile0; ws_queue_tile_live(tile, 0u, scan); tile += stride) {
      load_tile(tile, scan, t);
      ws_queue_count_items(t, cnt);
    }
    ws_queue_hist_add_counts(cnt, P.queue_count);
    barrier();
    ws_queue_hist_flush(P.queue_count, P.counts);
  } else if (P.queue_count < WS_QUEUE_SHARED_TOKENS) {
    ws_queue_hist_clear(P.queue_count);
    for (uint64_t tile = tile0; ws_queue_tile_live(tile, 0u, scan); tile += stride) {
      load_tile(tile, scan, t);
      [[unroll]] for (uint j = 0u; j < WS_QUEUE_ITEMS; ++j)
        ws_queue_hist_add(t[j], t[j] <= P.queue_count);
    }
    barrier();
    ws_queue_hist_flush(P.queue_count, P.counts);
  } else {
    for (uint64_t tile = tile0; ws_queue_tile_live(tile, 0u, scan); tile += stride) {
      load_tile(tile, scan, t);
      [[unroll]] for (uint j = 0u; j < WS_QUEUE_ITEMS; ++j)
        ws_queue_global_add(P.counts, t[j], t[j] <= P.queue_count);
    }
  }
}
