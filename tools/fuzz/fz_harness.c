/* SPDX-License-Identifier: MIT */
/* The fuzz harness (see fz_harness.h and fz.h).
 *
 * Input decoding (every byte optional: a short input reads zeros):
 *   [0]  flags: bit0 SoA, bits1-2 accounting (materialized/incremental/
 *        fused), bit3 compaction, bit4 all-queues policy, bit5 partial
 *        admission, bit6 verify queues, bit7 megakernel
 *   [1]  flags: bit0 dispatch twice (reuse), bits1-2 refill threshold mode,
 *        bit3 refill alignment list, bit4 single-stage (legacy) protocol,
 *        bit5 raw (keep invalid configurations and expect their error),
 *        bits6-7 fault injection (1 host allocation, 2 backend call)
 *   [2] K-1  [3] R-1  [4,5] N  [6] maxlen-1  [7..10] seed
 *   [11,12] entry transitions, then 2 per continuation (value % (K+1))
 *   then: work count, and per work: stages, capacity, item budget, drain
 *   policy, K producer bounds (% 4), K publication stages, 2 per stage of
 *   stage transitions (value % (S+1)); then refill threshold, alignment
 *   mask, block size, fault index (2 bytes); then the iteration limit and
 *   misbehaviour bytes, and one byte whose bit w makes work w's pool
 *   append-allocated (issue 18; not with the single-stage protocol).
 * Unless "raw", the decoder repairs configurations the library must reject
 * (R*b > C, no producer, auxiliary work with the all-queues policy or the
 * megakernel, incremental accounting with the all-queues policy); with
 * "raw" it keeps them and the model predicts the exact error code.
 *
 * Checks per dispatch (each failure aborts with a message):
 *   statuses: exactly the predicted one (WS_OK or a configuration or
 *     registration error); with fault injection, WS_OK or an expected
 *     resource/backend error, then a clean retry with the fault disarmed;
 *   per item: completed exactly once, the same digest of its path, the same
 *     number of runs of every continuation, the same number of auxiliary
 *     items released and the same visits per auxiliary stage;
 *   no frame field or payload corrupted, no publication into a full pool;
 *   statistics: generated = N, resumed = total continuation runs, executed
 *     per continuation and per auxiliary stage as the model, the pool's own
 *     counters equal the scheduler's, peaks and max active <= min(R, N),
 *     iterations <= N + continuation runs + auxiliary visits + the final
 *     pass that finds the dispatch done (progress);
 *   the auxiliary protocol as the client sees it: reset first, a readback
 *     enqueued before every host_count, L <= C at every boundary, stage
 *     dispatches only of non-empty stages and at most one per boundary,
 *     prepare_for_producer(required) with required <= C - L, never both in
 *     one boundary; every pool empty after the dispatch; for an append
 *     pool, available_slots a <= C - L (a == C when L == 0) after
 *     prepare_for_admission at the same boundary, and prepare_for_producer
 *     never asks for more than a;
 *   no host allocation outlives the case (the library's live counter). */
#include "fz_harness.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "fz.h"
#include "fz_case.h"
#include "wavesched/pool.h"
#include "wavesched/testing.h"
#include "wavesched/wavesched.h"

extern const ws_module_set fz_kernels_modules;
WS_FRAME_DESC(fz_frame, FZ_FIELDS)
WS_CONTINUATION_NAMES(fz_names, FZ_CONTINUATIONS)

static ws_device *g_dev;
static ws_kernel g_stage_kernel;

/* what the inputs exercised (fz_summary) */
static struct {
  unsigned long cases, compared, with_aux, forced, blocked, faulted, rejected, retried;
  unsigned long exact, predicted_errors;
  unsigned long mega, allq, partial, legacy, two_works;
} g_sum;

static const fz_case *g_case; /* the case being run, described on failure */
static int g_verbose = -1;    /* WS_FUZZ_VERBOSE: describe each case and its outcome */
static void describe(const fz_case *c, FILE *out);

static void fz_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void fz_fail(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "fuzz check failed: ");
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\n");
  va_end(ap);
  if (g_case)
    describe(g_case, stderr);
  fflush(stderr);
  abort();
}

#define FZ_CHECK(cond, ...)                                                                \
  do {                                                                                     \
    if (!(cond))                                                                           \
      fz_fail(__VA_ARGS__);                                                                \
  } while (0)

/* ------------------------------------------------------------------ case */

typedef struct reader {
  const uint8_t *p;
  size_t n, i;
} reader;

static uint32_t rd(reader *r) { return r->i < r->n ? r->p[r->i++] : 0u; }
static uint32_t rd16(reader *r) {
  uint32_t lo = rd(r);
  return lo | rd(r) << 8;
}

/* The limit and misbehaviour need what the reference loop predicts exactly
 * (not partial admission), one thing going wrong at a time (no injected
 * fault), and a work to misbehave in. */
static void settle_extras(fz_case *c) {
  const bool exact = !c->partial;
  if (!exact && (c->limit_mode == FZ_LIMIT_EXACT || c->limit_mode == FZ_LIMIT_SHORT))
    c->limit_mode = FZ_LIMIT_BACKSTOP;
  if (c->fault_kind)
    c->limit_mode = FZ_LIMIT_BACKSTOP;
  if (!exact || c->fault_kind || c->works == 0 || c->mega || !c->greedy)
    c->mb = FZ_MB_NONE;
  if (c->mb == FZ_MB_NONE) {
    c->mb_work = c->mb_at = c->mb_amount = c->mb_call = 0;
  } else {
    c->mb_work %= c->works;
    if (c->mb == FZ_MB_FAIL)
      c->mb_at %= 64u; /* the call number: small ones are reached */
  }
}

