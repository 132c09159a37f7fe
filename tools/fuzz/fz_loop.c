/* SPDX-License-Identifier: MIT */
/* The fuzzer's reference loop: SPEC §2.2 and §3.4 written again, from the
 * specification, over sets of items instead of slots, so that the harness
 * can predict a dispatch's exact iteration count and order-dependent
 * statistics, and the exact status and iteration of every protocol
 * violation and client failure (fz_case.h).
 *
 * It shares no code with the library's loop (include/wavesched/detail/decide.h): items are
 * the table-driven coroutine's (fz.h) whose every step is a pure function of
 * the seed, the id and the item's own counters, so a queue is the set of
 * items waiting in it, whatever slots they occupy. That holds as long as a
 * resume runs every frame of its queue; with partial admission it runs the
 * first m in the library's slot order, which this model does not follow
 * (prediction.exact = false).
 *
 * The client calls are counted in the order the host loop makes them
 * (SPEC §3.4 and docs/loop.md): reset per work at the prologue; per pass
 * every work's readback, then per work host_count, stage_count and its
 * stage counts (the single-stage protocol asks no stage counts); a forced
 * drain asks the blocked work's admission_stage (when it has one); a stage
 * dispatch calls dispatch_stage; a resume calls prepare_for_producer of
 * every work that produces from it.
 *
 * Append pools (issue 18, fz_work_cfg.append) are modelled by their extent:
 * every publication raises it, a release leaves it; before admission is
 * evaluated, each such work that the selected continuation produces into
 * resets it when nothing is live, or compacts (extent = L) when the extent
 * is at least 32 and at least 2 L — ws_pool's rule — and admission then
 * also needs n*b <= C - extent. */
#include <string.h>

#include "fz_case.h"

/* Aux items one work can hold in the model: a work's capacity is at most
 * 192 (C <= 96 raised to R x b = 64 x 3); a lie never adds real items. */
#define FZ_SIM_AUX 256u

enum { LAST_NONE = 0, LAST_STAGE = 1, LAST_PRODUCER = 2, LAST_OTHER = 3 };

typedef struct sim_aux {
  uint32_t id, serial, left, hops, stage;
} sim_aux;

typedef struct sim {
  const fz_case *c;
  bool mis; /* the case's misbehaviour is on */
  uint32_t N, A, works, thr;
  uint64_t limit;
  /* main items: queue 0 = not waiting (unadmitted or terminated) */
  uint8_t queue[FZ_MAX_N];
  uint32_t left[FZ_MAX_N], steps[FZ_MAX_N], pubs[FZ_MAX_WORKS][FZ_MAX_N];
  uint32_t admitted;
  /* the scanned range [0, high): with compaction the dense prefix the last
   * refill left (live frames, then the new ones), else all A slots */
  uint32_t high;
  /* auxiliary items, per work */
  sim_aux aux[FZ_MAX_WORKS][FZ_SIM_AUX];
  uint32_t aux_n[FZ_MAX_WORKS];
  uint32_t extent[FZ_MAX_WORKS]; /* append pools: publications since the last reclaim */
  /* what the loop observed and allows */
  uint32_t cnt[FZ_MAX_K + 1];
  uint32_t obs_live[FZ_MAX_WORKS], obs_q[FZ_MAX_WORKS][FZ_MAX_STAGES];
  uint64_t allowance[FZ_MAX_WORKS];
  uint32_t last[FZ_MAX_WORKS];
  uint32_t calls[FZ_MAX_WORKS][FZ_CB_COUNT];
  uint64_t pass;
  fz_prediction *p;
} sim;

/* ---- the items ---- */

static void publish(sim *s, uint32_t id, uint32_t k) {
  const fz_case *c = s->c;
  for (uint32_t w = 0; w < s->works; ++w) {
    const uint32_t n = fz_pub_count(c->seed, id, s->steps[id], w, c->w[w].bound[k - 1]);
    s->extent[w] += n;
    for (uint32_t i = 0; i < n; ++i) {
      const uint32_t serial = s->pubs[w][id]++ & 0xffu; /* the frame's 8-bit counter */
      if (s->aux_n[w] >= FZ_SIM_AUX)
        continue; /* past any capacity: the library's admission failed; the harness says so */
      sim_aux *a = &s->aux[w][s->aux_n[w]++];
      a->id = id;
      a->serial = serial;
      a->left = fz_item_budget(c->seed, w, id, serial, c->w[w].amax);
      a->hops = 0;
      a->stage = c->w[w].pub_stage[k - 1];
    }
  }
}

