/* SPDX-License-Identifier: MIT */
/* Test coroutine "t_basic": a self-loop over a frame of many field types.
 *
 * Item `id` runs the entry once, then len(id) steps (0..11) split between
 * the continuations "loop" (1) and "alt" (2), then "finish" (3) once. Every
 * step first checks that every frame field still holds the value the
 * previous step left (a mismatch sets a bit per field in bad[id]), then
 * advances the state. finish writes a digest of the whole frame to out[id].
 * The host computes the same digest from t_basic_expect(), so results are
 * exact, and the per-item counters show that each item ran exactly once.
 *
 * Field types are chosen so that the SoA arrays have every alignment 1..8
 * (uint8, uint16, a 4-byte struct aligned to 2, float, double, uint64). */
#ifndef WS_TESTS_T_BASIC_H
#define WS_TESTS_T_BASIC_H

#include "wavesched/kernel.h"

#include <stdint.h>

typedef struct t_basic_pair {
  uint8_t a;
  uint8_t b;
  uint16_t c;
} t_basic_pair;

#define T_BASIC_FIELDS(X)                                                                          \
  X(uint8_t, tag)                                                                                  \
  X(double, d)                                                                                     \
  X(uint16_t, steps)                                                                               \
  X(float, f)                                                                                      \
  X(t_basic_pair, pair)                                                                            \
  X(uint64_t, big)                                                                                 \
  X(uint32_t, remaining)                                                                           \
  X(uint8_t, tail)

WS_FRAME(t_basic_frame, T_BASIC_FIELDS)

typedef struct t_basic_args {
  uint64_t out;         /* uint32_t[N]: digest of the final frame */
  uint64_t entry_runs;  /* uint32_t[N] */
  uint64_t step_runs;   /* uint32_t[N]: loop + alt runs */
  uint64_t finish_runs; /* uint32_t[N] */
  uint64_t bad;         /* uint32_t[N]: T_BASIC_BAD_* bits */
  uint64_t total_runs;  /* uint32_t[1]: every continuation run (atomic) */
} t_basic_args;

enum { T_BASIC_LOOP = 1, T_BASIC_ALT = 2, T_BASIC_FINISH = 3 };

#define T_BASIC_CONTINUATIONS(X)                                                                   \
  X(T_BASIC_LOOP, t_basic_loop, "loop")                                                            \
  X(T_BASIC_ALT, t_basic_alt, "alt")                                                               \
  X(T_BASIC_FINISH, t_basic_finish, "finish")

enum {
  T_BASIC_BAD_TAG = 1u << 0,
  T_BASIC_BAD_D = 1u << 1,
  T_BASIC_BAD_STEPS = 1u << 2,
  T_BASIC_BAD_F = 1u << 3,
  T_BASIC_BAD_PAIR = 1u << 4,
  T_BASIC_BAD_BIG = 1u << 5,
  T_BASIC_BAD_REMAINING = 1u << 6,
  T_BASIC_BAD_TAIL = 1u << 7,
  T_BASIC_BAD_SRC = 1u << 8 /* a frame reached a continuation its state forbids */
};

/* Number of steps of item `id`: 0..11, so items run very different numbers
 * of times (0 = entry straight to finish). */
WS_HOST_DEVICE static inline uint32_t t_basic_len(uint32_t id) {
  uint32_t h = id * 2654435761u;
  h ^= h >> 13;
  return h % 12u;
}

/* The frame of item `id` after k steps. */
WS_HOST_DEVICE static inline t_basic_frame t_basic_expect(uint32_t id, uint32_t k) {
  t_basic_frame f;
  memset(&f, 0, sizeof f);
  f.tag = (uint8_t)(id * 7u + k);
  f.d = (double)id * 0.5 + (double)k;
  f.steps = (uint16_t)k;
  f.f = (float)(id & 1023u) + 0.25f * (float)k;
  f.pair.a = (uint8_t)id;
  f.pair.b = (uint8_t)(k * 3u);
  f.pair.c = (uint16_t)((id >> 8) ^ (k << 4));
  f.big = (uint64_t)id * 0x9E3779B97F4A7C15ull + (uint64_t)k * 0x100000001ull;
  f.remaining = t_basic_len(id) - k;
  f.tail = (uint8_t)(0x5Au ^ (id & 0xfu));
  return f;
}

/* Which continuation step k (0-based) of item id runs in. */
WS_HOST_DEVICE static inline uint32_t t_basic_step_cont(uint32_t id, uint32_t k) {
  return ((k + id) % 3u) == 2u ? (uint32_t)T_BASIC_ALT : (uint32_t)T_BASIC_LOOP;
}

WS_HOST_DEVICE static inline uint32_t t_basic_mix(uint32_t h, uint64_t v) {
  h ^= (uint32_t)v;
  h *= 0x01000193u;
  h ^= (uint32_t)(v >> 32);
  h *= 0x01000193u;
  return h;
}

/* Digest of a frame, every bit of every field. */
WS_HOST_DEVICE static inline uint32_t t_basic_digest(const t_basic_frame *f) {
  uint64_t dbits;
  uint32_t fbits;
  memcpy(&dbits, &f->d, 8);
  memcpy(&fbits, &f->f, 4);
  uint32_t h = 0x811c9dc5u;
  h = t_basic_mix(h, f->tag);
  h = t_basic_mix(h, dbits);
  h = t_basic_mix(h, f->steps);
  h = t_basic_mix(h, fbits);
  h = t_basic_mix(h,
                  (uint64_t)f->pair.a | ((uint64_t)f->pair.b << 8) | ((uint64_t)f->pair.c << 16));
  h = t_basic_mix(h, f->big);
  h = t_basic_mix(h, f->remaining);
  h = t_basic_mix(h, f->tail);
  return h;
}

/* The per-item result the host expects in out[id]. */
WS_HOST_DEVICE static inline uint32_t t_basic_result(uint32_t id) {
  t_basic_frame f = t_basic_expect(id, t_basic_len(id));
  return t_basic_digest(&f);
}

#endif
