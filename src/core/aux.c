/* wavesched — auxiliary work: registration (SPEC §3.5) and the loop's steps
 * A-E (SPEC §3.4).
 *
 * Invariant kept for every registered work w at every iteration boundary:
 *     L_w = Σ_s q_w[s] <= C_w.
 * Proof sketch (docs/protocol.md): a stage run moves or terminates items and
 * never clones, so it cannot raise L_w; a producer of m frames with bound b
 * raises L_w by at most m*b, and it runs only when m*b <= C_w - L_w. Both are
 * checked at the next boundary against `allowance`, so a client that breaks
 * its contract is reported, never trusted.
 */
#include <inttypes.h>
#include <string.h>

#include "alloc.h"
#include "sched.h"

/* ---- defaults of the optional calls (SPEC §3.3) ---- */

static bool legacy(const ws_scheduler *s) { return s->cfg.aux_protocol == WS_AUX_SINGLE_STAGE; }

static uint32_t stage_count_of(const ws_aux_entry *a) {
  return a->w.stage_count ? a->w.stage_count(a->w.user) : 1u;
}

static const char *stage_name_of(const ws_aux_entry *a, uint32_t stage) {
  return a->w.stage_name ? a->w.stage_name(a->w.user, stage) : a->w.name;
}

static ws_status stage_host_count_of(const ws_aux_entry *a, uint32_t stage, uint32_t *out) {
  if (a->w.stage_host_count)
    return a->w.stage_host_count(a->w.user, stage, out);
  return a->w.host_count(a->w.user, out);
}

static ws_status dispatch_stage_of(const ws_aux_entry *a, uint32_t stage) {
  if (a->w.dispatch_stage)
    return a->w.dispatch_stage(a->w.user, stage);
  return a->w.dispatch(a->w.user);
}

static ws_status legacy_dispatch_of(const ws_aux_entry *a) {
  if (a->w.dispatch)
    return a->w.dispatch(a->w.user);
  return a->w.dispatch_stage(a->w.user, 0);
}

static ws_status admission_stage_of(const ws_aux_entry *a, uint32_t *out) {
  if (a->w.admission_stage)
    return a->w.admission_stage(a->w.user, out);
  for (uint32_t st = 0; st < a->stage_count; ++st) {
    if (a->q[st] != 0) {
      *out = st;
      return WS_OK;
    }
  }
  *out = a->stage_count; /* out of range: reported by the caller */
  return WS_OK;
}

/* ---- registration ---- */

static ws_status reg_fail(ws_scheduler *s, ws_status st, const ws_aux_work *w, const char *what) {
  return ws_sched_fail(s, st, "ws_scheduler_add_aux: auxiliary work '%s': %s",
                       (w && w->name) ? w->name : "(null)", what);
}

