/* SPDX-License-Identifier: MIT */
/* Test coroutine "t_spec": a light and a heavy continuation, for the Vulkan
 * steps specialized per continuation (kernel.glsl WS_SPEC_SRC, docs/vulkan.md).
 *
 * Item `id` runs the entry, then t_spec_len(id) (0..8) steps, each in
 * "light" (1: one multiply-add) or "heavy" (2: a 32-word array mixed in
 * four rounds, many live registers) as the hash says, then "finish" (3),
 * which writes the hash to out[id] and the float accumulator to acc[id]
 * (sums of halves of small integers: exact in every backend). Every run ORs
 * t_spec_probe(src) into seen[id]: in C the bit of the continuation that
 * runs; in GLSL the bit of WS_SPEC_SRC, the continuation the pipeline was
 * specialized for, T_SPEC_GENERIC_BIT in a generic step or the megakernel,
 * and T_SPEC_WRONG_BIT when a pipeline specialized for another continuation
 * runs this one. t_spec_expect() gives the host all three. */
#ifndef WS_TESTS_T_SPEC_H
#define WS_TESTS_T_SPEC_H

#include "wavesched/kernel.h"

#include <stdint.h>

#define T_SPEC_FIELDS(X)                                                                           \
  X(uint32_t, h)                                                                                   \
  X(uint32_t, left)                                                                                \
  X(float, acc)

WS_FRAME(t_spec_frame, T_SPEC_FIELDS)

typedef struct t_spec_args {
  uint64_t out;  /* uint32_t[N]: the hash at finish */
  uint64_t acc;  /* float[N]: the accumulator at finish */
  uint64_t seen; /* uint32_t[N]: the probe bits of every run */
} t_spec_args;

enum { T_SPEC_LIGHT = 1, T_SPEC_HEAVY = 2, T_SPEC_FINISH = 3 };

#define T_SPEC_CONTINUATIONS(X)                                                                    \
  X(T_SPEC_LIGHT, t_spec_light, "light")                                                           \
  X(T_SPEC_HEAVY, t_spec_heavy, "heavy")                                                           \
  X(T_SPEC_FINISH, t_spec_finish, "finish")

#define T_SPEC_GENERIC_BIT (1u << 31) /* GLSL: a step not specialized, or the megakernel */
#define T_SPEC_WRONG_BIT (1u << 30)   /* GLSL: a pipeline specialized for another continuation */
#define T_SPEC_WORDS 32u              /* the heavy continuation's array */

WS_HOST_DEVICE static inline uint32_t t_spec_len(uint32_t id) {
  return ws_hash32(id) % 9u;
}

WS_HOST_DEVICE static inline uint32_t t_spec_next(uint32_t h, uint32_t left) {
  return left == 0u        ? (uint32_t)T_SPEC_FINISH
         : ((h >> 7) & 1u) ? (uint32_t)T_SPEC_LIGHT
                           : (uint32_t)T_SPEC_HEAVY;
}

WS_HOST_DEVICE static inline uint32_t t_spec_light_hash(uint32_t h) {
  return h * 1664525u + 1013904223u;
}

/* Many live words, indexed at run time: the register load a light
 * continuation should not carry. */
WS_HOST_DEVICE static inline uint32_t t_spec_heavy_hash(uint32_t h) {
  uint32_t v[T_SPEC_WORDS];
  for (uint32_t i = 0; i < T_SPEC_WORDS; ++i)
    v[i] = h ^ (i * 0x9E3779B9u);
  for (uint32_t r = 0; r < 4u; ++r)
    for (uint32_t i = 0; i < T_SPEC_WORDS; ++i)
      v[(i * 7u + r) % T_SPEC_WORDS] += (v[i] >> 3) ^ (v[(i + r + 1u) % T_SPEC_WORDS] << 5);
  uint32_t x = 0;
  for (uint32_t i = 0; i < T_SPEC_WORDS; ++i)
    x ^= v[i] * (2u * i + 1u);
  return x;
}

/* What item id leaves: its hash, its accumulator, and the continuations it
 * runs (bit j: continuation j, the entry's bit 0 included). */
WS_HOST_DEVICE static inline void t_spec_expect(uint32_t id, uint32_t *h_out, float *acc_out,
                                                uint32_t *mask_out) {
  uint32_t h = ws_hash32(id), left = t_spec_len(id), mask = 1u;
  float acc = 0.0f;
  uint32_t next = t_spec_next(h, left);
  while (next != (uint32_t)T_SPEC_FINISH) {
    mask |= 1u << next;
    if (next == (uint32_t)T_SPEC_LIGHT) {
      h = t_spec_light_hash(h);
      acc += 1.0f;
    } else {
      acc += (float)(h & 0xffu) * 0.5f;
      h = t_spec_heavy_hash(h);
    }
    left -= 1u;
    next = t_spec_next(h, left);
  }
  *h_out = h;
  *acc_out = acc;
  *mask_out = mask | (1u << T_SPEC_FINISH);
}

#endif
