/* SPDX-License-Identifier: MIT */
/* wavesched — auxiliary work: registration (SPEC §3.5), the host's
 * observation of each work and the client calls the host loop makes. The
 * decisions themselves (SPEC §3.4 A-E) are in decide.h.
 *
 * Invariant kept for every registered work w at every iteration boundary:
 *     L_w = Σ_s q_w[s] <= C_w.
 * Proof sketch (docs/protocol.md): a stage run moves or terminates items and
 * never clones, so it cannot raise L_w; a producer of m frames with bound b
 * raises L_w by at most m*b, and it runs only when m*b <= C_w - L_w. Both are
 * checked at the next boundary against the work's allowance, so a client
 * that breaks its contract is reported, never trusted.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "sched.h"

/* ---- defaults of the optional calls (SPEC §3.3) ---- */

static uint32_t stage_count_of(const ws_aux_work *w) {
  return w->stage_count ? w->stage_count(w->user) : 1u;
}

static const char *stage_name_of(const ws_aux_work *w, uint32_t stage) {
  return w->stage_name ? w->stage_name(w->user, stage) : w->name;
}

/* ---- registration: checks, then a commit that cannot fail halfway ---- */

static ws_status reg_fail(ws_scheduler *s, ws_status st, const ws_aux_work *w, const char *fmt,
                          ...) __attribute__((format(printf, 4, 5)));

