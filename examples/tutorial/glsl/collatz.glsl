/* SPDX-License-Identifier: MIT */
/* collatz.h in GLSL: the same structs (same fields, order and types, hence the same bytes)
 * and continuation indices, shared by collatz.coro.comp and collatz_store.comp. */
#include "wavesched/pool.glsl"

struct collatz_args {
  ws_pool_view pool;
  uint64_t result;
};
struct collatz_record {
  uint id;
  uint steps;
};
#define WS_SIZEOF_collatz_record 8u
#define WS_ALIGNOF_collatz_record 4u
#define WS_ZERO_collatz_record collatz_record(0u, 0u)
WS_DECLARE_TYPE(collatz_record, 4)

#define EVEN 1u
#define ODD 2u
