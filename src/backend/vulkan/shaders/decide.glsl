/* SPDX-License-Identifier: MIT */
/* wavesched — the loop's decisions (include/wavesched/detail/decide.h) in GLSL: the Vulkan
 * device loop's twin of the one C source, function by function and line by
 * line in the same order, so that a change to one is a change to the other
 * at the same place (docs/decisions.md says why decide.h itself is not
 * compiled as GLSL). test_decide_twin runs both on the same random states
 * and asks for the same bytes.
 *
 * Spelling, C -> GLSL:
 *   ws_dstate *d; d->x          inout ws_dstate d; d.x (a local copy: the
 *                               decide shader loads the state once and
 *                               stores it once per iteration)
 *   ws_dec_work *w; w->x        ws_dec_work_ref w; w.x (device memory)
 *   uint32_t *h = ws_dec_u32(a) ws_dec_u32s h = ws_dec_u32s(a); h.v[j]
 *   (uint64_t)n * b             uint64_t(n) * b
 *   (int32_t)word < 0           int(word) < 0
 * Needs kernel.glsl (64-bit integers, buffer references).
 */
#ifndef WAVESCHED_VK_DECIDE_GLSL
#define WAVESCHED_VK_DECIDE_GLSL

/* ws_dstate.flags */
const uint WS_DEC_GREEDY = 1u;
const uint WS_DEC_COMPACTION = 2u;
const uint WS_DEC_PARTIAL = 4u;
const uint WS_DEC_MATERIALIZED = 8u;
const uint WS_DEC_PUBLISH = 16u;
const uint WS_DEC_VERIFY = 32u;
const uint WS_DEC_ALIGN = 64u;
const uint WS_DEC_SCAN = 128u;
const uint WS_DEC_TAIL = 256u;
const uint WS_DEC_SCAN_SHARE_SHIFT = 24u;

const uint WS_DEC_RUNNING = 0u;
const uint WS_DEC_DONE = 1u;
const uint WS_DEC_ERROR = 2u;

const uint WS_ACT_NONE = 0u;
const uint WS_ACT_REFILL = 1u;
const uint WS_ACT_RESUME = 2u;
const uint WS_ACT_RESUME_ALL = 3u;
const uint WS_ACT_STAGE = 4u;
const uint WS_ACT_TAIL = 5u;

const uint WS_LAST_NONE = 0u;
const uint WS_LAST_STAGE = 1u;
const uint WS_LAST_PRODUCER = 2u;
const uint WS_LAST_OTHER = 3u;

const uint WS_DERR_NONE = 0u;
const uint WS_DERR_BAD_TRANSITION = 1u;
const uint WS_DERR_VERIFY_COUNT = 2u;
const uint WS_DERR_VERIFY_GATHER = 3u;
const uint WS_DERR_LIVE = 4u;
const uint WS_DERR_OVER_CAPACITY = 5u;
const uint WS_DERR_CLONED = 6u;
const uint WS_DERR_BOUND = 7u;
const uint WS_DERR_BOUND_OTHER = 8u;
const uint WS_DERR_STAGE_SUM = 9u;
const uint WS_DERR_EMPTY_BLOCKS = 10u;
const uint WS_DERR_DRAIN_STAGE = 11u;
const uint WS_DERR_LIMIT = 12u;
const uint WS_DERR_STALL = 13u;
const uint WS_DERR_CLIENT = 14u;
const uint WS_DERR_AVAIL = 15u;
const uint WS_DERR_AVAIL_EMPTY = 16u;
const uint WS_DERR_SCAN = 17u;
const uint WS_DERR_TAIL_LIMIT = 18u;
const uint WS_DERR_EXTENT = 19u;

