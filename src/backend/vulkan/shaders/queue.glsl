/* SPDX-License-Identifier: MIT */
/* Helpers shared by the queue shaders: a per-workgroup histogram so that a
 * workgroup issues one global atomic per token it saw instead of one per
 * slot (DEVICE.md: naive global atomics are 5-100x slower). Used when the
 * tokens 0..K fit in WS_QUEUE_SHARED_TOKENS entries; beyond that the shaders
 * fall back to one global atomic per slot. */
#ifndef WAVESCHED_VK_QUEUE_GLSL
#define WAVESCHED_VK_QUEUE_GLSL

const uint WS_QUEUE_SHARED_TOKENS = 256u;
shared uint ws_queue_hist[WS_QUEUE_SHARED_TOKENS];

/* Zeroes entries 0..K (K < WS_QUEUE_SHARED_TOKENS); ends with a barrier. */
void ws_queue_hist_clear(uint K) {
  for (uint k = gl_LocalInvocationID.x; k <= K; k += gl_WorkGroupSize.x)
    ws_queue_hist[k] = 0u;
  barrier();
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

/* Workgroup-aggregated append: every invocation with `take` gets a distinct
 * position in the uint32_t list whose length is the word at `counter`; one
 * global atomic per workgroup. All invocations of the workgroup must call
 * it (it contains barriers). */
shared uint ws_queue_wg_count;
shared uint ws_queue_wg_base;
uint ws_queue_append(bool take, uint64_t counter) {
  if (gl_LocalInvocationID.x == 0u)
    ws_queue_wg_count = 0u;
  barrier();
  uint local = 0u;
  if (take)
    local = atomicAdd(ws_queue_wg_count, 1u);
  barrier();
  if (gl_LocalInvocationID.x == 0u && ws_queue_wg_count != 0u)
    ws_queue_wg_base = atomicAdd(WS_REF(uint32_t)(counter).v, ws_queue_wg_count);
  barrier();
  return ws_queue_wg_base + local;
}

#endif