/* Continuation k for item id (k = 0: the entry); returns the next queue. */
static uint32_t run_item(sim *s, uint32_t id, uint32_t k) {
  const fz_case *c = s->c;
  if (k == 0) {
    s->left[id] = fz_path_length(c->seed, id, c->maxlen);
    s->steps[id] = 0;
    for (uint32_t w = 0; w < FZ_MAX_WORKS; ++w)
      s->pubs[w][id] = 0;
    return c->entry_next[fz_choice(c->seed, id, 0xFFFFu)];
  }
  publish(s, id, k);
  uint32_t next = 0;
  if (s->left[id]) {
    next = c->next[k - 1][fz_choice(c->seed, id, s->steps[id])];
    s->left[id] -= 1;
    s->steps[id] += 1;
  }
  return next;
}

/* Every item of queue j at this boundary runs continuation j once. */
static void resume(sim *s, uint32_t j) {
  uint32_t ids[FZ_MAX_N], n = 0;
  for (uint32_t id = 0; id < s->admitted; ++id)
    if (s->queue[id] == j)
      ids[n++] = id;
  for (uint32_t i = 0; i < n; ++i)
    s->queue[ids[i]] = (uint8_t)run_item(s, ids[i], j);
}

static void run_stage(sim *s, uint32_t w, uint32_t stage) {
  const fz_case *c = s->c;
  const fz_work_cfg *wc = &c->w[w];
  uint32_t kept = 0;
  for (uint32_t i = 0; i < s->aux_n[w]; ++i) {
    sim_aux a = s->aux[w][i];
    if (a.stage == stage) {
      uint32_t to = wc->S;
      if (a.left) {
        to = wc->anext[stage][fz_item_choice(c->seed, w, a.id, a.serial, a.hops)];
        a.left -= 1;
        a.hops += 1;
      }
      if (to >= wc->S)
        continue; /* released */
      a.stage = to;
    }
    s->aux[w][kept++] = a;
  }
  s->aux_n[w] = kept;
}

static uint32_t true_q(const sim *s, uint32_t w, uint32_t stage) {
  uint32_t n = 0;
  for (uint32_t i = 0; i < s->aux_n[w]; ++i)
    n += s->aux[w][i].stage == stage;
  return n;
}

/* ---- outcomes ---- */

/* Ends the dispatch with `st` at this pass. */
static bool fail(sim *s, ws_status st) {
  s->p->status = st;
  s->p->pass = s->pass;
  return true;
}

/* A client call: true (and the error recorded) when the misbehaviour fails
 * this one. */
static bool call(sim *s, uint32_t w, uint32_t cb) {
  s->calls[w][cb] += 1;
  const fz_case *c = s->c;
  if (s->mis && c->mb == FZ_MB_FAIL && w == c->mb_work && cb == c->mb_call &&
      s->calls[w][cb] == c->mb_at + 1u) {
    s->p->fail_work = w;
    s->p->fail_call = cb;
    s->p->fail_at = c->mb_at + 1u;
    return fail(s, WS_EPROTO_CLIENT);
  }
  return false;
}

static bool lie_now(const sim *s, uint32_t kind) {
  const fz_case *c = s->c;
  return s->mis && !s->p->lie.armed && c->mb == kind && s->pass >= c->mb_at;
}

/* ---- one pass: observe (SPEC §2.2 1-2, §3.4 A) ---- */

