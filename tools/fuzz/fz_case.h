/* SPDX-License-Identifier: MIT */
/* One fuzz case as fz_harness.c decodes it from the input bytes, and what
 * the reference loop (fz_loop.c) predicts for one dispatch of it. */
#ifndef WS_FUZZ_FZ_CASE_H
#define WS_FUZZ_FZ_CASE_H

#include <stdbool.h>
#include <stdint.h>

#include "fz.h"
#include "wavesched/wavesched.h"

#define FZ_MAX_N 300u
#define FZ_MAX_R 64u

typedef struct fz_work_cfg {
  uint32_t S, C, amax, drain;
  uint32_t append; /* the pool allocates by append (issue 18): available slots
                      C - extent < C - L while releases leave holes */
  uint8_t bound[FZ_MAX_K], pub_stage[FZ_MAX_K];
  uint8_t anext[FZ_MAX_STAGES][2];
} fz_work_cfg;

/* Misbehaviours of the raw client the harness puts in front of each pool
 * (one per case, in work `mb_work`, from pass or call `mb_at` on). */
enum fz_mb {
  FZ_MB_NONE = 0,
  FZ_MB_RISE = 1,      /* a live count above what the last action allows: a stage
                          that cloned (in its own or another work), a producer over
                          its bound, a rise after a refill or a non-producer */
  FZ_MB_OVER_CAP = 2,  /* host_count() above the capacity */
  FZ_MB_STAGE_SUM = 3, /* one stage count too high: the stages do not sum to L */
  FZ_MB_STAGE_COUNT = 4, /* stage_count() changes while registered */
  FZ_MB_BAD_DRAIN = 5, /* admission_stage() names an empty or out-of-range stage */
  FZ_MB_FAIL = 6,      /* the mb_at-th call of callback mb_call fails */
  FZ_MB_KINDS = 7
};

/* The callbacks of a work, in the order the harness counts them. */
enum fz_cb {
  FZ_CB_RESET = 0,
  FZ_CB_ENQUEUE = 1,
  FZ_CB_HOST_COUNT = 2,
  FZ_CB_STAGE_HOST_COUNT = 3,
  FZ_CB_ADMISSION = 4,
  FZ_CB_DISPATCH_STAGE = 5,
  FZ_CB_PREPARE = 6,
  FZ_CB_COUNT = 7
};

/* Iteration limit modes. */
enum fz_limit {
  FZ_LIMIT_BACKSTOP = 0, /* a limit no correct loop reaches (a hang detector) */
  FZ_LIMIT_EXACT = 1,    /* exactly the passes the dispatch needs: must succeed */
  FZ_LIMIT_SHORT = 2,    /* fewer: WS_EITERATION_LIMIT at exactly the limit */
  FZ_LIMIT_DEFAULT = 3,  /* 0: the library's default */
  FZ_LIMIT_MODES = 4
};

typedef struct fz_case {
  uint32_t N, R, K, maxlen, seed;
  uint32_t layout, accounting; /* 0 materialized, 1 incremental, 2 fused */
  bool compaction, greedy, partial, verify, mega, reuse, legacy, raw;
  uint32_t threshold_mode, threshold, align_mask, block;
  uint32_t fault_kind, fault_n;
  uint8_t entry_next[2], next[FZ_MAX_K][2];
  uint32_t works;
  fz_work_cfg w[FZ_MAX_WORKS];
  /* iteration limit and misbehaviour (the first dispatch only) */
  uint32_t limit_mode, limit_short; /* SHORT: the limit is needed - 1 - limit_short */
  uint32_t mb, mb_work, mb_at, mb_amount, mb_call;
} fz_case;

/* The lie the client tells (computed by the reference loop, so that it is
 * the smallest one the library must catch at that boundary). */
typedef struct fz_lie {
  bool armed;
  uint32_t kind; /* fz_mb */
  uint64_t pass; /* the boundary (pass index) it is told at */
  uint32_t work;
  uint32_t live;                /* RISE, OVER_CAP: host_count() */
  uint32_t q[FZ_MAX_STAGES];    /* RISE, OVER_CAP, STAGE_SUM: stage counts */
  uint32_t stage_count;         /* STAGE_COUNT */
  uint32_t drain_stage;         /* BAD_DRAIN: admission_stage() */
} fz_lie;

/* What the reference loop predicts for a dispatch. `exact` is false where
 * the loop's order matters and the model does not follow the library's
 * slot order (partial admission: which of a queue's frames run); then only
 * status WS_OK is predicted and the statistics are not. */
typedef struct fz_prediction {
  bool exact;
  ws_status status;
  uint64_t pass;       /* the error's "iteration N" (status != WS_OK) */
  uint64_t iterations; /* the iteration_count statistic */
  uint64_t node[FZ_MAX_K + 1][3];                /* dispatch, executed, peak */
  uint64_t aux[FZ_MAX_WORKS][FZ_MAX_STAGES][3];  /* dispatch, executed, peak */
  uint64_t max_active, aux_dispatches, forced, blocked, generated, resumed;
  uint64_t scanned; /* the scanned_slot_count statistic */
  uint32_t mega_runs;    /* megakernel: most runs of one item (entry included) */
  uint32_t mega_stopped; /* megakernel: items the limit stops */
  fz_lie lie;
  uint32_t fail_work, fail_call, fail_at; /* FZ_MB_FAIL: the call that fails */
} fz_prediction;

/* Predicts one dispatch of case c with iteration limit `limit` (as the
 * library resolves it: 0 = none) and, when `misbehave`, the case's
 * misbehaviour. */
void fz_predict(const fz_case *c, uint64_t limit, bool misbehave, fz_prediction *p);

#endif
