/* SPDX-License-Identifier: MIT */
/** @file
 * wavesched — the library's multi-stage slot pool: a ready-made auxiliary
 * work (SPEC §3.3) so that users get the protocol right without writing it.
 *
 * The pool owns the storage (tokens, free stack, per-stage counts, payload
 * records of a fixed stride) and implements every call of ws_aux_work.
 * Kernels publish, move and release items with pool_kernel.h. A stage is a
 * kernel over all C slots that keeps the slots ws_pool_in_stage(view, i,
 * stage) says are its: the WS_KERNEL named like the stage, which
 * ws_scheduler_add_pool finds, or one set with ws_pool_set_stage_kernels;
 * or the user supplies a callback that launches the stage's work
 * (run_stage).
 *
 * Host counts: host_count() is C minus the free count the allocator reports,
 * stage_host_count(s) the stage counts the kernels maintain; the scheduler
 * checks that they agree (stage sum), so a lost update is reported.
 *
 * Allocation (ws_pool_set_allocation): WS_POOL_STACK (the default) takes
 * any free slot from a free stack, so all C - L free slots can be written;
 * WS_POOL_APPEND publishes at an extent and leaves holes where items are
 * released (Cycles' shadow queue). An append pool tells the scheduler what
 * it can write (available_slots = C - extent, issue 18) and prepares its
 * storage before admission with Cycles' rule: the extent is reset when
 * nothing is live, and the live items are compacted to [0, L) when the
 * extent is at least 32 and at least 2 L. With stage kernels
 * (ws_pool_set_stage_kernels) the pool also describes its append storage to
 * the device loop (ws_aux_device.extent), which applies the same rule on the
 * device: same decisions and statistics in both loops. */
#ifndef WAVESCHED_POOL_H
#define WAVESCHED_POOL_H

#include "wavesched/pool_kernel.h"
#include "wavesched/wavesched.h"

