/* SPDX-License-Identifier: MIT */
/* The "t_twin" test kernel: the decisions of one device-loop iteration
 * (decide.h's ws_dec_observe_works, ws_dec_decide, ws_dec_loop_next, the
 * order every device loop calls them in) on each of `count` loop states laid
 * out one after another, 384 bytes apart, from `states`. The C/CUDA kernel
 * compiles include/wavesched/detail/decide.h; the GLSL one its Vulkan twin
 * src/backend/vulkan/shaders/decide.glsl (tests/core/test_decide_twin.c). */
#ifndef T_TWIN_H
#define T_TWIN_H

#include "wavesched/kernel.h"

#include <stdint.h>

typedef struct t_twin_args {
  uint64_t states; /* ws_dstate[count] */
  uint64_t again;  /* uint32_t[count]: ws_dec_loop_next's answer for each */
  uint32_t count;
  uint32_t reserved;
} t_twin_args;

#endif