const int WS_DEC_S_EPROTO_OVER_CAPACITY = -60;
const int WS_DEC_S_EPROTO_STAGE_SUM = -61;
const int WS_DEC_S_EPROTO_DRAIN_STAGE = -63;
const int WS_DEC_S_EPROTO_CLONED = -64;
const int WS_DEC_S_EPROTO_BOUND = -65;
const int WS_DEC_S_EPROTO_CLIENT = -66;
const int WS_DEC_S_EPROTO_INTERNAL = -67;
const int WS_DEC_S_EITERATION_LIMIT = -68;
const int WS_DEC_S_EVERIFY = -69;
const int WS_DEC_S_ESTALL = -70;
const int WS_DEC_S_EPROTO_AVAILABILITY = -71;

const uint WS_DEC_NONE = 0xffffffffu;

/* launch.h: counts[] words past the queues */
uint WS_COUNTS_LIMIT(uint K) { return K + 2u; }
uint WS_COUNTS_SCANNED(uint K) { return K + 3u; }
uint WS_COUNTS_TICKETS(uint K) { return K + 4u; }

/* The records, member for member (the scalar layout gives them C's offsets;
 * the sizes are 64, 64, 136 and 384 bytes as decide.h asserts, and
 * vk_loop.c asserts the offsets the GLSL block below spells out). */
struct ws_dec_err {
  uint64_t iteration;
  uint64_t a, b, c, d;
  int status;
  uint kind;
  uint work, work2, stage, queue;
};

struct ws_dec_plan {
  uint action;
  uint queue;
  uint count;
  uint first_id;
  uint slot_base;
  uint use_slots;
  uint slot_offset;
  uint gather;
  uint gather_token;
  uint gather_scan;
  uint compact;
  uint compact_live;
  uint compact_scan;
  uint work, stage;
  uint forced;
};

layout(buffer_reference, scalar, buffer_reference_align = 8) buffer ws_dec_work_ref {
  layout(offset = 0) uint64_t bound;
  layout(offset = 8) uint64_t q;
  layout(offset = 16) uint64_t allowance;
  layout(offset = 24) uint64_t src_live;
  layout(offset = 32) uint64_t src_stages;
  layout(offset = 40) uint64_t src_error;
  layout(offset = 48) uint capacity;
  layout(offset = 52) uint stage_count;
  layout(offset = 56) uint first_stat;
  layout(offset = 60) uint live;
  layout(offset = 64) uint last;
  layout(offset = 68) uint last_stage;
  layout(offset = 72) uint live_is_free;
  layout(offset = 76) int obs_status;
  layout(offset = 80) uint obs_late;
  layout(offset = 84) uint client_err;
  layout(offset = 88) uint last_work;
  layout(offset = 92) uint avail;
  layout(offset = 96) uint has_avail;
  layout(offset = 104) uint64_t counters;
  layout(offset = 112) uint64_t src_extent;
  layout(offset = 120) uint64_t storage_counters;
  layout(offset = 128) uint compact_live;
  layout(offset = 132) uint compact_scan;
};
const uint WS_DEC_WORK_BYTES = 136u;

struct ws_dstate {
  uint64_t iteration_limit;
  uint64_t counts;
  uint64_t recount;
  uint64_t gather_count;
  uint64_t align;
  uint64_t works;
  uint64_t node_stats;
  uint64_t aux_stats;
  uint N, A, K, aux_count;
  uint refill_threshold;
  uint flags;
  uint status;
  uint admitted;
  uint high;
  uint live;
  uint gathered;
  uint expect_gather;
  uint sel, n;
  uint best_work, best_stage, best_count;
  uint evaluate;
  uint admit;
  uint interval, run_left;
  uint scan_total, scan_queue, scan_count;
  uint tail_frames, tail_limit;
  uint64_t aux_live;
  uint64_t pass;
  uint64_t iterations, generated, resumed, scanned, max_active;
  uint64_t aux_dispatches, forced_drains, blocked;
  uint64_t tail_items;
  ws_dec_plan plan;
  ws_dec_err err;
};

/* The state in device memory, loaded and stored whole. */
layout(buffer_reference, scalar, buffer_reference_align = 8) buffer ws_dstate_ref {
  ws_dstate v;
};

