/* SPDX-License-Identifier: MIT */
/* The kernels: one C source for the CPU and CUDA backends (glsl/ has them for Vulkan). */
#include "collatz.h"

#define COLLATZ_FIELDS(X) X(uint32_t, value) X(uint32_t, steps)
WS_FRAME(collatz_frame, COLLATZ_FIELDS) /* the frame: an item's state between two steps */
enum { EVEN = 1, ODD = 2 };             /* continuation indices; 0 is the entry */

/* A continuation runs one step of one item and returns where the item resumes. */
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
  /* done: publish the result (one record per run: the producer's bound) and end */
  collatz_record *r = (collatz_record *)ws_pool_payload(&a->pool, ws_pool_publish(&a->pool, 0));
  r->id = it->id;
  r->steps = f->steps;
  return WS_TERMINATE;
}
#define COLLATZ_CONTINUATIONS(X) X(EVEN, collatz_even, "even") X(ODD, collatz_odd, "odd")
WS_COROUTINE(collatz, collatz_frame, collatz_args, collatz_init, COLLATZ_CONTINUATIONS)

/* The auxiliary stage, over every pool slot: stores the waiting records, frees their slots. */
WS_KERNEL(collatz_store, collatz_args, slot, a) {
  if (!ws_pool_in_stage(&a->pool, slot, 0))
    return;
  const collatz_record *r = (const collatz_record *)ws_pool_payload(&a->pool, slot);
  WS_PTR(uint32_t, a->result)[r->id] = r->steps;
  ws_pool_release(&a->pool, slot, 0);
}
/* The module: the table in which the host finds "collatz" and "collatz_store". */
WS_MODULE(collatz, WS_MODULE_COROUTINE(collatz) WS_MODULE_KERNEL(collatz_store))
