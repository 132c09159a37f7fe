/* SPDX-License-Identifier: MIT */
/* Small test coroutines that pin down scheduling decisions (module t_sched):
 *
 *   t_order     entry -> "small" (item 0) or "large" (every other item);
 *               both record their completion rank with an atomic counter.
 *   t_forkjoin  entry -> "even" / "odd" by id parity -> "join" -> done.
 *   t_align     three continuations "a", "b", "c" with self-loops of
 *               different lengths; every entry and continuation run appends
 *               (id, src, next) to an event log with an atomic ticket, so the
 *               host can replay the queue sizes at every admission.
 *   t_bad       misbehaving coroutine: "x" returns an index outside 1..K for
 *               one item (mode 0), or "spin" loops forever (mode 1).
 *   t_steps     entry -> "walk" (a stepped continuation: a Collatz walk of
 *               uneven length per step loop) and "walk_of" (the same walk,
 *               WS_CONTINUATION_STEPS_OF: a one-call fn beside the steps),
 *               alternating, 1 + id % 3 passes -> "done", which writes the
 *               item's result.
 */
#ifndef WS_TESTS_T_SCHED_H
#define WS_TESTS_T_SCHED_H

#include "wavesched/kernel.h"

#include <stdint.h>

/* ---- t_order ---- */
#define T_ORDER_FIELDS(X) X(uint32_t, unused)
WS_FRAME(t_order_frame, T_ORDER_FIELDS)
typedef struct t_order_args {
  uint64_t rank;    /* uint32_t[N]: completion rank + 1 (0 = never finished) */
  uint64_t kind;    /* uint32_t[N]: continuation that finished the item */
  uint64_t runs;    /* uint32_t[N]: continuation runs */
  uint64_t counter; /* uint32_t[1] */
} t_order_args;
enum { T_ORDER_SMALL = 1, T_ORDER_LARGE = 2 };
#define T_ORDER_CONTINUATIONS(X)                                                                   \
  X(T_ORDER_SMALL, t_order_small, "small")                                                         \
  X(T_ORDER_LARGE, t_order_large, "large")

/* ---- t_forkjoin ---- */
#define T_FORKJOIN_FIELDS(X) X(uint32_t, v)
WS_FRAME(t_forkjoin_frame, T_FORKJOIN_FIELDS)
typedef struct t_forkjoin_args {
  uint64_t out; /* uint32_t[N] */
} t_forkjoin_args;
enum { T_FJ_EVEN = 1, T_FJ_ODD = 2, T_FJ_JOIN = 3 };
#define T_FORKJOIN_CONTINUATIONS(X)                                                                \
  X(T_FJ_EVEN, t_fj_even, "even")                                                                  \
  X(T_FJ_ODD, t_fj_odd, "odd")                                                                     \
  X(T_FJ_JOIN, t_fj_join, "join")
WS_HOST_DEVICE static inline uint32_t t_forkjoin_result(uint32_t id) {
  return (id * 3u + ((id & 1u) ? 200u : 100u)) * 10u + 7u;
}

/* ---- t_align ---- */
#define T_ALIGN_FIELDS(X)                                                                          \
  X(uint32_t, k)                                                                                   \
  X(uint32_t, acc)
WS_FRAME(t_align_frame, T_ALIGN_FIELDS)
typedef struct t_align_args {
  uint64_t log;      /* uint32_t[3 * capacity]: (id, src, next) per run */
  uint64_t ticket;   /* uint32_t[1]: next free log entry (may exceed capacity) */
  uint64_t out;      /* uint32_t[N] */
  uint32_t capacity; /* log entries */
  uint32_t pad;
} t_align_args;
enum { T_ALIGN_A = 1, T_ALIGN_B = 2, T_ALIGN_C = 3 };
#define T_ALIGN_CONTINUATIONS(X)                                                                   \
  X(T_ALIGN_A, t_align_a, "a")                                                                     \
  X(T_ALIGN_B, t_align_b, "b")                                                                     \
  X(T_ALIGN_C, t_align_c, "c")
