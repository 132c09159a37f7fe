/* SPDX-License-Identifier: MIT */
/* bench_queue — the scheduler's queue operations as a fraction of the
 * device-to-device copy bandwidth measured in the same run.
 *
 * The operations are called through the backend table (dev->ops, internal:
 * src/core/device.h) exactly as the loop calls them, over S = 2^16, 2^20,
 * 2^24 slots holding K = 4 queues with random tokens: 25 % free, then 35 %,
 * 20 %, 12 %, 8 % in queues 1..4.
 *
 * Effective bandwidth = the bytes an operation must at least read and write
 * (counted below, per operation) / its time. Time per operation: B calls
 * back to back, one synchronize, host monotonic clock, divided by B (B sized
 * so a batch takes about 2 ms); median over the repetitions. The copy
 * baseline is a WS_KERNEL copying 16-byte elements (read + write bytes),
 * timed the same way in phases (before the operations, after each size);
 * its reference time is the median of the phase medians. Timed calls rotate
 * over ROT copies of their inputs, so none finds its input in the L2.
 *
 * Every operation's output is verified once per size against the host before
 * it is timed, so a broken operation cannot report a good number.
 */
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "../src/core/device.h"
#include "bench_common.h"
#include "bench_kernels.h"

extern const ws_module_set bench_kernels_modules;

#define K 4u
#define FRAME_BYTES 16u /* AoS frame record moved by compaction */
#define GOAL_FRACTION 0.5
#define PUBLISH_COUNT_BIAS (1u << 30) /* keeps maintained counts far from wrapping */
/* Timed calls rotate over ROT copies of their inputs (at 2^24 slots: 4 x 64
 * MiB of tokens), so a call never finds the previous call's input in the
 * GPU's L2 (60 MB on the H200); the copy baseline cannot either. */
#define ROT 4u

/* Token distribution of the slots (per mille): free, queue 1..4. */
static const uint32_t token_permille[K + 1] = {250, 350, 200, 120, 80};
/* New tokens of the frames a publish reports (as if a continuation had just
 * run): terminated, queue 1..4. */
static const uint32_t next_permille[K + 1] = {100, 400, 250, 150, 100};

enum {
  OP_COUNT,
  OP_GATHER,
  OP_GATHER_ALL,
  OP_MATERIALIZE,
  OP_PUBLISH,
  OP_COMPACT,
  OP_N
};
static const char *const op_names[OP_N] = {"count",       "gather (selected)",
                                           "gather_all",  "count+gather_all",
                                           "publish",     "compact"};
static const char *const op_keys[OP_N] = {"count",         "gather",  "gather_all",
                                          "materialize",   "publish", "compact"};
static const char *const op_bytes_formula[OP_N] = {
    "4S", "4S + 4m", "4S + 4L", "8S + 4L", "8m", "4S + 48M"};

typedef struct qctx {
  ws_device *dev;
  uint32_t S;
  ws_kernel copy4;
  /* device */
  ws_buffer *tokens, *tokens_pristine, *tokens_pub, *ids, *slots, *scratch, *pub_slots, *frames,
      *counts, *offsets, *counter, *field_offsets;
  /* [0] is tokens / tokens_pub / pub_slots itself, [1..ROT) identical copies */
  ws_buffer *rot_tokens[ROT], *rot_tokens_pub[ROT], *rot_pub_slots[ROT];
  uint32_t rot; /* next copy a timed call uses */
  /* host */
  uint32_t *h_tokens;
  uint32_t hist[K + 1];
  uint32_t live; /* L */
  uint32_t m;    /* queue 1 size: the selected gather and the publish */
  uint32_t movers;
  uint32_t pub_hist[K + 1];
  uint32_t counts_bias[K + 2];
  uint64_t host_field_offsets[4];
  uint32_t field_sizes[4];
} qctx;

static ws_queue_args base_args(const qctx *c) {
  ws_queue_args q;
  memset(&q, 0, sizeof q);
  q.tokens = ws_buffer_address(c->tokens);
  q.ids = ws_buffer_address(c->ids);
  q.counts = ws_buffer_address(c->counts);
  q.slots = ws_buffer_address(c->slots);
  q.offsets = ws_buffer_address(c->offsets);
  q.scratch = ws_buffer_address(c->scratch);
  q.counter = ws_buffer_address(c->counter);
  q.scan = c->S;
  q.queue_count = K;
  q.frames = ws_buffer_address(c->frames);
  q.field_offsets = ws_buffer_address(c->field_offsets);
  q.host_field_offsets = c->host_field_offsets;
  q.field_sizes = c->field_sizes;
  q.field_count = 4;
  q.frame_size = FRAME_BYTES;
  q.layout = WS_LAYOUT_AOS;
  q.capacity = c->S;
  return q;
}

static void op_fail(qctx *c, ws_status st, const char *what) {
  fprintf(stderr, "bench_queue: %s over %u slots failed: %s: %s\n", what, c->S, ws_strerror(st),
          ws_device_last_error(c->dev));
  exit(BENCH_EXIT_FAIL);
}

/* Enqueues a copy of the pristine tokens into `dst` (a copy4 launch). */
static void restore_tokens(qctx *c, ws_buffer *dst) {
  bench_copy_args a = {ws_buffer_address(c->tokens_pristine), ws_buffer_address(dst)};
  BENCH_TRY(c->dev, ws_kernel_launch(&c->copy4, c->S, &a, sizeof a));
}

