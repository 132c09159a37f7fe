/* SPDX-License-Identifier: MIT */
/* wavesched — the loop's decisions (SPEC §2.2 and §3.4), one source.
 *
 * Every choice the dispatch loop makes is a function of one flat record, the
 * loop state (ws_dstate), and of what was observed at the iteration boundary.
 * The same functions run in the host loop (loop.c: the state in host memory,
 * observations from readbacks and client callbacks), in the CPU reference of
 * the device loop, and inside the CUDA device loop's decide kernel (the state
 * in device memory); the Vulkan decide shader is a line-by-line GLSL twin
 * (src/backend/vulkan/shaders/decide.glsl). So the loops cannot drift apart:
 * the same observations give the same plan, the same statistics and the same
 * error record.
 *
 * One iteration is four phases, each a no-op once the state left RUNNING:
 *   ws_dec_observe   §2.2 step 1-2 and §3.4 A: checks of what was observed
 *                    (verification, I3, protocol violations), peaks;
 *   ws_dec_select    §2.2 steps 3-4: done, iteration limit, largest queue;
 *                    whether admission will be evaluated (the host loop then
 *                    asks clients that declare availability, issue 18; the
 *                    device loops prepare append storage themselves,
 *                    ws_dec_prepare_storage);
 *   ws_dec_admit     §3.4 B-D and §2.2 steps 5-7: the plan (a stage, a
 *                    refill, a resume, or the tail) — the host loop may then replace a
 *                    forced drain's stage by the client's admission_stage()
 *                    and validate it with ws_dec_check_drain;
 *   ws_dec_commit    statistics of the plan, allowances for the next
 *                    boundary's protocol checks, the plan's parameters.
 * Errors never return early from the caller's point of view: a phase writes
 * the error record (ws_dec_err) and the state becomes ERROR; the host formats
 * the message from the record (loop_error.c), whichever loop found it.
 *
 * Memory: arrays are device addresses (uint64_t) — host pointers when the
 * state lives in host memory. Only scalar types: the byte layout is shared
 * with GLSL (static asserts below).
 */
#ifndef WAVESCHED_CORE_DECIDE_H
#define WAVESCHED_CORE_DECIDE_H

#include <stddef.h>
#include <stdint.h>

#include "wavesched/launch.h"

#if defined(__CUDACC__) || defined(__HIPCC__)
#define WS_DEC static inline __host__ __device__
#else
#define WS_DEC static inline
#endif
#define WS_DEC_PTR(type, addr) ((type *)(uintptr_t)(addr))

/* ws_dstate.flags: the configuration as the decisions need it */
#define WS_DEC_GREEDY 1u       /* largest_first; else the all-queues policy */
#define WS_DEC_COMPACTION 2u   /* live frames kept in a dense prefix */
#define WS_DEC_PARTIAL 4u      /* partial admission */
#define WS_DEC_MATERIALIZED 8u /* counts and sorted slot lists recomputed each boundary */
#define WS_DEC_PUBLISH 16u     /* incremental, not fused: publish after each launch */
#define WS_DEC_VERIFY 32u      /* verification mode (SPEC §5) */
#define WS_DEC_ALIGN 64u       /* a refill alignment list is configured */
#define WS_DEC_SCAN 128u       /* a resumed queue's launch selects its frames itself
                                  (WS_LAUNCH_SCAN): fused accounting, whole queues */
#define WS_DEC_TAIL 256u       /* tail_frames != 0: device loops record the tail */
/* Bits 24..31: under WS_DEC_SCAN, the least share of the scanned range, in
 * percent (0 = any), that a resumed queue must hold to be scanned; a
 * sparser queue is gathered, so device loops with a share record a resume's
 * gather (WS_SCAN_SHARE, docs/loop.md). A scanned launch runs each
 * workgroup's own slots: a sparse queue leaves most of a workgroup's lanes,
 * and so most of the occupancy its registers claim, idle. */
#define WS_DEC_SCAN_SHARE_SHIFT 24u
#define WS_DEC_SCAN_SHARE(flags) ((flags) >> WS_DEC_SCAN_SHARE_SHIFT)
/* Every whole-queue resume scans (scan mode without a share): the device
 * loops record no gather for a resume then. */
#define WS_DEC_SCAN_ONLY(flags) (((flags) & WS_DEC_SCAN) && WS_DEC_SCAN_SHARE(flags) == 0)

enum ws_dec_status { WS_DEC_RUNNING = 0, WS_DEC_DONE = 1, WS_DEC_ERROR = 2 };

enum ws_dec_action {
  WS_ACT_NONE = 0,       /* done or error: nothing runs */
  WS_ACT_REFILL = 1,     /* optional compaction, entry over new items, publish */
  WS_ACT_RESUME = 2,     /* one continuation over the selected queue */
  WS_ACT_RESUME_ALL = 3, /* all-queues policy: every non-empty queue, ascending */
  WS_ACT_STAGE = 4,      /* one auxiliary stage */
  WS_ACT_TAIL = 5        /* every live frame to its end (tail_frames), no queue after it */
};

/* What ran since the last boundary, per work: the only suspect when the
 * work's live count exceeds its allowance (SPEC §4). */
enum ws_dec_last { WS_LAST_NONE = 0, WS_LAST_STAGE = 1, WS_LAST_PRODUCER = 2, WS_LAST_OTHER = 3 };

