/* SPDX-License-Identifier: MIT */
#version 460
/* Counting-sort scatter: every slot s < scan with token t in 1..K takes the
 * next position of queue t, starting at offsets[t] (gather_all_prefix), so
 * slots holds queue 1's slots, then queue 2's, ... (order inside a queue
 * unspecified). offsets[t] ends as the end of queue t.
 * Launch: n = ceil(scan / WS_QUEUE_ITEMS) (queue.glsl), or more. */
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
} P;

void main() {
  const uint scan = P.dyn != 0ul ? ws_dl_word(P.dyn, WS_DL_OBS_SCAN) : P.scan;
  uint s[WS_QUEUE_ITEMS], t[WS_QUEUE_ITEMS];
  for (uint j = 0u; j < WS_QUEUE_ITEMS; ++j) {
    t[j] = ws_queue_item(0u, scan, j, s[j]) ? WS_PTR(uint32_t, P.tokens)[s[j]] : 0u;
    if (t[j] > P.queue_count)
      t[j] = 0u; /* not in any queue */
  }
  if (P.queue_count < WS_QUEUE_SHARED_TOKENS) { /* uniform */
    ws_queue_hist_clear(P.queue_count);
    uint local[WS_QUEUE_ITEMS];
    if (P.queue_count < WS_QUEUE_REG_TOKENS) {
      ws_queue_hist_rank_items(t, P.queue_count, local);
    } else {
      for (uint j = 0u; j < WS_QUEUE_ITEMS; ++j)
        local[j] = ws_queue_hist_add(t[j], t[j] != 0u);
    }
    barrier();
    /* reserve each token's run once per workgroup; the entry becomes the
     * run's base */
    for (uint k = gl_LocalInvocationID.x; k <= P.queue_count; k += gl_WorkGroupSize.x) {
      const uint c = ws_queue_hist[k];
      if (c != 0u)
        ws_queue_hist[k] = atomicAdd(WS_PTR(uint32_t, P.offsets)[k], c);
    }
    barrier();
    for (uint j = 0u; j < WS_QUEUE_ITEMS; ++j)
      if (t[j] != 0u)
        WS_PTR(uint32_t, P.slots)[ws_queue_hist[t[j]] + local[j]] = s[j];
  } else {
    for (uint j = 0u; j < WS_QUEUE_ITEMS; ++j) {
      const uint pos = ws_queue_global_add(P.offsets, t[j], t[j] != 0u);
      if (t[j] != 0u)
        WS_PTR(uint32_t, P.slots)[pos] = s[j];
    }
  }
}
