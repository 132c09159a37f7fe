/* SPDX-License-Identifier: MIT */
/* collatz.h in GLSL (the same struct: same fields, order and types, hence the same bytes)
 * and collatz.kern.h's continuation indices, shared by collatz.coro.comp and collatz_store.comp. */
#include "wavesched/pool.glsl"

struct collatz_args {
  ws_pool_view pool;
  uint64_t result;
};

#define EVEN 1u
#define ODD 2u