/* Message templates of the error record (loop_error.c formats them). */
enum ws_dec_err_kind {
  WS_DERR_NONE = 0,
  WS_DERR_BAD_TRANSITION = 1, /* a = frames that returned an index outside 1..K */
  WS_DERR_VERIFY_COUNT = 2,   /* queue; a = maintained count, b = tokens' count */
  WS_DERR_VERIFY_GATHER = 3,  /* a = slots the last gather returned, b = expected */
  WS_DERR_LIVE = 4,           /* a = Σ counts, b = active slots A */
  WS_DERR_OVER_CAPACITY = 5,  /* work; a = live, b = capacity */
  WS_DERR_CLONED = 6,         /* work; stage (of work2); a = allowance, b = live */
  WS_DERR_BOUND = 7,          /* work; a = live, b = allowance (its producer ran) */
  WS_DERR_BOUND_OTHER = 8,    /* work; a = live, b = allowance (no producer of it ran) */
  WS_DERR_STAGE_SUM = 9,      /* work; a = Σ stage counts, b = live */
  WS_DERR_EMPTY_BLOCKS = 10,  /* work, queue; a = n, b = bound, c = capacity */
  WS_DERR_DRAIN_STAGE = 11,   /* work, stage; a = stage count, b = the stage's count */
  WS_DERR_LIMIT = 12,         /* a = limit, b = admitted, c = live, d = auxiliary live */
  WS_DERR_STALL = 13,         /* b = admitted, c = live, d = auxiliary live */
  WS_DERR_CLIENT = 14,        /* work; a = errors the client's device words report */
  WS_DERR_AVAIL = 15,         /* work; a = available slots, b = C - L */
  WS_DERR_AVAIL_EMPTY = 16,   /* work; a = available slots, b = C (L == 0) */
  WS_DERR_SCAN = 17,          /* queue; a = frames its count promised, b = frames the launch found */
  WS_DERR_TAIL_LIMIT = 18,    /* a = items stopped, b = the per-item limit, c = items in the tail */
  WS_DERR_EXTENT = 19         /* work; a = append extent, b = live, c = capacity (extent
                                 outside [L, C]) */
};

/* ws_status values the record carries (status.h; repeated here so that the
 * decide kernel needs no host header). */
#define WS_DEC_S_EPROTO_OVER_CAPACITY (-60)
#define WS_DEC_S_EPROTO_STAGE_SUM (-61)
#define WS_DEC_S_EPROTO_DRAIN_STAGE (-63)
#define WS_DEC_S_EPROTO_CLONED (-64)
#define WS_DEC_S_EPROTO_BOUND (-65)
#define WS_DEC_S_EPROTO_CLIENT (-66)
#define WS_DEC_S_EPROTO_INTERNAL (-67)
#define WS_DEC_S_EITERATION_LIMIT (-68)
#define WS_DEC_S_EVERIFY (-69)
#define WS_DEC_S_ESTALL (-70)
#define WS_DEC_S_EPROTO_AVAILABILITY (-71)

#define WS_DEC_NONE 0xffffffffu

/* The error record: enough to name the object, the iteration and the
 * numbers that disagree. */
typedef struct ws_dec_err {
  uint64_t iteration;
  uint64_t a, b, c, d;
  int32_t status; /* a ws_status */
  uint32_t kind;  /* ws_dec_err_kind */
  uint32_t work, work2, stage, queue;
} ws_dec_err; /* 64 bytes */

/* What the iteration does. Written by ws_dec_admit / ws_dec_commit. */
typedef struct ws_dec_plan {
  uint32_t action;       /* ws_dec_action */
  uint32_t queue;        /* RESUME: continuation j; REFILL: 0 */
  uint32_t count;        /* frames launched: admitted m (resume), generated g (refill) */
  uint32_t first_id;     /* REFILL: logical id of the first new item */
  uint32_t slot_base;    /* launch over slots slot_base.. when use_slots == 0 */
  uint32_t use_slots;    /* 1: the launch reads the slot list at slot_offset */
  uint32_t slot_offset;  /* MATERIALIZED: the queue's start in the sorted list */
  uint32_t gather;       /* 1: gather token gather_token over [0, gather_scan) first */
  uint32_t gather_token;
  uint32_t gather_scan;
  uint32_t compact;      /* REFILL: move [compact_live, compact_scan) into holes first */
  uint32_t compact_live;
  uint32_t compact_scan;
  uint32_t work, stage;  /* STAGE */
  uint32_t forced;       /* STAGE: forced by a blocked producer */
} ws_dec_plan; /* 64 bytes */

/* One auxiliary work as the decisions see it. */
typedef struct ws_dec_work {
  uint64_t bound;     /* uint32_t[K + 1]: producer bound per continuation, 0 = none */
  uint64_t q;         /* uint32_t[S]: stage counts observed at this boundary */
  uint64_t allowance; /* upper bound on the next observed live count */
  /* device loop: where the device-side observation reads (ws_aux_device) */
  uint64_t src_live;   /* uint32_t word: L, or C - (int32) word when live_is_free */
  uint64_t src_stages; /* uint32_t[S]: stage counts */
  uint64_t src_error;  /* uint32_t word: client-detected errors, 0 = none kept */
  uint32_t capacity;
  uint32_t stage_count;
  uint32_t first_stat; /* its stage 0's index in the auxiliary statistics */
  uint32_t live;       /* L observed at this boundary */
  uint32_t last;       /* ws_dec_last */
  uint32_t last_stage;
  uint32_t live_is_free;
  /* A failure found while observing the work (a ws_status, 0 = none): the
   * device loop's error word (client_err = its value), or on the host a
   * client call that failed or a stage count that changed. obs_late: found
   * after the live count was known (stage_count, stage_host_count), so the
   * capacity and allowance checks come first, as SPEC §3.4 A orders them. */
  int32_t obs_status;
  uint32_t obs_late;
  uint32_t client_err;
  uint32_t last_work; /* WS_LAST_STAGE: the work whose stage ran (SPEC §4: any
                         rise after a stage dispatch is a clone, in any work) */
  /* Materializable storage (issue 18): when has_avail, admission of this
   * iteration also needs n*b <= avail, the slots the client can write now. */
  uint32_t avail;
  uint32_t has_avail;
  uint64_t counters; /* device loop: uint64_t[2 S] the client's own stage counters, 0 = none */
  /* device loop, append storage (ws_aux_device.extent; 0 in the host loop,
   * whose client calls do this): the extent word, the client's storage
   * counters (reclaims, compactions, peak extent; 0 = none), and the
   * compaction this iteration's decision asks for, [compact_live,
   * compact_scan) into the holes below compact_live (equal: none) */
  uint64_t src_extent;
  uint64_t storage_counters;
  uint32_t compact_live;
  uint32_t compact_scan;
} ws_dec_work; /* 136 bytes */