/* Enqueues one operation. Compaction works on `ctokens` (NULL: c->tokens);
 * with `rotate`, the others read the next copy of their inputs. */
static void run_op_r(qctx *c, int op, ws_buffer *ctokens, bool rotate) {
  ws_device *dev = c->dev;
  ws_queue_args q = base_args(c);
  const uint32_t r = rotate ? c->rot++ % ROT : 0u;
  q.tokens = ws_buffer_address(c->rot_tokens[r]);
  ws_status st = WS_OK;
  switch (op) {
  case OP_COUNT:
    st = dev->ops->queue_count(dev, &q);
    break;
  case OP_GATHER:
    q.token = 1;
    st = dev->ops->queue_gather(dev, &q);
    break;
  case OP_GATHER_ALL:
    st = dev->ops->queue_gather_all(dev, &q);
    break;
  case OP_MATERIALIZE:
    st = dev->ops->queue_count(dev, &q);
    if (st == WS_OK)
      st = dev->ops->queue_gather_all(dev, &q);
    break;
  case OP_PUBLISH:
    q.tokens = ws_buffer_address(c->rot_tokens_pub[r]);
    q.slots = ws_buffer_address(c->rot_pub_slots[r]);
    q.n = c->m;
    q.src = 1;
    q.scan = 0;
    st = dev->ops->queue_publish(dev, &q);
    break;
  case OP_COMPACT:
    if (ctokens)
      q.tokens = ws_buffer_address(ctokens);
    q.n = c->live;
    st = dev->ops->queue_compact(dev, &q);
    break;
  default:
    break;
  }
  if (st != WS_OK)
    op_fail(c, st, op_names[op]);
}

static void run_op(qctx *c, int op, ws_buffer *ctokens) { run_op_r(c, op, ctokens, false); }

static uint64_t op_bytes(const qctx *c, int op) {
  const uint64_t S = c->S, L = c->live, m = c->m, M = c->movers;
  switch (op) {
  case OP_COUNT:
    return 4 * S;
  case OP_GATHER:
    return 4 * S + 4 * m;
  case OP_GATHER_ALL:
    return 4 * S + 4 * L;
  case OP_MATERIALIZE:
    return 8 * S + 4 * L;
  case OP_PUBLISH:
    return 8 * m;
  case OP_COMPACT:
    /* scan the tokens; per mover read frame + id, write frame + id + token
     * at the hole and 0 at the old slot */
    return 4 * S + M * (2u * FRAME_BYTES + 16u);
  default:
    return 0;
  }
}

/* ------------------------------------------------------------ timing */

static ws_buffer *dbuf(ws_device *dev, size_t bytes) {
  ws_buffer *b = NULL;
  BENCH_TRY(dev, ws_buffer_create(dev, bytes ? bytes : 4, &b));
  return b;
}


typedef struct timing {
  double target_batch_s; /* batch length aimed at */
  uint32_t max_batch;
  int min_reps, max_reps;
  double budget_s; /* stop repeating past this (after min_reps) */
} timing;

typedef struct measured {
  double median_s, min_s, max_s;
  uint32_t batch;
  int reps;
} measured;

typedef void (*batch_fn)(void *user, uint32_t batch);

/* Times `fn` in batches: each sample = (batch wall time incl. one
 * synchronize) / batch. `prep` (may be NULL) runs before each batch,
 * untimed, and is followed by a synchronize. */
static measured time_batches(ws_device *dev, const timing *t, batch_fn fn, batch_fn prep,
                             void *user, uint32_t max_batch) {
  measured r;
  memset(&r, 0, sizeof r);
  /* calibrate with one call (after two warm-up calls) */
  for (int w = 0; w < 2; ++w) {
    if (prep)
      prep(user, 1);
    fn(user, 1);
    BENCH_TRY(dev, ws_device_synchronize(dev));
  }
  if (prep)
    prep(user, 1);
  BENCH_TRY(dev, ws_device_synchronize(dev));
  double t0 = bench_now_s();
  fn(user, 1);
  BENCH_TRY(dev, ws_device_synchronize(dev));
  const double one = bench_now_s() - t0;
  uint32_t b = one > 0 ? (uint32_t)fmin(t->target_batch_s / one, (double)t->max_batch) : 1u;
  if (b > max_batch)
    b = max_batch;
  if (b < 1)
    b = 1;
  double samples[4096];
  int n = 0;
  const double start = bench_now_s();
  while (n < t->max_reps && n < 4096) {
    if (n >= t->min_reps && bench_now_s() - start > t->budget_s)
      break;
    if (prep) {
      prep(user, b);
      BENCH_TRY(dev, ws_device_synchronize(dev));
    }
    t0 = bench_now_s();
    fn(user, b);
    BENCH_TRY(dev, ws_device_synchronize(dev));
    samples[n++] = (bench_now_s() - t0) / b;
  }
  r.median_s = bench_median(samples, (size_t)n);
  r.min_s = bench_min(samples, (size_t)n);
  r.max_s = bench_max(samples, (size_t)n);
  r.batch = b;
  r.reps = n;
  return r;
}

typedef struct op_user {
  qctx *c;
  int op;
} op_user;

static void op_batch(void *user, uint32_t b) {
  op_user *u = (op_user *)user;
  for (uint32_t i = 0; i < b; ++i)
    run_op_r(u->c, u->op, NULL, true);
}