layout(buffer_reference, scalar, buffer_reference_align = 4) buffer ws_dec_u32s {
  uint v[];
};
layout(buffer_reference, scalar, buffer_reference_align = 8) buffer ws_dec_u64s {
  uint64_t v[];
};

/* ---------------------------------------------------------------------- */

ws_dec_work_ref ws_dec_work_at(in ws_dstate d, uint i) {
  return ws_dec_work_ref(d.works + uint64_t(i) * WS_DEC_WORK_BYTES);
}

void ws_dec_fail(inout ws_dstate d, int status, uint kind, uint work, uint stage, uint queue,
                 uint64_t a, uint64_t b, uint64_t c, uint64_t e) {
  d.status = WS_DEC_ERROR;
  d.plan.action = WS_ACT_NONE;
  d.err.iteration = d.pass;
  d.err.status = status;
  d.err.kind = kind;
  d.err.work = work;
  d.err.work2 = WS_DEC_NONE;
  d.err.stage = stage;
  d.err.queue = queue;
  d.err.a = a;
  d.err.b = b;
  d.err.c = c;
  d.err.d = e;
}

/* ---- phase 0: checks of the observation, peaks (SPEC §2.2 1-2, §3.4 A) ---- */

void ws_dec_allowance_fail(inout ws_dstate d, ws_dec_work_ref w, uint i) {
  if (w.last == WS_LAST_STAGE) {
    ws_dec_fail(d, WS_DEC_S_EPROTO_CLONED, WS_DERR_CLONED, i, w.last_stage, 0u, w.allowance,
                w.live, 0ul, 0ul);
    d.err.work2 = w.last_work;
  } else if (w.last == WS_LAST_PRODUCER)
    ws_dec_fail(d, WS_DEC_S_EPROTO_BOUND, WS_DERR_BOUND, i, 0u, 0u, w.live, w.allowance, 0ul, 0ul);
  else
    ws_dec_fail(d, WS_DEC_S_EPROTO_BOUND, WS_DERR_BOUND_OTHER, i, 0u, 0u, w.live, w.allowance, 0ul,
                0ul);
}

