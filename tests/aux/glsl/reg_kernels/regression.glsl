/* SPDX-License-Identifier: MIT */
/* The permanent regression of SPEC §6 (tests/aux/regression.h and
 * regression.kern.h) in GLSL: the structs, constants and device helpers
 * shared by reg_main.coro.comp, reg_raw_stage.comp and reg_pool_stage.comp.
 * Same fields, same order, same arithmetic as the C source. */
#ifndef WS_TEST_REGRESSION_GLSL
#define WS_TEST_REGRESSION_GLSL

#include "wavesched/pool.glsl"

#define REG_N 67u
#define REG_R 8u
#define REG_C 8u
#define REG_STAGES 3u
#define REG_TAG 0x9e3779b9u

#define REG_PREPARE 0u
#define REG_ITERATE 1u
#define REG_FINISH 2u

/* One auxiliary item (16 bytes, alignment 4, as in C). */
struct reg_item {
  uint id;
  uint tag;
  uint pending;
  uint reserved;
};
#define WS_SIZEOF_reg_item 16u
#define WS_ALIGNOF_reg_item 4u
#define WS_ZERO_reg_item reg_item(0u, 0u, 0u, 0u)
WS_DECLARE_TYPE(reg_item, 4)

/* The hand-written client's device storage (32 bytes, alignment 8). */
struct reg_storage {
  uint64_t items;
  uint64_t tokens;
  uint64_t stack;
  uint64_t state;
};

/* regression.h reg_args: 104 bytes, alignment 8 (no trailing padding). */
struct reg_args {
  uint64_t visits;      /* uint32_t[3N]: visits[3*id + stage] */
  uint64_t diagnostics; /* uint32_t[N+2]: [0] errors, [1] progress with live items, [2+id] done */
  reg_storage raw;
  ws_pool_view pool;
  uint use_pool;
  uint capacity;
};

/* regression.h reg_stage_args: 112 bytes (a plain kernel's push constants). */
struct reg_stage_args {
  reg_args a;
  uint stage;
  uint reserved;
};

/* Next stage of the item at `item` leaving `stage`, or REG_STAGES for
 * termination (clears `pending` on the iterate self-loop, as in C). */
uint reg_next_stage(uint64_t item, uint stage) {
  if (stage == REG_PREPARE)
    return WS_REF(reg_item)(item).v.id % 3u == 0u ? REG_FINISH : REG_ITERATE;
  if (stage == REG_ITERATE) {
    if (WS_REF(reg_item)(item).v.pending != 0u) {
      WS_REF(reg_item)(item).v.pending = 0u;
      return REG_ITERATE;
    }
    return REG_FINISH;
  }
  return REG_STAGES;
}

#endif