/* Compaction changes its input, so a batch compacts B separate copies of
 * the pristine tokens (restored before the batch, untimed); frames, ids and
 * scratch are shared (their contents do not steer the operation). */
#define COMPACT_COPY_BYTES ((size_t)512 << 20)
static measured time_compact(qctx *c, const timing *t) {
  ws_device *dev = c->dev;
  measured r;
  memset(&r, 0, sizeof r);
  double one = 0;
  for (int w = 0; w < 3; ++w) {
    restore_tokens(c, c->tokens);
    BENCH_TRY(dev, ws_device_synchronize(dev));
    const double t0 = bench_now_s();
    run_op(c, OP_COMPACT, c->tokens);
    BENCH_TRY(dev, ws_device_synchronize(dev));
    one = bench_now_s() - t0;
  }
  size_t cap = COMPACT_COPY_BYTES / ((size_t)c->S * 4);
  if (cap > t->max_batch)
    cap = t->max_batch;
  uint32_t b = one > 0 ? (uint32_t)fmin(t->target_batch_s / one, (double)cap) : 1u;
  if (b < 1)
    b = 1;
  ws_buffer **copies = (ws_buffer **)bench_xmalloc(b * sizeof(ws_buffer *));
  copies[0] = c->tokens;
  for (uint32_t i = 1; i < b; ++i)
    copies[i] = dbuf(dev, (size_t)c->S * 4);
  double samples[4096];
  int n = 0;
  const double start = bench_now_s();
  while (n < t->max_reps && n < 4096) {
    if (n >= t->min_reps && bench_now_s() - start > t->budget_s)
      break;
    for (uint32_t i = 0; i < b; ++i)
      restore_tokens(c, copies[i]);
    BENCH_TRY(dev, ws_device_synchronize(dev));
    const double t0 = bench_now_s();
    for (uint32_t i = 0; i < b; ++i)
      run_op(c, OP_COMPACT, copies[i]);
    BENCH_TRY(dev, ws_device_synchronize(dev));
    samples[n++] = (bench_now_s() - t0) / b;
  }
  for (uint32_t i = 1; i < b; ++i)
    ws_buffer_destroy(copies[i]);
  free(copies);
  r.median_s = bench_median(samples, (size_t)n);
  r.min_s = bench_min(samples, (size_t)n);
  r.max_s = bench_max(samples, (size_t)n);
  r.batch = b;
  r.reps = n;
  return r;
}

static void op_prep(void *user, uint32_t b) {
  (void)b;
  op_user *u = (op_user *)user;
  if (u->op == OP_PUBLISH)
    BENCH_TRY(u->c->dev, ws_buffer_write(u->c->counts, 0, u->c->counts_bias, sizeof u->c->counts_bias));
}

typedef struct copy_user {
  ws_device *dev;
  ws_kernel k;
  bench_copy_args a;
  uint32_t n;
} copy_user;

static void copy_batch(void *user, uint32_t b) {
  copy_user *u = (copy_user *)user;
  for (uint32_t i = 0; i < b; ++i)
    BENCH_TRY(u->dev, ws_kernel_launch(&u->k, u->n, &u->a, sizeof u->a));
}

/* ------------------------------------------------------------ setup */

static uint32_t draw(uint64_t *rng, const uint32_t *permille) {
  uint32_t r = (uint32_t)(bench_rand64(rng) % 1000u), acc = 0;
  for (uint32_t t = 0; t <= K; ++t) {
    acc += permille[t];
    if (r < acc)
      return t;
  }
  return K;
}

static void frame_init(uint32_t s, uint32_t f[4]) {
  f[0] = s;
  f[1] = s * 3u + 1u;
  f[2] = ~s;
  f[3] = s ^ 0x5a5a5a5au;
}

