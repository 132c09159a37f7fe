/* SPDX-License-Identifier: MIT */
/* Helpers shared by the queue shaders: a per-workgroup histogram so that a
 * workgroup issues one global atomic per token it saw instead of one per
 * slot (DEVICE.md: naive global atomics are 5-100x slower). Used when the
 * tokens 0..K fit in WS_QUEUE_SHARED_TOKENS entries; beyond that the shaders
 * fall back to subgroup-aggregated global atomics (one per distinct token per
 * subgroup).
 *
 * Shared-memory atomics are aggregated per subgroup as well: 256
 * invocations adding 1 to the same few shared words serialize on them (a
 * queue of 35 % of the slots puts ~90 invocations of a workgroup on one
 * word), so each subgroup adds its peers' total once per distinct token. */
#ifndef WAVESCHED_VK_QUEUE_GLSL
#define WAVESCHED_VK_QUEUE_GLSL

/* The loops over an invocation's WS_QUEUE_ITEMS slots and over the
 * WS_QUEUE_REG_TOKENS register counters carry [[unroll]] (SPIR-V loop
 * control Unroll): glslc -O keeps them as loops over Function-storage
 * arrays (tokens, slots, ranks, counters), and the hint asks the driver to
 * unroll them, so that the arrays become registers instead of memory
 * indexed at run time (the CUDA sorted gather lost 6 points of bandwidth to
 * such an array in local memory: Nsight Compute, s8run4/s8run5). Whether
 * NVIDIA's driver needed the hint is not measured (session 9). */
#extension GL_EXT_control_flow_attributes : require

const uint WS_QUEUE_SHARED_TOKENS = 256u;

/* gather_all's padded cursors (WS_VULKAN_QUEUE_CURSORS=padded): the cursor
 * of token t is word t * WS_QUEUE_CURSOR_STRIDE of the backend's cursor
 * area (vk_internal.h WS_VK_STATE_CURSORS), one 128-byte line each. */
const uint WS_QUEUE_CURSOR_STRIDE = 32u;

/* Slots per invocation (vk_queue.c WS_VK_QUEUE_ITEMS must agree): workgroup
 * g covers the B * WS_QUEUE_ITEMS slots from g * B * WS_QUEUE_ITEMS, item j
 * of invocation l being slot base + j * B + l (striped: every subgroup load
 * is contiguous). Eight per invocation make a workgroup's barriers and its
 * global atomics (one per token it saw) serve 2048 slots instead of 256 —
 * at 2^24 slots one workgroup per 256 put 65,536 atomics on each of a few
 * count words. The host dispatches ceil(n / WS_QUEUE_ITEMS) invocations, and
 * so does the device loop (until session 9 it dispatched one invocation per
 * slot, 7 of 8 workgroups without slots); a dispatch of more leaves the
 * surplus workgroups without slots, which then do nothing but their
 * barriers. */
const uint WS_QUEUE_ITEMS = 8u;

/* The most tiles one workgroup walks (vk_queue.c WS_VK_QUEUE_TILES_MAX): a
 * dispatch capped below tiles / WS_QUEUE_TILES_MAX groups gets that many. */
const uint WS_QUEUE_TILES_MAX = 256u;

/* Tiles: tile t holds the B * WS_QUEUE_ITEMS indices from
 * first + t * B * WS_QUEUE_ITEMS. A dispatch of one workgroup per tile (the
 * default: the host's chunks of WS_CHUNK_GROUPS groups, the device loop's
 * commands) gives group g tile g and nothing else. A dispatch capped at
 * G < WS_CHUNK_GROUPS groups (WS_VULKAN_QUEUE_GROUPS, docs/vulkan.md) has
 * group g walk tiles g, g + G, g + 2G, ..., so that what a group pays once
 * (clearing its histogram, flushing it with a global atomic per token) is
 * paid per group instead of per tile. A dispatch of WS_CHUNK_GROUPS groups
 * or more is always one group per tile: it is a chunk of a per-tile
 * dispatch, or a device loop command sized one group per tile or larger,
 * and must not walk into the next chunk's tiles. Tile numbers are 64-bit:
 * the stride of a per-tile dispatch is past every tile. */
uint64_t ws_queue_tile0() {
  return uint64_t(gl_WorkGroupID.z) * uint64_t(WS_CHUNK_GROUPS) + uint64_t(gl_WorkGroupID.x);
}
uint64_t ws_queue_tile_stride() {
  return gl_NumWorkGroups.x >= WS_CHUNK_GROUPS ? (1ul << 40) : uint64_t(gl_NumWorkGroups.x);
}

/* Whether tile `tile` from `first` holds any index below `end` (the same
 * in the whole workgroup: a tile loop's condition, barriers inside). */
bool ws_queue_tile_live(uint64_t tile, uint first, uint end) {
  return uint64_t(first) + tile * uint64_t(gl_WorkGroupSize.x * WS_QUEUE_ITEMS) < uint64_t(end);
}

