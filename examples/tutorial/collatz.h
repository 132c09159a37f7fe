/* SPDX-License-Identifier: MIT */
#include "wavesched/pool.h"
typedef struct collatz_args { /* every kernel's arguments, built by the host (main.c) */
  ws_pool_view pool;          /* the pool's device side */
  uint64_t result;            /* where the results go: uint32_t[N] */
} collatz_args;
