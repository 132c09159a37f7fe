/* SPDX-License-Identifier: MIT */
#include "alloc.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "wavesched/testing.h"

/* Fault injection state. A countdown of 0 means "never fail". Atomics so that
 * backends allocating from worker threads stay race-free. */
static atomic_ulong fail_countdown;
static atomic_ulong live_allocations;
static atomic_ulong total_allocations;

void ws_testing_fail_alloc_after(unsigned long n) { atomic_store(&fail_countdown, n); }

unsigned long ws_testing_live_allocations(void) { return atomic_load(&live_allocations); }

unsigned long ws_testing_total_allocations(void) { return atomic_load(&total_allocations); }

static int should_fail(void) {
  unsigned long c = atomic_load(&fail_countdown);
  while (c != 0) {
    if (atomic_compare_exchange_weak(&fail_countdown, &c, c - 1))
      return c == 1;
  }
  return 0;
}

void *ws_malloc(size_t size) {
  if (should_fail())
    return NULL;
  void *p = malloc(size ? size : 1);
  if (p) {
    atomic_fetch_add(&live_allocations, 1);
    atomic_fetch_add(&total_allocations, 1);
  }
  return p;
}

void *ws_calloc(size_t count, size_t size) {
  if (should_fail())
    return NULL;
  void *p = calloc(count ? count : 1, size ? size : 1);
  if (p) {
    atomic_fetch_add(&live_allocations, 1);
    atomic_fetch_add(&total_allocations, 1);
  }
  return p;
}

void ws_free(void *ptr) {
  if (!ptr)
    return;
  atomic_fetch_sub(&live_allocations, 1);
  free(ptr);
}