void ws_dec_observe(inout ws_dstate d) {
  if (d.status != WS_DEC_RUNNING)
    return;
  const uint K = d.K;
  ws_dec_u32s h = ws_dec_u32s(d.counts);
  if (h.v[K + 1u] != 0u) {
    ws_dec_fail(d, WS_DEC_S_EPROTO_INTERNAL, WS_DERR_BAD_TRANSITION, WS_DEC_NONE, 0u, 0u,
                h.v[K + 1u], K, 0ul, 0ul);
    return;
  }
  if (h.v[WS_COUNTS_LIMIT(K)] != 0u) {
    ws_dec_fail(d, WS_DEC_S_EITERATION_LIMIT, WS_DERR_TAIL_LIMIT, WS_DEC_NONE, 0u, 0u,
                h.v[WS_COUNTS_LIMIT(K)], d.tail_limit, d.tail_items, 0ul);
    return;
  }
  if ((d.flags & WS_DEC_SCAN) != 0u && h.v[WS_COUNTS_SCANNED(K)] != d.scan_total) {
    ws_dec_fail(d, WS_DEC_S_EPROTO_INTERNAL, WS_DERR_SCAN, WS_DEC_NONE, 0u, d.scan_queue,
                d.scan_count, h.v[WS_COUNTS_SCANNED(K)] - (d.scan_total - d.scan_count), 0ul, 0ul);
    return;
  }
  if ((d.flags & WS_DEC_VERIFY) != 0u) {
    ws_dec_u32s rc = ws_dec_u32s(d.recount);
    for (uint j = 1u; j <= K; ++j) {
      if (rc.v[j] != h.v[j]) {
        ws_dec_fail(d, WS_DEC_S_EVERIFY, WS_DERR_VERIFY_COUNT, WS_DEC_NONE, 0u, j, h.v[j], rc.v[j],
                    0ul, 0ul);
        return;
      }
    }
    if (d.gathered != 0u && ws_dec_u32s(d.gather_count).v[0] != d.expect_gather) {
      ws_dec_fail(d, WS_DEC_S_EVERIFY, WS_DERR_VERIFY_GATHER, WS_DEC_NONE, 0u, 0u,
                  ws_dec_u32s(d.gather_count).v[0], d.expect_gather, 0ul, 0ul);
      return;
    }
    d.gathered = 0u;
  }
  uint64_t live = 0ul;
  for (uint j = 1u; j <= K; ++j)
    live += h.v[j];
  if (live > d.A) {
    ws_dec_fail(d, WS_DEC_S_EPROTO_INTERNAL, WS_DERR_LIVE, WS_DEC_NONE, 0u, 0u, live, d.A, 0ul,
                0ul);
    return;
  }
  d.live = uint(live);
  if ((d.flags & WS_DEC_MATERIALIZED) != 0u)
    d.scanned += d.high;

  /* SPEC §3.4 A, in registration order */
  d.aux_live = 0ul;
  d.best_work = WS_DEC_NONE;
  d.best_stage = 0u;
  d.best_count = 0u;
  ws_dec_u64s as = ws_dec_u64s(d.aux_stats);
  for (uint i = 0u; i < d.aux_count; ++i) {
    ws_dec_work_ref w = ws_dec_work_at(d, i);
    if (w.obs_status != 0 && w.obs_late == 0u) {
      ws_dec_fail(d, w.obs_status, WS_DERR_CLIENT, i, 0u, 0u, w.client_err, 0ul, 0ul, 0ul);
      return;
    }
    if (w.live > w.capacity) {
      ws_dec_fail(d, WS_DEC_S_EPROTO_OVER_CAPACITY, WS_DERR_OVER_CAPACITY, i, 0u, 0u, w.live,
                  w.capacity, 0ul, 0ul);
      return;
    }
    if (w.last != WS_LAST_NONE && w.live > w.allowance) {
      ws_dec_allowance_fail(d, w, i);
      return;
    }
    if (w.obs_status != 0) {
      ws_dec_fail(d, w.obs_status, WS_DERR_CLIENT, i, 0u, 0u, w.client_err, 0ul, 0ul, 0ul);
      return;
    }
    ws_dec_u32s q = ws_dec_u32s(w.q);
    uint64_t sum = 0ul;
    for (uint s = 0u; s < w.stage_count; ++s)
      sum += q.v[s];
    if (sum != w.live) {
      ws_dec_fail(d, WS_DEC_S_EPROTO_STAGE_SUM, WS_DERR_STAGE_SUM, i, 0u, 0u, sum, w.live, 0ul,
                  0ul);
      return;
    }
    for (uint s = 0u; s < w.stage_count; ++s) {
      /* strictly greater: earliest work, then lowest stage, wins ties */
      if (q.v[s] > d.best_count) {
        d.best_count = q.v[s];
        d.best_work = i;
        d.best_stage = s;
      }
      const uint peak = 3u * (w.first_stat + s) + 2u;
      if (q.v[s] > as.v[peak])
        as.v[peak] = q.v[s];
    }
    d.aux_live += w.live;
  }
  ws_dec_u64s ns = ws_dec_u64s(d.node_stats);
  for (uint j = 1u; j <= K; ++j)
    if (h.v[j] > ns.v[3u * j + 2u])
      ns.v[3u * j + 2u] = h.v[j];
  if (d.live > d.max_active)
    d.max_active = d.live;
}

/* ---- phase 1: done, limit, selection (SPEC §2.2 3-4) ---- */

uint ws_dec_refill_wanted(in ws_dstate d, uint selected) {
  if (d.admitted >= d.N)
    return 0u;
  if (!(d.live == 0u || d.live < d.refill_threshold))
    return 0u;
  if ((d.flags & WS_DEC_ALIGN) == 0u || d.live == 0u)
    return 1u;
  return ws_dec_u32s(d.align).v[selected] != 0u ? 1u : 0u;
}

