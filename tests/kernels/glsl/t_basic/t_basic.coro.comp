/* SPDX-License-Identifier: MIT */
#version 460
/* The "t_basic" test coroutine (tests/kernels/t_basic.h, t_basic.kern.h) in
 * GLSL for the Vulkan backend: same frame, arguments, continuations and
 * arithmetic, so the host checks the same exact results. */
#include "wavesched/kernel.glsl"

struct t_basic_pair { uint8_t a; uint8_t b; uint16_t c; };
#define WS_SIZEOF_t_basic_pair 4u
#define WS_ALIGNOF_t_basic_pair 2u
#define WS_ZERO_t_basic_pair t_basic_pair(uint8_t(0), uint8_t(0), uint16_t(0))
WS_DECLARE_TYPE(t_basic_pair, 2)

#define T_BASIC_FIELDS(X) X(uint8_t, tag) X(double, d) X(uint16_t, steps) X(float, f) \
  X(t_basic_pair, pair) X(uint64_t, big) X(uint32_t, remaining) X(uint8_t, tail)
WS_FRAME(t_basic_frame, T_BASIC_FIELDS)

WS_ARGS(t_basic_args) { uint64_t out_; uint64_t entry_runs; uint64_t step_runs; uint64_t finish_runs; uint64_t bad; uint64_t total_runs; };

#define T_BASIC_LOOP 1u
#define T_BASIC_ALT 2u
#define T_BASIC_FINISH 3u

uint t_basic_len(uint id) { uint h = id * 2654435761u; h ^= h >> 13; return h % 12u; }
t_basic_frame t_basic_expect(uint id, uint k) {
  t_basic_frame f = t_basic_frame_ws_zero();
  f.tag = uint8_t(id * 7u + k);
  f.d = double(id) * 0.5lf + double(k);
  f.steps = uint16_t(k);
  f.f = float(id & 1023u) + 0.25 * float(k);
  f.pair.a = uint8_t(id);
  f.pair.b = uint8_t(k * 3u);
  f.pair.c = uint16_t((id >> 8) ^ (k << 4));
  f.big = uint64_t(id) * 0x9E3779B97F4A7C15ul + uint64_t(k) * 0x100000001ul;
  f.remaining = t_basic_len(id) - k;
  f.tail = uint8_t(0x5Au ^ (id & 0xfu));
  return f;
}
uint t_basic_step_cont(uint id, uint k) { return ((k + id) % 3u) == 2u ? T_BASIC_ALT : T_BASIC_LOOP; }
uint t_basic_mix(uint h, uint64_t v) { h ^= uint(v); h *= 0x01000193u; h ^= uint(v >> 32); h *= 0x01000193u; return h; }
uint t_basic_digest(t_basic_frame f) {
  uint64_t dbits = doubleBitsToUint64(f.d);
  uint fbits = floatBitsToUint(f.f);
  uint h = 0x811c9dc5u;
  h = t_basic_mix(h, uint64_t(f.tag));
  h = t_basic_mix(h, dbits);
  h = t_basic_mix(h, uint64_t(f.steps));
  h = t_basic_mix(h, uint64_t(fbits));
  h = t_basic_mix(h, uint64_t(f.pair.a) | (uint64_t(f.pair.b) << 8) | (uint64_t(f.pair.c) << 16));
  h = t_basic_mix(h, f.big);
  h = t_basic_mix(h, uint64_t(f.remaining));
  h = t_basic_mix(h, uint64_t(f.tail));
  return h;
}
uint t_basic_check(uint id, t_basic_frame f, uint k) {
  t_basic_frame e = t_basic_expect(id, k);
  uint bad = 0u;
  if (f.tag != e.tag) bad |= 1u;
  if (f.d != e.d) bad |= 2u;
  if (f.steps != e.steps) bad |= 4u;
  if (f.f != e.f) bad |= 8u;
  if (f.pair.a != e.pair.a || f.pair.b != e.pair.b || f.pair.c != e.pair.c) bad |= 16u;
  if (f.big != e.big) bad |= 32u;
  if (f.remaining != e.remaining) bad |= 64u;
  if (f.tail != e.tail) bad |= 128u;
  return bad;
}
uint t_basic_next(uint id, uint k) { return k >= t_basic_len(id) ? T_BASIC_FINISH : t_basic_step_cont(id, k); }
uint t_basic_entry(ws_item it, inout t_basic_frame f, t_basic_args a) {
  WS_PTR(uint32_t, a.entry_runs)[it.id] += 1u;
  f = t_basic_expect(it.id, 0u);
  return t_basic_next(it.id, 0u);
}
uint t_basic_step(uint src, ws_item it, inout t_basic_frame f, t_basic_args a) {
  const uint id = it.id, k = uint(f.steps);
  ws_atomic_add_u32(a.total_runs, 1u);
  WS_PTR(uint32_t, a.step_runs)[id] += 1u;
  uint bad = t_basic_check(id, f, k);
  if (k >= t_basic_len(id) || t_basic_step_cont(id, k) != src) bad |= 256u;
  if (bad != 0u) { WS_PTR(uint32_t, a.bad)[id] |= bad; return WS_TERMINATE; }
  f = t_basic_expect(id, k + 1u);
  return t_basic_next(id, k + 1u);
}
uint t_basic_loop(ws_item it, inout t_basic_frame f, t_basic_args a) { return t_basic_step(T_BASIC_LOOP, it, f, a); }
uint t_basic_alt(ws_item it, inout t_basic_frame f, t_basic_args a) { return t_basic_step(T_BASIC_ALT, it, f, a); }
uint t_basic_finish(ws_item it, inout t_basic_frame f, t_basic_args a) {
  const uint id = it.id;
  ws_atomic_add_u32(a.total_runs, 1u);
  WS_PTR(uint32_t, a.finish_runs)[id] += 1u;
  uint bad = t_basic_check(id, f, t_basic_len(id));
  if (bad != 0u) WS_PTR(uint32_t, a.bad)[id] |= bad;
  WS_PTR(uint32_t, a.out_)[id] = t_basic_digest(f);
  return WS_TERMINATE;
}
#define T_BASIC_CONTINUATIONS(X) X(T_BASIC_LOOP, t_basic_loop) X(T_BASIC_ALT, t_basic_alt) X(T_BASIC_FINISH, t_basic_finish)
WS_COROUTINE(t_basic, t_basic_frame, t_basic_args, t_basic_entry, T_BASIC_CONTINUATIONS)
