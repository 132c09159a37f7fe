/* SPDX-License-Identifier: MIT */
/* The permanent regression of SPEC §6, shared by host and kernels.
 *
 * 67 logical main paths, an 8-frame pool, one auxiliary work of capacity 8
 * with stages prepare -> {iterate (self-loop once) | finish (bypass, id%3==0)}
 * -> finish (terminal release), sparse publications straight into finish and
 * dense publications into prepare. The client's storage exists twice: a
 * hand-written one (reg_client_*) driven through the raw ws_aux_work table,
 * and the library's ws_pool; `use_pool` picks which one the kernels use. */
#ifndef WS_TEST_REGRESSION_H
#define WS_TEST_REGRESSION_H

#include "wavesched/pool_kernel.h"

#define REG_N 67u
#define REG_R 8u
#define REG_C 8u
#define REG_STAGES 3u
#define REG_TAG 0x9e3779b9u

enum { REG_PREPARE = 0, REG_ITERATE = 1, REG_FINISH = 2 };

#define REG_FIELDS(X) X(uint32_t, published)
WS_FRAME(reg_frame, REG_FIELDS)

/* One auxiliary item: the payload the stages check and update. */
typedef struct reg_item {
  uint32_t id;
  uint32_t tag;
  uint32_t pending;
  uint32_t reserved;
} reg_item;

/* The hand-written client's device storage: per slot an item and a token
 * (0 free, s + 1 in stage s), a LIFO free stack, and
 * state = [free count, count of stage 0, 1, 2]. */
typedef struct reg_storage {
  uint64_t items;
  uint64_t tokens;
  uint64_t stack;
  uint64_t state;
} reg_storage;

typedef struct reg_args {
  uint64_t visits;      /* uint32_t[3N]: visits[3*id + stage] */
  uint64_t diagnostics; /* uint32_t[N+2]: [0] errors, [1] progress with live items, [2+id] done */
  reg_storage raw;
  ws_pool_view pool;
  uint32_t use_pool;
  uint32_t capacity;
} reg_args;

typedef struct reg_stage_args {
  reg_args a;
  uint32_t stage;
  uint32_t reserved;
} reg_stage_args;

enum { REG_SPARSE = 1, REG_DENSE = 2, REG_AFTER = 3 };
#define REG_CONTINUATIONS(X)                                                               \
  X(REG_SPARSE, reg_sparse_publish, "sparse_publish")                                      \
  X(REG_DENSE, reg_dense_publish, "dense_publish")                                         \
  X(REG_AFTER, reg_main_after_publish, "main_after_publish")

#endif
