/* SPDX-License-Identifier: MIT */
/* The fuzzer's generic "table-driven" coroutine and auxiliary stages.
 *
 * Coroutines are compiled kernels, so the fuzzer cannot generate code; it
 * generates *tables*. One coroutine with FZ_MAX_K continuations (the host
 * registers the first K of them) behaves as the argument block says:
 *
 *   entry      digest = seed ^ id; left = path length of the item (a hash of
 *              seed and id, 0..maxlen-1); suspends to entry_next[h & 1]
 *              (0 = terminate at once).
 *   cont k     visits[id][k] += 1; digest = mix(digest, k); checks that every
 *              frame field survived the suspend (AoS/SoA, compaction); for
 *              each auxiliary work w with bound[w][k] = b > 0 publishes
 *              h % (b + 1) items into stage pub_stage[w][k] of w's pool;
 *              then terminates when left == 0, else left -= 1 and suspends to
 *              next[k][h' & 1] (0 = terminate early, k = a self-loop).
 *   stage s    (of work w, a kernel over all C slots) visits the items of the
 *              stage: aux_visits[w][id][s] += 1; an item whose own budget is
 *              spent is released, otherwise it moves to anext[s][h'' & 1]
 *              (S = release early, s = a self-loop).
 *
 * Every decision is a pure function of (seed, id, the item's own step
 * counters), so the per-item results and the per-continuation / per-stage
 * totals do not depend on how the scheduler orders the work. fz_harness.c
 * computes them with a plain sequential model built from the same helpers
 * below (WS_HOST_DEVICE) and compares.
 *
 * One kernel source for the CPU and the CUDA backend (kernel.h). */
#ifndef WS_FUZZ_FZ_H
#define WS_FUZZ_FZ_H

#include "wavesched/pool_kernel.h"

#define FZ_MAX_K 6u
#define FZ_MAX_WORKS 2u
#define FZ_MAX_STAGES 3u

/* error words (args.errors) */
enum {
  FZ_ERR_FRAME = 0,   /* a frame field changed across a suspend */
  FZ_ERR_PAYLOAD = 1, /* an auxiliary payload was corrupted */
  FZ_ERR_PUBLISH = 2, /* a publication found the pool full (admission failed) */
  FZ_ERR_COUNT = 4
};

#define FZ_FIELDS(X)                                                                       \
  X(uint64_t, digest)                                                                      \
  X(uint8_t, tag)                                                                          \
  X(uint32_t, left)                                                                        \
  X(float, weight)                                                                         \
  X(uint16_t, steps)                                                                       \
  X(uint8_t, pubs0)                                                                        \
  X(uint8_t, pubs1)
WS_FRAME(fz_frame, FZ_FIELDS)

/* Auxiliary payload (pool stride 16). */
typedef struct fz_item {
  uint32_t id;     /* the main item that published it */
  uint32_t check;  /* fz_item_check(id, serial) */
  uint16_t serial; /* publication number within the item and work */
  uint8_t left;    /* remaining stage hops */
  uint8_t hops;
  uint32_t reserved;
} fz_item;

typedef struct fz_args {
  uint64_t visits;        /* uint32_t[N * FZ_MAX_K]: runs of continuation k (k-1) */
  uint64_t result;        /* uint32_t[N]: digest at termination */
  uint64_t done;          /* uint32_t[N]: terminations */
  uint64_t errors;        /* uint32_t[FZ_ERR_COUNT] */
  uint64_t released[FZ_MAX_WORKS];   /* uint32_t[N]: auxiliary items of id released */
  uint64_t aux_visits[FZ_MAX_WORKS]; /* uint32_t[N * FZ_MAX_STAGES] */
  ws_pool_view pool[FZ_MAX_WORKS];
  uint32_t seed;
  uint32_t K;
  uint32_t maxlen;     /* path length in 0..maxlen-1 (maxlen >= 1) */
  uint32_t bad_next;   /* test hook: non-zero = continuation 1 returns this index */
  uint8_t entry_next[2];
  uint8_t next[FZ_MAX_K][2];          /* [k-1][choice]: 0 terminate, 1..K */
  uint8_t bound[FZ_MAX_WORKS][FZ_MAX_K]; /* [w][k-1]: 0 = not a producer */
  uint8_t pub_stage[FZ_MAX_WORKS][FZ_MAX_K];
  uint8_t amax[FZ_MAX_WORKS]; /* auxiliary item budget: 0..amax-1 hops */
  uint8_t work_count;
  uint8_t pad;
} fz_args;

