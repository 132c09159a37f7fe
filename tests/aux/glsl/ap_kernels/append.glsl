/* SPDX-License-Identifier: MIT */
/* Issue 18's test pipeline (tests/aux/append.h and append.kern.h) in GLSL:
 * the argument struct and constants, same fields and order as the C source. */
#ifndef WS_TEST_APPEND_GLSL
#define WS_TEST_APPEND_GLSL

#include "wavesched/kernel.glsl"

#define AP_PUBLISHES 3u
#define AP_RELEASE_MAX 2u
#define AP_LIVE 0u
#define AP_EXTENT 1u
#define AP_ERRORS 2u
#define AP_RELEASED 3u

/* append.h ap_args: 48 bytes, alignment 8. */
struct ap_args {
  uint64_t tokens;
  uint64_t ids;
  uint64_t state;
  uint64_t done;
  uint64_t visits;
  uint capacity;
  uint reserved;
};

#endif
