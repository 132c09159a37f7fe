/* SPDX-License-Identifier: MIT */
/* The kernel of the backend-operations test (backend_ops.c): writes a known
 * value per index, so a launch's extent is visible in memory. The GLSL
 * version is glsl/ops/ops_fill.comp. */
#include "ops.h"
#include "wavesched/kernel.h"

WS_KERNEL(ops_fill, ops_args, i, a) {
  WS_PTR(uint32_t, a->dst)[i] = a->value + i;
}
WS_MODULE(ops, WS_MODULE_KERNEL(ops_fill))