/* self-loop lengths */
WS_HOST_DEVICE static inline uint32_t t_align_len_a(uint32_t id) {
  return (id * 7u) % 5u;
}
WS_HOST_DEVICE static inline uint32_t t_align_len_b(uint32_t id) {
  return 1u + (id * 5u) % 3u;
}
/* entry -> b for every 4th item, else a; a loops len_a times then -> c;
 * c -> b; b loops len_b times then terminates. */
WS_HOST_DEVICE static inline uint32_t t_align_runs(uint32_t id) {
  return (id % 4u == 0u) ? t_align_len_b(id) : t_align_len_a(id) + 1u + 1u + t_align_len_b(id);
}
WS_HOST_DEVICE static inline uint32_t t_align_result(uint32_t id) {
  return id * 1000u + t_align_runs(id);
}

/* ---- t_bad ---- */
#define T_BAD_FIELDS(X) X(uint32_t, n)
WS_FRAME(t_bad_frame, T_BAD_FIELDS)
typedef struct t_bad_args {
  uint32_t mode; /* 0: "x" returns an out-of-range index for bad_id; 1: spin forever */
  uint32_t bad_id;
  uint64_t runs; /* uint32_t[1]: continuation runs (atomic) */
} t_bad_args;
enum { T_BAD_X = 1, T_BAD_SPIN = 2, T_BAD_OUT_OF_RANGE = 7 };
#define T_BAD_CONTINUATIONS(X)                                                                     \
  X(T_BAD_X, t_bad_x, "x")                                                                         \
  X(T_BAD_SPIN, t_bad_spin, "spin")

/* ---- t_steps ---- */
#define T_STEPS_FIELDS(X)                                                                          \
  X(uint32_t, acc)                                                                                 \
  X(uint32_t, pass)
WS_FRAME(t_steps_frame, T_STEPS_FIELDS)
typedef struct t_steps_args {
  uint64_t out; /* uint32_t[N] */
} t_steps_args;
typedef struct t_steps_state {
  uint32_t v, n;
} t_steps_state;
enum { T_STEPS_WALK = 1, T_STEPS_DONE = 2, T_STEPS_WALK_OF = 3 };
#define T_STEPS_CONTINUATIONS(X)                                                                   \
  X(T_STEPS_WALK, t_steps_walk, "walk")                                                            \
  X(T_STEPS_DONE, t_steps_done, "done")                                                            \
  X(T_STEPS_WALK_OF, t_steps_walk_of, "walk_of")
/* where item id's walk `pass` starts: 1..30011, whose Collatz walks take 0
 * to a few hundred steps and stay below 2^32 */
WS_HOST_DEVICE static inline uint32_t t_steps_start(uint32_t id, uint32_t pass) {
  return (id * 2654435761u + pass * 40503u) % 30011u + 1u;
}
WS_HOST_DEVICE static inline uint32_t t_steps_next(uint32_t v) {
  return (v & 1u) ? 3u * v + 1u : v >> 1;
}
WS_HOST_DEVICE static inline uint32_t t_steps_passes(uint32_t id) { return 1u + id % 3u; }
/* t_steps_kernel (WS_KERNEL_STEPS): index i < n walks from
 * t_steps_start(i, 7) and writes the length to out[i], except every fifth
 * index, whose begin has nothing to do (out[i] keeps what it held) */
typedef struct t_steps_kernel_args {
  uint64_t out; /* uint32_t[n] */
} t_steps_kernel_args;
/* what "done" writes: 4 x the steps of all passes + the passes */
WS_HOST_DEVICE static inline uint32_t t_steps_result(uint32_t id) {
  uint32_t acc = 0;
  for (uint32_t p = 0; p < t_steps_passes(id); ++p)
    for (uint32_t v = t_steps_start(id, p); v != 1u; v = t_steps_next(v))
      ++acc;
  return acc * 4u + t_steps_passes(id);
}

#endif
