/* SPDX-License-Identifier: MIT */
/** @file
 * wavesched — the launch record shared by the host, C/CUDA kernels and GLSL.
 *
 * One byte layout everywhere: scalars and device addresses (uint64_t) only.
 * A device address is a host pointer on the CPU backend, a device pointer on
 * CUDA and a buffer device address on Vulkan. kernel.glsl declares the same
 * record with explicit offsets; the _Static_asserts below pin the C side.
 */
#ifndef WAVESCHED_LAUNCH_H
#define WAVESCHED_LAUNCH_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Largest by-value argument block of a plain kernel (Vulkan guarantees 128
 * bytes of push constants; CUDA passes it as a kernel parameter). */
#define WS_MAX_KERNEL_ARGS 128u
/** Most user fields a frame may have (SoA offset table size). */
#define WS_MAX_FRAME_FIELDS 32u

/** Frame layouts (ws_scheduler_config.layout, ws_launch.layout). */
enum ws_layout_value {
  WS_LAYOUT_AOS = 0, /**< array of structs: one record of sizeof(frame) per slot */
  WS_LAYOUT_SOA = 1, /**< struct of arrays: one array per field */
  WS_LAYOUT_AUTO = 2 /**< configurations only (the default): SoA on GPU backends, AoS on
                        the CPU, chosen when the scheduler is created; never in a launch */
};

/** ws_launch.flags: the wrapper updates counts[] itself (fused accounting). */
#define WS_LAUNCH_FUSED 1u
/** ws_launch.flags: the launch selects its own frames: every slot below
 * slot_base (the scan bound) whose token is the continuation runs; slots
 * is then scratch of capacity entries (a stepped continuation's CUDA launch
 * keeps the frames it finds there, kernel.h). Only for a continuation
 * (src >= 1) whose whole queue runs; kernel.h's CPU and CUDA steps and
 * kernel.glsl's step implement it (one kernel fewer per iteration than
 * gather + step). */
#define WS_LAUNCH_SCAN 4u

/** Launch record of a coroutine kernel (one continuation over `count` frames,
 * the entry over `count` new items, the megakernel over `count` items, or
 * the tail over the suspended frames below slot_base).
 *
 * Invariants the scheduler guarantees to the wrapper:
 *  - slot i of the launch is slots[i] when slots != 0, else slot_base + i
 *    (scan mode: the launch finds its slots, see WS_LAUNCH_SCAN),
 *    and every such slot is < capacity and distinct within the launch;
 *  - src == 0 means "run the entry for item first_id + i";
 *  - counts has WS_COUNTS_WORDS(K) words: [1..K] queue counts, [K+1] the
 *    number of invalid transitions seen, [K+2] the items the megakernel or
 *    the tail stopped at `limit` (errors the host reports), [K+3] the frames scan-mode
 *    launches ran, a running total the loop checks against the counts it
 *    trusted, [K+4] the tickets of a scanning refill (Vulkan device loop).
 */
typedef struct ws_launch {
  uint64_t args;               /**< device address of the user's argument struct */
  uint64_t frames;             /**< frame pool base (AoS records or SoA arrays) */
  uint64_t field_offsets;      /**< SoA: uint64_t byte offset of each field's array */
  uint64_t ids;                /**< uint32_t[capacity]: logical id per slot */
  uint64_t tokens;             /**< uint32_t[capacity]: 0 free, j waiting in queue j */
  uint64_t slots;              /**< uint32_t list of slots, or 0 for a dense range */
  uint64_t counts;             /**< uint32_t[WS_COUNTS_WORDS(continuation_count)] */
  uint32_t count;              /**< frames (or new items) in this launch */
  uint32_t capacity;           /**< resident frames R: slots are < capacity */
  uint32_t first_id;           /**< entry launches: the id of the first new item */
  uint32_t src;                /**< the continuation resumed; 0 = the entry */
  uint32_t slot_base;          /**< first slot of a dense range (slots == 0); the scan
                                    bound with WS_LAUNCH_SCAN and in the tail */
  uint32_t layout;             /**< WS_LAYOUT_AOS or WS_LAYOUT_SOA */
  uint32_t flags;              /**< WS_LAUNCH_FUSED, WS_LAUNCH_SCAN */
  uint32_t continuation_count; /**< K */
  uint64_t plan;  /**< device loops: address of the ws_launch_plan this launch reads
                     (count, src, first_id, slot_base, slots); 0 = the fields above */
  uint64_t limit; /**< megakernel, tail: most continuation runs per item, 0 = none */
} ws_launch;

