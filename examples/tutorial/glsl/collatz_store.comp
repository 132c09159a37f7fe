/* SPDX-License-Identifier: MIT */
#version 460
// ws:args_size 56
/* The store stage of collatz.kern.h for the Vulkan backend (entry "collatz_store"; 56 =
 * sizeof(collatz_args) in C, checked at the first launch). */
#include "collatz.glsl"

WS_KERNEL(collatz_store, collatz_args, slot, a) {
  if (!ws_pool_in_stage(a.pool, slot, 0u))
    return;
  const uint64_t r = WS_REF(uint64_t)(ws_pool_payload(a.pool, slot)).v; /* id << 32 | steps */
  WS_PTR(uint32_t, a.result)[uint(r >> 32)] = uint(r);
  ws_pool_release(a.pool, slot, 0u);
}