/* The loop state of one dispatch. */
typedef struct ws_dstate {
  /* ---- configuration: constant during a dispatch ---- */
  uint64_t iteration_limit; /* 0 = none */
  uint64_t counts;          /* uint32_t[K + 2]: [1..K] queue counts, [K+1] bad transitions */
  uint64_t recount;         /* VERIFY: uint32_t[K + 2] counted from the tokens */
  uint64_t gather_count;    /* VERIFY: uint32_t: slots the last gather returned */
  uint64_t align;           /* ALIGN: uint32_t[K + 1], 1 = in the refill alignment list */
  uint64_t works;           /* ws_dec_work[aux_count] */
  uint64_t node_stats;      /* uint64_t[3 (K + 1)]: dispatch, executed, peak per node */
  uint64_t aux_stats;       /* uint64_t[3 × stats]: the same per auxiliary stage */
  uint32_t N, A, K, aux_count;
  uint32_t refill_threshold; /* resolved: A/2 for 0, else min(value, A) */
  uint32_t flags;            /* WS_DEC_* */
  /* ---- progress ---- */
  uint32_t status;   /* ws_dec_status */
  uint32_t admitted; /* next logical id */
  uint32_t high;     /* scan bound: A without compaction */
  uint32_t live;     /* Σ counts[1..K] at this boundary */
  uint32_t gathered; /* VERIFY: a gather ran since the last boundary */
  uint32_t expect_gather;
  /* ---- this iteration's selection ---- */
  uint32_t sel, n;                          /* largest queue and its count */
  uint32_t best_work, best_stage, best_count; /* largest auxiliary stage */
  uint32_t evaluate;                        /* admission is evaluated this iteration */
  uint32_t admit;                           /* frames of the selected queue that may run */
  /* ---- device loops: iterations per launch (0 = until done), left in this one */
  uint32_t interval, run_left;
  /* ---- scan mode: frames the scan launches should have run in total (the
   * counts' word WS_COUNTS_SCANNED runs the real total), and the last one ---- */
  uint32_t scan_total, scan_queue, scan_count;
  /* ---- the tail: below tail_frames live frames, once every item is
   * admitted and no auxiliary work is registered (0 = never); the per-item
   * limit of the tail that ran ---- */
  uint32_t tail_frames, tail_limit;
  uint64_t aux_live; /* Σ L over works */
  uint64_t pass;     /* index of this pass through the loop (error messages) */
  /* ---- dispatch statistics (SPEC §3.7) ---- */
  uint64_t iterations, generated, resumed, scanned, max_active;
  uint64_t aux_dispatches, forced_drains, blocked;
  uint64_t tail_items; /* items finished in the tail */
  ws_dec_plan plan;
  ws_dec_err err;
} ws_dstate;

#if !defined(__cplusplus)
/* Launches driven by a device loop read the plan through launch.h's view. */
_Static_assert(offsetof(ws_dec_plan, action) == offsetof(ws_launch_plan, action) &&
                   offsetof(ws_dec_plan, queue) == offsetof(ws_launch_plan, src) &&
                   offsetof(ws_dec_plan, count) == offsetof(ws_launch_plan, count) &&
                   offsetof(ws_dec_plan, first_id) == offsetof(ws_launch_plan, first_id) &&
                   offsetof(ws_dec_plan, slot_base) == offsetof(ws_launch_plan, slot_base) &&
                   offsetof(ws_dec_plan, use_slots) == offsetof(ws_launch_plan, use_slots) &&
                   offsetof(ws_dec_plan, slot_offset) == offsetof(ws_launch_plan, slot_offset),
               "ws_dec_plan starts with ws_launch_plan");
_Static_assert(WS_ACT_NONE == WS_PLAN_NONE && WS_ACT_REFILL == WS_PLAN_REFILL &&
                   WS_ACT_RESUME == WS_PLAN_RESUME && WS_ACT_RESUME_ALL == WS_PLAN_RESUME_ALL &&
                   WS_ACT_STAGE == WS_PLAN_STAGE && WS_ACT_TAIL == WS_PLAN_TAIL,
               "launch.h repeats the plan actions");
_Static_assert(sizeof(ws_dec_err) == 64, "decide.glsl: ws_dec_err is 64 bytes");
_Static_assert(sizeof(ws_dec_plan) == 64, "decide.glsl: ws_dec_plan is 64 bytes");
_Static_assert(sizeof(ws_dec_work) == 136, "decide.glsl: ws_dec_work is 136 bytes");
_Static_assert(sizeof(ws_dstate) == 384, "decide.glsl: ws_dstate is 384 bytes");
_Static_assert(offsetof(ws_dstate, plan) % 8 == 0,
               "the persistent loop copies the plan in 8-byte words");

#endif

/* ---------------------------------------------------------------------- */

WS_DEC uint32_t *ws_dec_u32(uint64_t addr) { return WS_DEC_PTR(uint32_t, addr); }
WS_DEC uint64_t *ws_dec_u64(uint64_t addr) { return WS_DEC_PTR(uint64_t, addr); }
WS_DEC ws_dec_work *ws_dec_work_at(const ws_dstate *d, uint32_t i) {
  return WS_DEC_PTR(ws_dec_work, d->works) + i;
}

WS_DEC void ws_dec_fail(ws_dstate *d, int32_t status, uint32_t kind, uint32_t work, uint32_t stage,
                        uint32_t queue, uint64_t a, uint64_t b, uint64_t c, uint64_t e) {
  d->status = WS_DEC_ERROR;
  d->plan.action = WS_ACT_NONE;
  d->err.iteration = d->pass;
  d->err.status = status;
  d->err.kind = kind;
  d->err.work = work;
  d->err.work2 = WS_DEC_NONE;
  d->err.stage = stage;
  d->err.queue = queue;
  d->err.a = a;
  d->err.b = b;
  d->err.c = c;
  d->err.d = e;
}

