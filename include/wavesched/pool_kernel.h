/* SPDX-License-Identifier: MIT */
/** @file
 * wavesched — device side of the library's multi-stage slot pool (pool.h).
 * One source for CPU and CUDA kernels, like kernel.h.
 *
 * Storage (all device addresses in ws_pool_view):
 *   tokens[C]      0 = free, s + 1 = the item waits in stage s
 *   stack[C]       free-stack mode: LIFO of free slots, stack[0 .. free-1]
 *                  are free; append mode: scratch the compaction moves with
 *                  the items (its contents mean nothing)
 *   state[3 + S]   [0] free count (int32), [1] error count,
 *                  [2 + s] live count of stage s, [2 + S] the append extent
 *                  (append mode; 0 in free-stack mode)
 *   payload        C records of `stride` bytes, stable per slot between
 *                  admission boundaries, and a spare record C that a
 *                  publication into a full pool writes (ws_pool_publish_record)
 *
 * Invariant at every launch boundary: free + Σ state[2+s] = C and each stage
 * count equals the number of tokens s + 1. Within one launch a pool may be
 * published to, or moved/released from, but not both: pops and pushes of the
 * free stack are not ordered against each other inside a launch.
 *
 * Append mode (view.mode == WS_POOL_APPEND, docs/protocol.md): a publication
 * takes the slot at the extent and raises it; a release leaves a hole below
 * it. So every non-zero token lies in [0, extent), and only the C - extent
 * slots above it can be written. The host reclaims or compacts the extent
 * only at an admission boundary (prepare_for_admission), when no kernel
 * runs: an item may then move to a lower slot with its token and payload, so
 * a slot index is valid only within one boundary-to-boundary interval.
 */
#ifndef WAVESCHED_POOL_KERNEL_H
#define WAVESCHED_POOL_KERNEL_H

#include "wavesched/kernel.h"

/** The pool as kernels see it (ws_pool_get_view); passed by value inside
 * argument structs. */
typedef struct ws_pool_view {
  uint64_t tokens;      /**< uint32_t[C]: 0 free, s + 1 waiting in stage s */
  uint64_t stack;       /**< uint32_t[C]: the free slots, a LIFO (free-stack mode) */
  uint64_t state;       /**< uint32_t[3 + S]: free count, error count, stage counts, extent */
  uint64_t payload;     /**< C records of `stride` bytes */
  uint32_t capacity;    /**< C */
  uint32_t stage_count; /**< S */
  uint32_t stride;      /**< payload bytes per slot */
  uint32_t mode;        /**< WS_POOL_STACK (0) or WS_POOL_APPEND (1), the pool's allocation */
} ws_pool_view;

/* pool.glsl declares the same record (ws_pool_view_ref) with these explicit
 * offsets; kernels pass it by value inside their argument structs. */
