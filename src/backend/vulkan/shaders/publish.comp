/* SPDX-License-Identifier: MIT */
#version 460
/* Incremental accounting after a launch of n frames from continuation src:
 * counts[src] -= n (src != 0) and counts[tokens[slot]] += 1 for each frame
 * (slot = slots[i], or slot_base + i when slots == 0). Counts are unsigned
 * and only the total of all updates matters, so the order of the atomics
 * is free. Launch: n. */
#include "wavesched/kernel.glsl"
#include "queue.glsl"

layout(push_constant, scalar) uniform publish_pc {
  layout(offset = 0) uint64_t tokens;
  layout(offset = 8) uint64_t slots;
  layout(offset = 16) uint64_t counts;
  layout(offset = 24) uint n;
  layout(offset = 28) uint src;
  layout(offset = 32) uint slot_base;
  layout(offset = 36) uint queue_count;
} P;

void main() {
  uint i;
  const bool valid = ws_invocation_index(i) && i < P.n;
  uint t = 0u;
  if (valid) {
    const uint slot = P.slots != 0ul ? WS_PTR(uint32_t, P.slots)[i] : P.slot_base + i;
    t = WS_PTR(uint32_t, P.tokens)[slot];
    if (i == 0u && P.src != 0u)
      atomicAdd(WS_PTR(uint32_t, P.counts)[P.src], 0u - P.n);
  }
  const bool live = t != 0u && t <= P.queue_count;
  if (P.queue_count < WS_QUEUE_SHARED_TOKENS) { /* uniform */
    ws_queue_hist_clear(P.queue_count);
    if (live)
      atomicAdd(ws_queue_hist[t], 1u);
    barrier();
    ws_queue_hist_flush(P.queue_count, P.counts);
  } else if (live) {
    atomicAdd(WS_PTR(uint32_t, P.counts)[t], 1u);
  }
}
