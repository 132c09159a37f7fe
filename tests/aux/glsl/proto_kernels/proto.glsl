/* SPDX-License-Identifier: MIT */
/* The protocol tests' pipeline (tests/aux/proto.h and proto.kern.h) in
 * GLSL: the structs, constants and the publish helper shared by
 * proto_main.coro.comp and proto_stage.comp. Same fields, same order, same
 * arithmetic as the C source. */
#ifndef WS_TEST_PROTO_GLSL
#define WS_TEST_PROTO_GLSL

#include "wavesched/kernel.glsl"

#define PT_MAX_STAGES 4u
#define PT_NONE 0xffffffffu

/* proto.h proto_item: 8 bytes, alignment 4. */
struct proto_item {
  uint id;
  uint loops;
};
#define WS_SIZEOF_proto_item 8u
#define WS_ALIGNOF_proto_item 4u
#define WS_ZERO_proto_item proto_item(0u, 0u)
WS_DECLARE_TYPE(proto_item, 4)

/* proto.h proto_args: 104 bytes, alignment 8 (no trailing padding). */
struct proto_args {
  uint64_t visits; /* uint32_t[N * PT_MAX_STAGES] */
  uint64_t done;   /* uint32_t[N] */
  uint64_t items;  /* proto_item[C] */
  uint64_t tokens; /* uint32_t[C]: 0 free, s + 1 in stage s */
  uint64_t stack;  /* uint32_t[C] free slots */
  uint64_t state;  /* [0] free count, [1] pool errors, [2 + s] stage counts */
  uint capacity;
  uint stage_count;
  uint sparse_stage; /* ids % sparse_mod == 0 publish one item here (PT_NONE: off) */
  uint sparse_mod;
  uint dense_stage;  /* every id publishes dense_copies items here */
  uint dense_copies;
  uint loops;        /* self-loop visits in loop_stage */
  uint loop_stage;
  uint next[PT_MAX_STAGES]; /* stage after a visit; stage_count = terminate */
  uint clone_stage;   /* this stage also publishes a copy (a protocol violation) */
  uint forever_stage; /* this stage never releases (a non-draining stage) */
};

/* proto.h proto_stage_args: 112 bytes (a plain kernel's push constants). */
struct proto_stage_args {
  proto_args a;
  uint stage;
  uint reserved;
};

void proto_publish(proto_args a, uint id, uint stage) {
  const int old = ws_atomic_add_i32(a.state, -1);
  if (old <= 0) { /* the overflow guard: the shared allocation is exhausted */
    ws_atomic_add_i32(a.state, 1);
    ws_atomic_add_u32(WS_ADDR(uint32_t, a.state, 1u), 1u);
    return;
  }
  const uint slot = WS_PTR(uint32_t, a.stack)[old - 1];
  WS_PTR(proto_item, a.items)[slot].id = id;
  WS_PTR(proto_item, a.items)[slot].loops = stage == a.loop_stage ? a.loops : 0u;
  WS_PTR(uint32_t, a.tokens)[slot] = stage + 1u;
  ws_atomic_add_u32(WS_ADDR(uint32_t, a.state, 2u + stage), 1u);
}

#endif