static void decode(const uint8_t *data, size_t size, fz_case *c) {
  reader r = {data, size, 0};
  memset(c, 0, sizeof *c);
  const uint32_t f0 = rd(&r), f1 = rd(&r);
  c->layout = f0 & 1u ? WS_LAYOUT_SOA : WS_LAYOUT_AOS;
  c->accounting = (f0 >> 1 & 3u) % 3u;
  c->compaction = f0 >> 3 & 1u;
  c->greedy = !(f0 >> 4 & 1u);
  c->partial = f0 >> 5 & 1u;
  c->verify = f0 >> 6 & 1u;
  c->mega = f0 >> 7 & 1u;
  c->reuse = f1 & 1u;
  c->threshold_mode = f1 >> 1 & 3u;
  c->align_mask = f1 >> 3 & 1u; /* replaced by the mask below when set */
  c->legacy = f1 >> 4 & 1u;
  c->raw = f1 >> 5 & 1u;
  c->fault_kind = f1 >> 6 & 3u;
  if (c->fault_kind == 3)
    c->fault_kind = 0;
  c->K = 1u + rd(&r) % FZ_MAX_K;
  c->R = 1u + rd(&r) % FZ_MAX_R;
  c->N = rd16(&r) % (FZ_MAX_N + 1u);
  c->maxlen = 1u + rd(&r) % 12u;
  c->seed = rd16(&r);
  c->seed |= rd16(&r) << 16;
  for (int i = 0; i < 2; ++i)
    c->entry_next[i] = (uint8_t)(rd(&r) % (c->K + 1u));
  for (uint32_t k = 0; k < c->K; ++k)
    for (int i = 0; i < 2; ++i)
      c->next[k][i] = (uint8_t)(rd(&r) % (c->K + 1u));
  c->works = rd(&r) % (FZ_MAX_WORKS + 1u);
  for (uint32_t w = 0; w < c->works; ++w) {
    fz_work_cfg *wc = &c->w[w];
    wc->S = 1u + rd(&r) % FZ_MAX_STAGES;
    wc->C = 1u + rd(&r) % 96u;
    wc->amax = 1u + rd(&r) % 6u;
    wc->drain = rd(&r) % 3u;
    for (uint32_t k = 0; k < c->K; ++k)
      wc->bound[k] = (uint8_t)(rd(&r) % 4u);
    for (uint32_t k = 0; k < c->K; ++k)
      wc->pub_stage[k] = (uint8_t)(rd(&r) % wc->S);
    for (uint32_t s = 0; s < wc->S; ++s)
      for (int i = 0; i < 2; ++i)
        wc->anext[s][i] = (uint8_t)(rd(&r) % (wc->S + 1u));
  }
  const uint32_t thr = rd(&r);
  c->threshold = c->threshold_mode == 0 ? 0u
                 : c->threshold_mode == 1 ? 1u
                 : c->threshold_mode == 2 ? thr
                                          : 1000000u;
  const uint32_t mask = rd(&r);
  c->align_mask = c->align_mask ? (mask & ((1u << c->K) - 1u)) : 0u;
  c->block = (1u + rd(&r) % 32u) * 32u;
  c->fault_n = 1u + rd16(&r) % (c->fault_kind == 1 ? 160u : 1500u);
  /* the iteration limit and the client's misbehaviour (inputs written
   * before they existed end earlier and read zeros: neither) */
  c->limit_mode = rd(&r) % FZ_LIMIT_MODES;
  c->limit_short = rd(&r) % 8u;
  c->mb = rd(&r) % FZ_MB_KINDS;
  c->mb_work = rd(&r);
  c->mb_at = rd16(&r) % 1024u;
  c->mb_amount = rd(&r);
  c->mb_call = rd(&r) % FZ_CB_COUNT;
  const uint32_t append_mask = rd(&r);
  for (uint32_t w = 0; w < c->works; ++w)
    c->w[w].append = append_mask >> w & 1u;

  /* the legacy protocol only for single-stage works (it has no stages) */
  for (uint32_t w = 0; w < c->works; ++w)
    if (c->w[w].S != 1)
      c->legacy = false;
  /* the single-stage adapter forwards no storage calls */
  for (uint32_t w = 0; w < c->works && c->legacy; ++w)
    c->w[w].append = 0;
  settle_extras(c);
  if (c->raw)
    return;
  /* repairs: keep the case valid */
  if (!c->greedy)
    c->accounting = 0;
  if (!c->greedy || c->mega)
    c->works = 0;
  for (uint32_t w = 0; w < c->works; ++w) {
    fz_work_cfg *wc = &c->w[w];
    uint32_t maxb = 0;
    for (uint32_t k = 0; k < c->K; ++k)
      maxb = wc->bound[k] > maxb ? wc->bound[k] : maxb;
    if (maxb == 0) {
      wc->bound[0] = 1;
      maxb = 1;
    }
    const uint32_t need = c->partial ? maxb : c->R * maxb;
    if (wc->C < need)
      wc->C = need;
  }
  settle_extras(c);
}

static const char *const acc_names[] = {"materialized", "incremental", "fused"};

static void describe(const fz_case *c, FILE *out) {
  fprintf(out,
          "case: N=%u R=%u K=%u maxlen=%u seed=0x%08x %s %s %s %s%s%s%s%s%s%s block=%u "
          "threshold=%u align=0x%x",
          c->N, c->R, c->K, c->maxlen, c->seed, c->mega ? "megakernel" : "wavefront",
          c->layout ? "soa" : "aos", acc_names[c->accounting],
          c->compaction ? "compact" : "nocompact", c->greedy ? " greedy" : " all-queues",
          c->partial ? " partial" : "", c->verify ? " verify" : "", c->reuse ? " reuse" : "",
          c->legacy ? " legacy" : "", c->raw ? " raw" : "", c->block, c->threshold,
          c->align_mask);
  if (c->fault_kind)
    fprintf(out, " fault=%s@%u", c->fault_kind == 1 ? "alloc" : "backend", c->fault_n);
  static const char *const limit_names[] = {"backstop", "exact", "short", "default"};
  fprintf(out, " limit=%s", limit_names[c->limit_mode]);
  if (c->limit_mode == FZ_LIMIT_SHORT)
    fprintf(out, "-%u", 1u + c->limit_short);
  static const char *const mb_names[] = {"none", "rise", "over-capacity", "stage-sum",
                                         "stage-count", "bad-drain", "fail"};
  static const char *const cb_names[] = {"reset", "enqueue_count_readback", "host_count",
                                         "stage_host_count", "admission_stage", "dispatch_stage",
                                         "prepare_for_producer"};
  if (c->mb == FZ_MB_FAIL)
    fprintf(out, " misbehaviour=fail w%u.%s call %u", c->mb_work, cb_names[c->mb_call],
            c->mb_at + 1u);
  else if (c->mb)
    fprintf(out, " misbehaviour=%s w%u from pass %u (amount %u)", mb_names[c->mb], c->mb_work,
            c->mb_at, c->mb_amount);
  fprintf(out, "\n  entry -> {%u,%u}", c->entry_next[0], c->entry_next[1]);
  for (uint32_t k = 0; k < c->K; ++k)
    fprintf(out, " c%u -> {%u,%u}", k + 1, c->next[k][0], c->next[k][1]);
  fprintf(out, "\n");
  for (uint32_t w = 0; w < c->works; ++w) {
    const fz_work_cfg *wc = &c->w[w];
    fprintf(out, "  work w%u: S=%u C=%u amax=%u drain=%u%s producers", w, wc->S, wc->C,
            wc->amax, wc->drain, wc->append ? " append" : "");
    for (uint32_t k = 0; k < c->K; ++k)
      if (wc->bound[k])
        fprintf(out, " c%u(b=%u -> s%u)", k + 1, wc->bound[k], wc->pub_stage[k]);
    fprintf(out, " stages");
    for (uint32_t s = 0; s < wc->S; ++s)
      fprintf(out, " s%u -> {%u,%u}", s, wc->anext[s][0], wc->anext[s][1]);
    fprintf(out, "\n");
  }
}

void fz_describe_input(const uint8_t *data, size_t size, FILE *out) {
  fz_case c;
  decode(data, size, &c);
  describe(&c, out);
}

/* ------------------------------------------------------------ the model */

typedef struct fz_ref {
  uint32_t visits[FZ_MAX_N * FZ_MAX_K];
  uint32_t result[FZ_MAX_N];
  uint32_t released[FZ_MAX_WORKS][FZ_MAX_N];
  uint32_t aux_visits[FZ_MAX_WORKS][FZ_MAX_N * FZ_MAX_STAGES];
  uint64_t runs[FZ_MAX_K + 1];
  uint64_t stage_visits[FZ_MAX_WORKS][FZ_MAX_STAGES];
  uint64_t total_runs, total_aux;
} fz_ref;

static void model_aux(const fz_case *c, fz_ref *m, uint32_t w, uint32_t id, uint32_t serial,
                      uint32_t stage) {
  const fz_work_cfg *wc = &c->w[w];
  uint32_t left = fz_item_budget(c->seed, w, id, serial, wc->amax), hops = 0, s = stage;
  for (;;) {
    m->aux_visits[w][id * FZ_MAX_STAGES + s] += 1;
    m->stage_visits[w][s] += 1;
    m->total_aux += 1;
    uint32_t to = wc->S;
    if (left) {
      to = wc->anext[s][fz_item_choice(c->seed, w, id, serial, hops)];
      left -= 1;
      hops += 1;
    }
    if (to >= wc->S) {
      m->released[w][id] += 1;
      return;
    }
    s = to;
  }
}