void ws_dec_select(inout ws_dstate d) {
  d.evaluate = 0u;
  d.plan.action = WS_ACT_NONE;
  if (d.status != WS_DEC_RUNNING)
    return;
  if (d.iteration_limit != 0ul && d.iterations >= d.iteration_limit) {
    ws_dec_fail(d, WS_DEC_S_EITERATION_LIMIT, WS_DERR_LIMIT, WS_DEC_NONE, 0u, 0u,
                d.iteration_limit, d.admitted, d.live, d.aux_live);
    return;
  }
  d.iterations += 1ul;
  if (d.admitted == d.N && d.live == 0u && d.aux_live == 0ul) {
    d.status = WS_DEC_DONE;
    return;
  }
  ws_dec_u32s h = ws_dec_u32s(d.counts);
  uint sel = 0u, n = 0u;
  if ((d.flags & WS_DEC_GREEDY) != 0u) {
    /* the largest queue; strictly greater wins, so ties go to the lowest index */
    for (uint j = 1u; j <= d.K; ++j) {
      if (h.v[j] > n) {
        n = h.v[j];
        sel = j;
      }
    }
  }
  d.sel = sel;
  d.n = n;
  d.admit = n;
  d.evaluate = d.aux_count != 0u && n != 0u && d.best_count <= n ? 1u : 0u;
}

/* ---- phase 1b (device loops): append storage before admission (issue 18) ---- */

const uint WS_DEC_COMPACT_MIN_EXTENT = 32u;

void ws_dec_prepare_storage(inout ws_dstate d) {
  for (uint i = 0u; i < d.aux_count; ++i) {
    ws_dec_work_ref w = ws_dec_work_at(d, i);
    w.compact_live = 0u;
    w.compact_scan = 0u;
    if (w.src_extent != 0ul)
      w.has_avail = 0u;
  }
  if (d.status != WS_DEC_RUNNING || d.evaluate == 0u)
    return;
  for (uint i = 0u; i < d.aux_count; ++i) {
    ws_dec_work_ref w = ws_dec_work_at(d, i);
    if (w.src_extent == 0ul || ws_dec_u32s(w.bound).v[d.sel] == 0u)
      continue;
    ws_dec_u32s word = ws_dec_u32s(w.src_extent);
    uint e = word.v[0];
    const uint L = w.live;
    if (e > w.capacity || L > e) {
      ws_dec_fail(d, WS_DEC_S_EPROTO_CLIENT, WS_DERR_EXTENT, i, 0u, d.sel, e, L, w.capacity, 0ul);
      return;
    }
    const bool counted = w.storage_counters != 0ul;
    ws_dec_u64s sc = ws_dec_u64s(w.storage_counters);
    if (L == 0u) {
      if (e != 0u && counted)
        sc.v[0] += 1ul;
      e = 0u;
    } else if (e >= WS_DEC_COMPACT_MIN_EXTENT && uint64_t(e) >= 2ul * uint64_t(L)) {
      w.compact_live = L;
      w.compact_scan = e;
      if (counted)
        sc.v[1] += 1ul;
      e = L;
    }
    word.v[0] = e;
    w.avail = w.capacity - e;
    w.has_avail = 1u;
  }
}

/* ---- phase 2: admission, drain, competition, refill or resume ---- */

uint ws_dec_default_drain(ws_dec_work_ref w) {
  ws_dec_u32s q = ws_dec_u32s(w.q);
  for (uint s = 0u; s < w.stage_count; ++s)
    if (q.v[s] != 0u)
      return s;
  return w.stage_count;
}

