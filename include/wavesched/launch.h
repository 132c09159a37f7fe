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
  WS_LAYOUT_SOA = 1  /**< struct of arrays: one array per field */
};

/** ws_launch.flags: the wrapper updates counts[] itself (fused accounting). */
#define WS_LAUNCH_FUSED 1u
/** ws_launch.flags: a megakernel launch (informational). */
#define WS_LAUNCH_MEGA 2u

/** Launch record of a coroutine kernel (one continuation over `count` frames,
 * the entry over `count` new items, or the megakernel over `count` items).
 *
 * Invariants the scheduler guarantees to the wrapper:
 *  - slot i of the launch is slots[i] when slots != 0, else slot_base + i,
 *    and every such slot is < capacity and distinct within the launch;
 *  - src == 0 means "run the entry for item first_id + i";
 *  - counts has continuation_count + 2 words: [1..K] queue counts, [K+1] the
 *    number of invalid transitions seen (an error the host reports).
 */
typedef struct ws_launch {
  uint64_t args;               /**< device address of the user's argument struct */
  uint64_t frames;             /**< frame pool base (AoS records or SoA arrays) */
  uint64_t field_offsets;      /**< SoA: uint64_t byte offset of each field's array */
  uint64_t ids;                /**< uint32_t[capacity]: logical id per slot */
  uint64_t tokens;             /**< uint32_t[capacity]: 0 free, j waiting in queue j */
  uint64_t slots;              /**< uint32_t list of slots, or 0 for a dense range */
  uint64_t counts;             /**< uint32_t[continuation_count + 2] */
  uint32_t count;              /**< frames (or new items) in this launch */
  uint32_t capacity;           /**< resident frames R: slots are < capacity */
  uint32_t first_id;           /**< entry launches: the id of the first new item */
  uint32_t src;                /**< the continuation resumed; 0 = the entry */
  uint32_t slot_base;          /**< first slot of a dense range (slots == 0) */
  uint32_t layout;             /**< WS_LAYOUT_AOS or WS_LAYOUT_SOA */
  uint32_t flags;              /**< WS_LAUNCH_FUSED, WS_LAUNCH_MEGA */
  uint32_t continuation_count; /**< K */
} ws_launch;

#if !defined(__cplusplus)
_Static_assert(sizeof(ws_launch) == 88, "ws_launch layout is shared with kernel.glsl");
_Static_assert(offsetof(ws_launch, count) == 56, "ws_launch layout is shared with kernel.glsl");
_Static_assert(offsetof(ws_launch, continuation_count) == 84, "ws_launch layout");
#else
static_assert(sizeof(ws_launch) == 88, "ws_launch layout is shared with kernel.glsl");
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