/* Item j of tile `tile`: its index (first + the tile's base + j * B + l),
 * and (_at) whether it is below `end`. A shader that holds a tile's items
 * across work recomputes the index from the tile instead of keeping it:
 * an array of indices is WS_QUEUE_ITEMS registers per tile held. */
uint64_t ws_queue_item_index(uint64_t tile, uint first, uint j) {
  return uint64_t(first) + tile * uint64_t(gl_WorkGroupSize.x * WS_QUEUE_ITEMS) +
         uint64_t(j * gl_WorkGroupSize.x + gl_LocalInvocationID.x);
}
bool ws_queue_item_at(uint64_t tile, uint first, uint end, uint j, out uint index) {
  const uint64_t i = ws_queue_item_index(tile, first, j);
  index = uint(i);
  return i < uint64_t(end);
}
/* Two histograms of WS_QUEUE_SHARED_TOKENS entries: the first at 0 (count,
 * publish), both in turn in gather_all.comp, which ranks a tile in one
 * while it zeroes the other for the next tile (base 0 or
 * WS_QUEUE_SHARED_TOKENS in the _at functions). */
shared uint ws_queue_hist[2u * WS_QUEUE_SHARED_TOKENS];

/* Zeroes entries 0..K (K < WS_QUEUE_SHARED_TOKENS); ends with a barrier. */
void ws_queue_hist_clear(uint K) {
  for (uint k = gl_LocalInvocationID.x; k <= K; k += gl_WorkGroupSize.x)
    ws_queue_hist[k] = 0u;
  barrier();
}

/* Adds 1 to ws_queue_hist[hist + key] (the histogram at `hist`; without
 * _at the first) for every invocation with `valid`, with one
 * shared atomic per distinct key per subgroup, and returns this
 * invocation's rank in that entry: the entry's old value plus the number of
 * lower invocations of its subgroup with the same key. Ranks within one
 * entry are therefore distinct and dense from the entry's start. No barrier
 * inside: any control flow may call it. The loop is the one of kernel.glsl's
 * ws_atomic_add_u32_agg: each pass, the invocations that share the first
 * active invocation's key combine and leave. */
uint ws_queue_hist_add_at(uint hist, uint key, bool valid) {
  uint result = 0u;
  if (valid) {
    for (;;) {
      if (key == subgroupBroadcastFirst(key)) {
        const uvec4 peers = subgroupBallot(true);
        uint base = 0u;
        if (subgroupElect())
          base = atomicAdd(ws_queue_hist[hist + key], subgroupBallotBitCount(peers));
        result = subgroupBroadcastFirst(base) + subgroupBallotExclusiveBitCount(peers);
        break;
      }
    }
  }
  return result;
}
uint ws_queue_hist_add(uint key, bool valid) { return ws_queue_hist_add_at(0u, key, valid); }

/* The same for more tokens than shared memory holds: adds 1 to the
 * uint32_t at words + 4 * key with one global atomic per distinct key per
 * subgroup, and returns this invocation's rank (old value + lower peers). */
uint ws_queue_global_add(uint64_t words, uint key, bool valid) {
  uint result = 0u;
  if (valid) {
    for (;;) {
      if (key == subgroupBroadcastFirst(key)) {
        const uvec4 peers = subgroupBallot(true);
        uint base = 0u;
        if (subgroupElect())
          base = atomicAdd(WS_PTR(uint32_t, words)[key], subgroupBallotBitCount(peers));
        result = subgroupBroadcastFirst(base) + subgroupBallotExclusiveBitCount(peers);
        break;
      }
    }
  }
  return result;
}

/* Tokens 0..K with K < WS_QUEUE_REG_TOKENS are counted in registers: each
 * invocation compares its items with every token (pure ALU work, a few
 * instructions per item, where the subgroup-aggregated adds above cost a
 * loop pass per distinct token per item), and each subgroup adds its totals
 * to the shared histogram once per workgroup. */
const uint WS_QUEUE_REG_TOKENS = 8u;

/* cnt[k] += the items equal to k (k < WS_QUEUE_REG_TOKENS). */
void ws_queue_count_items(uint t[WS_QUEUE_ITEMS], inout uint cnt[WS_QUEUE_REG_TOKENS]) {
  [[unroll]] for (uint j = 0u; j < WS_QUEUE_ITEMS; ++j)
    [[unroll]] for (uint k = 0u; k < WS_QUEUE_REG_TOKENS; ++k)
      cnt[k] += t[j] == k ? 1u : 0u;
}

/* Adds every invocation's cnt[0..K] to ws_queue_hist: one subgroup sum and
 * one shared atomic per token per subgroup. Uniform control flow. */
void ws_queue_hist_add_counts(uint cnt[WS_QUEUE_REG_TOKENS], uint K) {
  [[unroll]] for (uint k = 0u; k < WS_QUEUE_REG_TOKENS; ++k) {
    const uint total = subgroupAdd(cnt[k]);
    if (k <= K && total != 0u && subgroupElect())
      atomicAdd(ws_queue_hist[k], total);
  }
}

