/* SPDX-License-Identifier: MIT */
#version 460
/* The "t_steps" test coroutine (tests/kernels/t_sched.h, t_sched.kern.h) in
 * GLSL for the Vulkan backend: same frame, arguments and continuations, the
 * stepped ones through kernel.glsl's WS_CONTINUATION_STEPS and _OF. */
#include "wavesched/kernel.glsl"
#define T_STEPS_FIELDS(X) X(uint32_t, acc) X(uint32_t, pass)
WS_FRAME(t_steps_frame, T_STEPS_FIELDS)
WS_ARGS(t_steps_args) { uint64_t out_; };
struct t_steps_state { uint v; uint n; };
#define T_STEPS_WALK 1u
#define T_STEPS_DONE 2u
#define T_STEPS_WALK_OF 3u
uint t_steps_start(uint id, uint pass) { return (id * 2654435761u + pass * 40503u) % 30011u + 1u; }
uint t_steps_passes(uint id) { return 1u + id % 3u; }
uint t_steps_entry(ws_item it, inout t_steps_frame f, t_steps_args a) {
  f.acc = 0u;
  f.pass = 0u;
  return T_STEPS_WALK;
}
void t_steps_begin(ws_item it, t_steps_frame f, t_steps_args a, out t_steps_state s) {
  s.v = t_steps_start(it.id, f.pass);
  s.n = 0u;
}
bool t_steps_step(inout t_steps_state s, t_steps_args a) {
  if (s.v == 1u)
    return false;
  s.v = (s.v & 1u) != 0u ? 3u * s.v + 1u : s.v >> 1;
  s.n += 1u;
  return true;
}
uint t_steps_end(ws_item it, inout t_steps_frame f, t_steps_args a, t_steps_state s) {
  f.acc += s.n;
  f.pass += 1u;
  if (f.pass >= t_steps_passes(it.id))
    return T_STEPS_DONE;
  return (f.pass & 1u) != 0u ? T_STEPS_WALK_OF : T_STEPS_WALK;
}
WS_CONTINUATION_STEPS(t_steps_walk, t_steps_frame, t_steps_args, T_STEPS_WALK, t_steps_state,
                      t_steps_begin, t_steps_step, t_steps_end)
uint t_steps_walk_of(ws_item it, inout t_steps_frame f, t_steps_args a) {
  t_steps_state s;
  t_steps_begin(it, f, a, s);
  while (t_steps_step(s, a)) {
  }
  return t_steps_end(it, f, a, s);
}
WS_CONTINUATION_STEPS_OF(t_steps_walk_of, t_steps_frame, t_steps_args, T_STEPS_WALK_OF,
                         t_steps_state, t_steps_begin, t_steps_step, t_steps_end)
uint t_steps_done(ws_item it, inout t_steps_frame f, t_steps_args a) {
  WS_PTR(uint32_t, a.out_)[it.id] = f.acc * 4u + f.pass;
  return WS_TERMINATE;
}
#define T_STEPS_CONTINUATIONS(X)                                                           \
  X(T_STEPS_WALK, t_steps_walk) X(T_STEPS_DONE, t_steps_done) X(T_STEPS_WALK_OF, t_steps_walk_of)
WS_COROUTINE(t_steps, t_steps_frame, t_steps_args, t_steps_entry, T_STEPS_CONTINUATIONS)
