/* SPDX-License-Identifier: MIT */
/* wavesched — Vulkan backend: the stream.
 *
 * Stream state machine (ws_vk_impl):
 *   idle       recording == false; cmd is reset (initial state)
 *   recording  cmd is begun and holds every operation enqueued since the
 *              last synchronization, each preceded by a barrier that orders
 *              it after the previous one
 * ws_vk_record_begin moves idle -> recording; ws_vk_op_synchronize moves
 * recording -> idle through one submission and one fence wait.
 * ws_vk_op_flush (the pipelined device loop) submits without waiting: the
 * submission becomes pending (pool2, cmd2, fence2) once the one pending
 * before it was waited for, and the stream records into the other buffer;
 * synchronize waits for the pending one too. A failed or
 * timed-out submission leaves the device `broken`: every later call fails
 * with the recorded message instead of touching a command buffer the queue
 * may still own.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime (wait_fence) */
#include "vk_internal.h"

#include <inttypes.h>
#include <string.h>
#include <time.h>

/* The one barrier of the stream: every shader or transfer write before it
 * is visible to every shader or transfer access after it. It also orders
 * write-after-read (an execution dependency), so e.g. a fill may safely
 * overwrite what the previous dispatch read. */
static void stream_barrier(ws_vk_impl *vk) {
  VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                        .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
                        .dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                                         VK_ACCESS_TRANSFER_READ_BIT |
                                         VK_ACCESS_TRANSFER_WRITE_BIT};
  const VkPipelineStageFlags stages =
      VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
  vkCmdPipelineBarrier(vk->sub.cmd, stages, stages, 0, 1, &mb, 0, NULL, 0, NULL);
}

/* Once broken, every stream call repeats the failure that broke it. */
static ws_status broken_fail(ws_device *dev) {
  return ws_dev_fail(dev, WS_EBACKEND,
                     "vulkan: the device is unusable after an earlier failure: %s",
                     ws_vk_of(dev)->broken_msg);
}

static ws_status mark_broken(ws_device *dev, ws_status st) {
  ws_vk_impl *vk = ws_vk_of(dev);
  vk->broken = true;
  _Static_assert(sizeof vk->broken_msg == sizeof dev->error, "same size: a plain copy");
  memcpy(vk->broken_msg, dev->error, sizeof vk->broken_msg);
  return st;
}

ws_status ws_vk_record_begin(ws_device *dev) {
  ws_vk_impl *vk = ws_vk_of(dev);
  if (vk->broken)
    return broken_fail(dev);
  if (!vk->recording) {
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                   .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
    ws_status st = WS_VK_CALL(dev, vkBeginCommandBuffer, vk->sub.cmd, &bi);
    if (st != WS_OK)
      return st;
    vk->recording = true;
    vk->bound = VK_NULL_HANDLE;
    /* The previous submission's writes were made available by its fence
     * signal; this barrier makes them visible to the first operation. */
    vk->need_barrier = true;
    if (vk->clear_state) {
      stream_barrier(vk);
      vkCmdFillBuffer(vk->sub.cmd, vk->state->buffer, 4u * WS_VK_STATE_ERROR, 4u, 0u);
      vk->clear_state = false;
    }
  }
  if (vk->need_barrier) {
    stream_barrier(vk);
    vk->need_barrier = false;
  }
  return WS_OK;
}

void ws_vk_record_end(ws_device *dev) {
  ws_vk_of(dev)->need_barrier = true;
}

/* kernel.glsl "launch geometry": chunks of at most chunk_groups workgroups;
 * chunk c gets baseGroup (0, pad_c, c), pad_c = 0 except for the last chunk
 * whose last group has `pad` surplus invocations. */