/* ---- phase 0: checks of the observation, peaks (SPEC §2.2 1-2, §3.4 A) ---- */

/* A work's live count exceeds what the last action allows: one thing ran
 * since the last boundary, so it is the culprit. */
WS_DEC void ws_dec_allowance_fail(ws_dstate *d, const ws_dec_work *w, uint32_t i) {
  if (w->last == WS_LAST_STAGE) {
    ws_dec_fail(d, WS_DEC_S_EPROTO_CLONED, WS_DERR_CLONED, i, w->last_stage, 0, w->allowance,
                w->live, 0, 0);
    d->err.work2 = w->last_work;
  } else if (w->last == WS_LAST_PRODUCER)
    ws_dec_fail(d, WS_DEC_S_EPROTO_BOUND, WS_DERR_BOUND, i, 0, 0, w->live, w->allowance, 0, 0);
  else
    ws_dec_fail(d, WS_DEC_S_EPROTO_BOUND, WS_DERR_BOUND_OTHER, i, 0, 0, w->live, w->allowance, 0,
                0);
}

WS_DEC void ws_dec_observe(ws_dstate *d) {
  if (d->status != WS_DEC_RUNNING)
    return;
  const uint32_t K = d->K;
  const uint32_t *h = ws_dec_u32(d->counts);
  if (h[K + 1] != 0) {
    ws_dec_fail(d, WS_DEC_S_EPROTO_INTERNAL, WS_DERR_BAD_TRANSITION, WS_DEC_NONE, 0, 0, h[K + 1],
                K, 0, 0);
    return;
  }
  if (h[WS_COUNTS_LIMIT(K)] != 0) {
    /* the tail stopped items at the iteration limit's remainder: the
     * wavefront would have reached the limit with them still live */
    ws_dec_fail(d, WS_DEC_S_EITERATION_LIMIT, WS_DERR_TAIL_LIMIT, WS_DEC_NONE, 0, 0,
                h[WS_COUNTS_LIMIT(K)], d->tail_limit, d->tail_items, 0);
    return;
  }
  if ((d->flags & WS_DEC_SCAN) && h[WS_COUNTS_SCANNED(K)] != d->scan_total) {
    /* the last scan-mode launch found other frames than its queue's count
     * promised: a count no longer matches the tokens */
    ws_dec_fail(d, WS_DEC_S_EPROTO_INTERNAL, WS_DERR_SCAN, WS_DEC_NONE, 0, d->scan_queue,
                d->scan_count, h[WS_COUNTS_SCANNED(K)] - (d->scan_total - d->scan_count), 0, 0);
    return;
  }
  if (d->flags & WS_DEC_VERIFY) {
    const uint32_t *rc = ws_dec_u32(d->recount);
    for (uint32_t j = 1; j <= K; ++j) {
      if (rc[j] != h[j]) {
        ws_dec_fail(d, WS_DEC_S_EVERIFY, WS_DERR_VERIFY_COUNT, WS_DEC_NONE, 0, j, h[j], rc[j], 0,
                    0);
        return;
      }
    }
    if (d->gathered && *ws_dec_u32(d->gather_count) != d->expect_gather) {
      ws_dec_fail(d, WS_DEC_S_EVERIFY, WS_DERR_VERIFY_GATHER, WS_DEC_NONE, 0, 0,
                  *ws_dec_u32(d->gather_count), d->expect_gather, 0, 0);
      return;
    }
    d->gathered = 0;
  }
  /* I3: counts can never claim more frames than are active. Checked after
   * verification, which names the damaged queue when it is on. */
  uint64_t live = 0;
  for (uint32_t j = 1; j <= K; ++j)
    live += h[j];
  if (live > d->A) {
    ws_dec_fail(d, WS_DEC_S_EPROTO_INTERNAL, WS_DERR_LIVE, WS_DEC_NONE, 0, 0, live, d->A, 0, 0);
    return;
  }
  d->live = (uint32_t)live;
  if (d->flags & WS_DEC_MATERIALIZED)
    d->scanned += d->high;

  /* SPEC §3.4 A, in registration order */
  d->aux_live = 0;
  d->best_work = WS_DEC_NONE;
  d->best_stage = 0;
  d->best_count = 0;
  uint64_t *as = ws_dec_u64(d->aux_stats);
  for (uint32_t i = 0; i < d->aux_count; ++i) {
    ws_dec_work *w = ws_dec_work_at(d, i);
    if (w->obs_status != 0 && !w->obs_late) {
      ws_dec_fail(d, w->obs_status, WS_DERR_CLIENT, i, 0, 0, w->client_err, 0, 0, 0);
      return;
    }
    if (w->live > w->capacity) {
      ws_dec_fail(d, WS_DEC_S_EPROTO_OVER_CAPACITY, WS_DERR_OVER_CAPACITY, i, 0, 0, w->live,
                  w->capacity, 0, 0);
      return;
    }
    if (w->last != WS_LAST_NONE && w->live > w->allowance) {
      ws_dec_allowance_fail(d, w, i);
      return;
    }
    if (w->obs_status != 0) {
      ws_dec_fail(d, w->obs_status, WS_DERR_CLIENT, i, 0, 0, w->client_err, 0, 0, 0);
      return;
    }
    const uint32_t *q = ws_dec_u32(w->q);
    uint64_t sum = 0;
    for (uint32_t s = 0; s < w->stage_count; ++s)
      sum += q[s];
    if (sum != w->live) {
      ws_dec_fail(d, WS_DEC_S_EPROTO_STAGE_SUM, WS_DERR_STAGE_SUM, i, 0, 0, sum, w->live, 0, 0);
      return;
    }
    for (uint32_t s = 0; s < w->stage_count; ++s) {
      /* strictly greater: earliest work, then lowest stage, wins ties */
      if (q[s] > d->best_count) {
        d->best_count = q[s];
        d->best_work = i;
        d->best_stage = s;
      }
      uint64_t *peak = &as[3u * (w->first_stat + s) + 2u];
      if (q[s] > *peak)
        *peak = q[s];
    }
    d->aux_live += w->live;
  }
  uint64_t *ns = ws_dec_u64(d->node_stats);
  for (uint32_t j = 1; j <= K; ++j)
    if (h[j] > ns[3u * j + 2u])
      ns[3u * j + 2u] = h[j];
  if (d->live > d->max_active)
    d->max_active = d->live;
}