ws_status ws_scheduler_add_aux(ws_scheduler *s, const ws_aux_work *w) {
  if (!s)
    return WS_EINVAL;
  if (!w || !w->reset || !w->enqueue_count_readback || !w->host_count ||
      (!w->dispatch && !w->dispatch_stage) || !w->name)
    return reg_fail(s, WS_EAUX_NULL, w,
                    "NULL work, or missing name, reset, enqueue_count_readback, host_count or "
                    "both dispatch and dispatch_stage");
  if (s->closed)
    return reg_fail(s, WS_EAUX_CLOSED, w, "registration is closed after the first dispatch");
  if (s->cfg.kind != WS_SCHEDULER_WAVEFRONT || !s->cfg.largest_first)
    return reg_fail(s, WS_EAUX_POLICY, w,
                    "auxiliary work needs the wavefront scheduler with the greedy policy");
  if (w->capacity == 0)
    return reg_fail(s, WS_EAUX_CAPACITY, w, "capacity is 0");
  if (w->name[0] == '\0')
    return reg_fail(s, WS_EAUX_NAME, w, "the name is empty");
  for (uint32_t i = 0; i < s->aux_count; ++i)
    if (strcmp(s->aux[i].w.name, w->name) == 0)
      return reg_fail(s, WS_EAUX_NAME, w, "a work of that name is already registered");
  if (w->producer_count == 0 || !w->producers)
    return reg_fail(s, WS_EAUX_NO_PRODUCER, w, "no producer declared");

  uint32_t *bound = ws_calloc(s->K + 1, sizeof *bound);
  if (!bound)
    return ws_sched_fail(s, WS_ENOMEM, "ws_scheduler_add_aux: out of memory");
  ws_status st = WS_OK;
  for (uint32_t p = 0; p < w->producer_count && st == WS_OK; ++p) {
    const ws_aux_producer *pr = &w->producers[p];
    uint32_t j = pr->continuation ? ws_scheduler_continuation_index(s, pr->continuation) : 0;
    if (j == 0) {
      st = ws_sched_fail(s, WS_EAUX_PRODUCER,
                         "ws_scheduler_add_aux: auxiliary work '%s': producer %u names '%s', "
                         "which is no continuation of coroutine '%s' (the entry cannot produce)",
                         w->name, p, pr->continuation ? pr->continuation : "(null)", s->coro.name);
    } else if (bound[j] != 0) {
      st = ws_sched_fail(s, WS_EAUX_PRODUCER,
                         "ws_scheduler_add_aux: auxiliary work '%s': continuation '%s' is declared "
                         "as a producer twice",
                         w->name, pr->continuation);
    } else if (pr->bound == 0) {
      st = ws_sched_fail(s, WS_EAUX_BOUND,
                         "ws_scheduler_add_aux: auxiliary work '%s': producer '%s' has bound 0",
                         w->name, pr->continuation);
    } else if (!s->cfg.partial_admission &&
               (uint64_t)s->R * pr->bound > (uint64_t)w->capacity) {
      st = ws_sched_fail(s, WS_EAUX_POOL_BOUND,
                         "ws_scheduler_add_aux: auxiliary work '%s': producer '%s': resident "
                         "frames %u x bound %u = %" PRIu64 " exceeds capacity %u (an empty pool "
                         "must admit a full queue)",
                         w->name, pr->continuation, s->R, pr->bound,
                         (uint64_t)s->R * pr->bound, w->capacity);
    } else if (s->cfg.partial_admission && pr->bound > w->capacity) {
      st = ws_sched_fail(s, WS_EAUX_POOL_BOUND,
                         "ws_scheduler_add_aux: auxiliary work '%s': producer '%s': bound %u "
                         "exceeds capacity %u (an empty pool must admit one frame)",
                         w->name, pr->continuation, pr->bound, w->capacity);
    } else {
      bound[j] = pr->bound;
    }
  }
  uint32_t stages = 1;
  if (st == WS_OK && !legacy(s)) {
    stages = w->stage_count ? w->stage_count(w->user) : 1u;
    if (stages == 0)
      st = reg_fail(s, WS_EAUX_STAGES, w, "stage_count() is 0");
    for (uint32_t a = 0; a < stages && st == WS_OK; ++a) {
      const char *na = w->stage_name ? w->stage_name(w->user, a) : w->name;
      if (!na || !na[0]) {
        st = ws_sched_fail(s, WS_EAUX_STAGES,
                           "ws_scheduler_add_aux: auxiliary work '%s': stage %u has no name",
                           w->name, a);
        break;
      }
      for (uint32_t b = 0; b < a; ++b) {
        const char *nb = w->stage_name ? w->stage_name(w->user, b) : w->name;
        if (strcmp(na, nb) == 0) {
          st = ws_sched_fail(s, WS_EAUX_STAGES,
                             "ws_scheduler_add_aux: auxiliary work '%s': stages %u and %u are "
                             "both named '%s'",
                             w->name, b, a, na);
          break;
        }
      }
    }
  }
  if (st != WS_OK) {
    ws_free(bound);
    return st;
  }

  /* Reserve everything now so that nothing is left half-registered. */
  ws_aux_entry *grown = ws_calloc(s->aux_count + 1, sizeof *grown);
  ws_node_stats *stats = ws_calloc(s->aux_stats_count + stages, sizeof *stats);
  ws_aux_producer *prods = ws_calloc(w->producer_count, sizeof *prods);
  uint32_t *q = ws_calloc(stages, sizeof *q);
  if (!grown || !stats || !prods || !q) {
    ws_free(grown);
    ws_free(stats);
    ws_free(prods);
    ws_free(q);
    ws_free(bound);
    return ws_sched_fail(s, WS_ENOMEM, "ws_scheduler_add_aux: out of memory");
  }
  if (s->aux_count)
    memcpy(grown, s->aux, s->aux_count * sizeof *grown);
  if (s->aux_stats_count)
    memcpy(stats, s->aux_stats, s->aux_stats_count * sizeof *stats);
  memcpy(prods, w->producers, w->producer_count * sizeof *prods);

  ws_aux_entry *a = &grown[s->aux_count];
  a->w = *w;
  a->w.producers = prods;
  a->producers = prods;
  a->bound = bound;
  a->stage_count = stages;
  a->first_stat = s->aux_stats_count;
  a->q = q;
  for (uint32_t st2 = 0; st2 < stages; ++st2)
    stats[a->first_stat + st2].name = legacy(s) ? w->name : stage_name_of(a, st2);

  ws_free(s->aux);
  ws_free(s->aux_stats);
  s->aux = grown;
  s->aux_stats = stats;
  s->aux_count += 1;
  s->aux_stats_count += stages;
  return WS_OK;
}