static void model(const fz_case *c, uint32_t works, fz_ref *m) {
  memset(m, 0, sizeof *m);
  for (uint32_t id = 0; id < c->N; ++id) {
    uint64_t digest = (uint64_t)(c->seed ^ id);
    uint32_t left = fz_path_length(c->seed, id, c->maxlen), steps = 0;
    uint32_t pubs[FZ_MAX_WORKS] = {0, 0};
    uint32_t k = c->entry_next[fz_choice(c->seed, id, 0xFFFFu)];
    while (k) {
      m->visits[id * FZ_MAX_K + k - 1] += 1;
      m->runs[k] += 1;
      m->total_runs += 1;
      digest = fz_mix(digest, k);
      for (uint32_t w = 0; w < works; ++w) {
        uint32_t n = fz_pub_count(c->seed, id, steps, w, c->w[w].bound[k - 1]);
        for (uint32_t i = 0; i < n; ++i)
          model_aux(c, m, w, id, pubs[w]++, c->w[w].pub_stage[k - 1]);
      }
      uint32_t next = 0;
      if (left) {
        next = c->next[k - 1][fz_choice(c->seed, id, steps)];
        left -= 1;
        steps += 1;
      }
      k = next;
    }
    m->result[id] = (uint32_t)(digest ^ (digest >> 32));
  }
}

/* ------------------------------------------- the client wrapper (checks) */

typedef struct fz_ctx fz_ctx;

typedef struct fz_work {
  fz_ctx *ctx;
  uint32_t index, C, S, drain;
  ws_pool *pool;
  const ws_aux_work *inner;
  ws_aux_work outer;
  char name[16];
  char stage_names[FZ_MAX_STAGES][32];
  const char *stage_ptrs[FZ_MAX_STAGES];
  ws_aux_producer producers[FZ_MAX_K];
  /* protocol state as the client sees it */
  int phase; /* 0 after reset / a run, 1 readback enqueued, 2 observed */
  uint32_t L, q[FZ_MAX_STAGES];
  uint32_t max_L;
  uint64_t resets;
  bool prepared, ran_stage;
  /* append pools: prepare_for_admission ran at this boundary, and the
   * available slots available_slots answered after it */
  bool admission_prepared, avail_known;
  uint32_t avail;
  uint32_t calls[FZ_CB_COUNT]; /* this dispatch's calls, as fz_loop.c counts them */
} fz_work;

struct fz_ctx {
  const fz_case *c;
  fz_work work[FZ_MAX_WORKS];
  uint32_t works;
  fz_args args;
  bool fault_armed; /* client calls may fail with injected faults */
  uint64_t boundary;
  uint32_t stage_runs; /* stage dispatches in the current boundary */
  bool mis;            /* this dispatch, the case's misbehaviour is on */
  fz_prediction pred;  /* what the reference loop predicts for it */
};

/* ---- the raw client's misbehaviour (fz_case.h): a failing call, or the
 * lie the reference loop computed, told at its boundary ---- */

/* Counts this call; true when the case makes it fail. */
static bool mb_fail(fz_work *fw, uint32_t cb) {
  const fz_ctx *ctx = fw->ctx;
  fw->calls[cb] += 1;
  return ctx->mis && ctx->c->mb == FZ_MB_FAIL && fw->index == ctx->c->mb_work &&
         cb == ctx->c->mb_call && fw->calls[cb] == ctx->c->mb_at + 1u;
}

/* The lie of `kind` this work tells now (at its pass: readbacks enqueued
 * this dispatch - 1), or NULL. */
static const fz_lie *mb_lie(const fz_work *fw, uint32_t kind) {
  const fz_ctx *ctx = fw->ctx;
  const fz_lie *l = &ctx->pred.lie;
  if (!ctx->mis || !l->armed || l->kind != kind || l->work != fw->index ||
      fw->calls[FZ_CB_ENQUEUE] == 0 || fw->calls[FZ_CB_ENQUEUE] - 1u != l->pass)
    return NULL;
  return l;
}

static const fz_lie *mb_count_lie(const fz_work *fw) {
  const fz_lie *l = mb_lie(fw, FZ_MB_RISE);
  if (!l)
    l = mb_lie(fw, FZ_MB_OVER_CAP);
  if (!l)
    l = mb_lie(fw, FZ_MB_STAGE_SUM);
  return l;
}

static ws_status w_reset(void *u) {
  fz_work *fw = u;
  ws_status st = mb_fail(fw, FZ_CB_RESET) ? WS_EBACKEND : fw->inner->reset(fw->inner->user);
  fw->phase = 0;
  fw->L = 0;
  memset(fw->q, 0, sizeof fw->q);
  fw->resets += 1;
  return st;
}

static ws_status w_enqueue(void *u) {
  fz_work *fw = u;
  FZ_CHECK(fw->resets > 0, "work %u: readback enqueued before any reset", fw->index);
  FZ_CHECK(fw->phase != 1, "work %u: two readbacks enqueued without a host_count between",
           fw->index);
  if (mb_fail(fw, FZ_CB_ENQUEUE))
    return WS_EBACKEND;
  ws_status st = fw->inner->enqueue_count_readback(fw->inner->user);
  if (st == WS_OK)
    fw->phase = 1;
  return st;
}

static ws_status w_host_count(void *u, uint32_t *count) {
  fz_work *fw = u;
  FZ_CHECK(fw->phase == 1, "work %u: host_count without an enqueued readback (phase %d)",
           fw->index, fw->phase);
  if (mb_fail(fw, FZ_CB_HOST_COUNT))
    return WS_EBACKEND;
  ws_status st = fw->inner->host_count(fw->inner->user, count);
  if (st != WS_OK)
    return st;
  FZ_CHECK(*count <= fw->C, "work %u: L = %u > C = %u at a boundary", fw->index, *count, fw->C);
  fw->L = *count;
  if (*count > fw->max_L)
    fw->max_L = *count;
  const fz_lie *lie = mb_count_lie(fw);
  if (lie)
    *count = lie->live; /* told, not held: fw->L and max_L keep the truth */
  if (fw->S == 1)
    fw->q[0] = *count; /* the legacy protocol asks no stage counts */
  fw->phase = 2;
  fw->prepared = false;
  fw->ran_stage = false;
  fw->admission_prepared = false;
  fw->avail_known = false;
  if (fw->index == 0) {
    fw->ctx->boundary += 1;
    fw->ctx->stage_runs = 0;
  }
  return WS_OK;
}

static uint32_t w_stage_count(void *u) {
  fz_work *fw = u;
  const fz_lie *lie = mb_lie(fw, FZ_MB_STAGE_COUNT);
  return lie ? lie->stage_count : fw->inner->stage_count(fw->inner->user);
}

static const char *w_stage_name(void *u, uint32_t s) {
  fz_work *fw = u;
  return fw->inner->stage_name(fw->inner->user, s);
}

static ws_status w_stage_host_count(void *u, uint32_t s, uint32_t *count) {
  fz_work *fw = u;
  FZ_CHECK(fw->phase == 2, "work %u: stage_host_count(%u) before host_count", fw->index, s);
  FZ_CHECK(s < fw->S, "work %u: stage_host_count(%u) of %u stages", fw->index, s, fw->S);
  if (mb_fail(fw, FZ_CB_STAGE_HOST_COUNT))
    return WS_EBACKEND;
  ws_status st = fw->inner->stage_host_count(fw->inner->user, s, count);
  const fz_lie *lie = mb_count_lie(fw);
  if (st == WS_OK && lie)
    *count = lie->q[s];
  if (st == WS_OK)
    fw->q[s] = *count;
  return st;
}

/* Drain policies: 1 = the last non-empty stage, 2 = the largest stage
 * (0 = the library's default, the first non-empty stage). */