#ifdef __cplusplus
extern "C" {
#endif
WS_API_BEGIN

/** A slot pool: storage and the protocol of one multi-stage auxiliary work. */
typedef struct ws_pool ws_pool;

/** What ws_pool_create makes. */
typedef struct ws_pool_config {
  const char *name;                 /**< the work's name */
  uint32_t capacity;                /**< C */
  uint32_t stage_count;             /**< S >= 1 */
  const char *const *stage_names;   /**< [S]; registration order = drain priority; with
                                       ws_scheduler_add_pool, the kernels that run them */
  uint32_t payload_stride;          /**< bytes per item record (multiple of 8 advised) */
  const ws_aux_producer *producers; /**< the continuations that publish, with their bounds */
  uint32_t producer_count;          /**< number of producers */
  /** Launches the kernel(s) of `stage` in stream order. Must consume exactly
   * the items of that stage: move each to a stage or release it. NULL: the
   * stages are kernels (ws_scheduler_add_pool, ws_pool_set_stage_kernels). */
  ws_status (*run_stage)(void *user, ws_pool *pool, uint32_t stage);
  void *user; /**< passed to run_stage */
} ws_pool_config;

/** Per-stage counters the pool keeps of itself (the client's own view). */
typedef struct ws_pool_counters {
  uint64_t dispatches; /**< stage dispatches */
  uint64_t executed;   /**< sum of the stage counts observed at them */
} ws_pool_counters;

/** What an append pool did to its storage in the current (or last) dispatch. */
typedef struct ws_pool_storage {
  uint32_t extent;      /**< the append extent now (after a dispatch: at its last
                           boundary, after any reclaim or compaction there; 0 for a
                           free-stack pool) */
  uint32_t peak_extent; /**< the largest extent observed in the dispatch */
  uint64_t reclaims;    /**< extents reset because nothing was live */
  uint64_t compactions; /**< compactions of the live items into [0, L) */
} ws_pool_storage;

/** Creates a pool on `dev` (device memory for C slots) into *out, NULL on
 * failure: WS_EINVAL (a NULL argument, name or stage_names),
 * WS_EAUX_CAPACITY (C = 0), WS_EAUX_STAGES (S = 0), WS_ENOMEM, WS_EDEVMEM.
 * Producers and stage names are checked when the work is registered. The
 * device owns the pool: ws_device_destroy destroys it if it is still alive. */
ws_status ws_pool_create(ws_device *dev, const ws_pool_config *config, ws_pool **out);
/** Frees the pool; destroy the scheduler it is registered with first. NULL is ignored. */
void ws_pool_destroy(ws_pool *pool);
/** Registers the pool with `s` (ws_scheduler_add_aux of ws_pool_work). A
 * pool without run_stage, whose stage kernels were not set with
 * ws_pool_set_stage_kernels, runs stage s as the WS_KERNEL named like the
 * stage (stage_names[s]), found in the module set of the scheduler's
 * coroutine on the device, over the C slots, with the argument block `args`
 * (args_size bytes, the kernel's argument struct; copied). It usually is
 * the dispatch's block, which holds the pool's view. Errors, with the
 * message on the scheduler and on the device: WS_EINVAL (NULL s or pool,
 * the pool on another device, a stage named like a coroutine, an argument
 * block that is not the kernel's, or one for a pool whose stages are not
 * found here), WS_ENOKERNEL (no kernel of a stage's name), and those of
 * ws_scheduler_add_aux. Nothing is registered on error. */
ws_status ws_scheduler_add_pool(ws_scheduler *s, ws_pool *pool, const void *args,
                                size_t args_size);
/** Chooses the pool's allocation: WS_POOL_STACK (what ws_pool_create
 * makes) or WS_POOL_APPEND (issue 18: publish at an extent, holes left by
 * releases, Cycles' reclaim and compaction before admission). The view
 * carries the mode and the work carries the storage calls, so call it right
 * after ws_pool_create, before ws_pool_get_view and ws_pool_work: afterwards,
 * or with a value other than the two, WS_EINVAL. An append pool allocates C
 * more words (its compaction's scratch): WS_EDEVMEM / WS_ENOMEM as creation. */
ws_status ws_pool_set_allocation(ws_pool *pool, uint32_t allocation);
/** Describes the stages as kernels: stage s is one launch of kernels[s]
 * (argument blocks copied; an argument block usually holds the pool's view,
 * hence a call after creation). Then the pool's work can run in the device
 * loop (ws_aux_device), and without run_stage the host loop launches the
 * same kernels. Call before registering the work; again to replace them.
 * WS_EINVAL (a kernel of another device, a coroutine, a block of the wrong
 * size), WS_ENOMEM or a device-memory error leave the pool as it was: a
 * retry is safe. */
ws_status ws_pool_set_stage_kernels(ws_pool *pool, const ws_aux_stage_kernel *kernels);
/** Device addresses for kernels; stable for the pool's life. */
ws_pool_view ws_pool_get_view(const ws_pool *pool);
/** The auxiliary work to pass to ws_scheduler_add_aux (owned by the pool). */
const ws_aux_work *ws_pool_work(const ws_pool *pool);
/** Live items observed at the last boundary. */
uint32_t ws_pool_live(const ws_pool *pool);
/** Errors the kernels counted, observed at the last boundary (a publish into
 * a full pool, a release past the capacity): 0 in a correct program. */
uint32_t ws_pool_errors(const ws_pool *pool);
/** The pool's own counters of `stage` into *out; WS_EINVAL when out of range. */
ws_status ws_pool_stage_counters(const ws_pool *pool, uint32_t stage, ws_pool_counters *out);
/** What the pool did to its append storage in the host loop or the device
 * loop (all zero for a free-stack pool) into *out; WS_EINVAL for a NULL
 * argument. Reads the device (synchronous) for an append pool. */
ws_status ws_pool_storage_stats(const ws_pool *pool, ws_pool_storage *out);
/** The message of the pool's last error ("" if none). */
const char *ws_pool_last_error(const ws_pool *pool);

WS_API_END
#ifdef __cplusplus
}
#endif
#endif