ws_status ws_vk_record_dispatch(ws_device *dev, VkPipeline pipeline, const void *push,
                             uint32_t push_size, uint32_t n, uint32_t block, const char *what) {
  ws_vk_impl *vk = ws_vk_of(dev);
  if (n == 0)
    return WS_OK;
  const uint64_t groups = ((uint64_t)n + block - 1u) / block;
  const uint32_t pad = (uint32_t)(groups * block - n);
  const uint64_t chunks = (groups + vk->chunk_groups - 1u) / vk->chunk_groups;
  const VkPhysicalDeviceLimits *lim = &vk->props.limits;
  if (chunks > lim->maxComputeWorkGroupCount[2] || pad >= lim->maxComputeWorkGroupCount[1])
    return ws_dev_fail(dev, WS_EINVAL,
                       "vulkan: %s: %u invocations in groups of %u need %" PRIu64
                       " dispatch chunks, the device allows %u",
                       what, n, block, chunks, lim->maxComputeWorkGroupCount[2]);
  ws_status st = ws_vk_record_begin(dev);
  if (st != WS_OK)
    return st;
  if (vk->bound != pipeline) {
    vkCmdBindPipeline(vk->sub.cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
    vk->bound = pipeline;
  }
  /* push constants are whole words; the tail beyond push_size is zero */
  uint32_t words[WS_VK_PUSH_BYTES / 4];
  memset(words, 0, sizeof words);
  memcpy(words, push, push_size);
  const uint32_t bytes = (push_size + 3u) & ~3u;
  if (bytes)
    vkCmdPushConstants(vk->sub.cmd, vk->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, bytes, words);
  for (uint64_t c = 0; c < chunks; ++c) {
    const uint64_t first = c * vk->chunk_groups;
    const uint32_t count =
        (uint32_t)(groups - first < vk->chunk_groups ? groups - first : vk->chunk_groups);
    vkCmdDispatchBase(vk->sub.cmd, 0, c + 1 == chunks ? pad : 0u, (uint32_t)c, count, 1, 1);
  }
  ws_vk_record_end(dev);
  return WS_OK;
}

ws_status ws_vk_record_fill(ws_device *dev, uint64_t dst, uint32_t value, size_t count) {
  ws_vk_buffer *b;
  VkDeviceSize off;
  ws_status st = ws_vk_buffer_find(dev, dst, (VkDeviceSize)count * 4u, &b, &off);
  if (st != WS_OK)
    return st;
  if (off % 4u != 0)
    return ws_dev_fail(dev, WS_EINVAL,
                       "vulkan: fill at address 0x%" PRIx64 " is not 4-byte aligned", dst);
  if ((st = ws_vk_record_begin(dev)) != WS_OK)
    return st;
  vkCmdFillBuffer(ws_vk_of(dev)->sub.cmd, b->buffer, off, (VkDeviceSize)count * 4u, value);
  ws_vk_record_end(dev);
  return WS_OK;
}

ws_status ws_vk_op_fill_u32(ws_device *dev, uint64_t dst, uint32_t value, size_t count) {
  if (count == 0)
    return WS_OK;
  return ws_vk_record_fill(dev, dst, value, count);
}

ws_status ws_vk_op_enqueue_read(ws_device *dev, void *host_handle, size_t host_offset, uint64_t src,
                             size_t size) {
  ws_vk_buffer *host = host_handle, *b;
  VkDeviceSize off;
  if (size == 0)
    return WS_OK;
  ws_status st = ws_vk_buffer_find(dev, src, size, &b, &off);
  if (st != WS_OK)
    return st;
  if ((st = ws_vk_record_begin(dev)) != WS_OK)
    return st;
  VkBufferCopy region = {.srcOffset = off, .dstOffset = host_offset, .size = size};
  vkCmdCopyBuffer(ws_vk_of(dev)->sub.cmd, b->buffer, host->buffer, 1, &region);
  ws_vk_record_end(dev);
  return WS_OK;
}

/* Waits for a fence of the stream: vkWaitForFences, or with WS_VULKAN_WAIT=spin
 * vkGetFenceStatus in a loop (the clock read every 1024 polls), bounded by
 * the same timeout. */
static VkResult wait_fence(ws_vk_impl *vk, VkFence fence) {
  if (!vk->wait_spin)
    return vkWaitForFences(vk->device, 1, &fence, VK_TRUE, vk->timeout_ns);
  struct timespec t0, t;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (uint32_t i = 1;; ++i) {
    const VkResult r = vkGetFenceStatus(vk->device, fence);
    if (r != VK_NOT_READY)
      return r;
    if (i % 1024u == 0) {
      clock_gettime(CLOCK_MONOTONIC, &t);
      const uint64_t ns = (uint64_t)(t.tv_sec - t0.tv_sec) * 1000000000u +
                          (uint64_t)t.tv_nsec - (uint64_t)t0.tv_nsec;
      if (ns >= vk->timeout_ns)
        return VK_TIMEOUT;
    }
  }
}

/* Ends the recorded work and submits it with vk->sub.fence; with a compaction
 * in it (check_state), it first copies the queue shaders' error word into
 * word vk->sub.err_word of state_host, and vk->sub.check says so. On
 * failure the stream is broken (see the file comment) and the buffer
 * reset. */
static ws_status submit(ws_device *dev) {
  ws_vk_impl *vk = ws_vk_of(dev);
  vk->sub.check = vk->check_state;
  vk->sub.gen = vk->err_reports;
  if (vk->sub.check) {
    stream_barrier(vk);
    VkBufferCopy region = {.srcOffset = 4u * WS_VK_STATE_ERROR, .dstOffset = 4u * vk->sub.err_word,
                           .size = 4};
    vkCmdCopyBuffer(vk->sub.cmd, vk->state->buffer, vk->state_host->buffer, 1, &region);
  }
  /* device writes -> host reads of host-visible memory after the fence */
  VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                        .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
                        .dstAccessMask = VK_ACCESS_HOST_READ_BIT};
  vkCmdPipelineBarrier(vk->sub.cmd,
                       VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                       VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0, NULL, 0, NULL);
  vk->recording = false;
  vk->check_state = false;
  ws_status st = WS_VK_CALL(dev, vkEndCommandBuffer, vk->sub.cmd);
  if (st == WS_OK) {
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                       .commandBufferCount = 1,
                       .pCommandBuffers = &vk->sub.cmd};
    st = WS_VK_CALL(dev, vkQueueSubmit, vk->queue, 1, &si, vk->sub.fence);
  }
  if (st != WS_OK) {
    /* not pending: its pool can be reset */
    (void)vkResetCommandPool(vk->device, vk->sub.pool, 0);
    return mark_broken(dev, st);
  }
  return WS_OK;
}

