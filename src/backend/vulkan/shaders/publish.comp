/* SPDX-License-Identifier: MIT */
#version 460
/* Incremental accounting after a launch of n frames from continuation src:
 * counts[src] -= n (src != 0) and counts[tokens[slot]] += 1 for each frame
 * (slot = slots[i], or slot_base + i when slots == 0). Counts are unsigned
 * and only the total of all updates matters, so the order of the atomics
 * is free. Launch: n. */
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

void main() {
  uint i;
  const bool d = P.dyn != 0ul;
  const uint n = d ? ws_dl_word(P.dyn, WS_DL_PUB_N) : P.n;
  const uint src = d ? ws_dl_word(P.dyn, WS_DL_PUB_SRC) : P.src;
  const uint slot_base = d ? ws_dl_word(P.dyn, WS_DL_PUB_SLOT_BASE) : P.slot_base;
  const uint64_t slots = d ? WS_PTR(uint64_t, P.dyn)[WS_DL_PUB_SLOTS / 2u] : P.slots;
  const bool valid = ws_invocation_index(i) && i < n;
  uint t = 0u;
  if (valid) {
    const uint slot = slots != 0ul ? WS_PTR(uint32_t, slots)[i] : slot_base + i;
    t = WS_PTR(uint32_t, P.tokens)[slot];
    if (i == 0u && src != 0u)
      atomicAdd(WS_PTR(uint32_t, P.counts)[src], 0u - n);
  }
  const bool live = t != 0u && t <= P.queue_count;
  if (P.queue_count < WS_QUEUE_SHARED_TOKENS) { /* uniform */
    ws_queue_hist_clear(P.queue_count);
    ws_queue_hist_add(t, live);
    barrier();
    ws_queue_hist_flush(P.queue_count, P.counts);
  } else {
    ws_queue_global_add(P.counts, t, live);
  }
}