/* ---- phase 1: done, limit, selection (SPEC §2.2 3-4) ---- */

WS_DEC uint32_t ws_dec_refill_wanted(const ws_dstate *d, uint32_t selected) {
  if (d->admitted >= d->N)
    return 0;
  if (!(d->live == 0 || d->live < d->refill_threshold))
    return 0;
  if (!(d->flags & WS_DEC_ALIGN) || d->live == 0)
    return 1;
  return ws_dec_u32(d->align)[selected] != 0;
}

WS_DEC void ws_dec_select(ws_dstate *d) {
  d->evaluate = 0;
  d->plan.action = WS_ACT_NONE;
  if (d->status != WS_DEC_RUNNING)
    return;
  /* SPEC §2.2: every pass is an iteration, the one that finds the dispatch
   * done included; the limit bounds that count, so a dispatch that needs
   * exactly `limit` passes succeeds. */
  if (d->iteration_limit && d->iterations >= d->iteration_limit) {
    ws_dec_fail(d, WS_DEC_S_EITERATION_LIMIT, WS_DERR_LIMIT, WS_DEC_NONE, 0, 0,
                d->iteration_limit, d->admitted, d->live, d->aux_live);
    return;
  }
  d->iterations += 1;
  if (d->admitted == d->N && d->live == 0 && d->aux_live == 0) {
    d->status = WS_DEC_DONE;
    return;
  }
  const uint32_t *h = ws_dec_u32(d->counts);
  uint32_t sel = 0, n = 0;
  if (d->flags & WS_DEC_GREEDY) {
    /* the largest queue; strictly greater wins, so ties go to the lowest index */
    for (uint32_t j = 1; j <= d->K; ++j) {
      if (h[j] > n) {
        n = h[j];
        sel = j;
      }
    }
  }
  d->sel = sel;
  d->n = n;
  d->admit = n;
  /* SPEC §3.4 B: only when the main queue would win the competition */
  d->evaluate = d->aux_count != 0 && n != 0 && d->best_count <= n;
}

/* ---- phase 1b (device loops): append storage before admission (issue 18) ---- */

/* What the host loop's prepare_for_admission / available_slots calls do for
 * an append pool (pool.c), for every work described with append storage
 * that the selected continuation produces into, in registration order:
 * with nothing live the extent goes back to 0; with an extent of at least
 * 32 and at least 2 L the live items are to be compacted into [0, L)
 * (compact_live/compact_scan: the backend's loop moves them after this
 * decision, before the plan's launch) and the extent becomes L. The extent
 * word is written here: only the plan's launches publish, after the move. */
#define WS_DEC_COMPACT_MIN_EXTENT 32u

WS_DEC void ws_dec_prepare_storage(ws_dstate *d) {
  for (uint32_t i = 0; i < d->aux_count; ++i) {
    ws_dec_work *w = ws_dec_work_at(d, i);
    w->compact_live = 0;
    w->compact_scan = 0;
    if (w->src_extent)
      w->has_avail = 0;
  }
  if (d->status != WS_DEC_RUNNING || !d->evaluate)
    return;
  for (uint32_t i = 0; i < d->aux_count; ++i) {
    ws_dec_work *w = ws_dec_work_at(d, i);
    if (!w->src_extent || ws_dec_u32(w->bound)[d->sel] == 0)
      continue;
    uint32_t *word = ws_dec_u32(w->src_extent);
    uint32_t e = *word;
    const uint32_t L = w->live;
    if (e > w->capacity || L > e) {
      ws_dec_fail(d, WS_DEC_S_EPROTO_CLIENT, WS_DERR_EXTENT, i, 0, d->sel, e, L, w->capacity, 0);
      return;
    }
    uint64_t *sc = w->storage_counters ? ws_dec_u64(w->storage_counters) : 0;
    if (L == 0) {
      if (e != 0 && sc)
        sc[0] += 1;
      e = 0;
    } else if (e >= WS_DEC_COMPACT_MIN_EXTENT && e >= 2ull * L) {
      w->compact_live = L;
      w->compact_scan = e;
      if (sc)
        sc[1] += 1;
      e = L;
    }
    *word = e;
    w->avail = w->capacity - e;
    w->has_avail = 1;
  }
}

/* ---- phase 2: admission, drain, competition, refill or resume ---- */

/* The default admission stage: the first non-empty stage. */
WS_DEC uint32_t ws_dec_default_drain(const ws_dec_work *w) {
  const uint32_t *q = ws_dec_u32(w->q);
  for (uint32_t s = 0; s < w->stage_count; ++s)
    if (q[s] != 0)
      return s;
  return w->stage_count; /* out of range: ws_dec_check_drain reports it */
}

/* SPEC §3.4 C: the drain stage must be in range and non-empty. */
WS_DEC void ws_dec_check_drain(ws_dstate *d) {
  if (d->status != WS_DEC_RUNNING || d->plan.action != WS_ACT_STAGE || !d->plan.forced)
    return;
  const ws_dec_work *w = ws_dec_work_at(d, d->plan.work);
  const uint32_t s = d->plan.stage;
  if (s >= w->stage_count || ws_dec_u32(w->q)[s] == 0)
    ws_dec_fail(d, WS_DEC_S_EPROTO_DRAIN_STAGE, WS_DERR_DRAIN_STAGE, d->plan.work, s, 0,
                w->stage_count, s < w->stage_count ? ws_dec_u32(w->q)[s] : 0u, 0, 0);
}