static ws_status w_admission_stage(void *u, uint32_t *stage) {
  fz_work *fw = u;
  FZ_CHECK(fw->phase == 2, "work %u: admission_stage before the boundary was observed",
           fw->index);
  FZ_CHECK(fw->L > 0, "work %u: admission_stage asked of an empty work", fw->index);
  if (mb_fail(fw, FZ_CB_ADMISSION))
    return WS_EBACKEND;
  const fz_lie *lie = mb_lie(fw, FZ_MB_BAD_DRAIN);
  if (lie) {
    *stage = lie->drain_stage;
    return WS_OK;
  }
  uint32_t pick = 0, best = 0;
  for (uint32_t s = 0; s < fw->S; ++s) {
    if (fw->q[s] == 0)
      continue;
    if (fw->drain == 1 || fw->q[s] > best) {
      pick = s;
      best = fw->q[s];
    }
  }
  *stage = pick;
  return WS_OK;
}

/* Issue 18 (append pools): the scheduler prepares the storage, then asks
 * what is available, once each per boundary, before anything runs. */
static ws_status w_prepare_admission(void *u) {
  fz_work *fw = u;
  FZ_CHECK(fw->phase == 2, "work %u: prepare_for_admission outside an observed boundary",
           fw->index);
  FZ_CHECK(!fw->ran_stage && !fw->prepared && !fw->admission_prepared,
           "work %u: prepare_for_admission twice, or after the boundary's plan ran", fw->index);
  fw->admission_prepared = true;
  return fw->inner->prepare_for_admission(fw->inner->user);
}

static ws_status w_available(void *u, uint32_t *available) {
  fz_work *fw = u;
  FZ_CHECK(fw->phase == 2 && fw->admission_prepared && !fw->avail_known,
           "work %u: available_slots not right after prepare_for_admission", fw->index);
  ws_status st = fw->inner->available_slots(fw->inner->user, available);
  if (st != WS_OK)
    return st;
  FZ_CHECK(*available <= fw->C - fw->L, "work %u: available slots %u > C - L = %u - %u",
           fw->index, *available, fw->C, fw->L);
  FZ_CHECK(fw->L != 0 || *available == fw->C,
           "work %u: an empty append pool has %u of %u slots available", fw->index, *available,
           fw->C);
  fw->avail = *available;
  fw->avail_known = true;
  return WS_OK;
}

static ws_status w_prepare(void *u, uint64_t required) {
  fz_work *fw = u;
  FZ_CHECK(fw->phase == 2, "work %u: prepare_for_producer outside an observed boundary",
           fw->index);
  FZ_CHECK(!fw->ran_stage, "work %u: prepare_for_producer after a stage dispatch", fw->index);
  FZ_CHECK(required > 0 && required <= (uint64_t)(fw->C - fw->L),
           "work %u: prepare_for_producer(%" PRIu64 ") with C - L = %u - %u", fw->index,
           required, fw->C, fw->L);
  /* issue 18: never beyond what the client said it can write */
  FZ_CHECK(!fw->inner->available_slots || (fw->avail_known && required <= fw->avail),
           "work %u: prepare_for_producer(%" PRIu64 ") with %s%u available slots", fw->index,
           required, fw->avail_known ? "" : "no availability asked, last ", fw->avail);
  fw->prepared = true;
  return mb_fail(fw, FZ_CB_PREPARE) ? WS_EBACKEND : WS_OK;
}

static ws_status w_dispatch_stage(void *u, uint32_t s) {
  fz_work *fw = u;
  FZ_CHECK(fw->phase == 2, "work %u: dispatch_stage(%u) outside an observed boundary",
           fw->index, s);
  FZ_CHECK(s < fw->S, "work %u: dispatch_stage(%u) of %u stages", fw->index, s, fw->S);
  FZ_CHECK(fw->q[s] > 0, "work %u: dispatch_stage(%u) of an empty stage", fw->index, s);
  FZ_CHECK(!fw->prepared, "work %u: dispatch_stage after prepare_for_producer", fw->index);
  FZ_CHECK(fw->ctx->stage_runs == 0, "two stage dispatches in one iteration (boundary %" PRIu64 ")",
           fw->ctx->boundary);
  fw->ctx->stage_runs += 1;
  fw->ran_stage = true;
  if (mb_fail(fw, FZ_CB_DISPATCH_STAGE))
    return WS_EBACKEND;
  return fw->inner->dispatch_stage(fw->inner->user, s);
}

static ws_status run_stage(void *user, ws_pool *pool, uint32_t stage) {
  fz_work *fw = user;
  const fz_ctx *ctx = fw->ctx;
  const fz_work_cfg *wc = &ctx->c->w[fw->index];
  fz_stage_args sa;
  memset(&sa, 0, sizeof sa);
  sa.pool = ws_pool_get_view(pool);
  sa.aux_visits = ctx->args.aux_visits[fw->index];
  sa.released = ctx->args.released[fw->index];
  sa.errors = ctx->args.errors;
  sa.seed = ctx->c->seed;
  sa.work = fw->index;
  sa.stage = stage;
  sa.stage_count = fw->S;
  memcpy(sa.anext, wc->anext, sizeof sa.anext);
  return ws_kernel_launch(&g_stage_kernel, fw->C, &sa, sizeof sa);
}

/* ------------------------------------------------------------- running */

static bool expected_fault_status(ws_status st) {
  return st == WS_OK || st == WS_ENOMEM || st == WS_EDEVMEM || st == WS_EBACKEND ||
         st == WS_EPROTO_CLIENT;
}

/* Predicted status of ws_scheduler_create (SPEC §4, check order of the
 * library: enumerations, pool, accounting, fused, block). */
static ws_status predict_create(const fz_case *c) {
  if (!c->mega && c->R == 0)
    return WS_ECONFIG_POOL;
  if (c->accounting != 0 && !c->greedy)
    return WS_ECONFIG_ACCOUNTING;
  return WS_OK;
}

/* Predicted status of ws_scheduler_add_aux for work w (SPEC §3.5). */
static ws_status predict_register(const fz_case *c, uint32_t w) {
  const fz_work_cfg *wc = &c->w[w];
  if (c->mega || !c->greedy)
    return WS_EAUX_POLICY;
  bool any = false;
  for (uint32_t k = 0; k < c->K; ++k) {
    uint32_t b = wc->bound[k];
    if (!b)
      continue;
    any = true;
    if (!c->partial && (uint64_t)c->R * b > wc->C)
      return WS_EAUX_POOL_BOUND;
    if (c->partial && b > wc->C)
      return WS_EAUX_POOL_BOUND;
  }
  if (!any)
    return WS_EAUX_NO_PRODUCER;
  return WS_OK;
}

typedef struct fz_bufs {
  ws_buffer *visits, *result, *done, *errors;
  ws_buffer *released[FZ_MAX_WORKS], *aux_visits[FZ_MAX_WORKS];
} fz_bufs;

static void free_bufs(fz_bufs *b) {
  ws_buffer_destroy(b->visits);
  ws_buffer_destroy(b->result);
  ws_buffer_destroy(b->done);
  ws_buffer_destroy(b->errors);
  for (uint32_t w = 0; w < FZ_MAX_WORKS; ++w) {
    ws_buffer_destroy(b->released[w]);
    ws_buffer_destroy(b->aux_visits[w]);
  }
}

/* Tracks every status of a run: WS_OK or, under fault injection, an
 * expected error; otherwise exactly `want`. Returns whether to go on. */