static void setup(qctx *c, uint32_t S, uint64_t seed) {
  ws_device *dev = c->dev;
  c->S = S;
  uint64_t rng = seed;
  c->h_tokens = (uint32_t *)bench_xmalloc((size_t)S * 4);
  memset(c->hist, 0, sizeof c->hist);
  for (uint32_t s = 0; s < S; ++s) {
    uint32_t t = draw(&rng, token_permille);
    c->h_tokens[s] = t;
    c->hist[t] += 1;
  }
  c->live = S - c->hist[0];
  c->m = c->hist[1];
  c->movers = 0;
  for (uint32_t s = c->live; s < S; ++s)
    c->movers += c->h_tokens[s] != 0;
  /* publish: queue 1's slots (ascending, as a gather may return them) with
   * the tokens they hold after "running" */
  uint32_t *pub_slots = (uint32_t *)bench_xmalloc((size_t)c->m * 4 + 4);
  uint32_t *tok_pub = (uint32_t *)bench_xmalloc((size_t)S * 4);
  memcpy(tok_pub, c->h_tokens, (size_t)S * 4);
  memset(c->pub_hist, 0, sizeof c->pub_hist);
  uint32_t k = 0;
  for (uint32_t s = 0; s < S; ++s) {
    if (c->h_tokens[s] == 1) {
      pub_slots[k++] = s;
      tok_pub[s] = draw(&rng, next_permille);
      c->pub_hist[tok_pub[s]] += 1;
    }
  }
  for (uint32_t t = 0; t <= K; ++t)
    c->counts_bias[t] = c->hist[t] + PUBLISH_COUNT_BIAS;
  c->counts_bias[K + 1] = 0;

  c->tokens = dbuf(dev, (size_t)S * 4);
  c->tokens_pristine = dbuf(dev, (size_t)S * 4);
  c->tokens_pub = dbuf(dev, (size_t)S * 4);
  c->ids = dbuf(dev, (size_t)S * 4);
  c->slots = dbuf(dev, (size_t)S * 4);
  c->scratch = dbuf(dev, (size_t)S * 4);
  c->pub_slots = dbuf(dev, (size_t)c->m * 4);
  c->frames = dbuf(dev, (size_t)S * FRAME_BYTES);
  c->counts = dbuf(dev, (K + 2) * 4);
  c->offsets = dbuf(dev, (K + 2) * 4);
  c->counter = dbuf(dev, 4);
  c->field_offsets = dbuf(dev, sizeof c->host_field_offsets);
  for (uint32_t f = 0; f < 4; ++f) {
    c->field_sizes[f] = 4;
    c->host_field_offsets[f] = (uint64_t)f * 4u * S; /* SoA offsets (unused: AoS) */
  }
  BENCH_TRY(dev, ws_buffer_write(c->field_offsets, 0, c->host_field_offsets,
                                 sizeof c->host_field_offsets));
  BENCH_TRY(dev, ws_buffer_write(c->tokens, 0, c->h_tokens, (size_t)S * 4));
  BENCH_TRY(dev, ws_buffer_write(c->tokens_pristine, 0, c->h_tokens, (size_t)S * 4));
  BENCH_TRY(dev, ws_buffer_write(c->tokens_pub, 0, tok_pub, (size_t)S * 4));
  if (c->m)
    BENCH_TRY(dev, ws_buffer_write(c->pub_slots, 0, pub_slots, (size_t)c->m * 4));
  c->rot_tokens[0] = c->tokens;
  c->rot_tokens_pub[0] = c->tokens_pub;
  c->rot_pub_slots[0] = c->pub_slots;
  c->rot = 0;
  for (uint32_t r = 1; r < ROT; ++r) {
    c->rot_tokens[r] = dbuf(dev, (size_t)S * 4);
    c->rot_tokens_pub[r] = dbuf(dev, (size_t)S * 4);
    c->rot_pub_slots[r] = dbuf(dev, (size_t)c->m * 4);
    BENCH_TRY(dev, ws_buffer_write(c->rot_tokens[r], 0, c->h_tokens, (size_t)S * 4));
    BENCH_TRY(dev, ws_buffer_write(c->rot_tokens_pub[r], 0, tok_pub, (size_t)S * 4));
    if (c->m)
      BENCH_TRY(dev, ws_buffer_write(c->rot_pub_slots[r], 0, pub_slots, (size_t)c->m * 4));
  }
  BENCH_TRY(dev, ws_buffer_fill_u32(c->counts, 0, 0, K + 2));
  BENCH_TRY(dev, ws_buffer_fill_u32(c->offsets, 0, 0, K + 2));
  BENCH_TRY(dev, ws_buffer_fill_u32(c->counter, 0, 0, 1));
  BENCH_TRY(dev, ws_buffer_fill_u32(c->slots, 0, 0, S));
  BENCH_TRY(dev, ws_buffer_fill_u32(c->scratch, 0, 0, S));
  /* ids and frames: each slot's own identity (checked after compaction) */
  const uint32_t chunk = 1u << 20;
  uint32_t *tmp = (uint32_t *)bench_xmalloc((size_t)chunk * FRAME_BYTES);
  for (uint32_t s0 = 0; s0 < S; s0 += chunk) {
    const uint32_t n = S - s0 < chunk ? S - s0 : chunk;
    for (uint32_t i = 0; i < n; ++i)
      tmp[i] = s0 + i;
    BENCH_TRY(dev, ws_buffer_write(c->ids, (size_t)s0 * 4, tmp, (size_t)n * 4));
    for (uint32_t i = 0; i < n; ++i)
      frame_init(s0 + i, &tmp[(size_t)i * 4]);
    BENCH_TRY(dev, ws_buffer_write(c->frames, (size_t)s0 * FRAME_BYTES, tmp,
                                   (size_t)n * FRAME_BYTES));
  }
  free(tmp);
  free(pub_slots);
  free(tok_pub);
  BENCH_TRY(dev, ws_device_synchronize(dev));
}

static void teardown(qctx *c) {
  ws_buffer *all[] = {c->tokens, c->tokens_pristine, c->tokens_pub, c->ids,     c->slots,
                      c->scratch, c->pub_slots,      c->frames,     c->counts,  c->offsets,
                      c->counter, c->field_offsets};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i)
    ws_buffer_destroy(all[i]);
  for (uint32_t r = 1; r < ROT; ++r) {
    ws_buffer_destroy(c->rot_tokens[r]);
    ws_buffer_destroy(c->rot_tokens_pub[r]);
    ws_buffer_destroy(c->rot_pub_slots[r]);
  }
  free(c->h_tokens);
  c->h_tokens = NULL;
}

/* ------------------------------------------------------------ verification */

