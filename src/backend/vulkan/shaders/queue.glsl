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

const uint WS_QUEUE_SHARED_TOKENS = 256u;
shared uint ws_queue_hist[WS_QUEUE_SHARED_TOKENS];

/* Zeroes entries 0..K (K < WS_QUEUE_SHARED_TOKENS); ends with a barrier. */
void ws_queue_hist_clear(uint K) {
  for (uint k = gl_LocalInvocationID.x; k <= K; k += gl_WorkGroupSize.x)
    ws_queue_hist[k] = 0u;
  barrier();
}

/* Adds 1 to ws_queue_hist[key] for every invocation with `valid`, with one
 * shared atomic per distinct key per subgroup, and returns this
 * invocation's rank in that entry: the entry's old value plus the number of
 * lower invocations of its subgroup with the same key. Ranks within one
 * entry are therefore distinct and dense from the entry's start. No barrier
 * inside: any control flow may call it. The loop is the one of kernel.glsl's
 * ws_atomic_add_u32_agg: each pass, the invocations that share the first
 * active invocation's key combine and leave. */
uint ws_queue_hist_add(uint key, bool valid) {
  uint result = 0u;
  if (valid) {
    for (;;) {
      if (key == subgroupBroadcastFirst(key)) {
        const uvec4 peers = subgroupBallot(true);
        uint base = 0u;
        if (subgroupElect())
          base = atomicAdd(ws_queue_hist[key], subgroupBallotBitCount(peers));
        result = subgroupBroadcastFirst(base) + subgroupBallotExclusiveBitCount(peers);
        break;
      }
    }
  }
  return result;
}

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
 * shared atomic per subgroup (ballot ranks inside it) and one global atomic
 * per workgroup. All invocations of the workgroup must call it, in uniform
 * control flow (it contains barriers). */
shared uint ws_queue_wg_count;
shared uint ws_queue_wg_base;
uint ws_queue_append(bool take, uint64_t counter) {
  if (gl_LocalInvocationID.x == 0u)
    ws_queue_wg_count = 0u;
  barrier();
  const uvec4 ballot = subgroupBallot(take);
  const uint taken = subgroupBallotBitCount(ballot);
  uint sub = 0u;
  if (subgroupElect() && taken != 0u)
    sub = atomicAdd(ws_queue_wg_count, taken);
  const uint local = subgroupBroadcastFirst(sub) + subgroupBallotExclusiveBitCount(ballot);
  barrier();
  if (gl_LocalInvocationID.x == 0u && ws_queue_wg_count != 0u)
    ws_queue_wg_base = atomicAdd(WS_REF(uint32_t)(counter).v, ws_queue_wg_count);
  barrier();
  return ws_queue_wg_base + local;
}

#endif
