/* SPDX-License-Identifier: MIT */
#version 460
/* The protocol tests' main coroutine (tests/aux/proto.kern.h, proto_main) in
 * GLSL: entry -> sparse_publish -> dense_publish -> main_after_publish. */
#include "wavesched/kernel.glsl"
#include "proto.glsl"

#define PT_FIELDS(X) X(uint32_t, unused)
WS_FRAME(proto_frame, PT_FIELDS)

/* The argument block at ws_launch.args: the C struct proto_args. */
WS_ARGS(proto_args_ref) { proto_args a; };

#define PT_SPARSE 1u
#define PT_DENSE 2u
#define PT_AFTER 3u

uint proto_entry(ws_item it, inout proto_frame f, proto_args_ref r) {
  f.unused = 0u;
  return PT_SPARSE;
}

uint proto_sparse(ws_item it, inout proto_frame f, proto_args_ref r) {
  const proto_args a = r.a;
  if (a.sparse_stage != PT_NONE && it.id % a.sparse_mod == 0u)
    proto_publish(a, it.id, a.sparse_stage);
  return PT_DENSE;
}

uint proto_dense(ws_item it, inout proto_frame f, proto_args_ref r) {
  const proto_args a = r.a;
  for (uint k = 0u; k < a.dense_copies; ++k)
    proto_publish(a, it.id, a.dense_stage);
  return PT_AFTER;
}

uint proto_after(ws_item it, inout proto_frame f, proto_args_ref r) {
  ws_atomic_add_u32(WS_ADDR(uint32_t, r.a.done, it.id), 1u);
  return WS_TERMINATE;
}

#define PT_CONTINUATIONS(X)                                                                \
  X(PT_SPARSE, proto_sparse)                                                                  \
  X(PT_DENSE, proto_dense)                                                                    \
  X(PT_AFTER, proto_after)

WS_COROUTINE(proto_main, proto_frame, proto_args_ref, proto_entry, PT_CONTINUATIONS)