#if !defined(__cplusplus)
#define WS_POOL_VIEW_AT_(field, offset)                                                    \
  _Static_assert(offsetof(ws_pool_view, field) == (offset),                                \
                 "pool.glsl declares ws_pool_view." #field " at " #offset)
#define WS_POOL_VIEW_ASSERT_(cond, msg) _Static_assert(cond, msg)
#define WS_POOL_VIEW_ALIGNOF_(t) _Alignof(t)
#else
#define WS_POOL_VIEW_AT_(field, offset)                                                    \
  static_assert(offsetof(ws_pool_view, field) == (offset),                                 \
                "pool.glsl declares ws_pool_view." #field " at " #offset)
#define WS_POOL_VIEW_ASSERT_(cond, msg) static_assert(cond, msg)
#define WS_POOL_VIEW_ALIGNOF_(t) alignof(t)
#endif
WS_POOL_VIEW_AT_(tokens, 0);
WS_POOL_VIEW_AT_(stack, 8);
WS_POOL_VIEW_AT_(state, 16);
WS_POOL_VIEW_AT_(payload, 24);
WS_POOL_VIEW_AT_(capacity, 32);
WS_POOL_VIEW_AT_(stage_count, 36);
WS_POOL_VIEW_AT_(stride, 40);
WS_POOL_VIEW_AT_(mode, 44);
WS_POOL_VIEW_ASSERT_(sizeof(ws_pool_view) == 48, "pool.glsl: ws_pool_view is 48 bytes");
WS_POOL_VIEW_ASSERT_(WS_POOL_VIEW_ALIGNOF_(ws_pool_view) == 8, "pool.glsl: ws_pool_view is 8-byte aligned");
#undef WS_POOL_VIEW_AT_
#undef WS_POOL_VIEW_ASSERT_
#undef WS_POOL_VIEW_ALIGNOF_

/** ws_pool_publish's answer when the pool is full. */
#define WS_POOL_NONE 0xffffffffu

/** ws_pool_view.mode: a free stack (any free slot is written next) */
#define WS_POOL_STACK 0u
/** ws_pool_view.mode: append allocation (publish at the extent, holes below it) */
#define WS_POOL_APPEND 1u

/** Payload record of `slot`. */
WS_DEVICE static inline void *ws_pool_payload(const ws_pool_view *v, uint32_t slot) {
  return WS_PTR(unsigned char, v->payload) + (uint64_t)slot * v->stride;
}

/** The payload record of `slot` as a `type *` (`type` may be const-qualified:
 * `WS_POOL_RECORD(&a->pool, slot, const my_record)`). */
#define WS_POOL_RECORD(view, slot, type) ((type *)ws_pool_payload((view), (slot)))

/** Whether `slot` currently waits in `stage` (stage kernels launch over all C
 * slots and keep the ones that answer true). */
WS_DEVICE static inline int ws_pool_in_stage(const ws_pool_view *v, uint32_t slot,
                                             uint32_t stage) {
  return slot < v->capacity && WS_PTR(const uint32_t, v->tokens)[slot] == stage + 1u;
}

/** Takes a free slot for a new item in `stage`; WS_POOL_NONE (and an error
 * counted) when the pool is full — in append mode also when the extent
 * reached C — which admission makes impossible for a producer that keeps
 * its declared bound. Write the payload after. */
/* The state words' atomics are warp-aggregated (kernel.h): every lane of a
 * stage kernel or producer hits the same few words. */
WS_DEVICE static inline uint32_t ws_pool_publish(const ws_pool_view *v, uint32_t stage) {
  int32_t *free_count = WS_PTR(int32_t, v->state);
  uint32_t *state = WS_PTR(uint32_t, v->state);
  int32_t old = ws_atomic_add_i32_agg(free_count, -1);
  if (old <= 0) {
    ws_atomic_add_i32(free_count, 1);
    ws_atomic_add_u32(&state[1], 1u);
    return WS_POOL_NONE;
  }
  uint32_t slot;
  if (v->mode == WS_POOL_APPEND) {
    /* the extent only grows inside a launch: a slot at or past C is storage
     * that admission said was not there (the extent stays past C, and the
     * counted error ends the dispatch) */
    slot = ws_atomic_add_u32_agg(&state[2 + v->stage_count], 1u);
    if (slot >= v->capacity) {
      ws_atomic_add_i32(free_count, 1);
      ws_atomic_add_u32(&state[1], 1u);
      return WS_POOL_NONE;
    }
  } else {
    slot = WS_PTR(const uint32_t, v->stack)[old - 1];
  }
  WS_PTR(uint32_t, v->tokens)[slot] = stage + 1u;
  ws_atomic_add_u32_agg(&state[2 + stage], 1u);
  return slot;
}

/** Publishes a new item into `stage` (ws_pool_publish) and returns its
 * payload record to write. On a full pool (an error counted, which ends the
 * dispatch) it returns the pool's spare record past the C slots, so a
 * producer that exceeded its bound writes nowhere else. */
WS_DEVICE static inline void *ws_pool_publish_record(const ws_pool_view *v, uint32_t stage) {
  const uint32_t slot = ws_pool_publish(v, stage);
  return ws_pool_payload(v, slot == WS_POOL_NONE ? v->capacity : slot);
}
/** ws_pool_publish_record as a `type *`:
 * `*WS_POOL_PUBLISH(&a->pool, 0, my_record) = (my_record){...};`. */
#define WS_POOL_PUBLISH(view, stage, type) ((type *)ws_pool_publish_record((view), (stage)))

/** Moves the item in `slot` from stage `from` to stage `to` (to == from is a
 * self-loop and changes no count). It keeps its slot: no admission needed. */
WS_DEVICE static inline void ws_pool_move(const ws_pool_view *v, uint32_t slot, uint32_t from,
                                          uint32_t to) {
  uint32_t *state = WS_PTR(uint32_t, v->state);
  WS_PTR(uint32_t, v->tokens)[slot] = to + 1u;
  if (to != from) {
    ws_atomic_add_u32_agg(&state[2 + from], (uint32_t)-1);
    ws_atomic_add_u32_agg(&state[2 + to], 1u);
  }
}

/** Terminates the item in `slot` (stage `from`) and frees the slot (append
 * mode: leaves a hole below the extent). */
WS_DEVICE static inline void ws_pool_release(const ws_pool_view *v, uint32_t slot,
                                             uint32_t from) {
  int32_t *free_count = WS_PTR(int32_t, v->state);
  uint32_t *state = WS_PTR(uint32_t, v->state);
  WS_PTR(uint32_t, v->tokens)[slot] = 0u;
  ws_atomic_add_u32_agg(&state[2 + from], (uint32_t)-1);
  int32_t pos = ws_atomic_add_i32_agg(free_count, 1);
  if (pos < 0 || (uint32_t)pos >= v->capacity) {
    ws_atomic_add_u32(&state[1], 1u);
    return;
  }
  if (v->mode != WS_POOL_APPEND)
    WS_PTR(uint32_t, v->stack)[pos] = slot;
}

#endif
