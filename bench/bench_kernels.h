/* SPDX-License-Identifier: MIT */
/* wavesched benchmarks — declarations shared by the host programs and the
 * benchmark kernels (bench.kern.h): argument blocks, frames, continuation
 * lists and the workload functions both sides evaluate.
 *
 * Everything here must compile as C11 (host, CPU kernels) and as CUDA C++
 * (the same kernels for the CUDA backend): no designated initializers, no
 * _Alignas, no implicit void* conversions.
 */
#ifndef WS_BENCH_KERNELS_H
#define WS_BENCH_KERNELS_H

#include <stdint.h>

#include "wavesched/kernel.h"

/* ---- plain kernels ---- */

/* bench_empty: does nothing (the launch floor). */
typedef struct bench_empty_args {
  uint64_t unused;
} bench_empty_args;

/* bench_copy16 / bench_copy4: dst[i] = src[i] over 16-byte / 4-byte elements
 * (the device-to-device copy baseline; copy4 also restores token arrays). */
typedef struct bench_copy_args {
  uint64_t src;
  uint64_t dst;
} bench_copy_args;

/* ---- bench_loop: a frame bounces between "ping" and "pong" ----
 * Every item runs `bounces` continuations (ping, pong, ping, ...), each a
 * cheap integer step, and writes its accumulator when it terminates. */
#define BENCH_PP_FIELDS(X)                                                                 \
  X(uint32_t, left)                                                                        \
  X(uint32_t, acc)

WS_FRAME(bench_pp_frame, BENCH_PP_FIELDS)

typedef struct bench_pp_args {
  uint64_t out;     /* uint32_t[N]: final accumulator per item */
  uint32_t bounces; /* continuation runs per item, >= 1 */
  uint32_t pad;
} bench_pp_args;

enum { BENCH_PP_PING = 1, BENCH_PP_PONG = 2 };

#define BENCH_PP_CONTINUATIONS(X)                                                          \
  X(BENCH_PP_PING, bench_pp_ping, "ping")                                                  \
  X(BENCH_PP_PONG, bench_pp_pong, "pong")

/* The accumulator step; the host replays it to check every item. */
WS_HOST_DEVICE static inline uint32_t bench_pp_step(uint32_t acc) { return acc * 3u + 1u; }

/* ---- bench_divergent: items of very different lengths, two continuations
 * of very different cost ----
 * Item `id` runs bench_dv_length(id) continuations; after each one its hash
 * picks the next: "heavy" (a dependent chain of `heavy_fmas` FMAs) with
 * probability 1/4, else "light" (one integer hash). */
#define BENCH_DV_FIELDS(X)                                                                 \
  X(float, x)                                                                              \
  X(uint32_t, remaining)                                                                   \
  X(uint32_t, hash)                                                                        \
  X(uint32_t, steps)

WS_FRAME(bench_dv_frame, BENCH_DV_FIELDS)

typedef struct bench_dv_args {
  uint64_t out;          /* uint32_t[N]: final hash ^ bits(x) per item */
  uint64_t steps;        /* uint32_t[N]: continuations run per item */
  uint32_t heavy_fmas;   /* FMAs per "heavy" run */
  uint32_t long_percent; /* share of long items, 0..100 */
} bench_dv_args;

enum { BENCH_DV_HEAVY = 1, BENCH_DV_LIGHT = 2 };

#define BENCH_DV_CONTINUATIONS(X)                                                          \
  X(BENCH_DV_HEAVY, bench_dv_heavy, "heavy")                                               \
  X(BENCH_DV_LIGHT, bench_dv_light, "light")

/* Continuations item `id` runs: (100 - long_percent) % take 1..8, the rest
 * 64..511 (the demo's distribution: lengths differ by two orders of
 * magnitude). */
WS_HOST_DEVICE static inline uint32_t bench_dv_length(uint32_t id, uint32_t long_percent) {
  uint32_t h = id * 2654435761u;
  h ^= h >> 15;
  return (h % 100u) < 100u - long_percent ? 1u + h % 8u : 64u + h % 448u;
}

#endif
