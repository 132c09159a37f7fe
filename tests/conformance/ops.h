/* SPDX-License-Identifier: MIT */
/* The argument block of ops_fill (ops.kern.h), shared with backend_ops.c. */
#ifndef WS_TESTS_OPS_H
#define WS_TESTS_OPS_H
#include <stdint.h>

typedef struct ops_args {
  uint64_t dst;   /* uint32_t[n] */
  uint32_t value; /* dst[i] = value + i */
  uint32_t pad;
} ops_args;

#endif