/* Waits for submission `sb`, resets its fence and pool, and with
 * sb->check reads the error word it copied to state_host. On a failure to
 * wait the stream is broken. */
static ws_status wait_submission(ws_device *dev, const ws_vk_submission *sb) {
  ws_vk_impl *vk = ws_vk_of(dev);
  const VkResult r = wait_fence(vk, sb->fence);
  if (r == VK_TIMEOUT) {
    ws_dev_fail(dev, WS_EBACKEND,
                "vulkan: vkWaitForFences: the stream did not finish within %" PRIu64
                " s (VK_TIMEOUT; WS_VULKAN_TIMEOUT_S sets the limit); the device is "
                "unusable",
                vk->timeout_ns / 1000000000u);
    return mark_broken(dev, WS_EBACKEND);
  }
  ws_status st = ws_vk_check(dev, r, "vkWaitForFences");
  if (st != WS_OK)
    return mark_broken(dev, st);
  st = WS_VK_CALL(dev, vkResetFences, vk->device, 1, &sb->fence);
  /* The command buffer is not pending any more (its fence signalled): its
   * pool can be reset whatever happened above. */
  const ws_status rs = WS_VK_CALL(dev, vkResetCommandPool, vk->device, sb->pool, 0);
  if (st == WS_OK)
    st = rs;
  if (st != WS_OK)
    return mark_broken(dev, st);
  /* sb->gen: the reports made before this submission; after a later one its
   * copy may hold that report's error again (the word stays set until the
   * next recording zeroes it), which is not reported twice */
  if (sb->check && sb->gen == vk->err_reports) {
    uint32_t err;
    memcpy(&err, (const unsigned char *)vk->state_host->map + 4u * sb->err_word, sizeof err);
    if (err != 0) {
      vk->clear_state = true;
      vk->err_reports += 1;
      if (err & WS_VK_STATE_ERR_COMPACT)
        return ws_dev_fail(dev, WS_EPROTO_INTERNAL,
                           "vulkan: compaction found more live frames above the live count than "
                           "free slots below it (the live count was wrong)");
      return ws_dev_fail(dev, WS_EPROTO_INTERNAL, "vulkan: queue shader error bits 0x%x", err);
    }
  }
  return WS_OK;
}