static bool fail(const qctx *c, const char *op, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static bool fail(const qctx *c, const char *op, const char *fmt, ...) {
  fprintf(stderr, "bench_queue: VERIFY FAILED: %s over %u slots: ", op, c->S);
  va_list ap;
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  return false;
}

/* Slot list [0, n) must hold distinct slots whose host token is `t`. */
static bool check_list(const qctx *c, const char *op, const uint32_t *list, uint32_t n,
                       uint32_t t, uint8_t *seen) {
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t s = list[i];
    if (s >= c->S)
      return fail(c, op, "entry %u is slot %u, past %u slots", i, s, c->S);
    if (c->h_tokens[s] != t)
      return fail(c, op, "entry %u is slot %u, whose token is not queue %u", i, s, t);
    if (seen[s])
      return fail(c, op, "slot %u listed twice (entry %u)", s, i);
    seen[s] = 1;
  }
  return true;
}

static bool verify_op(qctx *c, int op) {
  ws_device *dev = c->dev;
  const char *name = op_names[op];
  uint32_t h[K + 2];
  switch (op) {
  case OP_COUNT: {
    BENCH_TRY(dev, ws_buffer_fill_u32(c->counts, 0, 0xdeadbeefu, K + 1));
    BENCH_TRY(dev, ws_buffer_fill_u32(c->counts, (K + 1) * 4, 0x1234u, 1));
    run_op(c, op, NULL);
    BENCH_TRY(dev, ws_buffer_read(c->counts, 0, h, sizeof h));
    for (uint32_t t = 0; t <= K; ++t)
      if (h[t] != c->hist[t])
        return fail(c, name, "counts[%u] = %u, host histogram %u", t, h[t], c->hist[t]);
    if (h[K + 1] != 0x1234u)
      return fail(c, name, "counts[K+1] changed to %u (must be kept)", h[K + 1]);
    return true;
  }
  case OP_GATHER:
  case OP_GATHER_ALL:
  case OP_MATERIALIZE: {
    /* gather_all needs counts[1..K]: they are exact from the count check */
    if (op == OP_GATHER_ALL)
      BENCH_TRY(dev, ws_buffer_write(c->counts, 0, c->hist, sizeof c->hist));
    else
      BENCH_TRY(dev, ws_buffer_fill_u32(c->counts, 0, 0, K + 1));
    BENCH_TRY(dev, ws_buffer_fill_u32(c->slots, 0, 0xffffffffu, c->S));
    BENCH_TRY(dev, ws_buffer_fill_u32(c->counter, 0, 0xffffffffu, 1));
    run_op(c, op, NULL);
    uint32_t *list = (uint32_t *)bench_xmalloc((size_t)c->S * 4);
    uint8_t *seen = (uint8_t *)calloc(c->S, 1);
    if (!seen)
      return fail(c, name, "no host memory");
    bool ok = true;
    if (op == OP_GATHER) {
      uint32_t n = 0;
      BENCH_TRY(dev, ws_buffer_read(c->counter, 0, &n, 4));
      if (n != c->m)
        ok = fail(c, name, "counter says %u slots of queue 1, host %u", n, c->m);
      else if (n) {
        BENCH_TRY(dev, ws_buffer_read(c->slots, 0, list, (size_t)n * 4));
        ok = check_list(c, name, list, n, 1, seen);
      }
    } else {
      if (c->live)
        BENCH_TRY(dev, ws_buffer_read(c->slots, 0, list, (size_t)c->live * 4));
      uint32_t off = 0;
      for (uint32_t t = 1; t <= K && ok; ++t) {
        ok = check_list(c, name, list + off, c->hist[t], t, seen);
        off += c->hist[t];
      }
    }
    free(list);
    free(seen);
    return ok;
  }
  case OP_PUBLISH: {
    BENCH_TRY(dev, ws_buffer_write(c->counts, 0, c->hist, sizeof c->hist));
    BENCH_TRY(dev, ws_buffer_fill_u32(c->counts, (K + 1) * 4, 0, 1));
    run_op(c, op, NULL);
    BENCH_TRY(dev, ws_buffer_read(c->counts, 0, h, sizeof h));
    for (uint32_t t = 1; t <= K; ++t) {
      const uint32_t want = c->hist[t] - (t == 1 ? c->m : 0u) + c->pub_hist[t];
      if (h[t] != want)
        return fail(c, name, "counts[%u] = %u, expected %u", t, h[t], want);
    }
    return true;
  }
  case OP_COMPACT: {
    run_op(c, op, NULL); /* tokens are the pristine ones here */
    uint32_t *tok = (uint32_t *)bench_xmalloc((size_t)c->S * 4);
    uint32_t *ids = (uint32_t *)bench_xmalloc((size_t)c->S * 4);
    uint32_t *fr = (uint32_t *)bench_xmalloc((size_t)c->live * FRAME_BYTES + 16);
    uint8_t *seen = (uint8_t *)calloc(c->S, 1);
    bool ok = seen != NULL;
    BENCH_TRY(dev, ws_buffer_read(c->tokens, 0, tok, (size_t)c->S * 4));
    BENCH_TRY(dev, ws_buffer_read(c->ids, 0, ids, (size_t)c->S * 4));
    if (c->live)
      BENCH_TRY(dev, ws_buffer_read(c->frames, 0, fr, (size_t)c->live * FRAME_BYTES));
    for (uint32_t s = c->live; ok && s < c->S; ++s)
      if (tok[s] != 0)
        ok = fail(c, name, "slot %u at or above the live count %u still has token %u", s,
                  c->live, tok[s]);
    for (uint32_t s = 0; ok && s < c->live; ++s) {
      const uint32_t o = ids[s]; /* the slot this frame came from */
      uint32_t want[4];
      if (o >= c->S || seen[o] || c->h_tokens[o] == 0) {
        ok = fail(c, name, "slot %u holds id %u: not a live frame, or seen twice", s, o);
        break;
      }
      seen[o] = 1;
      if (tok[s] != c->h_tokens[o])
        ok = fail(c, name, "slot %u (from %u) has token %u", s, o, tok[s]);
      else if (o < c->live && o != s)
        ok = fail(c, name, "frame of slot %u moved to %u though it was below n", o, s);
      frame_init(o, want);
      if (ok && memcmp(want, &fr[(size_t)s * 4], FRAME_BYTES) != 0)
        ok = fail(c, name, "slot %u (from %u): frame fields not moved with the frame", s, o);
    }
    free(tok);
    free(ids);
    free(fr);
    free(seen);
    return ok;
  }
  default:
    return false;
  }
}

