/* SPDX-License-Identifier: MIT */
#version 460
// ws:args_size 24
/* The decisions of one device-loop iteration over each of the states
 * (tests/kernels/t_twin.h), through the GLSL twin of decide.h: the Vulkan
 * decide shader's calls in its order (src/backend/vulkan/shaders/loop.comp). */
#include "wavesched/kernel.glsl"
#include "../../../../src/backend/vulkan/shaders/decide.glsl"

struct t_twin_args {
  uint64_t states;
  uint64_t again;
  uint count;
  uint reserved;
};

WS_KERNEL(t_twin, t_twin_args, i, a) {
  ws_dstate_ref r = ws_dstate_ref(a.states + uint64_t(i) * 384ul);
  ws_dstate d = r.v;
  ws_dec_observe_works(d);
  ws_dec_decide(d);
  ws_dec_u32s(a.again).v[i] = ws_dec_loop_next(d);
  r.v = d;
}