/* The submission a flush left pending, if any: waited for. */
static ws_status wait_pending(ws_device *dev) {
  ws_vk_impl *vk = ws_vk_of(dev);
  if (!vk->pending2)
    return WS_OK;
  vk->pending2 = false;
  return wait_submission(dev, &vk->sub2);
}

/* Submits the recorded work, then waits for the pending submission (the
 * earlier one: its error is reported first) and for this one. */
static ws_status submit_and_wait(ws_device *dev) {
  ws_vk_impl *vk = ws_vk_of(dev);
  if (vk->broken)
    return broken_fail(dev);
  bool submitted = false;
  ws_status st = WS_OK;
  if (vk->recording) {
    if ((st = submit(dev)) != WS_OK)
      return st;
    submitted = true;
  }
  /* this submission is waited for even when the pending one reported an
   * error (its buffer must not be recorded again while it may run), not
   * once the stream is broken */
  st = wait_pending(dev);
  if (submitted && !vk->broken) {
    const ws_status cs = wait_submission(dev, &vk->sub);
    if (st == WS_OK)
      st = cs;
  }
  return st;
}

ws_status ws_vk_op_synchronize(ws_device *dev) {
  return submit_and_wait(dev);
}

/* backend.h flush: the recorded work is submitted and becomes the pending
 * submission once the one before it was waited for; the stream records
 * into the other buffer meanwhile. */
ws_status ws_vk_op_flush(ws_device *dev) {
  ws_vk_impl *vk = ws_vk_of(dev);
  if (vk->broken)
    return broken_fail(dev);
  if (!vk->recording)
    return wait_pending(dev);
  ws_status st = submit(dev);
  if (st != WS_OK)
    return st;
  st = wait_pending(dev);
  const ws_vk_submission submitted = vk->sub;
  vk->sub = vk->sub2;
  vk->sub2 = submitted;
  vk->pending2 = true;
  return st;
}

/* Blocking write: the copy is recorded behind everything enqueued so far,
 * the whole stream is submitted and waited for, chunk by chunk through the
 * staging buffer (which only this function uses, so it is free whenever the
 * host fills it). */
ws_status ws_vk_op_write(ws_device *dev, uint64_t dst, const void *src, size_t size) {
  ws_vk_impl *vk = ws_vk_of(dev);
  ws_vk_buffer *b;
  VkDeviceSize off;
  ws_status st = ws_vk_buffer_find(dev, dst, size, &b, &off);
  if (st != WS_OK)
    return st;
  size_t done = 0;
  while (done < size) {
    size_t chunk = size - done;
    if (chunk > vk->staging->size)
      chunk = (size_t)vk->staging->size;
    if ((st = ws_vk_record_begin(dev)) != WS_OK)
      return st;
    memcpy(vk->staging->map, (const unsigned char *)src + done, chunk);
    VkBufferCopy region = {.srcOffset = 0, .dstOffset = off + done, .size = chunk};
    vkCmdCopyBuffer(vk->sub.cmd, vk->staging->buffer, b->buffer, 1, &region);
    ws_vk_record_end(dev);
    if ((st = submit_and_wait(dev)) != WS_OK)
      return st;
    done += chunk;
  }
  return WS_OK;
}

