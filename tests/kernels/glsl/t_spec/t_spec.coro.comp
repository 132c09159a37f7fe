/* SPDX-License-Identifier: MIT */
#version 460
/* The "t_spec" test coroutine (tests/kernels/t_spec.h, t_spec.kern.h) in
 * GLSL: same frame, arguments, continuations and arithmetic; the probe
 * reports the continuation the step pipeline was specialized for
 * (kernel.glsl WS_SPEC_SRC) instead of the one that runs. */
#include "wavesched/kernel.glsl"

#define T_SPEC_FIELDS(X) X(uint32_t, h) X(uint32_t, left) X(float, acc)
WS_FRAME(t_spec_frame, T_SPEC_FIELDS)

WS_ARGS(t_spec_args) { uint64_t out_; uint64_t acc; uint64_t seen; };

#define T_SPEC_LIGHT 1u
#define T_SPEC_HEAVY 2u
#define T_SPEC_FINISH 3u
#define T_SPEC_WORDS 32u

/* generic (not specialized): bit 31; specialized for another continuation
 * than the one running: bit 30; else the continuation's bit, as in C */
uint t_spec_probe(uint src) {
  if (WS_SPEC_SRC == 0xffffffffu)
    return 1u << 31;
  return WS_SPEC_SRC == src ? 1u << src : 1u << 30;
}

uint t_spec_len(uint id) { return ws_hash32(id) % 9u; }
uint t_spec_next(uint h, uint left) {
  return left == 0u ? T_SPEC_FINISH : ((h >> 7) & 1u) != 0u ? T_SPEC_LIGHT : T_SPEC_HEAVY;
}
uint t_spec_light_hash(uint h) { return h * 1664525u + 1013904223u; }
uint t_spec_heavy_hash(uint h) {
  uint v[T_SPEC_WORDS];
  for (uint i = 0u; i < T_SPEC_WORDS; ++i)
    v[i] = h ^ (i * 0x9E3779B9u);
  for (uint r = 0u; r < 4u; ++r)
    for (uint i = 0u; i < T_SPEC_WORDS; ++i)
      v[(i * 7u + r) % T_SPEC_WORDS] += (v[i] >> 3) ^ (v[(i + r + 1u) % T_SPEC_WORDS] << 5);
  uint x = 0u;
  for (uint i = 0u; i < T_SPEC_WORDS; ++i)
    x ^= v[i] * (2u * i + 1u);
  return x;
}

uint t_spec_entry(ws_item it, inout t_spec_frame f, t_spec_args a) {
  WS_PTR(uint32_t, a.seen)[it.id] |= t_spec_probe(0u);
  f.h = ws_hash32(it.id);
  f.left = t_spec_len(it.id);
  f.acc = 0.0;
  return t_spec_next(f.h, f.left);
}
uint t_spec_light(ws_item it, inout t_spec_frame f, t_spec_args a) {
  WS_PTR(uint32_t, a.seen)[it.id] |= t_spec_probe(T_SPEC_LIGHT);
  f.h = t_spec_light_hash(f.h);
  f.acc += 1.0;
  f.left -= 1u;
  return t_spec_next(f.h, f.left);
}
uint t_spec_heavy(ws_item it, inout t_spec_frame f, t_spec_args a) {
  WS_PTR(uint32_t, a.seen)[it.id] |= t_spec_probe(T_SPEC_HEAVY);
  f.acc += float(f.h & 0xffu) * 0.5;
  f.h = t_spec_heavy_hash(f.h);
  f.left -= 1u;
  return t_spec_next(f.h, f.left);
}
uint t_spec_finish(ws_item it, inout t_spec_frame f, t_spec_args a) {
  WS_PTR(uint32_t, a.seen)[it.id] |= t_spec_probe(T_SPEC_FINISH);
  WS_PTR(uint32_t, a.out_)[it.id] = f.h;
  WS_PTR(float, a.acc)[it.id] = f.acc;
  return WS_TERMINATE;
}
#define T_SPEC_CONTINUATIONS(X) X(T_SPEC_LIGHT, t_spec_light) X(T_SPEC_HEAVY, t_spec_heavy) X(T_SPEC_FINISH, t_spec_finish)
WS_COROUTINE(t_spec, t_spec_frame, t_spec_args, t_spec_entry, T_SPEC_CONTINUATIONS)
