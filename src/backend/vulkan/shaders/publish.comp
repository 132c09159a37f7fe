/* SPDX-License-Identifier: MIT */
#version 460
/* Incremental accounting after a launch of n frames from continuation src:
 * counts[src] -= n (src != 0) and counts[tokens[slot]] += 1 for each frame
 * (slot = slots[i], or slot_base + i when slots == 0). Counts are unsigned
 * and only the total of all updates matters, so the order of the atomics
 * is free. Launch: ceil(n / WS_QUEUE_ITEMS) (queue.glsl), or more, or a
 * capped grid whose groups walk the tiles (queue.glsl). */
#include "wavesched/kernel.glsl"
#include "queue.glsl"
#include "loop.glsl"

layout(push_constant, scalar) uniform publish_pc {
  layout(offset = 0) uint64_t tokens;
  layout(offset = 8) uint64_t slots;
  layout(offset = 16) uint64_t counts;
  layout(offset = 24) uint n;
  layout(offset = 28) uint src;
  layout(offset = 32) uint slot_base;
  layout(offset = 36) uint queue_count;
  layout(offset = 40) uint64_t dyn; /* device loop: n, src, slots, slot_base from its words */
} P;

/* The new tokens of this tile's frames (0 past n, or above K: not in any
 * queue); the frame at launch index 0 also takes the launch's n off
 * counts[src]. All slot indices first, then all tokens: two rounds of
 * loads in flight. */
void load_tile(uint64_t tile, uint n, uint src, uint slot_base, uint64_t slots,
               out uint t[WS_QUEUE_ITEMS]) {
  uint slot[WS_QUEUE_ITEMS];
  bool have[WS_QUEUE_ITEMS];
  [[unroll]] for (uint j = 0u; j < WS_QUEUE_ITEMS; ++j) {
    uint i;
    have[j] = ws_queue_item_at(tile, 0u, n, j, i);
    slot[j] = 0u;
    if (have[j]) {
      slot[j] = slots != 0ul ? WS_PTR(uint32_t, slots)[i] : slot_base + i;
      if (i == 0u && src != 0u)
        atomicAdd(WS_PTR(uint32_t, P.counts)[src], 0u - n);
    }
  }
  [[unroll]] for (uint j = 0u; j < WS_QUEUE_ITEMS; ++j) {
    t[j] = have[j] ? WS_PTR(uint32_t, P.tokens)[slot[j]] : 0u;
    if (t[j] > P.queue_count)
      t[j] = 0u; /* not in any queue */
  }
}

void main() {
  const bool d = P.dyn != 0ul;
  const uint n = d ? ws_dl_word(P.dyn, WS_DL_PUB_N) : P.n;
  const uint src = d ? ws_dl_word(P.dyn, WS_DL_PUB_SRC) : P.src;
  const uint slot_base = d ? ws_dl_word(P.dyn, WS_DL_PUB_SLOT_BASE) : P.slot_base;
  const uint64_t slots = d ? WS_PTR(uint64_t, P.dyn)[WS_DL_PUB_SLOTS / 2u] : P.slots;
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
    for (uint64_t tile = tile0; ws_queue_tile_live(tile, 0u, n); tile += stride) {
      load_tile(tile, n, src, slot_base, slots, t);
      ws_queue_count_items(t, cnt);
    }
    cnt[0] = 0u; /* token 0 (terminated, or not in a queue) is not counted */
    ws_queue_hist_add_counts(cnt, P.queue_count);
    barrier();
    ws_queue_hist_flush(P.queue_count, P.counts);
  } else if (P.queue_count < WS_QUEUE_SHARED_TOKENS) {
    ws_queue_hist_clear(P.queue_count);
    for (uint64_t tile = tile0; ws_queue_tile_live(tile, 0u, n); tile += stride) {
      load_tile(tile, n, src, slot_base, slots, t);
      [[unroll]] for (uint j = 0u; j < WS_QUEUE_ITEMS; ++j)
        ws_queue_hist_add(t[j], t[j] != 0u);
    }
    barrier();
    ws_queue_hist_flush(P.queue_count, P.counts);
  } else {
    for (uint64_t tile = tile0; ws_queue_tile_live(tile, 0u, n); tile += stride) {
      load_tile(tile, n, src, slot_base, slots, t);
      [[unroll]] for (uint j = 0u; j < WS_QUEUE_ITEMS; ++j)
        ws_queue_global_add(P.counts, t[j], t[j] != 0u);
    }
  }
}