/* ---- device timer (statistics) ----
 *
 * Two timestamp queries: the start mark resets the pool in the command
 * buffer and writes query 0, the end mark writes query 1, possibly several
 * submissions later (timestamps of one queue share one time domain). Both
 * use VK_PIPELINE_STAGE_ALL_COMMANDS_BIT: a timestamp is latched once every
 * earlier command has completed, so the interval is from the completion of
 * the work before the start mark to the completion of the work before the
 * end mark. Timestamps write no memory the stream reads, so they need no
 * barrier of their own; ws_vk_record_begin still places the pending one, which
 * keeps the operations before and after the mark ordered. */

ws_status ws_vk_timer_init(ws_device *dev) {
  ws_vk_impl *vk = ws_vk_of(dev);
  VkQueueFamilyProperties qf[64];
  uint32_t n = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(vk->phys, &n, NULL);
  if (n > 64)
    n = 64;
  vkGetPhysicalDeviceQueueFamilyProperties(vk->phys, &n, qf);
  const uint32_t bits = vk->family < n ? qf[vk->family].timestampValidBits : 0u;
  /* no timestamps on this queue family (or not guaranteed on compute
   * queues): no pool, and the timer ops report no device time */
  if (bits == 0 || !vk->props.limits.timestampComputeAndGraphics)
    return WS_OK;
  vk->timer_mask = bits >= 64 ? UINT64_MAX : ((uint64_t)1 << bits) - 1u;
  vk->timer_ns_per_tick = (double)vk->props.limits.timestampPeriod;
  VkQueryPoolCreateInfo qi = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
                              .queryType = VK_QUERY_TYPE_TIMESTAMP,
                              .queryCount = 2};
  ws_status st = WS_VK_CALL(dev, vkCreateQueryPool, vk->device, &qi, NULL, &vk->timer_pool);
  if (st != WS_OK)
    vk->timer_pool = VK_NULL_HANDLE;
  return st;
}

ws_status ws_vk_op_timer_mark(ws_device *dev, bool end) {
  ws_vk_impl *vk = ws_vk_of(dev);
  if (!vk->timer_pool)
    return WS_OK; /* no device timer: ws_vk_op_timer_elapsed reports -1 */
  if (end && !(vk->timer_marks & 1u))
    return ws_dev_fail(dev, WS_EINVAL, "vulkan: device timer: end mark without a start mark");
  ws_status st = ws_vk_record_begin(dev);
  if (st != WS_OK)
    return st;
  if (!end) {
    vkCmdResetQueryPool(vk->sub.cmd, vk->timer_pool, 0, 2);
    vk->timer_marks = 0;
  }
  vkCmdWriteTimestamp(vk->sub.cmd, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, vk->timer_pool,
                      end ? 1u : 0u);
  vk->timer_marks |= end ? 2u : 1u;
  return WS_OK;
}

ws_status ws_vk_op_timer_elapsed(ws_device *dev, double *ms) {
  ws_vk_impl *vk = ws_vk_of(dev);
  if (!vk->timer_pool) {
    *ms = -1.0; /* stands for NULL timer ops (see ws_vk_ops in vk_device.c) */
    return WS_OK;
  }
  if (vk->broken)
    return broken_fail(dev);
  if (vk->timer_marks != 3u)
    return ws_dev_fail(dev, WS_EINVAL,
                       "vulkan: device timer: elapsed time asked before both marks were enqueued");
  /* The caller synchronizes first (backend.h); should a mark still be
   * unsubmitted, waiting on its query would never end: submit it. */
  ws_status st;
  if (vk->recording && (st = submit_and_wait(dev)) != WS_OK)
    return st;
  uint64_t t[2];
  if ((st = WS_VK_CALL(dev, vkGetQueryPoolResults, vk->device, vk->timer_pool, 0, 2, sizeof t, t,
                    sizeof t[0], VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT)) != WS_OK)
    return st;
  const uint64_t ticks = (t[1] - t[0]) & vk->timer_mask;
  *ms = (double)ticks * vk->timer_ns_per_tick * 1e-6;
  return WS_OK;
}
