/* SPDX-License-Identifier: MIT */
#version 460
/* offsets[t] = counts[1] + ... + counts[t-1] for t in 1..K: the start of
 * queue t's slots in the counting sort. One workgroup: invocation j sums a
 * contiguous run of ceil(K / B) tokens, invocation 0 scans the B partial
 * sums, each invocation then writes its run. Per-invocation loops stay at
 * max(B, K / B) iterations. With `cursors` (WS_VULKAN_QUEUE_CURSORS=padded,
 * gather_all.comp) it also zeroes the cursors of tokens 1..min(K, 255),
 * WS_QUEUE_CURSOR_STRIDE words apart. Launch: n = the queue shaders' block
 * size. */
#include "wavesched/kernel.glsl"
#include "queue.glsl"

layout(push_constant, scalar) uniform prefix_pc {
  layout(offset = 0) uint64_t counts;
  layout(offset = 8) uint64_t offsets;
  layout(offset = 16) uint queue_count;
  layout(offset = 24) uint64_t cursors; /* 0: none */
} P;

/* the backend's queue block is at most 1024 invocations */
shared uint partial[1024];

void main() {
  const uint j = gl_LocalInvocationID.x, B = gl_WorkGroupSize.x, K = P.queue_count;
  const uint per = (K + B - 1u) / B;
  /* tokens lo .. hi-1 (an empty run when lo > K) */
  const uint lo = min(1u + j * per, K + 1u), hi = min(lo + per, K + 1u);
  uint sum = 0u;
  for (uint t = lo; t < hi; ++t)
    sum += WS_PTR(uint32_t, P.counts)[t];
  partial[j] = sum;
  barrier();
  if (j == 0u) {
    uint run = 0u;
    for (uint k = 0u; k < B; ++k) {
      const uint v = partial[k];
      partial[k] = run;
      run += v;
    }
  }
  barrier();
  if (P.cursors != 0ul)
    for (uint t = 1u + j; t <= min(K, WS_QUEUE_SHARED_TOKENS - 1u); t += B)
      WS_PTR(uint32_t, P.cursors)[t * WS_QUEUE_CURSOR_STRIDE] = 0u;
  uint run = partial[j];
  for (uint t = lo; t < hi; ++t) {
    WS_PTR(uint32_t, P.offsets)[t] = run;
    run += WS_PTR(uint32_t, P.counts)[t];
  }
}
