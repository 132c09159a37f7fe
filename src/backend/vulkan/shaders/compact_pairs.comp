/* SPDX-License-Identifier: MIT */
#version 460
/* Compaction in one pass (by default up to 2^17 slots, WS_VULKAN_COMPACT
 * in vk_internal.h; the lists are compact_holes.comp, a barrier, then
 * compact_move.comp). Over [0, scan),
 * every free slot of [0, n) draws hole ticket k from state[HOLES] and every
 * live slot of [n, scan) draws mover ticket k from state[MOVERS]; hole k
 * and mover k meet at the pair word scratch[k]: the first of the two to
 * arrive leaves its slot + 1 there, and the second finds it, moves the frame
 * (compact.glsl) and leaves the word 0 again. Nobody waits for anybody, so
 * no workgroup depends on another being scheduled, and the device loop's
 * compaction is one dispatch behind one barrier instead of two of each.
 *
 * Invariants: every pair word is 0 when a dispatch begins (the host path
 * and the device loop fill the scratch with zeros before: vk_queue.c,
 * vk_loop.c; a pair that met leaves its word 0). A slot's token is read by
 * the one invocation that scans it, before its ticket is drawn; a move
 * writes only slots of its own pair, both scanned by then, so no scan reads
 * a token a move wrote. The frame bytes a move reads were written before
 * this dispatch.
 *
 * With exactly n live frames in [0, scan), there are as many holes as
 * movers and every word is used by one pair. Otherwise the workgroup that
 * finishes the last tile (state[DONE], zeroed with the tickets) finds the
 * two tickets apart: surplus movers stayed where they are and set
 * STATE_ERR_COMPACT, as compact_move.comp does; surplus holes are no error
 * there either. It clears the words of the unpaired tickets, so that the
 * next compaction finds them 0 as well.
 *
 * Launch: as the other queue shaders over scan slots (queue.glsl). */
#include "wavesched/kernel.glsl"
#include "queue.glsl"
#include "compact.glsl"

shared uint ws_pairs_last; /* 1: this workgroup finished the last tile */

/* Slot s with ticket k at its pair word; the second to arrive moves. */
void ws_meet(uint k, uint s, bool hole, uint token) {
  const uint other = atomicCompSwap(WS_PTR(uint32_t, P.scratch)[k], 0u, s + 1u);
  if (other == 0u)
    return;
  const uint partner = other - 1u;
  if (hole)
    ws_compact_move_frame(s, partner, WS_PTR(uint32_t, P.tokens)[partner]);
  else
    ws_compact_move_frame(partner, s, token);
  WS_PTR(uint32_t, P.scratch)[k] = 0u;
}

void main() {
  const uint n = ws_compact_n(), scan = ws_compact_scan();
  const uint64_t stride = ws_queue_tile_stride();
  uint tiles = 0u;
  for (uint64_t tile = ws_queue_tile0(); ws_queue_tile_live(tile, 0u, scan); tile += stride) {
    uint s[WS_QUEUE_ITEMS], token[WS_QUEUE_ITEMS], kh[WS_QUEUE_ITEMS], km[WS_QUEUE_ITEMS];
    bool hole[WS_QUEUE_ITEMS], mover[WS_QUEUE_ITEMS];
    [[unroll]] for (uint j = 0u; j < WS_QUEUE_ITEMS; ++j) {
      const bool in_range = ws_queue_item_at(tile, 0u, scan, j, s[j]);
      token[j] = in_range ? WS_PTR(uint32_t, P.tokens)[s[j]] : 0u;
      hole[j] = in_range && s[j] < n && token[j] == 0u;
      mover[j] = s[j] >= n && token[j] != 0u;
    }
    ws_queue_append_items(hole, WS_ADDR(uint32_t, P.state, STATE_HOLES), kh);
    ws_queue_append_items(mover, WS_ADDR(uint32_t, P.state, STATE_MOVERS), km);
    [[unroll]] for (uint j = 0u; j < WS_QUEUE_ITEMS; ++j) {
      if (hole[j])
        ws_meet(kh[j], s[j], true, 0u);
      else if (mover[j])
        ws_meet(km[j], s[j], false, token[j]);
    }
    tiles += 1u;
  }
  /* The last tile: every invocation's pair words are written before its
   * workgroup counts its tiles (the usual last-block pattern). */
  memoryBarrierBuffer();
  barrier();
  if (gl_LocalInvocationID.x == 0u) {
    const uint tile_slots = gl_WorkGroupSize.x * WS_QUEUE_ITEMS;
    const uint total = scan / tile_slots + (scan % tile_slots != 0u ? 1u : 0u);
    ws_pairs_last = 0u;
    if (tiles != 0u &&
        atomicAdd(WS_PTR(uint32_t, P.state)[STATE_DONE], tiles) + tiles == total)
      ws_pairs_last = 1u;
  }
  barrier();
  if (ws_pairs_last == 0u)
    return;
  memoryBarrierBuffer();
  const uint holes = atomicOr(WS_PTR(uint32_t, P.state)[STATE_HOLES], 0u);
  const uint movers = atomicOr(WS_PTR(uint32_t, P.state)[STATE_MOVERS], 0u);
  if (gl_LocalInvocationID.x == 0u && movers > holes)
    atomicOr(WS_PTR(uint32_t, P.state)[STATE_ERROR], STATE_ERR_COMPACT);
  for (uint k = min(holes, movers) + gl_LocalInvocationID.x; k < max(holes, movers);
       k += gl_WorkGroupSize.x)
    atomicExchange(WS_PTR(uint32_t, P.scratch)[k], 0u);
}