void ws_aux_release_all(ws_scheduler *s) {
  for (uint32_t i = 0; i < s->aux_count; ++i) {
    ws_free(s->aux[i].producers);
    ws_free(s->aux[i].bound);
    ws_free(s->aux[i].q);
  }
  ws_free(s->aux);
  ws_free(s->aux_stats);
  s->aux = NULL;
  s->aux_stats = NULL;
  s->aux_count = 0;
  s->aux_stats_count = 0;
}

/* ---- dispatch prologue and observation ---- */

static ws_status client_fail(ws_scheduler *s, const ws_aux_entry *a, uint64_t it, const char *call,
                             ws_status st) {
  return ws_sched_fail(s, WS_EPROTO_CLIENT,
                       "iteration %" PRIu64 ": auxiliary work '%s': %s() failed with %s (%s)", it,
                       a->w.name, call, ws_status_name(st), ws_device_last_error(s->dev));
}

ws_status ws_aux_reset_all(ws_scheduler *s) {
  for (uint32_t i = 0; i < s->aux_count; ++i) {
    ws_aux_entry *a = &s->aux[i];
    ws_status st = a->w.reset(a->w.user);
    if (st != WS_OK)
      return client_fail(s, a, 0, "reset", st);
    memset(a->q, 0, a->stage_count * sizeof *a->q);
    a->live = 0;
    a->allowance = 0;
    a->last = WS_AUX_LAST_NONE;
  }
  for (uint32_t i = 0; i < s->aux_stats_count; ++i) {
    s->aux_stats[i].dispatch_count = 0;
    s->aux_stats[i].executed_count = 0;
    s->aux_stats[i].peak_queued_count = 0;
  }
  return WS_OK;
}

ws_status ws_aux_enqueue_readbacks(ws_scheduler *s, uint64_t iteration) {
  for (uint32_t i = 0; i < s->aux_count; ++i) {
    ws_aux_entry *a = &s->aux[i];
    ws_status st = a->w.enqueue_count_readback(a->w.user);
    if (st != WS_OK)
      return client_fail(s, a, iteration, "enqueue_count_readback", st);
  }
  return WS_OK;
}

/* Names what broke the allowance: the previous action is the only suspect,
 * because one thing ran between two boundaries. */
