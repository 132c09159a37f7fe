/* SPDX-License-Identifier: MIT */
#version 460
// ws:args_size 8
/* The GLSL twin of t_steps_kernel (tests/kernels/t_sched.kern.h; 8 =
 * sizeof(t_steps_kernel_args)), through kernel.glsl's WS_KERNEL_STEPS. */
#include "wavesched/kernel.glsl"

struct t_steps_kernel_args {
  uint64_t out_;
};
struct t_steps_state {
  uint v;
  uint n;
};
uint t_steps_start(uint id, uint pass) { return (id * 2654435761u + pass * 40503u) % 30011u + 1u; }
bool t_steps_k_begin(uint i, t_steps_kernel_args a, out t_steps_state s) {
  s.v = t_steps_start(i, 7u);
  s.n = 0u;
  return i % 5u != 0u;
}
bool t_steps_k_step(inout t_steps_state s, t_steps_kernel_args a) {
  if (s.v == 1u)
    return false;
  s.v = (s.v & 1u) != 0u ? 3u * s.v + 1u : s.v >> 1;
  s.n += 1u;
  return true;
}
void t_steps_k_end(uint i, t_steps_kernel_args a, t_steps_state s) {
  WS_PTR(uint32_t, a.out_)[i] = s.n;
}
WS_KERNEL_STEPS(t_steps_kernel, t_steps_kernel_args, t_steps_state, t_steps_k_begin,
                t_steps_k_step, t_steps_k_end)
