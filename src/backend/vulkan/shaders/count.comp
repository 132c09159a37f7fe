/* SPDX-License-Identifier: MIT */
#version 460
/* counts[t] += |{s < scan : tokens[s] == t}| for t in 0..K (the host zeroed
 * counts[0..K] first; counts[K+1] is not touched). Tokens above K cannot be
 * written by the wrappers and are not counted, as on the CPU.
 * Launch: n = scan. */
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

void main() {
  uint s;
  const uint scan = P.dyn != 0ul ? ws_dl_word(P.dyn, WS_DL_OBS_SCAN) : P.scan;
  const bool valid = ws_invocation_index(s) && s < scan;
  const uint t = valid ? WS_PTR(uint32_t, P.tokens)[s] : ~0u;
  const bool counted = valid && t <= P.queue_count;
  /* uniform branch: every invocation of the workgroup takes the same side,
   * so the barriers inside are reached by all of them */
  if (P.queue_count < WS_QUEUE_SHARED_TOKENS) {
    ws_queue_hist_clear(P.queue_count);
    ws_queue_hist_add(t, counted);
    barrier();
    ws_queue_hist_flush(P.queue_count, P.counts);
  } else {
    ws_queue_global_add(P.counts, t, counted);
  }
}