static ws_status allowance_fail(ws_scheduler *s, const ws_aux_entry *a, uint64_t it,
                                uint32_t live) {
  if (a->last == WS_AUX_LAST_STAGE)
    return ws_sched_fail(s, WS_EPROTO_CLONED,
                         "iteration %" PRIu64 ": auxiliary work '%s': after dispatching stage '%s' "
                         "the live count rose from %" PRIu64 " to %u: a stage cloned items",
                         it, a->w.name, stage_name_of(a, a->last_stage), a->allowance, live);
  if (a->last == WS_AUX_LAST_PRODUCER)
    return ws_sched_fail(s, WS_EPROTO_BOUND,
                         "iteration %" PRIu64 ": auxiliary work '%s': the live count %u exceeds "
                         "the %" PRIu64 " its admitted producer's bound allows: the producer "
                         "published more than declared",
                         it, a->w.name, live, a->allowance);
  return ws_sched_fail(s, WS_EPROTO_BOUND,
                       "iteration %" PRIu64 ": auxiliary work '%s': the live count rose to %u "
                       "(allowed %" PRIu64 ") after a launch that is no declared producer of it",
                       it, a->w.name, live, a->allowance);
}

ws_status ws_aux_observe(ws_scheduler *s, uint64_t it, uint64_t *live_total, uint32_t *best_work,
                         uint32_t *best_stage, uint32_t *best_count) {
  *live_total = 0;
  *best_work = UINT32_MAX;
  *best_stage = 0;
  *best_count = 0;
  for (uint32_t i = 0; i < s->aux_count; ++i) {
    ws_aux_entry *a = &s->aux[i];
    uint32_t cnt = 0;
    ws_status st = a->w.host_count(a->w.user, &cnt);
    if (st != WS_OK)
      return client_fail(s, a, it, "host_count", st);
    if (cnt > a->w.capacity)
      return ws_sched_fail(s, WS_EPROTO_OVER_CAPACITY,
                           "iteration %" PRIu64 ": auxiliary work '%s': live count %u exceeds "
                           "capacity %u",
                           it, a->w.name, cnt, a->w.capacity);
    if (a->last != WS_AUX_LAST_NONE && cnt > a->allowance)
      return allowance_fail(s, a, it, cnt);
    if (legacy(s)) {
      a->q[0] = cnt;
    } else {
      uint32_t now = stage_count_of(a);
      if (now != a->stage_count)
        return ws_sched_fail(s, WS_EPROTO_STAGE_COUNT,
                             "iteration %" PRIu64 ": auxiliary work '%s': stage_count() is %u, "
                             "was %u at registration",
                             it, a->w.name, now, a->stage_count);
      uint64_t sum = 0;
      for (uint32_t sg = 0; sg < a->stage_count; ++sg) {
        st = stage_host_count_of(a, sg, &a->q[sg]);
        if (st != WS_OK)
          return client_fail(s, a, it, "stage_host_count", st);
        sum += a->q[sg];
      }
      if (sum != cnt)
        return ws_sched_fail(s, WS_EPROTO_STAGE_SUM,
                             "iteration %" PRIu64 ": auxiliary work '%s': stage sum differs from "
                             "live count: stages sum to %" PRIu64 ", host_count() is %u",
                             it, a->w.name, sum, cnt);
    }
    for (uint32_t sg = 0; sg < a->stage_count; ++sg) {
      /* strictly greater: earliest work, then lowest stage, wins ties */
      if (a->q[sg] > *best_count) {
        *best_count = a->q[sg];
        *best_work = i;
        *best_stage = sg;
      }
      ws_node_stats *ns = &s->aux_stats[a->first_stat + sg];
      if (a->q[sg] > ns->peak_queued_count)
        ns->peak_queued_count = a->q[sg];
    }
    a->live = cnt;
    *live_total += cnt;
  }
  return WS_OK;
}

