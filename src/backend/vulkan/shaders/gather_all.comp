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
/* four tiles' histograms in flight (main) */
#define WS_QUEUE_HISTS 4u
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

/* Histogram entries 0..K (K < WS_QUEUE_SHARED_TOKENS) per invocation:
 * entry k belongs to invocation k mod B. Two cover every K for a workgroup
 * of B >= 128 invocations, which Vulkan's minimum limits guarantee
 * (maxComputeWorkGroupSize[0], maxComputeWorkGroupInvocations; vk_device.c
 * makes the queue block min(256, those)). */
const uint WS_GA_ENTRIES = WS_QUEUE_SHARED_TOKENS / 128u;

/* Tile `tile`'s tokens (0: past scan, or in no queue). */
void load_tile(uint64_t tile, uint scan, out uint t[WS_QUEUE_ITEMS]) {
  [[unroll]] for (uint j = 0u; j < WS_QUEUE_ITEMS; ++j) {
    uint s;
    t[j] = ws_queue_item_at(tile, 0u, scan, j, s) ? WS_PTR(uint32_t, P.tokens)[s] : 0u;
    if (t[j] > P.queue_count)
      t[j] = 0u; /* not in any queue */
  }
}

/* The histogram of the workgroup's i-th tile (i counts its own tiles). */
uint hist_of(uint i) { return (i & 3u) * WS_QUEUE_SHARED_TOKENS; }

/* Counts tokens t into histogram h; local[j]: item j's place in its run. */
void rank_tile(uint h, uint t[WS_QUEUE_ITEMS], out uint local[WS_QUEUE_ITEMS]) {
  if (P.queue_count < WS_QUEUE_REG_TOKENS) {
    ws_queue_hist_rank_items(h, t, P.queue_count, local);
  } else {
    [[unroll]] for (uint j = 0u; j < WS_QUEUE_ITEMS; ++j)
      local[j] = ws_queue_hist_add_at(h, t[j], t[j] != 0u);
  }
}

/* Reserves the runs counted in histogram h, entry by entry of this
 * invocation: the global atomic's old value in run[e] (0 without a run),
 * not waited for here. */
void reserve(uint h, out uint run[WS_GA_ENTRIES]) {
  [[unroll]] for (uint e = 0u; e < WS_GA_ENTRIES; ++e) {
    const uint k = gl_LocalInvocationID.x + e * gl_WorkGroupSize.x;
    const uint c = k <= P.queue_count ? ws_queue_hist[h + k] : 0u;
    run[e] = c == 0u                ? 0u
             : P.cursors != 0ul ? atomicAdd(WS_PTR(uint32_t, P.cursors)[k * WS_QUEUE_CURSOR_STRIDE], c)
                                    : atomicAdd(WS_PTR(uint32_t, P.offsets)[k], c);
  }
}

void main() {
  const uint scan = P.dyn != 0ul ? ws_dl_word(P.dyn, WS_DL_OBS_SCAN) : P.scan;
  const uint64_t stride = ws_queue_tile_stride();
  const uint K = P.queue_count;
  uint64_t tile = ws_queue_tile0();
  if (K >= WS_QUEUE_SHARED_TOKENS) {
    /* more tokens than shared memory holds: a subgroup-aggregated atomic
     * per item on offsets, never on the cursors */
    for (; ws_queue_tile_live(tile, 0u, scan); tile += stride) {
      uint t[WS_QUEUE_ITEMS];
      load_tile(tile, scan, t);
      [[unroll]] for (uint j = 0u; j < WS_QUEUE_ITEMS; ++j) {
        const uint pos = ws_queue_global_add(P.offsets, t[j], t[j] != 0u);
        uint s;
        ws_queue_item_at(tile, 0u, scan, j, s);
        if (t[j] != 0u)
          WS_PTR(uint32_t, P.slots)[pos] = s;
      }
    }
    return;
  }
  /* A pipeline over the workgroup's tiles i = 0, 1, ..., one barrier per
   * tile. Pass i: load tile i + 2's tokens, rank tile i + 1 in histogram
   * (i + 1) % 4, write tile i's run starts (the reservations of pass
   * i - 1, which have had a pass to return) into histogram i % 4 | barrier
   * | reserve tile i + 1's runs, zero histogram (i + 3) % 4, store tile i's
   * slots. So the global atomics' round trip overlaps a tile's stores and
   * the next tile's ranks instead of holding the workgroup between two
   * barriers (session 13's form: rank | reserve | store, two barriers, the
   * reservation waited for). Histogram (i + 3) % 4 = (i - 1) % 4 was last
   * read by tile i - 1's stores, before this pass's barrier; it is ranked
   * in again in pass i + 2, after pass i + 1's barrier. Three histograms
   * would not do: the zeroing and the ranks of the next pass would have no
   * barrier between them. */
  [[unroll]] for (uint e = 0u; e < WS_GA_ENTRIES; ++e) {
    const uint k = gl_LocalInvocationID.x + e * gl_WorkGroupSize.x;
    if (k <= K) {
      ws_queue_hist[hist_of(0u) + k] = 0u;
      ws_queue_hist[hist_of(1u) + k] = 0u;
      ws_queue_hist[hist_of(2u) + k] = 0u;
    }
  }
  /* where each run starts: offsets[k] + the cursor's old value, or the old
   * value of offsets[k] itself */
  uint first[WS_GA_ENTRIES];
  [[unroll]] for (uint e = 0u; e < WS_GA_ENTRIES; ++e) {
    const uint k = gl_LocalInvocationID.x + e * gl_WorkGroupSize.x;
    first[e] = P.cursors != 0ul && k <= K ? WS_PTR(uint32_t, P.offsets)[k] : 0u;
  }
  barrier();
  uint t[WS_QUEUE_ITEMS], tn[WS_QUEUE_ITEMS], local[WS_QUEUE_ITEMS], run[WS_GA_ENTRIES];
  load_tile(tile, scan, t);
  load_tile(tile + stride, scan, tn);
  rank_tile(hist_of(0u), t, local);
  barrier();
  reserve(hist_of(0u), run);
  for (uint i = 0u; ws_queue_tile_live(tile, 0u, scan); ++i, tile += stride) {
    uint tnn[WS_QUEUE_ITEMS], localn[WS_QUEUE_ITEMS];
    load_tile(tile + 2ul * stride, scan, tnn);
    rank_tile(hist_of(i + 1u), tn, localn);
    [[unroll]] for (uint e = 0u; e < WS_GA_ENTRIES; ++e) {
      const uint k = gl_LocalInvocationID.x + e * gl_WorkGroupSize.x;
      if (k <= K)
        ws_queue_hist[hist_of(i) + k] = first[e] + run[e];
    }
    barrier();
    reserve(hist_of(i + 1u), run);
    [[unroll]] for (uint e = 0u; e < WS_GA_ENTRIES; ++e) {
      const uint k = gl_LocalInvocationID.x + e * gl_WorkGroupSize.x;
      if (k <= K)
        ws_queue_hist[hist_of(i + 3u) + k] = 0u;
    }
    [[unroll]] for (uint j = 0u; j < WS_QUEUE_ITEMS; ++j) {
      uint s;
      ws_queue_item_at(tile, 0u, scan, j, s);
      if (t[j] != 0u)
        WS_PTR(uint32_t, P.slots)[ws_queue_hist[hist_of(i) + t[j]] + local[j]] = s;
    }
    t = tn;
    tn = tnn;
    local = localn;
  }
}