void ws_dec_check_drain(inout ws_dstate d) {
  if (d.status != WS_DEC_RUNNING || d.plan.action != WS_ACT_STAGE || d.plan.forced == 0u)
    return;
  ws_dec_work_ref w = ws_dec_work_at(d, d.plan.work);
  const uint s = d.plan.stage;
  if (s >= w.stage_count || ws_dec_u32s(w.q).v[s] == 0u)
    ws_dec_fail(d, WS_DEC_S_EPROTO_DRAIN_STAGE, WS_DERR_DRAIN_STAGE, d.plan.work, s, 0u,
                w.stage_count, s < w.stage_count ? ws_dec_u32s(w.q).v[s] : 0u, 0ul, 0ul);
}

void ws_dec_admit(inout ws_dstate d) {
  if (d.status != WS_DEC_RUNNING)
    return;
  d.plan.action = WS_ACT_NONE;
  d.plan.forced = 0u;
  if (d.tail_frames != 0u && d.aux_count == 0u && d.admitted == d.N && d.live != 0u &&
      d.live < d.tail_frames && (d.iteration_limit == 0ul || d.iterations < d.iteration_limit)) {
    d.plan.action = WS_ACT_TAIL;
    return;
  }
  if ((d.flags & WS_DEC_GREEDY) == 0u) {
    /* all-queues policy (materialized, no auxiliary work) */
    d.plan.action = ws_dec_refill_wanted(d, 0u) != 0u ? WS_ACT_REFILL : WS_ACT_RESUME_ALL;
    return;
  }
  const uint sel = d.sel, n = d.n;
  uint forced = WS_DEC_NONE;
  if (d.evaluate != 0u) {
    for (uint i = 0u; i < d.aux_count; ++i) {
      ws_dec_work_ref w = ws_dec_work_at(d, i);
      const uint b = ws_dec_u32s(w.bound).v[sel];
      if (b == 0u)
        continue;
      uint64_t room = w.live <= w.capacity ? uint64_t(w.capacity - w.live) : 0ul;
      if (w.has_avail != 0u) {
        if (w.avail > room) {
          ws_dec_fail(d, WS_DEC_S_EPROTO_AVAILABILITY, WS_DERR_AVAIL, i, 0u, sel, w.avail, room,
                      0ul, 0ul);
          return;
        }
        if (w.live == 0u && w.avail != w.capacity) {
          ws_dec_fail(d, WS_DEC_S_EPROTO_AVAILABILITY, WS_DERR_AVAIL_EMPTY, i, 0u, sel, w.avail,
                      w.capacity, 0ul, 0ul);
          return;
        }
        room = w.avail;
      }
      bool blocked;
      if ((d.flags & WS_DEC_PARTIAL) != 0u) {
        /* partial admission: min(n, room / b) frames fit */
        const uint64_t fit64 = room / b;
        const uint fit = fit64 < n ? uint(fit64) : n;
        blocked = fit == 0u;
        if (!blocked && fit < d.admit)
          d.admit = fit;
      } else {
        /* the admission rule, in 64-bit: n*b <= C - L (and <= avail) */
        blocked = uint64_t(n) * b > room;
      }
      if (!blocked)
        continue;
      if (w.live == 0u) {
        ws_dec_fail(d, WS_DEC_S_EPROTO_INTERNAL, WS_DERR_EMPTY_BLOCKS, i, 0u, sel, n, b,
                    w.capacity, 0ul);
        return;
      }
      /* the most occupied blocked work is forced; ties: earliest */
      if (forced == WS_DEC_NONE || w.live > ws_dec_work_at(d, forced).live)
        forced = i;
    }
  }
  if (forced != WS_DEC_NONE) {
    d.plan.action = WS_ACT_STAGE;
    d.plan.forced = 1u;
    d.plan.work = forced;
    d.plan.stage = ws_dec_default_drain(ws_dec_work_at(d, forced));
  } else if (d.best_work != WS_DEC_NONE && d.best_count > n) {
    d.plan.action = WS_ACT_STAGE;
    d.plan.work = d.best_work;
    d.plan.stage = d.best_stage;
  }
  if (d.aux_count != 0u && (d.plan.forced != 0u || d.admit < n))
    d.blocked += 1ul;
  if (d.plan.action == WS_ACT_STAGE) {
    ws_dec_check_drain(d);
    return;
  }
  if (ws_dec_refill_wanted(d, sel) != 0u) {
    d.plan.action = WS_ACT_REFILL;
    return;
  }
  if (n == 0u) {
    ws_dec_fail(d, WS_DEC_S_ESTALL, WS_DERR_STALL, WS_DEC_NONE, 0u, 0u, 0ul, d.admitted, d.live,
                d.aux_live);
    return;
  }
  d.plan.action = WS_ACT_RESUME;
  d.plan.queue = sel;
  d.plan.count = d.admit;
}