WS_DEC void ws_dec_admit(ws_dstate *d) {
  if (d->status != WS_DEC_RUNNING)
    return;
  ws_dec_plan *p = &d->plan;
  p->action = WS_ACT_NONE;
  p->forced = 0;
  /* The tail: few frames left, nothing to admit, nothing that a continuation
   * could produce into. Not on the iteration that the limit allows last, so
   * the tail always has at least one continuation per item to give. */
  if (d->tail_frames && d->aux_count == 0 && d->admitted == d->N && d->live != 0 &&
      d->live < d->tail_frames && (!d->iteration_limit || d->iterations < d->iteration_limit)) {
    p->action = WS_ACT_TAIL;
    return;
  }
  if (!(d->flags & WS_DEC_GREEDY)) {
    /* all-queues policy (materialized, no auxiliary work) */
    p->action = ws_dec_refill_wanted(d, 0) ? WS_ACT_REFILL : WS_ACT_RESUME_ALL;
    return;
  }
  const uint32_t sel = d->sel, n = d->n;
  uint32_t forced = WS_DEC_NONE;
  if (d->evaluate) {
    for (uint32_t i = 0; i < d->aux_count; ++i) {
      const ws_dec_work *w = ws_dec_work_at(d, i);
      const uint32_t b = ws_dec_u32(w->bound)[sel];
      if (b == 0)
        continue;
      uint64_t room = w->live <= w->capacity ? (uint64_t)(w->capacity - w->live) : 0u;
      if (w->has_avail) {
        /* issue 18: only materializable slots admit; an empty work must be
         * wholly available, or nothing could ever be admitted (progress) */
        if (w->avail > room) {
          ws_dec_fail(d, WS_DEC_S_EPROTO_AVAILABILITY, WS_DERR_AVAIL, i, 0, sel, w->avail, room,
                      0, 0);
          return;
        }
        if (w->live == 0 && w->avail != w->capacity) {
          ws_dec_fail(d, WS_DEC_S_EPROTO_AVAILABILITY, WS_DERR_AVAIL_EMPTY, i, 0, sel, w->avail,
                      w->capacity, 0, 0);
          return;
        }
        room = w->avail;
      }
      uint32_t blocked;
      if (d->flags & WS_DEC_PARTIAL) {
        /* partial admission: min(n, room / b) frames fit */
        const uint64_t fit64 = room / b;
        const uint32_t fit = fit64 < n ? (uint32_t)fit64 : n;
        blocked = fit == 0;
        if (!blocked && fit < d->admit)
          d->admit = fit;
      } else {
        /* the admission rule, in 64-bit: n*b <= C - L (and <= avail) */
        blocked = (uint64_t)n * b > room;
      }
      if (!blocked)
        continue;
      /* Registration guarantees an empty pool admits (R*b <= C, or b <= C
       * with partial admission), so a blocked work holds items. */
      if (w->live == 0) {
        ws_dec_fail(d, WS_DEC_S_EPROTO_INTERNAL, WS_DERR_EMPTY_BLOCKS, i, 0, sel, n, b,
                    w->capacity, 0);
        return;
      }
      /* the most occupied blocked work is forced; ties: earliest */
      if (forced == WS_DEC_NONE || w->live > ws_dec_work_at(d, forced)->live)
        forced = i;
    }
  }
  if (forced != WS_DEC_NONE) {
    /* C. the blocked owner names the stage that releases capacity */
    p->action = WS_ACT_STAGE;
    p->forced = 1;
    p->work = forced;
    p->stage = ws_dec_default_drain(ws_dec_work_at(d, forced));
  } else if (d->best_work != WS_DEC_NONE && d->best_count > n) {
    /* D. a stage beats the main queue only when strictly larger */
    p->action = WS_ACT_STAGE;
    p->work = d->best_work;
    p->stage = d->best_stage;
  }
  if (d->aux_count && (p->forced || d->admit < n))
    d->blocked += 1;
  if (p->action == WS_ACT_STAGE) {
    ws_dec_check_drain(d);
    return;
  }
  if (ws_dec_refill_wanted(d, sel)) {
    p->action = WS_ACT_REFILL;
    return;
  }
  if (n == 0) {
    ws_dec_fail(d, WS_DEC_S_ESTALL, WS_DERR_STALL, WS_DEC_NONE, 0, 0, 0, d->admitted, d->live,
                d->aux_live);
    return;
  }
  p->action = WS_ACT_RESUME;
  p->queue = sel;
  p->count = d->admit;
}

/* ---- phase 3: statistics, allowances, the plan's parameters ---- */

/* Every work's allowance becomes its current live count: what a stage
 * dispatch, a refill or a continuation that produces into no work allows. */
WS_DEC void ws_dec_hold_all(ws_dstate *d) {
  for (uint32_t i = 0; i < d->aux_count; ++i) {
    ws_dec_work *w = ws_dec_work_at(d, i);
    w->allowance = w->live;
    w->last = WS_LAST_OTHER;
  }
}