/* Returns true when the dispatch ended (an error). */
static bool observe(sim *s) {
  const fz_case *c = s->c;
  fz_prediction *p = s->p;
  for (uint32_t w = 0; w < s->works; ++w)
    if (call(s, w, FZ_CB_ENQUEUE))
      return true;
  memset(s->cnt, 0, sizeof s->cnt);
  uint32_t live = 0;
  for (uint32_t id = 0; id < s->admitted; ++id)
    if (s->queue[id]) {
      s->cnt[s->queue[id]] += 1;
      live += 1;
    }
  /* materialized accounting (0) counts and sorts the scanned range at every
   * boundary it observes; a refill's free-slot gather is no scan */
  if (c->accounting == 0)
    p->scanned += s->high;
  /* the client side: what each work reports, lies included; a failing call
   * (or a changed stage count) stops the observation at that work */
  int32_t obs_status[FZ_MAX_WORKS] = {0};
  bool obs_late[FZ_MAX_WORKS] = {false};
  uint32_t asked = s->works;
  for (uint32_t w = 0; w < s->works && asked == s->works; ++w) {
    const fz_work_cfg *wc = &c->w[w];
    if (call(s, w, FZ_CB_HOST_COUNT)) {
      obs_status[w] = WS_EPROTO_CLIENT;
      p->status = WS_OK; /* not yet: the checks of earlier works come first */
      asked = w;
      break;
    }
    s->obs_live[w] = s->aux_n[w];
    for (uint32_t sg = 0; sg < wc->S; ++sg)
      s->obs_q[w][sg] = true_q(s, w, sg);
    if (w == c->mb_work && lie_now(s, c->mb)) {
      /* the lie of this case, told at the first boundary it applies to */
      const uint32_t truth = s->obs_live[w];
      bool told = true;
      switch (c->mb) {
      case FZ_MB_RISE:
        /* one to four more than the last action allows, in stage 0 */
        told = s->last[w] != LAST_NONE && s->allowance[w] + 1u + c->mb_amount % 4u <= wc->C;
        if (told)
          s->obs_live[w] = (uint32_t)s->allowance[w] + 1u + c->mb_amount % 4u;
        break;
      case FZ_MB_OVER_CAP:
        s->obs_live[w] = wc->C + 1u + c->mb_amount % 4u;
        break;
      case FZ_MB_STAGE_SUM:
        told = !c->legacy; /* the single-stage protocol asks no stage counts */
        if (told)
          s->obs_q[w][c->mb_amount % wc->S] += 1u + c->mb_amount / 4u % 3u;
        break;
      case FZ_MB_STAGE_COUNT:
        told = !c->legacy;
        if (told) {
          p->lie.stage_count = wc->S + 1u + c->mb_amount % 2u;
          obs_status[w] = WS_EPROTO_STAGE_COUNT;
          obs_late[w] = true;
        }
        break;
      default:
        told = false;
        break;
      }
      if (told) {
        s->obs_q[w][0] += s->obs_live[w] - truth; /* a live count lie keeps the sum */
        p->lie.armed = true;
        p->lie.kind = c->mb;
        p->lie.pass = s->pass;
        p->lie.work = w;
        p->lie.live = s->obs_live[w];
        memcpy(p->lie.q, s->obs_q[w], sizeof p->lie.q);
      }
      if (obs_status[w]) {
        asked = w;
        break;
      }
    }
    if (!c->legacy) {
      for (uint32_t sg = 0; sg < wc->S; ++sg) {
        if (call(s, w, FZ_CB_STAGE_HOST_COUNT)) {
          obs_status[w] = WS_EPROTO_CLIENT;
          obs_late[w] = true;
          p->status = WS_OK;
          break;
        }
      }
      if (obs_status[w]) {
        asked = w;
        break;
      }
    }
  }
  /* the loop's checks, in registration order */
  for (uint32_t w = 0; w < s->works; ++w) {
    const fz_work_cfg *wc = &c->w[w];
    if (w == asked && obs_status[w] && !obs_late[w])
      return fail(s, (ws_status)obs_status[w]);
    if (s->obs_live[w] > wc->C)
      return fail(s, WS_EPROTO_OVER_CAPACITY);
    if (s->last[w] != LAST_NONE && s->obs_live[w] > s->allowance[w])
      return fail(s, s->last[w] == LAST_STAGE ? WS_EPROTO_CLONED : WS_EPROTO_BOUND);
    if (w == asked && obs_status[w])
      return fail(s, (ws_status)obs_status[w]);
    uint64_t sum = 0;
    for (uint32_t sg = 0; sg < wc->S; ++sg)
      sum += s->obs_q[w][sg];
    if (sum != s->obs_live[w])
      return fail(s, WS_EPROTO_STAGE_SUM);
    for (uint32_t sg = 0; sg < wc->S; ++sg)
      if (s->obs_q[w][sg] > p->aux[w][sg][2])
        p->aux[w][sg][2] = s->obs_q[w][sg];
  }
  for (uint32_t j = 1; j <= c->K; ++j)
    if (s->cnt[j] > p->node[j][2])
      p->node[j][2] = s->cnt[j];
  if (live > p->max_active)
    p->max_active = live;
  return false;
}

/* ---- one pass: select, admit, run (SPEC §2.2 3-7, §3.4 B-E) ---- */

static bool refill_wanted(const sim *s, uint32_t live, uint32_t sel) {
  if (s->admitted >= s->N || !(live == 0 || live < s->thr))
    return false;
  return !s->c->align_mask || live == 0 || (sel && (s->c->align_mask >> (sel - 1) & 1u));
}