static bool step_ok(fz_ctx *ctx, ws_status st, ws_status want, const char *what,
                    const ws_scheduler *s) {
  if (st != WS_OK && st == want)
    g_sum.rejected += 1;
  else if (st != WS_OK)
    g_sum.faulted += 1;
  if (ctx->fault_armed) {
    FZ_CHECK(st == want || (st != WS_OK && expected_fault_status(st)),
             "%s returned %s under fault injection: %s / %s", what, ws_status_name(st),
             s ? ws_scheduler_last_error(s) : "", ws_device_last_error(g_dev));
    return st == WS_OK;
  }
  FZ_CHECK(st == want, "%s returned %s, expected %s: %s / %s", what, ws_status_name(st),
           ws_status_name(want), s ? ws_scheduler_last_error(s) : "",
           ws_device_last_error(g_dev));
  return st == WS_OK;
}

static ws_status zero_outputs(const fz_ctx *ctx, const fz_bufs *b) {
  const fz_case *c = ctx->c;
  const size_t n = c->N ? c->N : 1u;
  ws_status st;
  if ((st = ws_buffer_fill_u32(b->visits, 0, 0, n * FZ_MAX_K)) ||
      (st = ws_buffer_fill_u32(b->result, 0, 0, n)) ||
      (st = ws_buffer_fill_u32(b->done, 0, 0, n)) ||
      (st = ws_buffer_fill_u32(b->errors, 0, 0, FZ_ERR_COUNT)))
    return st;
  for (uint32_t w = 0; w < FZ_MAX_WORKS; ++w)
    if ((st = ws_buffer_fill_u32(b->released[w], 0, 0, n)) ||
        (st = ws_buffer_fill_u32(b->aux_visits[w], 0, 0, n * FZ_MAX_STAGES)))
      return st;
  return WS_OK;
}

typedef struct fz_out {
  uint32_t visits[FZ_MAX_N * FZ_MAX_K];
  uint32_t result[FZ_MAX_N], done[FZ_MAX_N];
  uint32_t errors[FZ_ERR_COUNT];
  uint32_t released[FZ_MAX_WORKS][FZ_MAX_N];
  uint32_t aux_visits[FZ_MAX_WORKS][FZ_MAX_N * FZ_MAX_STAGES];
} fz_out;

static fz_ref g_ref;
static fz_out g_out;

/* A result read: must succeed, except that an injected fault may fail it. */
static bool read_ok(const fz_ctx *ctx, ws_status st) {
  if (st == WS_OK)
    return true;
  FZ_CHECK(ctx->fault_armed && expected_fault_status(st), "reading results: %s: %s",
           ws_status_name(st), ws_device_last_error(g_dev));
  return false;
}

