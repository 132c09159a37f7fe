/* SPDX-License-Identifier: MIT */
/* The kernels: one C source for the CPU and CUDA backends (glsl/ has them for Vulkan). */
#include "collatz.h"
#define COLLATZ_FIELDS(X) X(uint32_t, value) X(uint32_t, steps)
WS_FRAME(collatz_frame, COLLATZ_FIELDS) /* the frame: an item's state between two steps */
enum { EVEN = 1, ODD = 2 }; /* continuations run one step, return the next; 0 is the entry */
WS_DEVICE static uint32_t collatz_init(const ws_item *it, collatz_frame *f, const collatz_args *a) {
  (void)a;
  f->value = it->id + 2u; /* frames start zeroed */
  return f->value % 2u ? ODD : EVEN;
}
WS_DEVICE static uint32_t collatz_odd(const ws_item *it, collatz_frame *f, const collatz_args *a) {
  (void)it, (void)a;
  f->value = 3u * f->value + 1u;
  f->steps += 1u;
  return EVEN;
}
WS_DEVICE static uint32_t collatz_even(const ws_item *it, collatz_frame *f, const collatz_args *a) {
  f->value /= 2u;
  f->steps += 1u;
  if (f->value != 1u)
    return f->value % 2u ? ODD : EVEN;
  *WS_POOL_PUBLISH(&a->pool, 0, uint64_t) = (uint64_t)it->id << 32 | f->steps; /* the record */
  return WS_TERMINATE; /* after 1 publication: the producer's bound */
}
#define COLLATZ_CONTINUATIONS(X) X(EVEN, collatz_even, "even") X(ODD, collatz_odd, "odd")
WS_COROUTINE(collatz, collatz_frame, collatz_args, collatz_init, COLLATZ_CONTINUATIONS)
WS_KERNEL(collatz_store, collatz_args, slot, a) { /* the stage: runs over every pool slot */
  if (!ws_pool_in_stage(&a->pool, slot, 0))
    return;
  const uint64_t r = *WS_POOL_RECORD(&a->pool, slot, const uint64_t); /* id << 32 | steps */
  WS_PTR(uint32_t, a->result)[r >> 32] = (uint32_t)r;
  ws_pool_release(&a->pool, slot, 0);
}
WS_MODULE(collatz, WS_MODULE_COROUTINE(collatz) WS_MODULE_KERNEL(collatz_store))
