/* SPDX-License-Identifier: MIT */
#version 460
/* The fuzzer's table-driven coroutine (tools/fuzz/fz_kernels.kern.h
 * fz_main) in GLSL: the same frame, tables, publications and checks. */
#include "wavesched/kernel.glsl"
#include "fz.glsl"

/* fz.h FZ_FIELDS, same order and types */
#define FZ_FIELDS(X)                                                                       \
  X(uint64_t, digest)                                                                      \
  X(uint8_t, tag)                                                                          \
  X(uint32_t, left)                                                                        \
  X(float, weight)                                                                         \
  X(uint16_t, steps)                                                                       \
  X(uint8_t, pubs0)                                                                        \
  X(uint8_t, pubs1)
WS_FRAME(fz_frame, FZ_FIELDS)

WS_ARGS(fz_args_ref) { fz_args a; };

void fz_check_frame(ws_item it, fz_frame f, fz_args_ref r) {
  const uint steps = uint(f.steps);
  if (uint(f.tag) != fz_tag(it.id, steps) || f.weight != 0.5 * float(steps) ||
      steps > r.a.maxlen)
    ws_atomic_add_u32(WS_ADDR(uint32_t, r.a.errors, FZ_ERR_FRAME), 1u);
}

void fz_finish(ws_item it, fz_frame f, fz_args_ref r) {
  WS_PTR(uint32_t, r.a.result)[it.id] = uint(f.digest ^ (f.digest >> 32));
  ws_atomic_add_u32(WS_ADDR(uint32_t, r.a.done, it.id), 1u);
}

uint fz_entry(ws_item it, inout fz_frame f, fz_args_ref r) {
  const uint seed = r.a.seed;
  f.digest = uint64_t(seed ^ it.id);
  f.left = fz_path_length(seed, it.id, r.a.maxlen);
  f.steps = uint16_t(0);
  f.tag = uint8_t(fz_tag(it.id, 0u));
  f.weight = 0.0;
  f.pubs0 = uint8_t(0);
  f.pubs1 = uint8_t(0);
  const uint next = uint(r.a.entry_next[fz_choice(seed, it.id, 0xFFFFu)]);
  if (next == 0u)
    fz_finish(it, f, r);
  return next;
}

void fz_publish(ws_item it, inout fz_frame f, fz_args_ref r, uint w, uint k) {
  const uint seed = r.a.seed;
  const uint n = fz_pub_count(seed, it.id, uint(f.steps), w, uint(r.a.bound[FZ_MAX_K * w + k - 1u]));
  const ws_pool_view v = r.a.pool[w];
  const uint stage = uint(r.a.pub_stage[FZ_MAX_K * w + k - 1u]);
  for (uint c = 0u; c < n; ++c) {
    uint serial;
    if (w == 0u) {
      serial = uint(f.pubs0);
      f.pubs0 = uint8_t(serial + 1u);
    } else {
      serial = uint(f.pubs1);
      f.pubs1 = uint8_t(serial + 1u);
    }
    const uint slot = ws_pool_publish(v, stage);
    if (slot == WS_POOL_NONE) {
      ws_atomic_add_u32(WS_ADDR(uint32_t, r.a.errors, FZ_ERR_PUBLISH), 1u);
      continue;
    }
    const uint64_t item = ws_pool_payload(v, slot);
    WS_REF(uint32_t)(item + FZ_ITEM_ID).v = it.id;
    WS_REF(uint16_t)(item + FZ_ITEM_SERIAL).v = uint16_t(serial);
    WS_REF(uint32_t)(item + FZ_ITEM_CHECK).v = fz_item_check(it.id, serial);
    WS_REF(uint8_t)(item + FZ_ITEM_LEFT).v =
        uint8_t(fz_item_budget(seed, w, it.id, serial, uint(r.a.amax[w])));
    WS_REF(uint8_t)(item + FZ_ITEM_HOPS).v = uint8_t(0);
  }
}

/* Continuation k (1..K) for one frame. */
uint fz_step(ws_item it, inout fz_frame f, fz_args_ref r, uint k) {
  fz_check_frame(it, f, r);
  ws_atomic_add_u32(WS_ADDR(uint32_t, r.a.visits, it.id * FZ_MAX_K + (k - 1u)), 1u);
  f.digest = fz_mix(f.digest, k);
  const uint works = uint(r.a.work_count);
  for (uint w = 0u; w < works; ++w)
    fz_publish(it, f, r, w, k);
  if (k == 1u && r.a.bad_next != 0u)
    return r.a.bad_next;
  uint next = 0u;
  if (f.left != 0u) {
    const uint steps = uint(f.steps);
    next = uint(r.a.next[2u * (k - 1u) + fz_choice(r.a.seed, it.id, steps)]);
    f.left -= 1u;
    f.steps = uint16_t(steps + 1u);
    f.tag = uint8_t(fz_tag(it.id, steps + 1u));
    f.weight = 0.5 * float(steps + 1u);
  }
  if (next == 0u)
    fz_finish(it, f, r);
  return next;
}

uint fz_c1(ws_item it, inout fz_frame f, fz_args_ref r) { return fz_step(it, f, r, 1u); }
uint fz_c2(ws_item it, inout fz_frame f, fz_args_ref r) { return fz_step(it, f, r, 2u); }
uint fz_c3(ws_item it, inout fz_frame f, fz_args_ref r) { return fz_step(it, f, r, 3u); }
uint fz_c4(ws_item it, inout fz_frame f, fz_args_ref r) { return fz_step(it, f, r, 4u); }
uint fz_c5(ws_item it, inout fz_frame f, fz_args_ref r) { return fz_step(it, f, r, 5u); }
uint fz_c6(ws_item it, inout fz_frame f, fz_args_ref r) { return fz_step(it, f, r, 6u); }

#define FZ_CONTINUATIONS(X)                                                                \
  X(1u, fz_c1)                                                                             \
  X(2u, fz_c2)                                                                             \
  X(3u, fz_c3)                                                                             \
  X(4u, fz_c4)                                                                             \
  X(5u, fz_c5)                                                                             \
  X(6u, fz_c6)

WS_COROUTINE(fz_main, fz_frame, fz_args_ref, fz_entry, FZ_CONTINUATIONS)