/* ---- phase 3: statistics, allowances, the plan's parameters ---- */

void ws_dec_hold_all(inout ws_dstate d) {
  for (uint i = 0u; i < d.aux_count; ++i) {
    ws_dec_work_ref w = ws_dec_work_at(d, i);
    w.allowance = w.live;
    w.last = WS_LAST_OTHER;
  }
}

void ws_dec_commit(inout ws_dstate d) {
  if (d.status != WS_DEC_RUNNING)
    return;
  ws_dec_u32s h = ws_dec_u32s(d.counts);
  ws_dec_u64s ns = ws_dec_u64s(d.node_stats);
  d.plan.gather = 0u;
  d.plan.gather_scan = 0u;
  d.plan.use_slots = 0u;
  d.plan.compact = 0u;
  switch (d.plan.action) {
  case WS_ACT_STAGE: {
    for (uint i = 0u; i < d.aux_count; ++i) {
      ws_dec_work_ref o = ws_dec_work_at(d, i);
      o.allowance = o.live;
      o.last = WS_LAST_STAGE;
      o.last_stage = d.plan.stage;
      o.last_work = d.plan.work;
    }
    ws_dec_work_ref w = ws_dec_work_at(d, d.plan.work);
    ws_dec_u64s as = ws_dec_u64s(d.aux_stats);
    const uint at = 3u * (w.first_stat + d.plan.stage);
    as.v[at] += 1ul;
    as.v[at + 1u] += ws_dec_u32s(w.q).v[d.plan.stage];
    if (w.counters != 0ul) {
      ws_dec_u64s own = ws_dec_u64s(w.counters);
      own.v[2u * d.plan.stage] += 1ul;
      own.v[2u * d.plan.stage + 1u] += ws_dec_u32s(w.q).v[d.plan.stage];
    }
    d.aux_dispatches += 1ul;
    if (d.plan.forced != 0u)
      d.forced_drains += 1ul;
    break;
  }
  case WS_ACT_REFILL: {
    ws_dec_hold_all(d);
    const uint left = d.N - d.admitted, free_slots = d.A - d.live;
    const uint g = left < free_slots ? left : free_slots;
    d.plan.queue = 0u;
    d.plan.count = g;
    d.plan.first_id = d.admitted;
    if ((d.flags & WS_DEC_COMPACTION) != 0u) {
      d.plan.compact = d.high > d.live ? 1u : 0u;
      d.plan.compact_live = d.live;
      d.plan.compact_scan = d.high;
      d.plan.slot_base = d.live;
      d.high = d.live + g;
    } else {
      d.plan.gather = 1u;
      d.plan.gather_token = 0u;
      d.plan.gather_scan = d.A;
      d.plan.use_slots = 1u;
      d.plan.slot_offset = 0u;
      d.gathered = 1u;
      d.expect_gather = free_slots;
    }
    d.admitted += g;
    d.generated += g;
    ns.v[0] += 1ul;
    ns.v[1] += g;
    break;
  }
  case WS_ACT_RESUME: {
    const uint j = d.plan.queue, m = d.plan.count;
    for (uint i = 0u; i < d.aux_count; ++i) {
      ws_dec_work_ref w = ws_dec_work_at(d, i);
      const uint b = ws_dec_u32s(w.bound).v[j];
      w.allowance = uint64_t(w.live) + uint64_t(m) * b;
      w.last = b != 0u ? WS_LAST_PRODUCER : WS_LAST_OTHER;
    }
    d.plan.use_slots = 1u;
    if ((d.flags & WS_DEC_MATERIALIZED) != 0u) {
      uint off = 0u;
      for (uint t = 1u; t < j; ++t)
        off += h.v[t];
      d.plan.slot_offset = off;
    } else if ((d.flags & WS_DEC_SCAN) != 0u && m == h.v[j] &&
               uint64_t(m) * 100ul >= uint64_t(d.flags >> WS_DEC_SCAN_SHARE_SHIFT) * d.high) {
      d.plan.use_slots = 2u;
      d.plan.slot_base = d.high;
      d.plan.slot_offset = 0u;
      d.scanned += d.high;
      d.scan_total += m;
      d.scan_queue = j;
      d.scan_count = m;
    } else {
      d.plan.gather = 1u;
      d.plan.gather_token = j;
      d.plan.gather_scan = d.high;
      d.plan.slot_offset = 0u;
      d.scanned += d.high;
      d.gathered = 1u;
      d.expect_gather = h.v[j];
    }
    ns.v[3u * j] += 1ul;
    ns.v[3u * j + 1u] += m;
    d.resumed += m;
    break;
  }
  case WS_ACT_TAIL: {
    const uint64_t left = d.iteration_limit != 0ul ? d.iteration_limit - d.iterations : 0ul;
    d.plan.queue = 0u;
    d.plan.count = d.live;
    d.plan.slot_base = d.high;
    d.plan.first_id = left > 0xfffffffful ? 0xffffffffu : uint(left);
    d.tail_limit = d.plan.first_id;
    d.tail_items += d.live;
    d.scanned += d.high;
    break;
  }
  case WS_ACT_RESUME_ALL:
    for (uint j = 1u; j <= d.K; ++j) {
      if (h.v[j] != 0u) {
        ns.v[3u * j] += 1ul;
        ns.v[3u * j + 1u] += h.v[j];
        d.resumed += h.v[j];
      }
    }
    break;
  default:
    break;
  }
}

