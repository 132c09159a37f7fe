/* SPDX-License-Identifier: MIT */
/* Types and helpers shared by tests/kernels/t_agg.kern.h and
 * tests/core/test_atomics.c. */
#ifndef T_AGG_H
#define T_AGG_H
#include "wavesched/kernel.h"

typedef struct t_agg_args {
  uint64_t counters; /* uint32_t[keys] */
  uint64_t old;      /* uint32_t[n] */
  uint32_t keys;     /* distinct words */
  uint32_t uniform;  /* 1: every value 1 (a counter); 0: values 1..3 */
} t_agg_args;

WS_HOST_DEVICE static inline uint32_t t_agg_key(uint32_t i, uint32_t keys) {
  return (i * 2654435761u >> 7) % keys;
}
WS_HOST_DEVICE static inline uint32_t t_agg_value(uint32_t i, uint32_t uniform) {
  return uniform ? 1u : 1u + i % 3u;
}
#endif
