/* SPDX-License-Identifier: MIT */
#version 460
/* Compaction, pass 1: every free slot (token 0) of [0, n) appends itself to
 * scratch; state[HOLES] ends as their number (zeroed by the host).
 * Launch: n invocations. */
#include "wavesched/kernel.glsl"
#include "queue.glsl"
#include "compact.glsl"

void main() {
  uint s;
  const bool hole = ws_invocation_index(s) && s < ws_compact_n() && WS_PTR(uint32_t, P.tokens)[s] == 0u;
  const uint pos = ws_queue_append(hole, WS_ADDR(uint32_t, P.state, STATE_HOLES));
  if (hole)
    WS_PTR(uint32_t, P.scratch)[pos] = s;
}