/* The client's drain policy (fz_harness.c w_admission_stage). */
static uint32_t drain_pick(const sim *s, uint32_t w) {
  const fz_case *c = s->c;
  uint32_t pick = 0, best = 0;
  for (uint32_t sg = 0; sg < c->w[w].S; ++sg) {
    const uint32_t q = s->obs_q[w][sg];
    if (q == 0)
      continue;
    if (c->w[w].drain == 1 || q > best) {
      pick = sg;
      best = q;
    }
  }
  return pick;
}

/* Returns true when the dispatch ended (done or an error). */
static bool step(sim *s) {
  const fz_case *c = s->c;
  fz_prediction *p = s->p;
  if (observe(s))
    return true;
  uint32_t live = 0, aux_live = 0;
  for (uint32_t j = 1; j <= c->K; ++j)
    live += s->cnt[j];
  for (uint32_t w = 0; w < s->works; ++w)
    aux_live += s->obs_live[w];
  if (s->limit && p->iterations >= s->limit)
    return fail(s, WS_EITERATION_LIMIT);
  p->iterations += 1;
  if (s->admitted == s->N && live == 0 && aux_live == 0)
    return true; /* done */
  if (!c->greedy) {
    if (refill_wanted(s, live, 0))
      goto refill;
    for (uint32_t j = 1; j <= c->K; ++j) {
      if (!s->cnt[j])
        continue;
      p->node[j][0] += 1;
      p->node[j][1] += s->cnt[j];
      p->resumed += s->cnt[j];
    }
    uint8_t snap[FZ_MAX_N];
    memcpy(snap, s->queue, sizeof snap);
    for (uint32_t j = 1; j <= c->K; ++j)
      for (uint32_t id = 0; id < s->admitted; ++id)
        if (snap[id] == j)
          s->queue[id] = (uint8_t)run_item(s, id, j);
    return false;
  }
  /* the largest queue: strictly greater wins, ties to the lowest index */
  uint32_t sel = 0, n = 0;
  for (uint32_t j = 1; j <= c->K; ++j)
    if (s->cnt[j] > n) {
      n = s->cnt[j];
      sel = j;
    }
  /* the largest stage over all works: strictly greater, earliest work and stage */
  uint32_t bw = UINT32_MAX, bs = 0, bc = 0;
  for (uint32_t w = 0; w < s->works; ++w)
    for (uint32_t sg = 0; sg < c->w[w].S; ++sg)
      if (s->obs_q[w][sg] > bc) {
        bc = s->obs_q[w][sg];
        bw = w;
        bs = sg;
      }
  /* B. admission, only when the main queue would win */
  uint32_t forced = UINT32_MAX;
  if (s->works && n && bc <= n) {
    for (uint32_t w = 0; w < s->works; ++w) {
      const uint32_t b = c->w[w].bound[sel - 1];
      uint64_t room = c->w[w].C - s->obs_live[w];
      if (b && c->w[w].append) {
        /* the pool's own storage work, on what it observed (the truth) */
        const uint32_t L = s->aux_n[w];
        if (L == 0)
          s->extent[w] = 0;
        else if (s->extent[w] >= 32u && s->extent[w] >= 2u * L)
          s->extent[w] = L;
        const uint32_t avail = c->w[w].C - s->extent[w];
        if (avail < room)
          room = avail;
      }
      if (!b || (uint64_t)n * b <= room)
        continue;
      if (forced == UINT32_MAX || s->obs_live[w] > s->obs_live[forced])
        forced = w;
    }
  }
  uint32_t stage_w = UINT32_MAX, stage_s = 0;
  if (forced != UINT32_MAX) {
    stage_w = forced;
    /* C. the drain stage: the client's choice when it has admission_stage */
    uint32_t d = 0;
    while (d < c->w[forced].S && s->obs_q[forced][d] == 0)
      ++d;
    if (c->w[forced].drain && !c->legacy) {
      if (call(s, forced, FZ_CB_ADMISSION))
        return true;
      d = drain_pick(s, forced);
      if (s->mis && c->mb == FZ_MB_BAD_DRAIN && forced == c->mb_work && s->pass >= c->mb_at &&
          !p->lie.armed) {
        /* an empty stage if there is one, else one past the last */
        uint32_t bad = c->w[forced].S + c->mb_amount % 3u;
        for (uint32_t sg = 0; sg < c->w[forced].S; ++sg)
          if (s->obs_q[forced][sg] == 0) {
            bad = sg;
            break;
          }
        p->lie.armed = true;
        p->lie.kind = FZ_MB_BAD_DRAIN;
        p->lie.pass = s->pass;
        p->lie.work = forced;
        p->lie.drain_stage = bad;
        d = bad;
      }
    }
    stage_s = d;
    if (d >= c->w[forced].S || s->obs_q[forced][d] == 0)
      return fail(s, WS_EPROTO_DRAIN_STAGE);
  } else if (bw != UINT32_MAX && bc > n) {
    /* D. a stage wins only when strictly larger */
    stage_w = bw;
    stage_s = bs;
  }
  if (s->works && forced != UINT32_MAX)
    p->blocked += 1;
  if (stage_w != UINT32_MAX) {
    for (uint32_t w = 0; w < s->works; ++w) {
      s->allowance[w] = s->obs_live[w];
      s->last[w] = LAST_STAGE;
    }
    p->aux[stage_w][stage_s][0] += 1;
    p->aux[stage_w][stage_s][1] += s->obs_q[stage_w][stage_s];
    p->aux_dispatches += 1;
    p->forced += forced != UINT32_MAX;
    if (call(s, stage_w, FZ_CB_DISPATCH_STAGE))
      return true;
    run_stage(s, stage_w, stage_s);
    return false;
  }
  if (refill_wanted(s, live, sel))
    goto refill;
  if (n == 0)
    return fail(s, WS_ESTALL);
  /* 7. resume the selected queue */
  for (uint32_t w = 0; w < s->works; ++w) {
    const uint32_t b = c->w[w].bound[sel - 1];
    s->allowance[w] = (uint64_t)s->obs_live[w] + (uint64_t)n * b;
    s->last[w] = b ? LAST_PRODUCER : LAST_OTHER;
  }
  p->node[sel][0] += 1;
  p->node[sel][1] += n;
  p->resumed += n;
  /* otherwise each resume gathers (or, in scan mode, scans) the range */
  if (c->accounting != 0)
    p->scanned += s->high;
  if (!c->legacy)
    for (uint32_t w = 0; w < s->works; ++w)
      if (c->w[w].bound[sel - 1] && call(s, w, FZ_CB_PREPARE))
        return true;
  resume(s, sel);
  return false;
refill:
  for (uint32_t w = 0; w < s->works; ++w) {
    s->allowance[w] = s->obs_live[w];
    s->last[w] = LAST_OTHER;
  }
  {
    const uint32_t left = s->N - s->admitted, free_slots = s->A - live;
    const uint32_t g = left < free_slots ? left : free_slots;
    p->node[0][0] += 1;
    p->node[0][1] += g;
    p->generated += g;
    if (c->compaction)
      s->high = live + g; /* the live frames compacted, the new ones behind them */
    for (uint32_t i = 0; i < g; ++i) {
      const uint32_t id = s->admitted++;
      s->queue[id] = (uint8_t)run_item(s, id, 0);
    }
  }
  return false;
}

