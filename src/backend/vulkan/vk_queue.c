/* SPDX-License-Identifier: MIT */
/* wavesched — Vulkan backend: the scheduler's queue operations (backend.h),
 * recorded as fills and dispatches of the shaders in shaders/.
 *
 * Each shader's push constants are a C struct below and an explicit-offset
 * push_constant block in its .comp file; the _Static_asserts pin the C side
 * to the offsets the GLSL declares. Results match the CPU backend except
 * for the order of slots inside one gathered queue and which free slot a
 * compacted frame lands in, which backend.h leaves unspecified (the shaders
 * hand out positions with atomics).
 */
#include "vk_internal.h"

#include <stddef.h>

/* The push-constant structs are in vk_internal.h (the device loop records
 * the same shaders). */

/* Tiles a workgroup walks at most under WS_VULKAN_QUEUE_GROUPS (queue.glsl
 * WS_QUEUE_TILES_MAX): a small cap over many slots gets more workgroups
 * instead, which keeps every invocation's loop passes well below lavapipe's
 * silent limit of about 65,535 iterations (docs/vulkan.md; a precaution:
 * 1,465 tiles per workgroup passed there). */
#define WS_VK_QUEUE_TILES_MAX 256u

static ws_status dispatch(ws_device *dev, ws_vk_queue_shader s, const void *push, uint32_t size,
                          uint32_t n, const char *what) {
  ws_vk_impl *vk = ws_vk_of(dev);
  return ws_vk_record_dispatch(dev, vk->queue_pipelines[s], push, size, n, vk->queue_block, what);
}

/* A slot-parallel shader over n slots (or launch indices): one invocation
 * per WS_VK_QUEUE_ITEMS of them, or at most queue_groups workgroups
 * (WS_VULKAN_QUEUE_GROUPS), which then walk the tiles (shaders/queue.glsl),
 * at most WS_VK_QUEUE_TILES_MAX each. */
static ws_status dispatch_items(ws_device *dev, ws_vk_queue_shader s, const void *push,
                                uint32_t size, uint32_t n, const char *what) {
  ws_vk_impl *vk = ws_vk_of(dev);
  const uint32_t invocations = n / WS_VK_QUEUE_ITEMS + (n % WS_VK_QUEUE_ITEMS != 0u);
  const uint32_t tiles = invocations / vk->queue_block + (invocations % vk->queue_block != 0u);
  if (vk->queue_groups) {
    uint32_t groups = tiles / WS_VK_QUEUE_TILES_MAX + (tiles % WS_VK_QUEUE_TILES_MAX != 0u);
    if (groups < vk->queue_groups)
      groups = vk->queue_groups;
    if (groups < tiles)
      return dispatch(dev, s, push, size, groups * vk->queue_block, what);
  }
  return dispatch(dev, s, push, size, invocations, what);
}

/* gather_all's cursors: the padded ones (WS_VULKAN_QUEUE_CURSORS=padded), or
 * 0 for offsets[t] itself. */
uint64_t ws_vk_queue_cursors(ws_device *dev) {
  ws_vk_impl *vk = ws_vk_of(dev);
  return vk->queue_cursors_padded ? vk->state->addr + 4u * WS_VK_STATE_CURSORS : 0u;
}

/* counts[0..K] = 0, then one histogram pass over [0, scan). */
ws_status ws_vk_op_queue_count(ws_device *dev, const ws_queue_args *q) {
  ws_status st = ws_vk_record_fill(dev, q->counts, 0, (size_t)q->queue_count + 1u);
  if (st != WS_OK)
    return st;
  const count_push p = {q->tokens, q->counts, q->scan, q->queue_count, 0};
  return dispatch_items(dev, WS_VK_QS_COUNT, &p, sizeof p, q->scan, "queue count");
}

/* counter = 0, then every slot with the token appends itself. */
ws_status ws_vk_op_queue_gather(ws_device *dev, const ws_queue_args *q) {
  ws_status st = ws_vk_record_fill(dev, q->counter, 0, 1);
  if (st != WS_OK)
    return st;
  const gather_push p = {q->tokens, q->slots, q->counter, q->scan, q->token, 0};
  return dispatch_items(dev, WS_VK_QS_GATHER, &p, sizeof p, q->scan, "queue gather");
}

/* offsets[t] = counts[1] + ... + counts[t-1] (one workgroup), then every
 * live slot takes the next position of its queue. */