/* What a launch driven by a device loop reads at ws_launch.plan: the loop's
 * decisions write it each iteration (the first fields of the loop's plan
 * record, include/wavesched/detail/decide.h). The slot list is slots + 4 * slot_offset when
 * use_slots is set, else slot_base + i. */
/** ws_launch_plan.action: nothing runs this iteration. */
#define WS_PLAN_NONE 0u
/** ws_launch_plan.action: the entry starts `count` new items. */
#define WS_PLAN_REFILL 1u
/** ws_launch_plan.action: continuation `src` resumes `count` frames. */
#define WS_PLAN_RESUME 2u
/** ws_launch_plan.action: every continuation resumes its frames (all-queues policy). */
#define WS_PLAN_RESUME_ALL 3u
/** ws_launch_plan.action: an auxiliary stage runs. */
#define WS_PLAN_STAGE 4u
/** ws_launch_plan.action: the tail runs every suspended frame below slot_base
 * to its end, at most first_id continuations each (0 = no limit). */
#define WS_PLAN_TAIL 5u
/** What a launch driven by a device loop reads at ws_launch.plan. */
typedef struct ws_launch_plan {
  uint32_t action;      /**< WS_PLAN_* */
  uint32_t src;         /**< the continuation resumed; 0 = the entry */
  uint32_t count;       /**< frames (or new items) */
  uint32_t first_id;    /**< refills: the id of the first new item; the tail: the
                             most continuations an item may run (0 = no limit) */
  uint32_t slot_base;   /**< first slot of a dense range (use_slots == 0); the scan
                             bound (use_slots == 2, and the tail) */
  uint32_t use_slots;   /**< 0: slot_base + i; 1: slots[slot_offset + i]; 2: scan
                             [0, slot_base) for the slots whose token is src
                             (WS_LAUNCH_SCAN) */
  uint32_t slot_offset; /**< the first slot's index in the slot list */
} ws_launch_plan;

/** Index in counts[] of the invalid-transition count. */
#define WS_COUNTS_BAD(K) ((K) + 1u)
/** Index in counts[] of the items the megakernel stopped at its limit. */
#define WS_COUNTS_LIMIT(K) ((K) + 2u)
/** Index in counts[] of the running total of frames scan-mode launches ran. */
#define WS_COUNTS_SCANNED(K) ((K) + 3u)
/** Index in counts[] of the Vulkan device loop's refill tickets: the new
 * items a scanning refill handed out this iteration (kernel.glsl, zeroed by
 * the decide shader before each such refill). */
#define WS_COUNTS_TICKETS(K) ((K) + 4u)
/** Words of counts[] for K continuations. */
#define WS_COUNTS_WORDS(K) ((K) + 5u)

#if !defined(__cplusplus)
_Static_assert(sizeof(ws_launch) == 104, "ws_launch layout is shared with kernel.glsl");
_Static_assert(offsetof(ws_launch, count) == 56, "ws_launch layout is shared with kernel.glsl");
_Static_assert(offsetof(ws_launch, continuation_count) == 84, "ws_launch layout");
_Static_assert(offsetof(ws_launch, plan) == 88 && offsetof(ws_launch, limit) == 96,
               "ws_launch layout is shared with kernel.glsl");
#else
static_assert(sizeof(ws_launch) == 104, "ws_launch layout is shared with kernel.glsl");
static_assert(offsetof(ws_launch, count) == 56, "ws_launch layout is shared with kernel.glsl");
#endif

/** Logical item as a continuation sees it: never the slot. */
typedef struct ws_item {
  uint32_t id; /**< 0 .. item_count - 1 of the dispatch */
} ws_item;

#ifdef __cplusplus
}
#endif
#endif