static ws_status reg_fail(ws_scheduler *s, ws_status st, const ws_aux_work *w, const char *fmt,
                          ...) {
  char what[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  return ws_sched_fail(s, st, "ws_scheduler_add_aux: auxiliary work '%s': %s",
                       (w && w->name) ? w->name : "(null)", what);
}

/* SPEC §3.5, the checks that need no memory. */
static ws_status check_work(ws_scheduler *s, const ws_aux_work *w) {
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
  return WS_OK;
}

/* SPEC §3.5, producers and stages: fills `bound` ([K + 1], zeroed) with
 * the producer bounds and returns the stage count in *stages. */
static ws_status check_producers(ws_scheduler *s, const ws_aux_work *w, uint32_t *bound,
                                 uint32_t *stages) {
  for (uint32_t p = 0; p < w->producer_count; ++p) {
    const ws_aux_producer *pr = &w->producers[p];
    const uint32_t j = pr->continuation ? ws_scheduler_continuation_index(s, pr->continuation) : 0;
    if (j == 0)
      return reg_fail(s, WS_EAUX_PRODUCER, w,
                      "producer %u names '%s', which is no continuation of coroutine '%s' (the "
                      "entry cannot produce)",
                      p, pr->continuation ? pr->continuation : "(null)", s->coro.name);
    if (bound[j] != 0)
      return reg_fail(s, WS_EAUX_PRODUCER, w, "continuation '%s' is declared as a producer twice",
                      pr->continuation);
    if (pr->bound == 0)
      return reg_fail(s, WS_EAUX_BOUND, w, "producer '%s' has bound 0", pr->continuation);
    /* progress: an empty pool must admit a full queue (or, with partial
     * admission, one frame) */
    if (!s->cfg.partial_admission && (uint64_t)s->R * pr->bound > (uint64_t)w->capacity)
      return reg_fail(s, WS_EAUX_POOL_BOUND, w,
                      "producer '%s': resident frames %u x bound %u = %" PRIu64
                      " exceeds capacity %u (an empty pool must admit a full queue)",
                      pr->continuation, s->R, pr->bound, (uint64_t)s->R * pr->bound,
                      w->capacity);
    if (s->cfg.partial_admission && pr->bound > w->capacity)
      return reg_fail(s, WS_EAUX_POOL_BOUND, w,
                      "producer '%s': bound %u exceeds capacity %u (an empty pool must admit "
                      "one frame)",
                      pr->continuation, pr->bound, w->capacity);
    bound[j] = pr->bound;
  }
  const uint32_t S = stage_count_of(w);
  if (S == 0)
    return reg_fail(s, WS_EAUX_STAGES, w, "stage_count() is 0");
  for (uint32_t a = 0; a < S; ++a) {
    const char *na = stage_name_of(w, a);
    if (!na || !na[0])
      return reg_fail(s, WS_EAUX_STAGES, w, "stage %u has no name", a);
    for (uint32_t b = 0; b < a; ++b)
      if (strcmp(na, stage_name_of(w, b)) == 0)
        return reg_fail(s, WS_EAUX_STAGES, w, "stages %u and %u are both named '%s'", b, a, na);
  }
  *stages = S;
  return WS_OK;
}

/* Why `w` cannot run in a device loop (NULL: it can). Its device
 * description is checked as well: a malformed one is an error even when the
 * host loop would run it (*bad is then set). */
static const char *host_only_reason(ws_scheduler *s, const ws_aux_work *w, uint32_t S,
                                    bool *bad) {
  *bad = false;
  if (!w->device)
    return "it has no device description (ws_aux_work.device)";
  const ws_aux_device *dv = w->device;
  if (!dv->live || !dv->stage_counts || !dv->stages) {
    *bad = true;
    return "its device description lacks the live word, the stage counts or the stage kernels";
  }
  for (uint32_t st = 0; st < S; ++st) {
    const ws_aux_stage_kernel *k = &dv->stages[st];
    if (!k->kernel.entry || k->kernel.dev != s->dev || k->kernel.entry->kind != WS_ENTRY_KERNEL ||
        k->args_size != k->kernel.entry->args_size || k->args_size > WS_MAX_KERNEL_ARGS ||
        (k->args_size && !k->args)) {
      *bad = true;
      return "a stage kernel of its device description is no kernel of this device, or its "
             "argument block is not the kernel's";
    }
  }
  if (dv->extent && (!dv->tokens || !dv->ids || !dv->scratch || !dv->payload ||
                     !dv->payload_stride)) {
    *bad = true;
    return "its device description has an append extent but lacks the tokens, ids, scratch or "
           "payload of the storage, or its payload stride";
  }
  if (w->admission_stage)
    return "admission_stage() is a host call (the device loop drains the first non-empty stage)";
  if (w->prepare_for_producer)
    return "prepare_for_producer() is a host call";
  if ((w->prepare_for_admission || w->available_slots) && !dv->extent)
    return "prepare_for_admission() / available_slots() are host calls, and its device "
           "description has no append storage (ws_aux_device.extent) for the device loop to "
           "prepare itself";
  return NULL;
}

/* The device description's stage kernels with their argument blocks. */
static ws_loop_stage *copy_stages(const ws_aux_device *dv, uint32_t S) {
  ws_loop_stage *st = ws_calloc(S, sizeof *st);
  if (!st)
    return NULL;
  for (uint32_t i = 0; i < S; ++i) {
    st[i].entry = dv->stages[i].kernel.entry;
    st[i].count = dv->stages[i].count;
    st[i].args_size = dv->stages[i].args_size;
    if (st[i].args_size)
      memcpy(st[i].args, dv->stages[i].args, st[i].args_size);
  }
  return st;
}

/* Grows every per-work array by one entry; on failure nothing changed. */
static ws_status commit_work(ws_scheduler *s, const ws_aux_work *w, uint32_t *bound, uint32_t S,
                             void *adapter, const char *host_only) {
  const uint32_t n = s->aux_count, ns = s->aux_stats_count;
  ws_loop_stage *stages = NULL;
  if (!host_only && !(stages = copy_stages(w->device, S)))
    return ws_sched_fail(s, WS_ENOMEM, "ws_scheduler_add_aux: out of host memory");
  ws_aux_entry *aux = ws_calloc(n + 1, sizeof *aux);
  ws_dec_work *dwork = ws_calloc(n + 1, sizeof *dwork);
  uint64_t *stats = ws_calloc(3 * ((size_t)ns + S), sizeof *stats);
  const char **names = ws_calloc((size_t)ns + S, sizeof *names);
  ws_aux_producer *prods = ws_calloc(w->producer_count, sizeof *prods);
  uint32_t *q = ws_calloc(S, sizeof *q);
  if (!aux || !dwork || !stats || !names || !prods || !q) {
    ws_free(aux);
    ws_free(dwork);
    ws_free(stats);
    ws_free(names);
    ws_free(prods);
    ws_free(q);
    ws_free(stages);
    return ws_sched_fail(s, WS_ENOMEM, "ws_scheduler_add_aux: out of host memory");
  }
  if (n) {
    memcpy(aux, s->aux, n * sizeof *aux);
    memcpy(dwork, s->dwork, n * sizeof *dwork);
  }
  if (ns) {
    memcpy(stats, s->aux_stats, 3 * (size_t)ns * sizeof *stats);
    memcpy(names, s->aux_names, ns * sizeof *names);
  }
  memcpy(prods, w->producers, w->producer_count * sizeof *prods);

  ws_aux_entry *a = &aux[n];
  a->w = *w;
  a->w.producers = prods;
  a->producers = prods;
  a->bound = bound;
  a->q = q;
  a->stage_count = S;
  a->first_stat = ns;
  a->adapter = adapter;
  a->stages = stages;
  a->host_only = host_only;
  /* the entries move when the array grows: keep the description by value */
  a->w.device = NULL;
  if (!host_only) {
    a->device = *w->device;
    a->device.stages = NULL; /* the copy in `stages` is what runs */
  }
  for (uint32_t st = 0; st < S; ++st)
    names[ns + st] = stage_name_of(w, st);

  ws_free(s->aux);
  ws_free(s->dwork);
  ws_free(s->aux_stats);
  ws_free(s->aux_names);
  s->aux = aux;
  s->dwork = dwork;
  s->aux_stats = stats;
  s->aux_names = names;
  s->aux_count = n + 1;
  s->aux_stats_count = ns + S;
  return WS_OK;
}

ws_status ws_scheduler_add_aux(ws_scheduler *s, const ws_aux_work *client) {
  if (!s)
    return WS_EINVAL;
  const ws_aux_work *w = client;
  if (!w || !w->reset || !w->enqueue_count_readback || !w->host_count ||
      (!w->dispatch && !w->dispatch_stage) || !w->name)
    return reg_fail(s, WS_EAUX_NULL, w,
                    "NULL work, or missing name, reset, enqueue_count_readback, host_count or "
                    "both dispatch and dispatch_stage");
  ws_status st = check_work(s, w);
  if (st != WS_OK)
    return st;
  ws_aux_work adapted;
  void *adapter = NULL;
  if (s->cfg.aux_protocol == WS_AUX_SINGLE_STAGE) {
    st = ws_aux_legacy_adapt(client, &adapted, &adapter);
    if (st != WS_OK)
      return ws_sched_fail(s, st, "ws_scheduler_add_aux: out of host memory");
    w = &adapted;
  }
  uint32_t *bound = ws_calloc(s->K + 1, sizeof *bound);
  if (!bound) {
    ws_aux_legacy_free(adapter);
    return ws_sched_fail(s, WS_ENOMEM, "ws_scheduler_add_aux: out of host memory");
  }
  uint32_t S = 0;
  st = check_producers(s, w, bound, &S);
  const char *host_only = NULL;
  if (st == WS_OK) {
    bool bad = false;
    host_only = adapter ? "the single-stage protocol runs in the host loop"
                        : host_only_reason(s, w, S, &bad);
    if (bad)
      st = reg_fail(s, WS_EINVAL, w, "%s", host_only);
    else if (host_only && s->cfg.loop == WS_LOOP_DEVICE)
      st = reg_fail(s, WS_ECONFIG_LOOP, w,
                    "the scheduler asks for the device loop, but this work needs the host: %s",
                    host_only);
  }
  if (st == WS_OK)
    st = commit_work(s, w, bound, S, adapter, host_only);
  if (st != WS_OK) {
    ws_free(bound);
    ws_aux_legacy_free(adapter);
  }
  return st;
}

void ws_aux_release_all(ws_scheduler *s) {
  for (uint32_t i = 0; i < s->aux_count; ++i) {
    ws_free(s->aux[i].producers);
    ws_free(s->aux[i].bound);
    ws_free(s->aux[i].q);
    ws_free(s->aux[i].stages);
    ws_aux_legacy_free(s->aux[i].adapter);
  }
  ws_free(s->aux);
  ws_free(s->dwork);
  ws_free(s->aux_stats);
  ws_free(s->aux_names);
  s->aux = NULL;
  s->dwork = NULL;
  s->aux_stats = NULL;
  s->aux_names = NULL;
  s->aux_count = 0;
  s->aux_stats_count = 0;
}

/* ---- the dispatch prologue and the host's observation ---- */

/* The message of a client call that returned `st`: the iteration, the
 * work, the call, the status and, when the device holds one, its message
 * in parentheses (a client may fail without setting any). */
static void client_failure(const ws_scheduler *s, char *buf, size_t size, uint64_t it,
                           const char *work, const char *call, ws_status st) {
  const char *said = ws_device_last_error(s->dev);
  snprintf(buf, size, "iteration %" PRIu64 ": auxiliary work '%s': %s() failed with %s%s%s%s", it,
           work, call, ws_status_name(st), *said ? " (" : "", said, *said ? ")" : "");
}

ws_status ws_aux_client_fail(ws_scheduler *s, uint32_t work, uint64_t it, const char *call,
                             ws_status st) {
  char msg[sizeof s->error];
  client_failure(s, msg, sizeof msg, it, s->aux[work].w.name, call, st);
  return ws_sched_fail(s, WS_EPROTO_CLIENT, "%s", msg);
}

ws_status ws_aux_reset_all(ws_scheduler *s) {
  for (uint32_t i = 0; i < s->aux_count; ++i) {
    ws_aux_entry *a = &s->aux[i];
    ws_status st = a->w.reset(a->w.user);
    if (st != WS_OK)
      return ws_aux_client_fail(s, i, 0, "reset", st);
    memset(a->q, 0, a->stage_count * sizeof *a->q);
    ws_dec_work *dw = &s->dwork[i];
    memset(dw, 0, sizeof *dw);
    dw->bound = (uint64_t)(uintptr_t)a->bound;
    dw->q = (uint64_t)(uintptr_t)a->q;
    dw->capacity = a->w.capacity;
    dw->stage_count = a->stage_count;
    dw->first_stat = a->first_stat;
    dw->last = WS_LAST_NONE;
  }
  return WS_OK;
}

ws_status ws_aux_enqueue_readbacks(ws_scheduler *s, uint64_t iteration) {
  for (uint32_t i = 0; i < s->aux_count; ++i) {
    ws_aux_entry *a = &s->aux[i];
    ws_status st = a->w.enqueue_count_readback(a->w.user);
    if (st != WS_OK)
      return ws_aux_client_fail(s, i, iteration, "enqueue_count_readback", st);
  }
  return WS_OK;
}

/* Records a failure of work i's observation for the decisions (SPEC §3.4 A
 * order) and keeps its message for loop_error.c. */
static void observe_fail(ws_scheduler *s, uint32_t i, ws_status st, bool late, const char *fmt,
                         ...) __attribute__((format(printf, 5, 6)));

static void observe_fail(ws_scheduler *s, uint32_t i, ws_status st, bool late, const char *fmt,
                         ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(s->obs_msg, sizeof s->obs_msg, fmt, ap);
  va_end(ap);
  s->dwork[i].obs_status = st;
  s->dwork[i].obs_late = late;
}

void ws_aux_observe_host(ws_scheduler *s) {
  const uint64_t it = s->d.pass;
  s->obs_msg[0] = '\0';
  for (uint32_t i = 0; i < s->aux_count; ++i) {
    ws_aux_entry *a = &s->aux[i];
    ws_dec_work *dw = &s->dwork[i];
    dw->obs_status = 0;
    dw->obs_late = 0;
    dw->client_err = 0;
    uint32_t cnt = 0;
    ws_status st = a->w.host_count(a->w.user, &cnt);
    if (st != WS_OK) {
      char msg[sizeof s->obs_msg];
      client_failure(s, msg, sizeof msg, it, a->w.name, "host_count", st);
      observe_fail(s, i, WS_EPROTO_CLIENT, false, "%s", msg);
      return;
    }
    dw->live = cnt;
    const uint32_t now = stage_count_of(&a->w);
    if (now != a->stage_count) {
      observe_fail(s, i, WS_EPROTO_STAGE_COUNT, true,
                   "iteration %" PRIu64 ": auxiliary work '%s': stage_count() is %u, was %u at "
                   "registration",
                   it, a->w.name, now, a->stage_count);
      return;
    }
    for (uint32_t sg = 0; sg < a->stage_count; ++sg) {
      /* the default, host_count(), was just read: nothing synchronized since */
      if (!a->w.stage_host_count) {
        a->q[sg] = cnt;
        continue;
      }
      st = a->w.stage_host_count(a->w.user, sg, &a->q[sg]);
      if (st != WS_OK) {
        char msg[sizeof s->obs_msg];
        client_failure(s, msg, sizeof msg, it, a->w.name, "stage_host_count", st);
        observe_fail(s, i, WS_EPROTO_CLIENT, true, "%s", msg);
        return;
      }
    }
  }
}

/* ---- the client calls of a plan ---- */

ws_status ws_aux_admission_stage(ws_scheduler *s, uint64_t it) {
  ws_dec_plan *p = &s->d.plan;
  if (p->action != WS_ACT_STAGE || !p->forced)
    return WS_OK;
  ws_aux_entry *a = &s->aux[p->work];
  if (!a->w.admission_stage)
    return WS_OK;
  ws_status st = a->w.admission_stage(a->w.user, &p->stage);
  if (st != WS_OK)
    return ws_aux_client_fail(s, p->work, it, "admission_stage", st);
  return WS_OK;
}

ws_status ws_aux_dispatch_stage(ws_scheduler *s, uint64_t it, uint32_t work, uint32_t stage) {
  ws_aux_entry *a = &s->aux[work];
  ws_status st = a->w.dispatch_stage ? a->w.dispatch_stage(a->w.user, stage)
                                     : a->w.dispatch(a->w.user);
  if (st != WS_OK)
    return ws_aux_client_fail(s, work, it, a->w.dispatch_stage ? "dispatch_stage" : "dispatch",
                              st);
  return WS_OK;
}

ws_status ws_aux_prepare_producers(ws_scheduler *s, uint64_t it, uint32_t j, uint32_t m) {
  for (uint32_t i = 0; i < s->aux_count; ++i) {
    ws_aux_entry *a = &s->aux[i];
    const uint32_t b = a->bound[j];
    if (b == 0 || !a->w.prepare_for_producer)
      continue;
    ws_status st = a->w.prepare_for_producer(a->w.user, (uint64_t)m * b);
    if (st != WS_OK)
      return ws_aux_client_fail(s, i, it, "prepare_for_producer", st);
  }
  return WS_OK;
}

/* Issue 18: before admission of a producer of continuation j is evaluated,
 * every work it produces into may prepare its storage and say how many
 * slots it can write now (decide.h uses has_avail / avail). */
ws_status ws_aux_prepare_admission(ws_scheduler *s, uint64_t it, uint32_t j) {
  for (uint32_t i = 0; i < s->aux_count; ++i) {
    ws_aux_entry *a = &s->aux[i];
    ws_dec_work *dw = &s->dwork[i];
    dw->has_avail = 0;
    if (a->bound[j] == 0)
      continue;
    ws_status st;
    if (a->w.prepare_for_admission && (st = a->w.prepare_for_admission(a->w.user)) != WS_OK)
      return ws_aux_client_fail(s, i, it, "prepare_for_admission", st);
    if (a->w.available_slots) {
      if ((st = a->w.available_slots(a->w.user, &dw->avail)) != WS_OK)
        return ws_aux_client_fail(s, i, it, "available_slots", st);
      dw->has_avail = 1;
    }
  }
  return WS_OK;
}