void ws_dec_decide(inout ws_dstate d) {
  ws_dec_observe(d);
  ws_dec_select(d);
  ws_dec_prepare_storage(d);
  ws_dec_admit(d);
  ws_dec_commit(d);
}

uint ws_dec_loop_next(inout ws_dstate d) {
  if (d.status != WS_DEC_RUNNING)
    return 0u;
  d.pass += 1ul;
  if (d.interval != 0u && --d.run_left == 0u) {
    d.run_left = d.interval;
    return 0u;
  }
  return 1u;
}

void ws_dec_observe_works(inout ws_dstate d) {
  for (uint i = 0u; i < d.aux_count; ++i) {
    ws_dec_work_ref w = ws_dec_work_at(d, i);
    const uint word = ws_dec_u32s(w.src_live).v[0];
    /* a free count below zero means the pool overflowed: it is full; one
     * above C wraps to a live count above C, reported as such */
    w.live = w.live_is_free == 0u ? word : int(word) < 0 ? w.capacity : w.capacity - word;
    w.client_err = w.src_error != 0ul ? ws_dec_u32s(w.src_error).v[0] : 0u;
    w.obs_status = w.client_err != 0u ? WS_DEC_S_EPROTO_CLIENT : 0;
    w.obs_late = 0u;
    ws_dec_u32s src = ws_dec_u32s(w.src_stages);
    ws_dec_u32s q = ws_dec_u32s(w.q);
    for (uint s = 0u; s < w.stage_count; ++s)
      q.v[s] = src.v[s];
    if (w.src_extent != 0ul && w.storage_counters != 0ul) {
      /* the peak extent, as the host pool observes it at every boundary */
      ws_dec_u64s sc = ws_dec_u64s(w.storage_counters);
      const uint e = ws_dec_u32s(w.src_extent).v[0];
      if (e > sc.v[2])
        sc.v[2] = e;
    }
  }
}

#endif