/* ------------------------------------------------------------ main */

/* --ops: a comma-separated list of op_keys, stored as a bit mask. */
static bool parse_ops(const char *value, void *dst) {
  uint32_t mask = 0;
  const char *p = value;
  while (*p) {
    const size_t n = strcspn(p, ",");
    int op = 0;
    while (op < OP_N && !(strlen(op_keys[op]) == n && strncmp(p, op_keys[op], n) == 0))
      ++op;
    if (op == OP_N)
      return false;
    mask |= 1u << op;
    p += n;
    if (*p == ',')
      ++p;
  }
  if (!mask)
    return false;
  *(uint32_t *)dst = mask;
  return true;
}

static bool op_timed(uint32_t mask, int op) { return (mask & (1u << op)) != 0; }

int main(int argc, char **argv) {
  bench_u32_list sizes = {0, {0}};
  uint32_t copy_log2 = 0;
  uint32_t timed = (1u << OP_N) - 1u; /* the operations timed (every one is verified) */
  const bench_extra_opt extra[] = {
      {"log2", "A,B,..", "slot counts as powers of two (default 16,20,24; smoke 10,14)",
       bench_parse_u32_list, &sizes},
      {"copy-log2", "N", "copy baseline: 2^N 16-byte elements (default 26; quick 22)",
       bench_parse_u32, &copy_log2},
      {"ops", "A,B,..",
       "time only these operations (count, gather, gather_all, materialize, publish, compact; "
       "default all); the others are still verified. For profilers: the run's kernels are "
       "then the copy's and these",
       parse_ops, &timed},
  };
  bench_opts o;
  bench_parse_args(argc, argv, &o,
                   "Queue operations (count, gather, gather_all, publish, compaction) over\n"
                   "2^16..2^24 slots, as a fraction of the device-to-device copy bandwidth\n"
                   "measured in the same run.",
                   extra, 3);
  timing tm;
  switch (o.size) {
  case BENCH_SMOKE:
    tm = (timing){2e-3, 16, 2, 2, 0.1};
    if (!sizes.n)
      sizes = (bench_u32_list){2, {10, 14}};
    if (!copy_log2)
      copy_log2 = 16;
    break;
  case BENCH_QUICK:
    tm = (timing){4e-3, 64, 3, 9, 1.5};
    if (!sizes.n)
      sizes = (bench_u32_list){3, {16, 20, 24}};
    if (!copy_log2)
      copy_log2 = 22;
    break;
  default:
    tm = (timing){2e-3, 256, 5, 31, 1.0};
    if (!sizes.n)
      sizes = (bench_u32_list){3, {16, 20, 24}};
    if (!copy_log2)
      copy_log2 = 26;
    break;
  }
  if (o.reps)
    tm.min_reps = tm.max_reps = o.reps;
  for (uint32_t i = 0; i < sizes.n; ++i)
    if (sizes.v[i] < 4 || sizes.v[i] > 28) {
      fprintf(stderr, "bench_queue: --log2 values must be in 4..28\n");
      return BENCH_EXIT_USAGE;
    }
  if (copy_log2 < 10 || copy_log2 > 27) {
    fprintf(stderr, "bench_queue: --copy-log2 must be in 10..27\n");
    return BENCH_EXIT_USAGE;
  }

  ws_device *dev = bench_open_device(&o, &bench_kernels_modules);
  const ws_kernel copy16 = bench_find_kernel(dev, &bench_kernels_modules, "bench_copy16");
  const ws_kernel copy4 = bench_find_kernel(dev, &bench_kernels_modules, "bench_copy4");

  /* ---- copy baseline (before) ---- */
  const uint32_t copy_n = 1u << copy_log2;
  const size_t copy_bytes = (size_t)copy_n * 16;
  ws_buffer *csrc = dbuf(dev, copy_bytes), *cdst = dbuf(dev, copy_bytes);
  {
    const size_t chunk = (size_t)1 << 24; /* bytes */
    uint32_t *tmp = (uint32_t *)bench_xmalloc(chunk);
    for (size_t off = 0; off < copy_bytes; off += chunk) {
      const size_t n = copy_bytes - off < chunk ? copy_bytes - off : chunk;
      for (size_t i = 0; i < n / 4; ++i)
        tmp[i] = (uint32_t)(off / 4 + i) * 2654435761u;
      BENCH_TRY(dev, ws_buffer_write(csrc, off, tmp, n));
    }
    BENCH_TRY(dev, ws_buffer_fill_u32(cdst, 0, 0, copy_bytes / 4));
    free(tmp);
  }
  copy_user cu = {dev, copy16, {ws_buffer_address(csrc), ws_buffer_address(cdst)}, copy_n};
  const timing copy_tm = {o.size == BENCH_FULL ? 5e-3 : 20e-3, 64, tm.min_reps, tm.max_reps,
                          tm.budget_s};
  printf("bench_queue: copy baseline: WS_KERNEL bench_copy16 over 2^%u 16-byte elements "
         "(%.1f MiB read + %.1f MiB written per copy)\n",
         copy_log2, copy_bytes / 1048576.0, copy_bytes / 1048576.0);
  fflush(stdout);
  /* The copy is timed in phases: before the operations and after each size;
   * the reference is the median of the phase medians (a noisy machine may
   * slow one phase down). */
  double copy_phase[1 + 16];
  uint32_t copy_phases = 0;
  copy_phase[copy_phases++] = time_batches(dev, &copy_tm, copy_batch, NULL, &cu, 64).median_s;
  {
    /* verify the copy at the start, middle and end */
    const size_t probe = copy_bytes < 65536 ? copy_bytes : 65536;
    const size_t at[3] = {0, (copy_bytes / 2) & ~(size_t)15, copy_bytes - probe};
    uint32_t *got = (uint32_t *)bench_xmalloc(probe);
    for (int p = 0; p < 3; ++p) {
      BENCH_TRY(dev, ws_buffer_read(cdst, at[p], got, probe));
      for (size_t i = 0; i < probe / 4; ++i)
        if (got[i] != (uint32_t)(at[p] / 4 + i) * 2654435761u) {
          fprintf(stderr, "bench_queue: VERIFY FAILED: copy kernel: word %zu wrong\n",
                  at[p] / 4 + i);
          return BENCH_EXIT_FAIL;
        }
    }
    free(got);
  }

  /* ---- the operations ---- */
  typedef struct row {
    uint32_t log2;
    uint32_t S, live, m, movers;
    uint64_t bytes[OP_N];
    measured t[OP_N];
  } row;
  row *rows = (row *)calloc(sizes.n, sizeof(row));
  if (!rows)
    return BENCH_EXIT_FAIL;
  for (uint32_t si = 0; si < sizes.n; ++si) {
    row *r = &rows[si];
    qctx c;
    memset(&c, 0, sizeof c);
    c.dev = dev;
    c.copy4 = copy4;
    r->log2 = sizes.v[si];
    setup(&c, 1u << sizes.v[si], 0x5eed0000ull + sizes.v[si]);
    r->S = c.S;
    r->live = c.live;
    r->m = c.m;
    r->movers = c.movers;
    printf("bench_queue: S = 2^%u = %u slots, L = %u live (%.1f %%), queue 1 m = %u, "
           "compaction movers M = %u\n",
           r->log2, c.S, c.live, 100.0 * c.live / c.S, c.m, c.movers);
    fflush(stdout);
    for (int op = 0; op < OP_N; ++op) {
      if (!verify_op(&c, op))
        return BENCH_EXIT_FAIL;
      r->bytes[op] = op_bytes(&c, op);
      if (!op_timed(timed, op))
        continue;
      op_user u = {&c, op};
      if (op == OP_GATHER_ALL)
        BENCH_TRY(dev, ws_buffer_write(c.counts, 0, c.hist, sizeof c.hist));
      uint32_t maxb = 4096;
      if (op == OP_PUBLISH && c.m)
        maxb = (PUBLISH_COUNT_BIAS / 2) / c.m; /* counts stay far from wrapping */
      if (op == OP_COMPACT)
        r->t[op] = time_compact(&c, &tm);
      else
        r->t[op] = time_batches(dev, &tm, op_batch, op == OP_PUBLISH ? op_prep : NULL, &u,
                                maxb ? maxb : 1);
    }
    teardown(&c);
    copy_phase[copy_phases++] = time_batches(dev, &copy_tm, copy_batch, NULL, &cu, 64).median_s;
  }
  ws_buffer_destroy(csrc);
  ws_buffer_destroy(cdst);
  const double copy_s = bench_median(copy_phase, copy_phases);
  const double copy_bw = 2.0 * (double)copy_bytes / copy_s;

  /* ---- report ---- */
  printf("\ncopy baseline (read + write bytes / time), %u phases:", copy_phases);
  for (uint32_t p = 0; p < copy_phases; ++p)
    printf(" %.1f", 2.0 * copy_bytes / copy_phase[p] * 1e-9);
  printf(" GB/s; reference = median of the phases: %.1f GB/s (%.3f ms per copy)\n",
         copy_bw * 1e-9, copy_s * 1e3);
  printf("bytes counted: S slots scanned (4 B tokens), m = queue 1 size, L = live, M = "
         "compaction movers, 16 B frames; time = batch of B calls + one synchronize, / B, "
         "median; calls rotate over %u copies of their inputs (compaction: B separate token "
         "copies, restored before the batch)\n",
         ROT);
  for (uint32_t si = 0; si < sizes.n; ++si) {
    const row *r = &rows[si];
    printf("\nS = 2^%u (%u slots, L %u, m %u, M %u)\n", r->log2, r->S, r->live, r->m, r->movers);
    printf("  %-18s %-9s %12s %11s %10s %9s %8s %6s\n", "operation", "bytes", "MB", "time us",
           "GB/s", "of copy", "batch", "reps");
    for (int op = 0; op < OP_N; ++op) {
      if (!op_timed(timed, op)) {
        printf("  %-18s %-9s %12.3f   (not timed: --ops)\n", op_names[op], op_bytes_formula[op],
               r->bytes[op] * 1e-6);
        continue;
      }
      const double t = r->t[op].median_s;
      const double bw = t > 0 ? (double)r->bytes[op] / t : NAN;
      printf("  %-18s %-9s %12.3f %11.2f %10.1f %8.1f%% %8u %6d\n", op_names[op],
             op_bytes_formula[op], r->bytes[op] * 1e-6, t * 1e6, bw * 1e-9, 100.0 * bw / copy_bw,
             r->t[op].batch, r->t[op].reps);
    }
  }
  printf("\nverification: every operation's output matched the host (count: histogram; "
         "gathers: distinct slots of the right queue, right sizes; publish: counts; "
         "compaction: dense prefix, frames/ids/tokens moved together)\n\n");

  bench_json j;
  if (!bench_json_open(&j, &o, "queue", dev))
    return BENCH_EXIT_FAIL;
  bench_json_obj(&j, "params");
  bench_json_u64(&j, "queues", K);
  bench_json_str(&j, "token_distribution_permille", "free 250, q1 350, q2 200, q3 120, q4 80");
  bench_json_str(&j, "publish_new_tokens_permille", "terminated 100, q1 400, q2 250, q3 150, q4 100");
  bench_json_u64(&j, "frame_bytes", FRAME_BYTES);
  bench_json_u64(&j, "input_copies_rotated", ROT);
  bench_json_str(&j, "layout", "aos");
  bench_json_end_obj(&j);
  bench_json_obj(&j, "copy");
  bench_json_u64(&j, "elements", copy_n);
  bench_json_u64(&j, "element_bytes", 16);
  bench_json_u64(&j, "bytes_read_plus_written", 2 * (uint64_t)copy_bytes);
  bench_json_arr(&j, "phase_median_ms");
  for (uint32_t p = 0; p < copy_phases; ++p)
    bench_json_num(&j, NULL, copy_phase[p] * 1e3);
  bench_json_end_arr(&j);
  bench_json_num(&j, "median_ms", copy_s * 1e3);
  bench_json_num(&j, "bandwidth_gbs", copy_bw * 1e-9);
  bench_json_end_obj(&j);
  bench_json_arr(&j, "sizes");
  for (uint32_t si = 0; si < sizes.n; ++si) {
    const row *r = &rows[si];
    bench_json_obj(&j, NULL);
    bench_json_u64(&j, "log2_slots", r->log2);
    bench_json_u64(&j, "slots", r->S);
    bench_json_u64(&j, "live", r->live);
    bench_json_u64(&j, "queue1", r->m);
    bench_json_u64(&j, "movers", r->movers);
    bench_json_arr(&j, "ops");
    for (int op = 0; op < OP_N; ++op) {
      if (!op_timed(timed, op))
        continue;
      const double t = r->t[op].median_s;
      const double bw = (double)r->bytes[op] / t;
      bench_json_obj(&j, NULL);
      bench_json_str(&j, "op", op_keys[op]);
      bench_json_str(&j, "bytes_formula", op_bytes_formula[op]);
      bench_json_u64(&j, "bytes", r->bytes[op]);
      bench_json_num(&j, "time_us", t * 1e6);
      bench_json_num(&j, "min_us", r->t[op].min_s * 1e6);
      bench_json_num(&j, "max_us", r->t[op].max_s * 1e6);
      bench_json_u64(&j, "batch", r->t[op].batch);
      bench_json_u64(&j, "reps", (uint64_t)r->t[op].reps);
      bench_json_num(&j, "bandwidth_gbs", bw * 1e-9);
      bench_json_num(&j, "fraction_of_copy", bw / copy_bw);
      bench_json_bool(&j, "verified", true);
      bench_json_end_obj(&j);
    }
    bench_json_end_arr(&j);
    bench_json_end_obj(&j);
  }
  bench_json_end_arr(&j);
  bench_json_num(&j, "goal_min_fraction_at_2p24", GOAL_FRACTION);
  bench_json_close(&j);

  /* summary: the largest size */
  const row *big = &rows[sizes.n - 1];
  for (int op = 0; op < OP_N; ++op) {
    if (!op_timed(timed, op))
      continue;
    const double frac = (double)big->bytes[op] / big->t[op].median_s / copy_bw;
    char what[96], v[32], goal[48], note[64];
    snprintf(what, sizeof what, "queue %s @2^%u: bandwidth / copy", op_keys[op], big->log2);
    snprintf(v, sizeof v, "%.1f%%", 100.0 * frac);
    if (big->log2 == 24)
      snprintf(goal, sizeof goal, ">= %.0f%% (%s)", 100.0 * GOAL_FRACTION,
               frac >= GOAL_FRACTION ? "met" : "not met");
    else
      snprintf(goal, sizeof goal, "(goal is at 2^24)");
    snprintf(note, sizeof note, "%.1f us, %.3g GB/s of %.3g", big->t[op].median_s * 1e6,
             (double)big->bytes[op] / big->t[op].median_s * 1e-9, copy_bw * 1e-9);
    bench_summary("queue", what, v, goal, note);
  }
  free(rows);
  ws_device_destroy(dev);
  return BENCH_EXIT_OK;
}