static void compare(fz_ctx *ctx, const fz_bufs *b, ws_scheduler *s, uint32_t run) {
  const fz_case *c = ctx->c;
  const fz_ref *m = &g_ref;
  fz_out *o = &g_out;
  const uint32_t N = c->N;
  memset(o, 0, sizeof *o);
  bool ok = true;
  if (N) {
    ok = ok && read_ok(ctx, ws_buffer_read(b->visits, 0, o->visits, (size_t)N * FZ_MAX_K * 4));
    ok = ok && read_ok(ctx, ws_buffer_read(b->result, 0, o->result, (size_t)N * 4));
    ok = ok && read_ok(ctx, ws_buffer_read(b->done, 0, o->done, (size_t)N * 4));
    for (uint32_t w = 0; w < ctx->works; ++w) {
      ok = ok && read_ok(ctx, ws_buffer_read(b->released[w], 0, o->released[w], (size_t)N * 4));
      ok = ok && read_ok(ctx, ws_buffer_read(b->aux_visits[w], 0, o->aux_visits[w],
                                             (size_t)N * FZ_MAX_STAGES * 4));
    }
  }
  ok = ok && read_ok(ctx, ws_buffer_read(b->errors, 0, o->errors, sizeof o->errors));
  if (!ok)
    return; /* an injected fault hit a read: the retry compares */
  FZ_CHECK(o->errors[FZ_ERR_FRAME] == 0, "run %u: %u frame(s) lost a field across a suspend",
           run, o->errors[FZ_ERR_FRAME]);
  FZ_CHECK(o->errors[FZ_ERR_PAYLOAD] == 0, "run %u: %u corrupted auxiliary payload(s)", run,
           o->errors[FZ_ERR_PAYLOAD]);
  FZ_CHECK(o->errors[FZ_ERR_PUBLISH] == 0,
           "run %u: %u publication(s) found a full pool: admission let L exceed C", run,
           o->errors[FZ_ERR_PUBLISH]);
  for (uint32_t id = 0; id < N; ++id) {
    FZ_CHECK(o->done[id] == 1, "run %u: item %u completed %u times", run, id, o->done[id]);
    FZ_CHECK(o->result[id] == m->result[id], "run %u: item %u path digest %08x, model %08x", run,
             id, o->result[id], m->result[id]);
    for (uint32_t k = 0; k < FZ_MAX_K; ++k)
      FZ_CHECK(o->visits[id * FZ_MAX_K + k] == m->visits[id * FZ_MAX_K + k],
               "run %u: item %u ran c%u %u times, model %u", run, id, k + 1,
               o->visits[id * FZ_MAX_K + k], m->visits[id * FZ_MAX_K + k]);
    for (uint32_t w = 0; w < ctx->works; ++w) {
      FZ_CHECK(o->released[w][id] == m->released[w][id],
               "run %u: work %u released %u items of item %u, model %u", run, w,
               o->released[w][id], id, m->released[w][id]);
      for (uint32_t sg = 0; sg < FZ_MAX_STAGES; ++sg)
        FZ_CHECK(o->aux_visits[w][id * FZ_MAX_STAGES + sg] ==
                     m->aux_visits[w][id * FZ_MAX_STAGES + sg],
                 "run %u: work %u stage %u visited items of item %u %u times, model %u", run, w,
                 sg, id, o->aux_visits[w][id * FZ_MAX_STAGES + sg],
                 m->aux_visits[w][id * FZ_MAX_STAGES + sg]);
    }
  }

  /* statistics */
  ws_dispatch_stats d;
  ws_scheduler_dispatch_stats(s, &d);
  g_sum.compared += 1;
  g_sum.with_aux += ctx->works != 0;
  g_sum.two_works += ctx->works == 2;
  g_sum.forced += d.forced_drain_count != 0;
  g_sum.blocked += d.blocked_count != 0;
  g_sum.mega += c->mega;
  g_sum.allq += !c->greedy;
  g_sum.partial += c->partial && ctx->works;
  g_sum.legacy += c->legacy && ctx->works;
  const uint32_t A = c->mega ? N : (N < c->R ? N : c->R);
  FZ_CHECK(d.generated_count == N, "run %u: generated %" PRIu64 ", N = %u", run,
           d.generated_count, N);
  FZ_CHECK(ws_scheduler_node_count(s) == FZ_MAX_K + 1, "node count %u",
           ws_scheduler_node_count(s));
  ws_node_stats ns;
  FZ_CHECK(ws_scheduler_node_stats(s, 0, &ns) == WS_OK && strcmp(ns.name, "<entry>") == 0,
           "entry statistics");
  FZ_CHECK(ns.executed_count == N, "run %u: entry executed %" PRIu64 ", N = %u", run,
           ns.executed_count, N);
  if (c->mega) {
    FZ_CHECK(d.iteration_count == (N ? 1u : 0u), "megakernel: %" PRIu64 " iterations",
             d.iteration_count);
    return;
  }
  FZ_CHECK(d.resumed_count == m->total_runs,
           "run %u: resumed %" PRIu64 ", model %" PRIu64 " continuation runs", run,
           d.resumed_count, m->total_runs);
  uint64_t launches = 0;
  for (uint32_t k = 1; k <= FZ_MAX_K; ++k) {
    FZ_CHECK(ws_scheduler_node_stats(s, k, &ns) == WS_OK, "node %u statistics", k);
    FZ_CHECK(strcmp(ns.name, fz_names[k - 1]) == 0, "node %u named '%s'", k, ns.name);
    FZ_CHECK(ns.executed_count == m->runs[k],
             "run %u: c%u executed %" PRIu64 ", model %" PRIu64, run, k, ns.executed_count,
             m->runs[k]);
    FZ_CHECK(ns.dispatch_count <= ns.executed_count && (ns.executed_count == 0) == (ns.dispatch_count == 0),
             "run %u: c%u %" PRIu64 " launches for %" PRIu64 " frames", run, k,
             ns.dispatch_count, ns.executed_count);
    FZ_CHECK(ns.peak_queued_count <= A, "run %u: c%u peak %" PRIu64 " > A = %u", run, k,
             ns.peak_queued_count, A);
    launches += ns.dispatch_count;
  }
  FZ_CHECK(d.max_active_count <= A, "run %u: max active %" PRIu64 " > A = %u", run,
           d.max_active_count, A);
  /* every iteration runs at least one unit, but the last, which only finds
   * the dispatch done (SPEC §2.2) */
  const uint64_t bound = N + m->total_runs + m->total_aux + (N ? 1u : 0u);
  FZ_CHECK(d.iteration_count <= bound,
           "run %u: %" PRIu64 " iterations, more than the %" PRIu64 " units of work", run,
           d.iteration_count, bound);
  (void)launches;

  /* auxiliary statistics: one entry per stage (per work under the legacy
   * protocol), executed = the model's visits, equal to the pool's own */
  uint32_t entries = 0;
  uint64_t aux_dispatches = 0;
  for (uint32_t w = 0; w < ctx->works; ++w) {
    const fz_work *fw = &ctx->work[w];
    FZ_CHECK(fw->max_L <= fw->C, "work %u: max L %u > C %u", w, fw->max_L, fw->C);
    /* (N = 0 observes no boundary: the pool has nothing observed yet) */
    FZ_CHECK(N == 0 || ws_pool_live(fw->pool) == 0, "run %u: work %u still holds %u items", run,
             w, ws_pool_live(fw->pool));
    FZ_CHECK(N == 0 || ws_pool_errors(fw->pool) == 0, "run %u: work %u pool errors %u", run, w,
             ws_pool_errors(fw->pool));
    for (uint32_t sg = 0; sg < fw->S; ++sg, ++entries) {
      FZ_CHECK(ws_scheduler_aux_stats(s, entries, &ns) == WS_OK, "aux stats %u", entries);
      if (c->legacy)
        FZ_CHECK(strcmp(ns.name, fw->name) == 0, "legacy entry named '%s'", ns.name);
      else
        FZ_CHECK(strcmp(ns.name, fw->stage_names[sg]) == 0, "aux entry %u named '%s', want '%s'",
                 entries, ns.name, fw->stage_names[sg]);
      FZ_CHECK(ns.executed_count == m->stage_visits[w][sg],
               "run %u: work %u stage %u executed %" PRIu64 ", model %" PRIu64, run, w, sg,
               ns.executed_count, m->stage_visits[w][sg]);
      FZ_CHECK((ns.executed_count == 0) == (ns.dispatch_count == 0) &&
                   ns.dispatch_count <= ns.executed_count,
               "run %u: work %u stage %u: %" PRIu64 " dispatches for %" PRIu64 " items", run, w,
               sg, ns.dispatch_count, ns.executed_count);
      FZ_CHECK(ns.peak_queued_count <= fw->C, "run %u: stage peak %" PRIu64 " > C", run,
               ns.peak_queued_count);
      ws_pool_counters pc;
      FZ_CHECK(ws_pool_stage_counters(fw->pool, sg, &pc) == WS_OK, "pool counters");
      FZ_CHECK(pc.dispatches == ns.dispatch_count && pc.executed == ns.executed_count,
               "run %u: work %u stage %u: pool counted %" PRIu64 "/%" PRIu64
               ", scheduler %" PRIu64 "/%" PRIu64,
               run, w, sg, pc.dispatches, pc.executed, ns.dispatch_count, ns.executed_count);
      aux_dispatches += ns.dispatch_count;
    }
  }
  FZ_CHECK(ws_scheduler_aux_stats_count(s) == entries, "aux stats count %u, want %u",
           ws_scheduler_aux_stats_count(s), entries);
  FZ_CHECK(d.aux_dispatch_count == aux_dispatches && d.forced_drain_count <= aux_dispatches,
           "run %u: aux dispatches %" PRIu64 " (entries say %" PRIu64 "), forced %" PRIu64, run,
           d.aux_dispatch_count, aux_dispatches, d.forced_drain_count);
  if (!ctx->works)
    FZ_CHECK(d.aux_dispatch_count == 0 && d.blocked_count == 0, "aux counters without works");

  /* the reference loop's exact figures (fz_loop.c), where it follows the
   * library's order (not partial admission) */
  const fz_prediction *pr = &ctx->pred;
  if (!pr->exact)
    return;
  g_sum.exact += 1;
  FZ_CHECK(d.iteration_count == pr->iterations,
           "run %u: %" PRIu64 " iterations, the reference loop needs %" PRIu64, run,
           d.iteration_count, pr->iterations);
  for (uint32_t k = 0; k <= FZ_MAX_K; ++k) {
    ws_scheduler_node_stats(s, k, &ns);
    FZ_CHECK(ns.dispatch_count == pr->node[k][0] && ns.executed_count == pr->node[k][1] &&
                 ns.peak_queued_count == pr->node[k][2],
             "run %u: node %u dispatches/executed/peak %" PRIu64 "/%" PRIu64 "/%" PRIu64
             ", reference loop %" PRIu64 "/%" PRIu64 "/%" PRIu64,
             run, k, ns.dispatch_count, ns.executed_count, ns.peak_queued_count, pr->node[k][0],
             pr->node[k][1], pr->node[k][2]);
  }
  FZ_CHECK(d.scanned_slot_count == pr->scanned,
           "run %u: %" PRIu64 " slots scanned, the reference loop %" PRIu64, run,
           d.scanned_slot_count, pr->scanned);
  FZ_CHECK(d.max_active_count == pr->max_active && d.aux_dispatch_count == pr->aux_dispatches &&
               d.forced_drain_count == pr->forced && d.blocked_count == pr->blocked,
           "run %u: max active %" PRIu64 ", aux dispatches %" PRIu64 ", forced %" PRIu64
           ", blocked %" PRIu64 "; reference loop %" PRIu64 ", %" PRIu64 ", %" PRIu64 ", %" PRIu64,
           run, d.max_active_count, d.aux_dispatch_count, d.forced_drain_count, d.blocked_count,
           pr->max_active, pr->aux_dispatches, pr->forced, pr->blocked);
  entries = 0;
  for (uint32_t w = 0; w < ctx->works; ++w)
    for (uint32_t sg = 0; sg < ctx->work[w].S; ++sg, ++entries) {
      ws_scheduler_aux_stats(s, entries, &ns);
      FZ_CHECK(ns.dispatch_count == pr->aux[w][sg][0] && ns.executed_count == pr->aux[w][sg][1] &&
                   ns.peak_queued_count == pr->aux[w][sg][2],
               "run %u: work %u stage %u dispatches/executed/peak %" PRIu64 "/%" PRIu64
               "/%" PRIu64 ", reference loop %" PRIu64 "/%" PRIu64 "/%" PRIu64,
               run, w, sg, ns.dispatch_count, ns.executed_count, ns.peak_queued_count,
               pr->aux[w][sg][0], pr->aux[w][sg][1], pr->aux[w][sg][2]);
    }
}

