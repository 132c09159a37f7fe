/* SPDX-License-Identifier: MIT */
/* Types shared by the host (main.c) and the kernels (collatz.kern.h). */
#include "wavesched/pool_kernel.h"

#define COLLATZ_FIELDS(X) X(uint32_t, value) X(uint32_t, steps)
WS_FRAME(collatz_frame, COLLATZ_FIELDS) /* the frame: an item's state between two steps */
/* Every kernel's arguments: the pool's device side, and where results go (uint32_t[N]). */
typedef struct collatz_args {
  ws_pool_view pool;
  uint64_t result;
} collatz_args;
typedef struct collatz_record {
  uint32_t id, steps;
} collatz_record;           /* one auxiliary item */
enum { EVEN = 1, ODD = 2 }; /* continuation indices; 0 is the entry */
#define COLLATZ_CONTINUATIONS(X) X(EVEN, collatz_even, "even") X(ODD, collatz_odd, "odd")