ws_status ws_aux_decide(ws_scheduler *s, uint64_t it, uint32_t queue, uint32_t n,
                        uint32_t best_work, uint32_t best_stage, uint32_t best_count,
                        ws_aux_decision *d) {
  d->run_stage = false;
  d->forced = false;
  d->admit = n;
  /* B. Admission: only when the main queue would win the competition. */
  uint32_t forced = UINT32_MAX;
  if (n != 0 && best_count <= n) {
    for (uint32_t i = 0; i < s->aux_count; ++i) {
      const ws_aux_entry *a = &s->aux[i];
      uint32_t b = a->bound[queue];
      if (b == 0)
        continue;
      bool blocked;
      if (s->cfg.partial_admission) {
        uint32_t fit = ws_aux_admissible_frames(a->w.capacity, a->live, n, b);
        blocked = fit == 0;
        if (!blocked && fit < d->admit)
          d->admit = fit;
      } else {
        blocked = !ws_aux_can_admit(a->w.capacity, a->live, n, b);
      }
      if (!blocked)
        continue;
      /* Registration guarantees an empty pool admits (R*b <= C, or b <= C
       * with partial admission), so a blocked work holds items. */
      if (a->live == 0)
        return ws_sched_fail(s, WS_EPROTO_INTERNAL,
                             "iteration %" PRIu64 ": auxiliary work '%s' is empty yet blocks %u "
                             "frames of '%s' with bound %u (capacity %u)",
                             it, a->w.name, n, s->coro.continuation_names[queue - 1], b,
                             a->w.capacity);
      if (forced == UINT32_MAX || a->live > s->aux[forced].live)
        forced = i;
    }
  }
  if (forced != UINT32_MAX) {
    /* C. Drain: the blocked owner names the stage that releases capacity. */
    ws_aux_entry *a = &s->aux[forced];
    uint32_t stage = 0;
    if (!legacy(s)) {
      ws_status st = admission_stage_of(a, &stage);
      if (st != WS_OK)
        return client_fail(s, a, it, "admission_stage", st);
      if (stage >= a->stage_count || a->q[stage] == 0)
        return ws_sched_fail(s, WS_EPROTO_DRAIN_STAGE,
                             "iteration %" PRIu64 ": auxiliary work '%s': admission_stage() "
                             "returned stage %u, which is %s (stage count %u, its count %u)",
                             it, a->w.name, stage,
                             stage >= a->stage_count ? "out of range" : "empty", a->stage_count,
                             stage < a->stage_count ? a->q[stage] : 0u);
    }
    d->run_stage = true;
    d->forced = true;
    d->work = forced;
    d->stage = stage;
    return WS_OK;
  }
  /* D. Decide: a stage beats the main queue only when strictly larger. */
  if (best_work != UINT32_MAX && best_count > n) {
    d->run_stage = true;
    d->work = best_work;
    d->stage = best_stage;
  }
  return WS_OK;
}

static void set_allowances(ws_scheduler *s) {
  for (uint32_t i = 0; i < s->aux_count; ++i) {
    s->aux[i].allowance = s->aux[i].live;
    s->aux[i].last = WS_AUX_LAST_OTHER;
  }
}

void ws_aux_before_refill(ws_scheduler *s) { set_allowances(s); }

ws_status ws_aux_run_stage(ws_scheduler *s, uint64_t it, const ws_aux_decision *d) {
  ws_aux_entry *a = &s->aux[d->work];
  set_allowances(s);
  a->last = WS_AUX_LAST_STAGE;
  a->last_stage = d->stage;
  ws_status st = legacy(s) ? legacy_dispatch_of(a) : dispatch_stage_of(a, d->stage);
  if (st != WS_OK)
    return client_fail(s, a, it, legacy(s) ? "dispatch" : "dispatch_stage", st);
  ws_node_stats *ns = &s->aux_stats[a->first_stat + d->stage];
  ns->dispatch_count += 1;
  ns->executed_count += a->q[d->stage];
  s->dstats.aux_dispatch_count += 1;
  if (d->forced)
    s->dstats.forced_drain_count += 1;
  return WS_OK;
}

ws_status ws_aux_before_launch(ws_scheduler *s, uint64_t it, uint32_t queue, uint32_t m) {
  set_allowances(s);
  for (uint32_t i = 0; i < s->aux_count; ++i) {
    ws_aux_entry *a = &s->aux[i];
    uint32_t b = queue ? a->bound[queue] : 0u;
    if (b == 0)
      continue;
    uint64_t required = (uint64_t)m * b;
    a->allowance = a->live + required;
    a->last = WS_AUX_LAST_PRODUCER;
    if (!legacy(s) && a->w.prepare_for_producer) {
      ws_status st = a->w.prepare_for_producer(a->w.user, required);
      if (st != WS_OK)
        return client_fail(s, a, it, "prepare_for_producer", st);
    }
  }
  return WS_OK;
}