/* A dispatch the reference loop predicts to fail: the same status, the
 * same iteration in the message, the same iteration count. */
static void check_failure(const fz_ctx *ctx, ws_scheduler *s, ws_status st, uint64_t limit) {
  const fz_case *c = ctx->c;
  const fz_prediction *pr = &ctx->pred;
  const char *msg = ws_scheduler_last_error(s);
  FZ_CHECK(st == pr->status, "dispatch returned %s, the reference loop predicts %s: %s",
           ws_status_name(st), ws_status_name(pr->status), msg);
  ws_dispatch_stats d;
  ws_scheduler_dispatch_stats(s, &d);
  FZ_CHECK(d.iteration_count == pr->iterations,
           "%s after %" PRIu64 " iterations, the reference loop after %" PRIu64 ": %s",
           ws_status_name(st), d.iteration_count, pr->iterations, msg);
  char want[160];
  if (st == WS_EITERATION_LIMIT && c->mega)
    snprintf(want, sizeof want, "iteration limit %" PRIu64 " reached: %u of %u items", limit,
             pr->mega_stopped, c->N);
  else if (st == WS_EITERATION_LIMIT)
    snprintf(want, sizeof want, "iteration limit %" PRIu64 " reached", limit);
  else
    snprintf(want, sizeof want, "iteration %" PRIu64 ": ", pr->pass);
  FZ_CHECK(strstr(msg, want) != NULL, "%s: the message lacks '%s': %s", ws_status_name(st), want,
           msg);
  if (c->mb == FZ_MB_FAIL && st == WS_EPROTO_CLIENT) {
    static const char *const calls[] = {"reset()", "enqueue_count_readback()", "host_count()",
                                        "stage_host_count()", "admission_stage()",
                                        "dispatch_stage()", "prepare_for_producer()"};
    FZ_CHECK(strstr(msg, calls[pr->fail_call]) && strstr(msg, "WS_EBACKEND"),
             "the message does not name %s and its status: %s", calls[pr->fail_call], msg);
  }
  g_sum.predicted_errors += 1;
  if (g_verbose > 0)
    fprintf(stderr, "  predicted and seen: %s after %" PRIu64 " iterations: %s\n",
            ws_status_name(st), d.iteration_count, msg);
}

static ws_scheduler_config make_config(const fz_case *c) {
  ws_scheduler_config cfg = ws_scheduler_config_default();
  cfg.kind = c->mega ? WS_SCHEDULER_MEGAKERNEL : WS_SCHEDULER_WAVEFRONT;
  cfg.resident_frames = c->R;
  cfg.layout = c->layout;
  cfg.largest_first = c->greedy;
  cfg.accounting = (ws_accounting)c->accounting;
  cfg.compaction = c->compaction;
  cfg.refill_threshold = c->threshold;
  cfg.block_size = c->block;
  cfg.verify_queues = c->verify;
  cfg.aux_protocol = c->legacy ? WS_AUX_SINGLE_STAGE : WS_AUX_MULTI_STAGE;
  cfg.partial_admission = c->partial;
  return cfg;
}

static ws_status dispatch_once(fz_ctx *ctx, ws_scheduler *s, const fz_bufs *b) {
  for (uint32_t w = 0; w < ctx->works; ++w)
    memset(ctx->work[w].calls, 0, sizeof ctx->work[w].calls);
  ws_status st = zero_outputs(ctx, b);
  if (st != WS_OK)
    return st;
  return ws_scheduler_dispatch(s, ctx->c->N, &ctx->args, sizeof ctx->args);
}