/* The megakernel: each item's runs (the entry's included) against the limit. */
static void predict_mega(const fz_case *c, uint64_t limit, fz_prediction *p) {
  static sim s;
  memset(&s, 0, sizeof s);
  s.c = c;
  s.p = p;
  for (uint32_t id = 0; id < c->N; ++id) {
    uint32_t runs = 1, k = run_item(&s, id, 0);
    while (k) {
      ++runs;
      k = run_item(&s, id, k);
    }
    if (runs > p->mega_runs)
      p->mega_runs = runs;
    if (limit && runs > limit)
      p->mega_stopped += 1;
  }
  if (p->mega_stopped)
    p->status = WS_EITERATION_LIMIT;
  p->iterations = c->N && !p->mega_stopped ? 1u : 0u;
}

void fz_predict(const fz_case *c, uint64_t limit, bool misbehave, fz_prediction *p) {
  memset(p, 0, sizeof *p);
  p->status = WS_OK;
  p->exact = !c->partial;
  if (c->mega) {
    predict_mega(c, limit, p);
    return;
  }
  if (!p->exact)
    return; /* WS_OK, and nothing more: which frames a partial admission runs
               depends on the library's slot order */
  static sim s;
  memset(&s, 0, sizeof s);
  s.c = c;
  s.p = p;
  s.mis = misbehave;
  s.N = c->N;
  s.A = c->N < c->R ? c->N : c->R;
  s.works = c->works;
  s.limit = limit;
  s.thr = c->threshold == 0 ? s.A / 2 : c->threshold < s.A ? c->threshold : s.A;
  s.high = c->compaction ? 0u : s.A;
  if (s.A == 0)
    return; /* nothing runs, not even the works' reset */
  for (uint32_t w = 0; w < s.works; ++w)
    if (call(&s, w, FZ_CB_RESET))
      return;
  while (!step(&s))
    s.pass += 1;
}
