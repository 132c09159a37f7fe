/* SPDX-License-Identifier: MIT */
/* A configurable pipeline for the protocol tests: a main coroutine that
 * publishes into a shared slot pool, and one stage kernel driven by a
 * transition table, with switches that make a stage clone items or never let
 * go, and a producer that exceeds its declared bound. */
#ifndef WS_TEST_PROTO_H
#define WS_TEST_PROTO_H

#include "wavesched/kernel.h"

#define PT_MAX_STAGES 4u
#define PT_NONE 0xffffffffu

#define PT_FIELDS(X) X(uint32_t, unused)
WS_FRAME(proto_frame, PT_FIELDS)

typedef struct proto_item {
  uint32_t id;
  uint32_t loops;
} proto_item;

typedef struct proto_args {
  uint64_t visits; /* uint32_t[N * PT_MAX_STAGES] */
  uint64_t done;   /* uint32_t[N] */
  uint64_t items;  /* proto_item[C] */
  uint64_t tokens; /* uint32_t[C]: 0 free, s + 1 in stage s */
  uint64_t stack;  /* uint32_t[C] free slots */
  uint64_t state;  /* [0] free count, [1] pool errors, [2 + s] stage counts */
  uint32_t capacity;
  uint32_t stage_count;
  uint32_t sparse_stage; /* ids % sparse_mod == 0 publish one item here (PT_NONE: off) */
  uint32_t sparse_mod;
  uint32_t dense_stage;  /* every id publishes dense_copies items here */
  uint32_t dense_copies;
  uint32_t loops;      /* self-loop visits in loop_stage */
  uint32_t loop_stage;
  uint32_t next[PT_MAX_STAGES]; /* stage after a visit; stage_count = terminate */
  uint32_t clone_stage;   /* this stage also publishes a copy (a protocol violation) */
  uint32_t forever_stage; /* this stage never releases (a non-draining stage) */
} proto_args;

typedef struct proto_stage_args {
  proto_args a;
  uint32_t stage;
  uint32_t reserved;
} proto_stage_args;

enum { PT_SPARSE = 1, PT_DENSE = 2, PT_AFTER = 3 };
#define PT_CONTINUATIONS(X)                                                                \
  X(PT_SPARSE, proto_sparse, "sparse_publish")                                                \
  X(PT_DENSE, proto_dense, "dense_publish")                                                   \
  X(PT_AFTER, proto_after, "main_after_publish")

#endif
