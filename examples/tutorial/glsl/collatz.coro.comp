/* SPDX-License-Identifier: MIT */
#version 460
/* The coroutine of collatz.kern.h for the Vulkan backend: the file name gives the entry
 * name ("collatz"), the continuations are the same functions with GLSL's syntax. */
#include "collatz.glsl"

#define COLLATZ_FIELDS(X) X(uint32_t, value) X(uint32_t, steps)
WS_FRAME(collatz_frame, COLLATZ_FIELDS)
WS_ARGS(collatz_args_ref) { collatz_args a; }; /* the arguments, at a device address */

uint collatz_init(ws_item it, inout collatz_frame f, collatz_args_ref r) {
  f.value = it.id + 2u;
  return f.value % 2u != 0u ? ODD : EVEN;
}

uint collatz_odd(ws_item it, inout collatz_frame f, collatz_args_ref r) {
  f.value = 3u * f.value + 1u;
  f.steps += 1u;
  return EVEN;
}

uint collatz_even(ws_item it, inout collatz_frame f, collatz_args_ref r) {
  f.value /= 2u;
  f.steps += 1u;
  if (f.value != 1u)
    return f.value % 2u != 0u ? ODD : EVEN;
  const ws_pool_view pool = r.a.pool;
  const uint64_t rec = ws_pool_payload(pool, ws_pool_publish(pool, 0u));
  WS_REF(uint64_t)(rec).v = uint64_t(it.id) << 32 | uint64_t(f.steps); /* the record */
  return WS_TERMINATE;
}

#define COLLATZ_CONTINUATIONS(X) X(EVEN, collatz_even) X(ODD, collatz_odd)
WS_COROUTINE(collatz, collatz_frame, collatz_args_ref, collatz_init, COLLATZ_CONTINUATIONS)