ws_status ws_vk_op_queue_gather_all(ws_device *dev, const ws_queue_args *q) {
  const uint64_t cursors = ws_vk_queue_cursors(dev);
  const prefix_push pp = {q->counts, q->offsets, q->queue_count, 0, cursors};
  ws_status st = dispatch(dev, WS_VK_QS_GATHER_ALL_PREFIX, &pp, sizeof pp, ws_vk_of(dev)->queue_block,
                          "queue gather_all prefix");
  if (st != WS_OK)
    return st;
  const gather_all_push p = {q->tokens, q->offsets, q->slots, q->scan, q->queue_count, 0, cursors};
  return dispatch_items(dev, WS_VK_QS_GATHER_ALL, &p, sizeof p, q->scan, "queue gather_all");
}

/* counts[src] -= n and counts[tokens[slot]] += 1 over the launch's frames. */
ws_status ws_vk_op_queue_publish(ws_device *dev, const ws_queue_args *q) {
  const publish_push p = {q->tokens, q->slots,     q->counts,     q->n,
                          q->src,    q->slot_base, q->queue_count, 0};
  return dispatch_items(dev, WS_VK_QS_PUBLISH, &p, sizeof p, q->n, "queue publish");
}

/* Up to WS_VK_COMPACT_PAIRS_MAX slots (WS_VULKAN_COMPACT, vk_internal.h),
 * one pass (shaders/compact_pairs.comp): hole k of [0, n) and live frame k
 * of [n, scan) meet at scratch[k], which starts 0 (filled here: pairs never
 * outnumber min(n, scan - n)). Above, or with lists: two passes, the
 * free slots of [0, n) list themselves in scratch, then the k-th live frame
 * found in [n, scan) moves into scratch[k]. With exactly n live frames in
 * [0, scan) there are as many movers as holes; a surplus mover stays where
 * it is and sets WS_VK_STATE_ERR_COMPACT, reported at the next
 * synchronization (the CPU backend reports the same condition at once). */
ws_status ws_vk_op_queue_compact(ws_device *dev, const ws_queue_args *q) {
  ws_vk_impl *vk = ws_vk_of(dev);
  if (q->scan <= q->n)
    return WS_OK;
  if (q->layout == WS_LAYOUT_SOA && q->field_count > WS_MAX_FRAME_FIELDS)
    return ws_dev_fail(dev, WS_EINVAL, "vulkan: compaction of %u fields (at most %u)",
                       q->field_count, WS_MAX_FRAME_FIELDS);
  ws_status st =
      ws_vk_record_fill(dev, vk->state->addr + 4u * WS_VK_STATE_HOLES, 0, WS_VK_COMPACT_WORDS);
  const bool in_pairs = ws_vk_compact_pairs(vk->compact_mode, q->scan);
  const uint32_t pairs = q->n < q->scan - q->n ? q->n : q->scan - q->n;
  if (st == WS_OK && in_pairs && pairs)
    st = ws_vk_record_fill(dev, q->scratch, 0, pairs);
  if (st != WS_OK)
    return st;
  if (q->layout == WS_LAYOUT_SOA && q->field_count) {
    if ((st = ws_vk_record_begin(dev)) != WS_OK)
      return st;
    vkCmdUpdateBuffer(vk->sub.cmd, vk->state->buffer, 4u * WS_VK_STATE_SIZES, 4u * q->field_count,
                      q->field_sizes);
    ws_vk_record_end(dev);
  }
  const compact_push p = {q->tokens,  q->ids,          q->frames,      q->field_offsets,
                          q->scratch, vk->state->addr, q->n,           q->scan,
                          q->layout,  q->frame_size,   q->field_count, 0, 0};
  if (in_pairs)
    st = dispatch_items(dev, WS_VK_QS_COMPACT_PAIRS, &p, sizeof p, q->scan, "compaction in pairs");
  else if ((st = dispatch_items(dev, WS_VK_QS_COMPACT_HOLES, &p, sizeof p, q->n,
                                "compaction holes")) == WS_OK)
    st = dispatch_items(dev, WS_VK_QS_COMPACT_MOVE, &p, sizeof p, q->scan - q->n,
                        "compaction move");
  if (st != WS_OK)
    return st;
  vk->check_state = true;
  return WS_OK;
}