WS_DEC void ws_dec_commit(ws_dstate *d) {
  if (d->status != WS_DEC_RUNNING)
    return;
  ws_dec_plan *p = &d->plan;
  const uint32_t *h = ws_dec_u32(d->counts);
  uint64_t *ns = ws_dec_u64(d->node_stats);
  p->gather = 0;
  /* a device loop with a scan share records a resume's gather, which then
   * runs over [0, gather_scan) whether or not the plan gathers */
  p->gather_scan = 0;
  p->use_slots = 0;
  p->compact = 0;
  switch (p->action) {
  case WS_ACT_STAGE: {
    /* a stage run moves or terminates items and never clones: no work's
     * live count may rise, whichever work the stage belongs to */
    for (uint32_t i = 0; i < d->aux_count; ++i) {
      ws_dec_work *o = ws_dec_work_at(d, i);
      o->allowance = o->live;
      o->last = WS_LAST_STAGE;
      o->last_stage = p->stage;
      o->last_work = p->work;
    }
    ws_dec_work *w = ws_dec_work_at(d, p->work);
    uint64_t *as = ws_dec_u64(d->aux_stats) + 3u * (w->first_stat + p->stage);
    as[0] += 1;
    as[1] += ws_dec_u32(w->q)[p->stage];
    if (w->counters) {
      /* the client's own view of its dispatches, kept for it where no host
       * callback runs */
      uint64_t *own = ws_dec_u64(w->counters) + 2u * p->stage;
      own[0] += 1;
      own[1] += ws_dec_u32(w->q)[p->stage];
    }
    d->aux_dispatches += 1;
    if (p->forced)
      d->forced_drains += 1;
    break;
  }
  case WS_ACT_REFILL: {
    ws_dec_hold_all(d);
    const uint32_t left = d->N - d->admitted, free_slots = d->A - d->live;
    const uint32_t g = left < free_slots ? left : free_slots;
    p->queue = 0;
    p->count = g;
    p->first_id = d->admitted;
    if (d->flags & WS_DEC_COMPACTION) {
      /* compaction first, then new frames densely behind the live ones (I4) */
      p->compact = d->high > d->live;
      p->compact_live = d->live;
      p->compact_scan = d->high;
      p->slot_base = d->live;
      d->high = d->live + g;
    } else {
      /* free slots are the token-0 slots */
      p->gather = 1;
      p->gather_token = 0;
      p->gather_scan = d->A;
      p->use_slots = 1;
      p->slot_offset = 0;
      d->gathered = 1;
      d->expect_gather = free_slots;
    }
    d->admitted += g;
    d->generated += g;
    ns[0] += 1;
    ns[1] += g;
    break;
  }
  case WS_ACT_RESUME: {
    const uint32_t j = p->queue, m = p->count;
    for (uint32_t i = 0; i < d->aux_count; ++i) {
      ws_dec_work *w = ws_dec_work_at(d, i);
      const uint32_t b = ws_dec_u32(w->bound)[j];
      w->allowance = (uint64_t)w->live + (uint64_t)m * b;
      w->last = b ? WS_LAST_PRODUCER : WS_LAST_OTHER;
    }
    p->use_slots = 1;
    if (d->flags & WS_DEC_MATERIALIZED) {
      /* the sorted lists hold queue 1's slots, then queue 2's, ... */
      uint32_t off = 0;
      for (uint32_t t = 1; t < j; ++t)
        off += h[t];
      p->slot_offset = off;
    } else if ((d->flags & WS_DEC_SCAN) && m == h[j] &&
               (uint64_t)m * 100u >= (uint64_t)WS_DEC_SCAN_SHARE(d->flags) * d->high) {
      /* the launch finds the queue's frames in [0, high) itself */
      p->use_slots = 2;
      p->slot_base = d->high;
      p->slot_offset = 0;
      d->scanned += d->high;
      d->scan_total += m;
      d->scan_queue = j;
      d->scan_count = m;
    } else {
      p->gather = 1;
      p->gather_token = j;
      p->gather_scan = d->high;
      p->slot_offset = 0;
      d->scanned += d->high;
      d->gathered = 1;
      d->expect_gather = h[j];
    }
    ns[3u * j] += 1;
    ns[3u * j + 1u] += m;
    d->resumed += m;
    break;
  }
  case WS_ACT_TAIL: {
    /* Its continuation runs are not per-node statistics: the items are
     * counted (tail_items) and the remaining iterations bound each item. */
    const uint64_t left = d->iteration_limit ? d->iteration_limit - d->iterations : 0u;
    p->queue = 0;
    p->count = d->live;
    p->slot_base = d->high;
    p->first_id = left > 0xffffffffu ? 0xffffffffu : (uint32_t)left;
    d->tail_limit = p->first_id;
    d->tail_items += d->live;
    d->scanned += d->high;
    break;
  }
  case WS_ACT_RESUME_ALL:
    for (uint32_t j = 1; j <= d->K; ++j) {
      if (h[j]) {
        ns[3u * j] += 1;
        ns[3u * j + 1u] += h[j];
        d->resumed += h[j];
      }
    }
    break;
  default:
    break;
  }
}

/* The whole decision when no client callback has a say (the device loops). */
WS_DEC void ws_dec_decide(ws_dstate *d) {
  ws_dec_observe(d);
  ws_dec_select(d);
  ws_dec_prepare_storage(d);
  ws_dec_admit(d);
  ws_dec_commit(d);
}

/* Device loops, after the decision: whether another iteration follows in
 * this launch. The host loop advances `pass` itself. */
WS_DEC uint32_t ws_dec_loop_next(ws_dstate *d) {
  if (d->status != WS_DEC_RUNNING)
    return 0;
  d->pass += 1;
  if (d->interval != 0 && --d->run_left == 0) {
    d->run_left = d->interval;
    return 0;
  }
  return 1;
}

/* Device-side observation of the auxiliary works (device loops): read each
 * work's live count, stage counts and error word from its device
 * description (ws_aux_device). */
WS_DEC void ws_dec_observe_works(ws_dstate *d) {
  for (uint32_t i = 0; i < d->aux_count; ++i) {
    ws_dec_work *w = ws_dec_work_at(d, i);
    const uint32_t word = *ws_dec_u32(w->src_live);
    /* a free count below zero means the pool overflowed: it is full; one
     * above C wraps to a live count above C, reported as such */
    w->live = !w->live_is_free ? word : (int32_t)word < 0 ? w->capacity : w->capacity - word;
    w->client_err = w->src_error ? *ws_dec_u32(w->src_error) : 0u;
    w->obs_status = w->client_err ? WS_DEC_S_EPROTO_CLIENT : 0;
    w->obs_late = 0;
    const uint32_t *src = ws_dec_u32(w->src_stages);
    uint32_t *q = ws_dec_u32(w->q);
    for (uint32_t s = 0; s < w->stage_count; ++s)
      q[s] = src[s];
    if (w->src_extent && w->storage_counters) {
      /* the peak extent, as the host pool observes it at every boundary */
      uint64_t *sc = ws_dec_u64(w->storage_counters);
      const uint32_t e = *ws_dec_u32(w->src_extent);
      if (e > sc[2])
        sc[2] = e;
    }
  }
}