/* Ranks for tokens 1..K, K < WS_QUEUE_REG_TOKENS (three bits), in the
 * histogram at `hist` (0 or WS_QUEUE_SHARED_TOKENS), the way the CUDA
 * sorted gather ranks them: per item, three ballots of the token's bits give
 * each invocation its peers (the invocations of its subgroup holding the
 * same token: CUB's MatchAny), the lowest peer adds their number to the
 * token's entry with one shared atomic and leaves the entry's old value in
 * ws_queue_rank_base for the others, and the rank is that base plus the
 * peers below. One ballot per token per item (the form before session 15)
 * cost K ballots, K conditional counts and a K-way select per item where
 * this costs three ballots. t[j] == 0: no rank. Uniform control flow; for
 * gl_NumSubgroups <= WS_QUEUE_RANK_SUBGROUPS only (ws_queue_rank_fits). */
const uint WS_QUEUE_RANK_SUBGROUPS = 32u;
shared uint ws_queue_rank_base[WS_QUEUE_ITEMS * WS_QUEUE_RANK_SUBGROUPS * WS_QUEUE_REG_TOKENS];
bool ws_queue_rank_fits() { return gl_NumSubgroups <= WS_QUEUE_RANK_SUBGROUPS; }
void ws_queue_hist_rank_match(uint hist, uint t[WS_QUEUE_ITEMS], out uint rank[WS_QUEUE_ITEMS]) {
  const uvec4 lanes = subgroupBallot(true);
  [[unroll]] for (uint j = 0u; j < WS_QUEUE_ITEMS; ++j) {
    uvec4 peers = lanes;
    [[unroll]] for (uint b = 0u; b < 3u; ++b) {
      const bool bit = ((t[j] >> b) & 1u) != 0u;
      const uvec4 v = subgroupBallot(bit);
      peers &= bit ? v : ~v;
    }
    rank[j] = subgroupBallotExclusiveBitCount(peers);
    if (t[j] != 0u && rank[j] == 0u)
      ws_queue_rank_base[(j * WS_QUEUE_RANK_SUBGROUPS + gl_SubgroupID) * WS_QUEUE_REG_TOKENS +
                         t[j]] = atomicAdd(ws_queue_hist[hist + t[j]], subgroupBallotBitCount(peers));
  }
  /* the leaders' bases, written above, for their peers in this subgroup;
   * the workgroup barrier after the ranks orders these reads before the
   * next tile's writes */
  subgroupBarrier();
  [[unroll]] for (uint j = 0u; j < WS_QUEUE_ITEMS; ++j)
    if (t[j] != 0u)
      rank[j] += ws_queue_rank_base[(j * WS_QUEUE_RANK_SUBGROUPS + gl_SubgroupID) *
                                        WS_QUEUE_REG_TOKENS +
                                    t[j]];
}

/* Adds entries 0..K to the uint32_t array at `counts`; call after a barrier
 * that follows the last local increment. */
void ws_queue_hist_flush(uint K, uint64_t counts) {
  for (uint k = gl_LocalInvocationID.x; k <= K; k += gl_WorkGroupSize.x) {
    const uint c = ws_queue_hist[k];
    if (c != 0u)
      atomicAdd(WS_PTR(uint32_t, counts)[k], c);
  }
}

/* Workgroup-aggregated append of WS_QUEUE_ITEMS items per invocation:
 * every item with take[j] gets a distinct position pos[j] in the uint32_t
 * list whose length is the word at `counter`. Per item a ballot ranks it in
 * its subgroup; one shared atomic per subgroup and one global atomic per
 * workgroup. All invocations of the workgroup must call it, in uniform
 * control flow (it contains barriers). */
shared uint ws_queue_wg_count;
shared uint ws_queue_wg_base;
void ws_queue_append_items(bool take[WS_QUEUE_ITEMS], uint64_t counter,
                           out uint pos[WS_QUEUE_ITEMS]) {
  if (gl_LocalInvocationID.x == 0u)
    ws_queue_wg_count = 0u;
  barrier();
  uint run = 0u;
  [[unroll]] for (uint j = 0u; j < WS_QUEUE_ITEMS; ++j) {
    const uvec4 ballot = subgroupBallot(take[j]);
    pos[j] = run + subgroupBallotExclusiveBitCount(ballot);
    run += subgroupBallotBitCount(ballot);
  }
  uint sub = 0u;
  if (subgroupElect() && run != 0u)
    sub = atomicAdd(ws_queue_wg_count, run);
  sub = subgroupBroadcastFirst(sub);
  barrier();
  if (gl_LocalInvocationID.x == 0u && ws_queue_wg_count != 0u)
    ws_queue_wg_base = atomicAdd(WS_REF(uint32_t)(counter).v, ws_queue_wg_count);
  barrier();
  [[unroll]] for (uint j = 0u; j < WS_QUEUE_ITEMS; ++j)
    pos[j] += ws_queue_wg_base + sub;
}

#endif
