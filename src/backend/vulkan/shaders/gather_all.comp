/* SPDX-License-Identifier: MIT */
#version 460
/* Counting-sort scatter: every slot s < scan with token t in 1..K takes the
 * next position of queue t, starting at offsets[t] (gather_all_prefix), so
 * slots holds queue 1's slots, then queue 2's, ... (order inside a queue
 * unspecified). Each workgroup reserves each queue's run of a tile with
 * one global atomic: on offsets[t] itself (cursors == 0: offsets[t] ends as
 * the end of queue t), or, with WS_VULKAN_QUEUE_CURSORS=padded, on a cursor
 * of its own 128 bytes from the next (the prefix shader zeroed them; the
 * run starts at offsets[t] + the cursor's old value), so that the tiles'
 * atomics on different queues do not meet in one 32-byte sector.
 * Launch: n = ceil(scan / WS_QUEUE_ITEMS) (queue.glsl), or more, or a
 * capped grid whose groups walk the tiles (queue.glsl). */
#include "wavesched/kernel.glsl"
#include "queue.glsl"
#include "loop.glsl"

layout(push_constant, scalar) uniform gather_all_pc {
  layout(offset = 0) uint64_t tokens;
  layout(offset = 8) uint64_t offsets;
  layout(offset = 16) uint64_t slots;
  layout(offset = 24) uint scan;
  layout(offset = 28) uint queue_count;
  layout(offset = 32) uint64_t dyn; /* device loop: scan from its words */
  layout(offset = 40) uint64_t cursors; /* 0, or WS_QUEUE_CURSOR_STRIDE words apart */
} P;

/* Tile `tile`'s tokens (0: past scan, or in no queue). The slots are not
 * kept: a store recomputes its slot from the tile (ws_queue_item_index),
 * which spares the 2 x WS_QUEUE_ITEMS registers of the current and the
 * next tile's slot arrays. */
void load_tile(uint64_t tile, uint scan, out uint t[WS_QUEUE_ITEMS]) {
  [[unroll]] for (uint j = 0u; j < WS_QUEUE_ITEMS; ++j) {
    uint s;
    t[j] = ws_queue_item_at(tile, 0u, scan, j, s) ? WS_PTR(uint32_t, P.tokens)[s] : 0u;
    if (t[j] > P.queue_count)
      t[j] = 0u; /* not in any queue */
  }
}

void main() {
  const uint scan = P.dyn != 0ul ? ws_dl_word(P.dyn, WS_DL_OBS_SCAN) : P.scan;
  const uint64_t stride = ws_queue_tile_stride();
  /* K < 256 (uniform): the tiles rank in the two histograms in turn. Tile
   * i ranks in one while its reservations zero the other, which tile i + 1
   * ranks in: its last readers were tile i - 1's stores, every one of them
   * finished before tile i's first barrier. So a tile has two barriers
   * (ranks | reservations | stores), not four (the CUDA sorted gather is
   * double-buffered the same way). */
  const bool in_shared = P.queue_count < WS_QUEUE_SHARED_TOKENS;
  uint hist = 0u;
  if (in_shared)
    ws_queue_hist_clear(P.queue_count);
  uint t[WS_QUEUE_ITEMS];
  uint64_t tile = ws_queue_tile0();
  load_tile(tile, scan, t);
  for (; ws_queue_tile_live(tile, 0u, scan); tile += stride) {
    /* a workgroup walking tiles loads the next one's tokens first, so that
     * they are in flight during this tile's ranks, reservations and
     * stores (the CUDA sorted gather does the same) */
    uint tn[WS_QUEUE_ITEMS];
    load_tile(tile + stride, scan, tn);
    if (in_shared) {
      const uint other = WS_QUEUE_SHARED_TOKENS - hist;
      uint local[WS_QUEUE_ITEMS];
      if (P.queue_count < WS_QUEUE_REG_TOKENS && ws_queue_rank_fits()) {
        ws_queue_hist_rank_match(hist, t, local);
      } else {
        [[unroll]] for (uint j = 0u; j < WS_QUEUE_ITEMS; ++j)
          local[j] = ws_queue_hist_add_at(hist, t[j], t[j] != 0u);
      }
      barrier();
      /* reserve each token's run once per tile; the entry becomes the
       * run's base */
      for (uint k = gl_LocalInvocationID.x; k <= P.queue_count; k += gl_WorkGroupSize.x) {
        const uint c = ws_queue_hist[hist + k];
        if (c != 0u)
          ws_queue_hist[hist + k] =
              P.cursors != 0ul
                  ? WS_PTR(uint32_t, P.offsets)[k] +
                        atomicAdd(WS_PTR(uint32_t, P.cursors)[k * WS_QUEUE_CURSOR_STRIDE], c)
                  : atomicAdd(WS_PTR(uint32_t, P.offsets)[k], c);
        ws_queue_hist[other + k] = 0u;
      }
      barrier();
      [[unroll]] for (uint j = 0u; j < WS_QUEUE_ITEMS; ++j)
        if (t[j] != 0u)
          WS_PTR(uint32_t, P.slots)[ws_queue_hist[hist + t[j]] + local[j]] =
              uint(ws_queue_item_index(tile, 0u, j));
      hist = other;
    } else {
      /* more tokens than shared memory holds: a subgroup-aggregated
       * atomic per item on offsets, never on the cursors */
      [[unroll]] for (uint j = 0u; j < WS_QUEUE_ITEMS; ++j) {
        const uint pos = ws_queue_global_add(P.offsets, t[j], t[j] != 0u);
        if (t[j] != 0u)
          WS_PTR(uint32_t, P.slots)[pos] = uint(ws_queue_item_index(tile, 0u, j));
      }
    }
    t = tn;
  }
}