/* By-value argument block of a stage kernel (at most WS_MAX_KERNEL_ARGS). */
typedef struct fz_stage_args {
  ws_pool_view pool;
  uint64_t aux_visits;
  uint64_t released;
  uint64_t errors;
  uint32_t seed;
  uint32_t work;
  uint32_t stage;
  uint32_t stage_count;
  uint8_t anext[FZ_MAX_STAGES][2]; /* S = release early */
  uint8_t pad[2];
} fz_stage_args;

/* glsl/fz_kernels/fz.glsl declares the same records for the Vulkan backend. */
#if !defined(__cplusplus)
_Static_assert(sizeof(fz_item) == 16 && offsetof(fz_item, serial) == 8 &&
                   offsetof(fz_item, left) == 10 && offsetof(fz_item, hops) == 11,
               "fz.glsl reads fz_item at these offsets");
_Static_assert(sizeof(fz_args) == 224 && offsetof(fz_args, pool) == 64 &&
                   offsetof(fz_args, seed) == 160 && offsetof(fz_args, entry_next) == 176 &&
                   offsetof(fz_args, next) == 178 && offsetof(fz_args, bound) == 190 &&
                   offsetof(fz_args, pub_stage) == 202 && offsetof(fz_args, amax) == 214 &&
                   offsetof(fz_args, work_count) == 216,
               "fz.glsl declares fz_args with these offsets");
_Static_assert(sizeof(fz_stage_args) == 96 && offsetof(fz_stage_args, seed) == 72 &&
                   offsetof(fz_stage_args, anext) == 88,
               "fz.glsl declares fz_stage_args with these offsets (// ws:args_size 96)");
#endif

/* ---- the pure functions both the kernels and the reference model use ---- */
WS_HOST_DEVICE static inline uint32_t fz_hash(uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
  uint32_t h = a * 0x9E3779B1u ^ (b + 0x7F4A7C15u);
  h ^= h >> 16;
  h *= 0x85EBCA6Bu;
  h ^= c * 0xC2B2AE35u + (h >> 13);
  h *= 0x27D4EB2Fu;
  h ^= d + (h >> 15);
  h *= 0x165667B1u;
  h ^= h >> 16;
  return h;
}

WS_HOST_DEVICE static inline uint64_t fz_mix(uint64_t digest, uint32_t v) {
  digest ^= v + 0x9E3779B97F4A7C15ull + (digest << 6) + (digest >> 2);
  return digest * 0x100000001B3ull;
}

WS_HOST_DEVICE static inline uint32_t fz_path_length(uint32_t seed, uint32_t id, uint32_t maxlen) {
  return fz_hash(seed, id, 1u, 0u) % (maxlen ? maxlen : 1u);
}

/* Items continuation k of item id publishes into work w at step `steps`. */
WS_HOST_DEVICE static inline uint32_t fz_pub_count(uint32_t seed, uint32_t id, uint32_t steps,
                                                   uint32_t w, uint32_t bound) {
  return bound ? fz_hash(seed, id, 2u + w, steps) % (bound + 1u) : 0u;
}

WS_HOST_DEVICE static inline uint32_t fz_choice(uint32_t seed, uint32_t id, uint32_t steps) {
  return fz_hash(seed, id, 7u, steps) & 1u;
}

WS_HOST_DEVICE static inline uint32_t fz_item_check(uint32_t id, uint32_t serial) {
  return fz_hash(id, serial, 11u, 0x5EEDu);
}

WS_HOST_DEVICE static inline uint32_t fz_item_budget(uint32_t seed, uint32_t w, uint32_t id,
                                                     uint32_t serial, uint32_t amax) {
  return fz_hash(seed ^ (w + 1u), id, 13u, serial) % (amax ? amax : 1u);
}

WS_HOST_DEVICE static inline uint32_t fz_item_choice(uint32_t seed, uint32_t w, uint32_t id,
                                                     uint32_t serial, uint32_t hops) {
  return fz_hash(seed ^ (w + 1u), id, 17u + hops, serial) & 1u;
}

WS_HOST_DEVICE static inline uint8_t fz_tag(uint32_t id, uint32_t steps) {
  return (uint8_t)(id * 7u + steps * 3u);
}

/* Continuation names, index order (the host registers the first K). */
#define FZ_CONTINUATIONS(X)                                                                \
  X(1, fz_c1, "c1")                                                                        \
  X(2, fz_c2, "c2")                                                                        \
  X(3, fz_c3, "c3")                                                                        \
  X(4, fz_c4, "c4")                                                                        \
  X(5, fz_c5, "c5")                                                                        \
  X(6, fz_c6, "c6")

#endif