/* The device loops' branch of this iteration's plan (the CUDA graph's
 * branches, cuda_loop.cu, and the persistent loop below): 0 nothing, 1 the
 * refill, 2 every queue (all-queues policy), 2 + j continuation j, 3 + K + s
 * auxiliary stage s in statistics order, 3 + K + stages the tail. */
WS_DEC uint32_t ws_dec_branch(const ws_dstate *d, uint32_t stages) {
  const ws_dec_plan *p = &d->plan;
  switch (p->action) {
  case WS_ACT_REFILL:
    return 1u;
  case WS_ACT_RESUME_ALL:
    return 2u;
  case WS_ACT_RESUME:
    return 2u + p->queue;
  case WS_ACT_STAGE:
    return 3u + d->K + ws_dec_work_at(d, p->work)->first_stat + p->stage;
  case WS_ACT_TAIL:
    return 3u + d->K + stages;
  default:
    return 0u;
  }
}

/* The arrays inside the state's buffer (works, their bounds and stage
 * counts, statistics, the alignment list) are addressed absolutely: a copy
 * of the buffer at another address (a decide kernel's shared memory) is
 * rebased from `from` to `to`. The buffer begins with the state: d is the
 * copy's first byte, the address `to` names (or `from`, rebasing back), and
 * its works array is found through d->works before that pointer is itself
 * rebased. Addresses outside [from, from + size) (the counts, the clients'
 * words) stay. */
WS_DEC void ws_dec_rebase(ws_dstate *d, uint64_t from, uint64_t to, uint64_t size) {
  ws_dec_work *works = WS_DEC_PTR(ws_dec_work, d->works >= from && d->works < from + size
                                                    ? d->works - from + (uint64_t)(uintptr_t)d
                                                    : d->works);
#define WS_DEC_REBASE_(f)                                                                          \
  if ((f) >= from && (f) < from + size)                                                            \
  (f) = (f) - from + to
  for (uint32_t i = 0; i < d->aux_count; ++i) {
    WS_DEC_REBASE_(works[i].bound);
    WS_DEC_REBASE_(works[i].q);
  }
  WS_DEC_REBASE_(d->works);
  WS_DEC_REBASE_(d->node_stats);
  WS_DEC_REBASE_(d->aux_stats);
  WS_DEC_REBASE_(d->align);
#undef WS_DEC_REBASE_
}

/* The persistent device loop (CUDA; kernel.h co_ws_persist_gpu): one
 * cooperative kernel makes the decisions of consecutive iterations itself
 * and carries out those it can alone — resuming one queue in scan mode,
 * where the continuation's launch finds its frames and fused accounting
 * keeps the counts — with a grid barrier between a decision and its launch
 * and between the launch and the next decision. It stops at the first
 * decision it cannot carry out (a refill, a stage, the tail, a resume of
 * more than max_frames, the end of the dispatch or of the observation
 * interval, an error) and leaves it in
 * words[] as the branch to run and whether the loop goes on; the graph's
 * decide kernel then takes that decision instead of making one
 * (cuda_loop.cu). So the order of decisions, and every statistic, is the
 * host loop's. Block 0 keeps the state in shared memory while the kernel
 * runs (size bytes at the state's address; decisions in global memory cost
 * about 1 µs more each, docs/decisions.md), writes each decision's plan to
 * the state for the other blocks, and the whole state back when it stops. */
enum {
  WS_PERSIST_GO = 0,     /* the decision just made is the kernel's to carry out */
  WS_PERSIST_PRE = 1,    /* a decision is waiting for the graph: ... */
  WS_PERSIST_BRANCH = 2, /* ... its branch (ws_dec_branch) */
  WS_PERSIST_MORE = 3,   /* ... and ws_dec_loop_next's answer */
  WS_PERSIST_WORDS = 4
};
typedef struct ws_dec_persist {
  uint64_t state;  /* the ws_dstate's device address */
  uint64_t words;  /* uint32_t[WS_PERSIST_WORDS] */
  uint32_t size;   /* the state's bytes, a multiple of 8 */
  uint32_t stages; /* the auxiliary stages (ws_dec_branch) */
  uint32_t grid;   /* blocks wanted; the launcher caps it at the blocks the device holds at once */
  /* the largest resume the kernel carries out: at most the threads of its
   * grid (the launcher's cap; 0 = that). A larger one goes to the graph,
   * whose kernel for that continuation has its own registers and grid: the
   * persistent kernel holds every continuation and so the heaviest one's
   * registers (the path tracer's resumes of millions of frames ran 9–20 % slower
   * in it, docs/decisions.md) */
  uint32_t max_frames;
  /* 1: the launcher launches nothing and writes the grid and max_frames it
   * would use (grid 0: the kernel cannot run at this block size, its
   * registers being the heaviest continuation's) */
  uint32_t dry_run;
  uint32_t pad;
} ws_dec_persist;

/* One decision of the persistent loop (one thread), on the state d (the
 * shared copy): 1 when the kernel carries it out, else the decision waits
 * in words[] for the graph. */
WS_DEC uint32_t ws_dec_persist_decide(const ws_dec_persist *p, ws_dstate *d) {
  uint32_t *w = WS_DEC_PTR(uint32_t, p->words);
  ws_dec_observe_works(d);
  ws_dec_decide(d);
  const uint32_t b = ws_dec_branch(d, p->stages);
  const uint32_t again = ws_dec_loop_next(d);
  const uint32_t go = again && d->plan.action == WS_ACT_RESUME && d->plan.use_slots == 2u &&
                      d->plan.count <= p->max_frames;
  if (!go) {
    w[WS_PERSIST_BRANCH] = b;
    w[WS_PERSIST_MORE] = again;
    w[WS_PERSIST_PRE] = 1u;
  }
  w[WS_PERSIST_GO] = go;
  return go;
}

#endif
