/* SPDX-License-Identifier: MIT */
/* Types shared by the host (main.c) and the kernels (collatz.kern.h). */
#include "wavesched/pool_kernel.h"

typedef struct collatz_args { /* every kernel's arguments */
  ws_pool_view pool;          /* the pool's device side */
  uint64_t result;            /* where the results go: uint32_t[N] */
} collatz_args;
typedef struct collatz_record { /* one auxiliary item */
  uint32_t id, steps;
} collatz_record;