static void run_case(const fz_case *c) {
  static fz_ctx ctx_storage;
  fz_ctx *ctx = &ctx_storage;
  memset(ctx, 0, sizeof *ctx);
  ctx->c = c;
  const unsigned long live0 = ws_testing_live_allocations();
  const char *align[FZ_MAX_K];
  uint32_t align_count = 0;
  for (uint32_t k = 0; k < c->K; ++k)
    if (c->align_mask >> k & 1u)
      align[align_count++] = fz_names[k];

  ctx->works = c->works;
  model(c, c->works, &g_ref);

  if (c->fault_kind == 1) {
    ws_testing_fail_alloc_after(c->fault_n);
    ctx->fault_armed = true;
  } else if (c->fault_kind == 2) {
    FZ_CHECK(ws_testing_fail_backend_after(g_dev, c->fault_n) == WS_OK, "arming backend fault");
    ctx->fault_armed = true;
  }

  fz_bufs b;
  memset(&b, 0, sizeof b);
  ws_scheduler *s = NULL;
  bool ready = false;
  uint32_t registered = 0;
  const size_t n = c->N ? c->N : 1u;
  ws_status st = WS_OK;
  if (!step_ok(ctx, ws_buffer_create(g_dev, n * FZ_MAX_K * 4, &b.visits), WS_OK, "buffer", NULL) ||
      !step_ok(ctx, ws_buffer_create(g_dev, n * 4, &b.result), WS_OK, "buffer", NULL) ||
      !step_ok(ctx, ws_buffer_create(g_dev, n * 4, &b.done), WS_OK, "buffer", NULL) ||
      !step_ok(ctx, ws_buffer_create(g_dev, FZ_ERR_COUNT * 4, &b.errors), WS_OK, "buffer", NULL))
    goto cleanup;
  for (uint32_t w = 0; w < FZ_MAX_WORKS; ++w)
    if (!step_ok(ctx, ws_buffer_create(g_dev, n * 4, &b.released[w]), WS_OK, "buffer", NULL) ||
        !step_ok(ctx, ws_buffer_create(g_dev, n * FZ_MAX_STAGES * 4, &b.aux_visits[w]), WS_OK,
                 "buffer", NULL))
      goto cleanup;

  fz_args *a = &ctx->args;
  a->visits = ws_buffer_address(b.visits);
  a->result = ws_buffer_address(b.result);
  a->done = ws_buffer_address(b.done);
  a->errors = ws_buffer_address(b.errors);
  for (uint32_t w = 0; w < FZ_MAX_WORKS; ++w) {
    a->released[w] = ws_buffer_address(b.released[w]);
    a->aux_visits[w] = ws_buffer_address(b.aux_visits[w]);
  }
  a->seed = c->seed;
  a->K = c->K;
  a->maxlen = c->maxlen;
  memcpy(a->entry_next, c->entry_next, sizeof a->entry_next);
  memcpy(a->next, c->next, sizeof a->next);
  a->work_count = (uint8_t)c->works;

  /* the pools (capacity owners) */
  for (uint32_t w = 0; w < c->works; ++w) {
    fz_work *fw = &ctx->work[w];
    const fz_work_cfg *wc = &c->w[w];
    fw->ctx = ctx;
    fw->index = w;
    fw->C = wc->C;
    fw->S = wc->S;
    fw->drain = wc->drain;
    snprintf(fw->name, sizeof fw->name, "w%u", w);
    for (uint32_t sg = 0; sg < wc->S; ++sg) {
      snprintf(fw->stage_names[sg], sizeof fw->stage_names[sg], "w%u.s%u", w, sg);
      fw->stage_ptrs[sg] = fw->stage_names[sg];
    }
    uint32_t np = 0;
    for (uint32_t k = 0; k < c->K; ++k) {
      if (wc->bound[k]) {
        fw->producers[np].continuation = fz_names[k];
        fw->producers[np].bound = wc->bound[k];
        ++np;
      }
      a->bound[w][k] = wc->bound[k];
      a->pub_stage[w][k] = wc->pub_stage[k];
    }
    a->amax[w] = (uint8_t)wc->amax;
    ws_pool_config pc;
    memset(&pc, 0, sizeof pc);
    pc.name = fw->name;
    pc.capacity = wc->C;
    pc.stage_count = wc->S;
    pc.stage_names = fw->stage_ptrs;
    pc.payload_stride = sizeof(fz_item);
    pc.producers = fw->producers;
    pc.producer_count = np;
    pc.run_stage = run_stage;
    pc.user = fw;
    if (!step_ok(ctx, ws_pool_create(g_dev, &pc, &fw->pool), WS_OK, "ws_pool_create", NULL) ||
        !step_ok(ctx,
                 ws_pool_set_allocation(fw->pool, wc->append ? WS_POOL_APPEND : WS_POOL_STACK),
                 WS_OK, "ws_pool_set_allocation", NULL))
      goto cleanup;
    a->pool[w] = ws_pool_get_view(fw->pool);
    fw->inner = ws_pool_work(fw->pool);
    fw->outer = *fw->inner;
    fw->outer.user = fw;
    fw->outer.reset = w_reset;
    fw->outer.enqueue_count_readback = w_enqueue;
    fw->outer.host_count = w_host_count;
    fw->outer.stage_count = w_stage_count;
    fw->outer.stage_name = w_stage_name;
    fw->outer.stage_host_count = w_stage_host_count;
    fw->outer.admission_stage = fw->drain ? w_admission_stage : NULL;
    fw->outer.prepare_for_producer = w_prepare;
    fw->outer.prepare_for_admission = fw->inner->prepare_for_admission ? w_prepare_admission : NULL;
    fw->outer.available_slots = fw->inner->available_slots ? w_available : NULL;
    fw->outer.dispatch_stage = w_dispatch_stage;
    fw->outer.dispatch = NULL;
  }

  static const ws_coroutine_desc co = {"fz_main",        &fz_kernels_modules, &fz_frame_ws_desc,
                                       sizeof(fz_args), FZ_MAX_K,             fz_names};
  ws_scheduler_config cfg = make_config(c);
  cfg.refill_align = align_count ? align : NULL;
  cfg.refill_align_count = align_count;
  /* The iteration limit (fz_case.h). The backstop is a hang detector and
   * the progress bound: never reached by a correct loop. The exact and short
   * ones come from the reference loop: the passes a wavefront dispatch needs
   * (the one that finds it done included), or for the megakernel the most
   * runs of one item (its entry included). */
  fz_predict(c, 0, false, &ctx->pred);
  const uint64_t need = c->mega ? ctx->pred.mega_runs : ctx->pred.iterations;
  uint64_t limit = c->N + g_ref.total_runs + g_ref.total_aux + 2;
  if (need && c->limit_mode == FZ_LIMIT_EXACT)
    limit = need;
  else if (need && c->limit_mode == FZ_LIMIT_SHORT)
    limit = need > 2u + c->limit_short ? need - 1u - c->limit_short : 1u;
  else if (c->limit_mode == FZ_LIMIT_DEFAULT)
    limit = 0;
  cfg.iteration_limit = limit;
  const uint64_t resolved = limit ? limit : WS_ITERATION_LIMIT_DEFAULT;
  if (!step_ok(ctx, ws_scheduler_create(g_dev, &co, &cfg, &s), predict_create(c),
               "ws_scheduler_create", NULL))
    goto cleanup;
  for (uint32_t w = 0; w < c->works; ++w) {
    ws_status want = predict_register(c, w);
    if (!step_ok(ctx, ws_scheduler_add_aux(s, &ctx->work[w].outer), want, "ws_scheduler_add_aux",
                 s))
      goto cleanup;
    ++registered;
  }
  ready = true;
  for (uint32_t run = 0; run < (c->reuse ? 2u : 1u); ++run) {
    /* the first dispatch misbehaves (if the case says so); after a
     * predicted error the same scheduler must run cleanly */
    for (int attempt = 0; attempt < 2; ++attempt) {
      ctx->mis = run == 0 && attempt == 0 && c->mb != FZ_MB_NONE;
      fz_predict(c, resolved, ctx->mis, &ctx->pred);
      st = dispatch_once(ctx, s, &b);
      if (ctx->fault_armed || ctx->pred.status == WS_OK) {
        if (!step_ok(ctx, st, WS_OK, "ws_scheduler_dispatch", s))
          goto cleanup;
        compare(ctx, &b, s, run);
        break;
      }
      check_failure(ctx, s, st, resolved);
      if (!ctx->mis)
        break; /* a limit fails every dispatch alike */
    }
    ctx->mis = false;
  }

cleanup:
  if (ctx->fault_armed) {
    ws_testing_fail_alloc_after(0);
    ws_testing_fail_backend_after(g_dev, 0);
    ctx->fault_armed = false;
    /* recovery: after a failed dispatch the same scheduler runs cleanly */
    if (ready && registered == c->works && b.errors) {
      g_sum.retried += 1;
      fz_predict(c, resolved, false, &ctx->pred);
      st = dispatch_once(ctx, s, &b);
      FZ_CHECK(st == WS_OK, "retry after an injected fault: %s: %s", ws_status_name(st),
               ws_scheduler_last_error(s));
      compare(ctx, &b, s, 9);
    }
  }
  ws_scheduler_destroy(s);
  for (uint32_t w = 0; w < c->works; ++w)
    ws_pool_destroy(ctx->work[w].pool);
  free_bufs(&b);
  FZ_CHECK(ws_testing_live_allocations() == live0, "%lu host allocation(s) leaked",
           ws_testing_live_allocations() - live0);
}

int fz_init(void) {
  if (g_dev)
    return 0;
  ws_device_config dc;
  memset(&dc, 0, sizeof dc);
  dc.backend = WS_BACKEND_CPU;
  dc.device_index = -1;
  if (ws_device_create(&dc, &g_dev) != WS_OK)
    return 1;
  if (ws_kernel_find(g_dev, &fz_kernels_modules, "fz_stage", &g_stage_kernel) != WS_OK)
    return 1;
  /* the backend fault wrapper stays installed (disarmed) for the whole run */
  if (ws_testing_fail_backend_after(g_dev, 0) != WS_OK)
    return 1;
  return 0;
}

void fz_shutdown(void) {
  ws_device_destroy(g_dev);
  g_dev = NULL;
}

int fz_run_input(const uint8_t *data, size_t size) {
  if (!g_dev && fz_init() != 0) {
    fprintf(stderr, "fuzz: cannot open the CPU device\n");
    abort();
  }
  if (g_verbose < 0) {
    const char *v = getenv("WS_FUZZ_VERBOSE");
    g_verbose = v && v[0] && strcmp(v, "0") != 0;
  }
  fz_case c;
  decode(data, size, &c);
  if (g_verbose)
    describe(&c, stderr);
  g_case = &c;
  g_sum.cases += 1;
  run_case(&c);
  g_case = NULL;
  return 0;
}

void fz_summary(FILE *out) {
  fprintf(out,
          "fuzz summary: %lu cases; %lu dispatches compared with the model (%lu with auxiliary "
          "work, %lu with two works, %lu with forced drains, %lu with blocked producers, %lu "
          "partial admission, %lu legacy protocol, %lu megakernel, %lu all-queues; %lu with "
          "the reference loop's exact statistics); %lu predicted rejections; %lu dispatch "
          "errors predicted with their iteration (misbehaving clients, limits); %lu injected "
          "faults reported, %lu clean retries\n",
          g_sum.cases, g_sum.compared, g_sum.with_aux, g_sum.two_works, g_sum.forced,
          g_sum.blocked, g_sum.partial, g_sum.legacy, g_sum.mega, g_sum.allq, g_sum.exact,
          g_sum.rejected, g_sum.predicted_errors, g_sum.faulted, g_sum.retried);
}
