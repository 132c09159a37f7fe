/* SPDX-License-Identifier: MIT */
/* wavesched — device side of the library's multi-stage slot pool (pool.h) in
 * GLSL for the Vulkan backend: the twin of pool_kernel.h, same storage, same
 * semantics (docs/vulkan.md, docs/protocol.md).
 *
 * Storage (all device addresses in ws_pool_view):
 *   tokens[C]      0 = free, s + 1 = the item waits in stage s
 *   stack[C]       free-stack mode: LIFO of free slots, stack[0 .. free-1]
 *                  are free; append mode: compaction scratch
 *   state[3 + S]   [0] free count (int32), [1] error count,
 *                  [2 + s] live count of stage s, [2 + S] the append extent
 *   payload        C records of `stride` bytes, stable per slot between
 *                  admission boundaries
 *
 * Invariant at every launch boundary: free + sum state[2+s] = C and each
 * stage count equals the number of tokens s + 1. Within one launch a pool
 * may be published to, or moved/released from, but not both. Append mode
 * (v.mode == WS_POOL_APPEND): publications take the slot at the extent,
 * releases leave holes below it (pool_kernel.h says more).
 *
 * C pool_kernel.h                        GLSL (this file)
 *   const ws_pool_view *v; v->x            ws_pool_view v; v.x
 *   void *ws_pool_payload(v, slot)         uint64_t ws_pool_payload(v, slot)
 *                                          (an address: WS_REF(T)(addr).v)
 *   int ws_pool_in_stage(v, slot, s)       bool ws_pool_in_stage(v, slot, s)
 *   ws_pool_publish / move / release       same names, same arguments
 *
 * Usage:
 *   #include "wavesched/pool.glsl"    (includes kernel.glsl)
 *   struct my_args { ws_pool_view pool; uint stage; uint reserved; };
 *   WS_KERNEL(my_stage, my_args, slot, a) {
 *     if (!ws_pool_in_stage(a.pool, slot, a.stage)) return;
 *     my_item it = WS_REF(my_item)(ws_pool_payload(a.pool, slot)).v;
 *     ...
 *     ws_pool_release(a.pool, slot, a.stage);
 *   }
 */
#ifndef WAVESCHED_POOL_GLSL
#define WAVESCHED_POOL_GLSL

#include "wavesched/kernel.glsl"

/* The view, by value (a kernel argument or a member of one). Its members
 * are scalars, so the scalar layout gives them C's offsets: the ones
 * ws_pool_view_ref below declares explicitly and pool_kernel.h pins with
 * _Static_asserts (48 bytes, alignment 8: no trailing padding to add when
 * it is nested in another struct). */
struct ws_pool_view {
  uint64_t tokens;
  uint64_t stack;
  uint64_t state;
  uint64_t payload;
  uint capacity;
  uint stage_count;
  uint stride;
  uint mode;
};
#define WS_SIZEOF_ws_pool_view 48u
#define WS_ALIGNOF_ws_pool_view 8u
#define WS_ZERO_ws_pool_view ws_pool_view(0ul, 0ul, 0ul, 0ul, 0u, 0u, 0u, 0u)

/* The same record at a device address, with every offset spelled out
 * (pool_kernel.h asserts the same numbers on the C side). */
layout(buffer_reference, scalar, buffer_reference_align = 8) buffer ws_pool_view_ref {
  layout(offset = 0) uint64_t tokens;
  layout(offset = 8) uint64_t stack;
  layout(offset = 16) uint64_t state;
  layout(offset = 24) uint64_t payload;
  layout(offset = 32) uint capacity;
  layout(offset = 36) uint stage_count;
  layout(offset = 40) uint stride;
  layout(offset = 44) uint mode;
};

/* Reads a view stored in device memory at `addr` (8-byte aligned). */
ws_pool_view ws_pool_view_load(uint64_t addr) {
  ws_pool_view_ref r = ws_pool_view_ref(addr);
  return ws_pool_view(r.tokens, r.stack, r.state, r.payload, r.capacity, r.stage_count, r.stride,
                      r.mode);
}

#define WS_POOL_NONE 0xffffffffu
#define WS_POOL_STACK 0u
#define WS_POOL_APPEND 1u

/* Address of the payload record of `slot`. */
uint64_t ws_pool_payload(ws_pool_view v, uint slot) {
  return v.payload + uint64_t(slot) * uint64_t(v.stride);
}

/* Whether `slot` currently waits in `stage` (stage kernels launch over all C
 * slots and keep the ones that answer true). */
bool ws_pool_in_stage(ws_pool_view v, uint slot, uint stage) {
  return slot < v.capacity && WS_PTR(uint32_t, v.tokens)[slot] == stage + 1u;
}

/* Takes a free slot for a new item in `stage`; WS_POOL_NONE (and an error
 * counted) when the pool is full — in append mode also when the extent
 * reached C — which admission makes impossible for a producer that keeps
 * its declared bound. Write the payload after. */
uint ws_pool_publish(ws_pool_view v, uint stage) {
  const int old = ws_atomic_add_i32_agg(v.state, -1);
  if (old <= 0) {
    ws_atomic_add_i32(v.state, 1);
    ws_atomic_add_u32(WS_ADDR(uint32_t, v.state, 1u), 1u);
    return WS_POOL_NONE;
  }
  uint slot;
  if (v.mode == WS_POOL_APPEND) {
    slot = ws_atomic_add_u32_agg(WS_ADDR(uint32_t, v.state, 2u + v.stage_count), 1u);
    if (slot >= v.capacity) {
      ws_atomic_add_i32(v.state, 1);
      ws_atomic_add_u32(WS_ADDR(uint32_t, v.state, 1u), 1u);
      return WS_POOL_NONE;
    }
  } else {
    slot = WS_PTR(uint32_t, v.stack)[old - 1];
  }
  WS_PTR(uint32_t, v.tokens)[slot] = stage + 1u;
  ws_atomic_add_u32_agg(WS_ADDR(uint32_t, v.state, 2u + stage), 1u);
  return slot;
}

/* Moves the item in `slot` from stage `from` to stage `to` (to == from is a
 * self-loop and changes no count). It keeps its slot: no admission needed. */
void ws_pool_move(ws_pool_view v, uint slot, uint from, uint to) {
  WS_PTR(uint32_t, v.tokens)[slot] = to + 1u;
  if (to != from) {
    ws_atomic_add_u32_agg(WS_ADDR(uint32_t, v.state, 2u + from), 0xffffffffu);
    ws_atomic_add_u32_agg(WS_ADDR(uint32_t, v.state, 2u + to), 1u);
  }
}

/* Terminates the item in `slot` (stage `from`) and frees the slot (append
 * mode: leaves a hole below the extent). */
void ws_pool_release(ws_pool_view v, uint slot, uint from) {
  WS_PTR(uint32_t, v.tokens)[slot] = 0u;
  ws_atomic_add_u32_agg(WS_ADDR(uint32_t, v.state, 2u + from), 0xffffffffu);
  const int pos = ws_atomic_add_i32_agg(v.state, 1);
  if (pos < 0 || uint(pos) >= v.capacity) {
    ws_atomic_add_u32(WS_ADDR(uint32_t, v.state, 1u), 1u);
    return;
  }
  if (v.mode != WS_POOL_APPEND)
    WS_PTR(uint32_t, v.stack)[pos] = slot;
}

#endif
