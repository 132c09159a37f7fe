/* SPDX-License-Identifier: MIT */
/* The CLI's built-in divergent workload, shared by host and kernels.
 *
 * Each item draws a length from its id: most are short, a few are hundreds
 * of steps long (items of very different lengths). It alternates between an
 * integer hash step ("mix", a self-loop) and a float step ("blend"), and ends
 * in "finish", which writes its result. */
#ifndef WS_DEMO_H
#define WS_DEMO_H

#include <stdint.h>

#include "wavesched/kernel.h"

#define DEMO_FIELDS(X)                                                                     \
  X(uint32_t, remaining)                                                                   \
  X(uint32_t, hash)                                                                        \
  X(float, acc)                                                                            \
  X(uint16_t, blends)

WS_FRAME(demo_frame, DEMO_FIELDS)

typedef struct demo_args {
  uint64_t out; /* uint32_t[N]: final hash per item */
  uint64_t steps; /* uint32_t[N]: continuation runs per item */
  /* the workload's item number of this dispatch's item 0: 0 in one process,
   * the first item of a rank's share under MPI (docs/mpi.md), so that an item
   * draws the same length and hash wherever it runs */
  uint32_t item_base;
  uint32_t pad;
} demo_args;

enum { DEMO_MIX = 1, DEMO_BLEND = 2, DEMO_FINISH = 3 };

/* X(index, function, name) in index order */
#define DEMO_CONTINUATIONS(X)                                                              \
  X(DEMO_MIX, demo_mix, "mix")                                                             \
  X(DEMO_BLEND, demo_blend, "blend")                                                       \
  X(DEMO_FINISH, demo_finish, "finish")

/* Number of mix steps of item `id`: 90 % take 1..8, 10 % take 64..511. */
WS_HOST_DEVICE static inline uint32_t demo_length(uint32_t id) {
  uint32_t h = id * 2654435761u;
  h ^= h >> 15;
  return (h % 100u) < 90u ? 1u + h % 8u : 64u + h % 448u;
}

#endif
