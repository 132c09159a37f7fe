/* SPDX-License-Identifier: MIT */
/* The threading contract (docs/architecture.md, "Threads"): a device and
 * everything created on it are used by one thread at a time; different
 * devices run on different threads at the same time; the library's
 * process-wide state (src/core/alloc.c's counters, src/core/fault.c's
 * next-device arming) is safe for that.
 *
 *   independent_devices  several POSIX threads at once, each opening its own
 *                        device (the CPU's with 2 threads), a plain scheduler
 *                        and one with two library pools (the reliability
 *                        rig, rel_rig.h: host callbacks on the dispatching
 *                        thread), three dispatches each. A barrier lines up
 *                        the device creations, another the first dispatches.
 *                        Every item's outputs and every statistic (dispatch,
 *                        node, auxiliary stage, pool counters) must equal
 *                        those of the same configuration run alone on the
 *                        main thread first; a refused scheduler's message
 *                        must reach its own device's log callback, on its
 *                        own thread, and its own ws_device_last_error; one
 *                        arming of ws_testing_fail_next_device_after must be
 *                        claimed by exactly one of the concurrent creations;
 *                        and the harness's leak check (the allocation
 *                        counters, atomics) must balance.
 *   creations            devices created at once, many rounds: each round's
 *                        arming of the next-device countdown goes to exactly
 *                        one of them (src/core/fault.c, N1 and N2).
 *   handoff              one device used by three threads one after the
 *                        other (created on the main thread, dispatched on
 *                        two others, each joined before the next starts):
 *                        external synchronization, no thread affinity.
 *
 * Under ThreadSanitizer (scripts/test tsan_suite, label tsan) a data race in
 * the library between devices, or between a device's caller and its worker
 * threads, fails the run as well.
 *
 * Usage: test_threads --backend cpu|cuda|vulkan */
#define _POSIX_C_SOURCE 200809L
#include "rel_rig.h"
#include "ws_test.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- sizes: small enough for ThreadSanitizer on 2 cores, and for lavapipe
 * (whose every device compiles its pipelines), large enough that CPU
 * launches (>= 4096 indices) run on the devices' worker threads ---- */
typedef struct sizes {
  uint32_t threads; /* concurrent devices */
  uint32_t N;       /* items per rig */
  uint32_t R;       /* resident frames; pools of R and 2R slots */
  uint32_t rounds;  /* test_creations: devices created at once, this many times */
} sizes;

static sizes g_size;

enum { CONFIGS = 4, DISPATCHES = 3, NODES = 4 /* entry + K = 3 */, AUX = 5 /* 3 + 2 stages */ };

/* Dispatch d runs items_at(d) items: all, a third, all again (the buffers
 * are zeroed before each, so items beyond the count must stay untouched). */
static uint32_t items_at(uint32_t d) {
  return d == 1 ? g_size.N / 3u + 1u : g_size.N;
}

/* Configuration c: layouts, accountings, compaction, policy and both loops
 * (AUTO takes the device loop for the plain rig where the backend has one,
 * the host loop for the rig with pools, whose stages are host callbacks).
 * Auxiliary works need the greedy policy: with pools, all-queues becomes
 * greedy. */
static ws_scheduler_config config_at(uint32_t c, bool pools) {
  ws_scheduler_config cfg = ws_scheduler_config_default();
  cfg.resident_frames = g_size.R;
  cfg.block_size = 32;
  cfg.statistics = true;
  cfg.iteration_limit = 100000; /* a hang becomes a failure */
  static const struct config_row {
    uint32_t layout;
    ws_accounting accounting;
    bool compaction, largest_first;
    ws_loop_kind loop;
  } t[CONFIGS] = {
      {WS_LAYOUT_AOS, WS_ACCOUNTING_INCREMENTAL, true, true, WS_LOOP_AUTO},
      {WS_LAYOUT_SOA, WS_ACCOUNTING_MATERIALIZED, false, false, WS_LOOP_HOST},
      {WS_LAYOUT_AOS, WS_ACCOUNTING_FUSED, true, true, WS_LOOP_AUTO},
      {WS_LAYOUT_SOA, WS_ACCOUNTING_INCREMENTAL, false, true, WS_LOOP_HOST},
  };
  const struct config_row *e = &t[c % CONFIGS];
  cfg.layout = e->layout;
  cfg.accounting = e->accounting;
  cfg.compaction = e->compaction;
  cfg.largest_first = e->largest_first;
  cfg.loop = e->loop;
  if (pools)
    cfg.largest_first = true;
  return cfg;
}

/* ---- what one dispatch left: every output word and every statistic ---- */
typedef struct snap_node {
  char name[32];
  uint64_t dispatches, executed, peak;
} snap_node;

typedef struct snapshot {
  uint32_t *words; /* the rig's outputs, buffer after buffer (rig_outputs) */
  size_t count;
  ws_dispatch_stats d; /* elapsed_ms and device_ms zeroed: timings differ */
  snap_node node[NODES], aux[AUX];
  ws_pool_counters counters[AUX];
} snapshot;

/* The rig's output buffers in snapshot order, with their words per item. */
static uint32_t rig_outputs(const rig *r, ws_buffer **buf, uint32_t *per_item, const char **name) {
  static const char *const names[] = {"visits",      "result",        "done",         "released[0]",
                                      "released[1]", "aux_visits[0]", "aux_visits[1]"};
  uint32_t n = 0;
  ws_buffer *const all[] = {r->visits,      r->result,        r->done,         r->released[0],
                            r->released[1], r->aux_visits[0], r->aux_visits[1]};
  const uint32_t per[] = {FZ_MAX_K, 1, 1, 1, 1, FZ_MAX_STAGES, FZ_MAX_STAGES};
  for (uint32_t i = 0; i < 7; ++i) {
    if (i >= 3 && (i - 3) % 2 >= r->works)
      continue; /* a work the rig does not have */
    buf[n] = all[i];
    per_item[n] = per[i];
    name[n] = names[i];
    ++n;
  }
  return n;
}

/* ---- one thread's device ---- */
typedef struct job {
  uint32_t config;       /* config_at(config) */
  pthread_barrier_t *go; /* NULL: the reference, alone on the main thread */
  const struct job *ref; /* the reference to compare with (NULL: none) */
  pthread_t self;
  /* results */
  char error[1024];             /* the first failure; "" when none */
  snapshot snap[2][DISPATCHES]; /* [plain, pools][dispatch] */
  unsigned long backend_calls;  /* ws_testing_backend_calls before the device went */
  /* the log callback */
  unsigned log_calls, log_elsewhere;
  char log_text[512];
} job;

static void job_fail(job *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void job_fail(job *j, const char *fmt, ...) {
  if (j->error[0])
    return; /* keep the first */
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(j->error, sizeof j->error, fmt, ap);
  va_end(ap);
}

static bool job_ok(job *j, ws_status st, ws_device *dev, const char *what) {
  if (st != WS_OK)
    job_fail(j, "%s: %s (%s)", what, ws_status_name(st), dev ? ws_device_last_error(dev) : "");
  return st == WS_OK;
}

/* The device's log callback: the job it belongs to must be the one whose
 * thread is calling (log callbacks run on the thread of the failing call). */
static void job_log(void *user, ws_log_level level, const char *message) {
  (void)level;
  job *j = user;
  j->log_calls += 1;
  if (!pthread_equal(pthread_self(), j->self))
    j->log_elsewhere += 1;
  snprintf(j->log_text, sizeof j->log_text, "%s", message);
}

static void wait_go(const job *j) {
  if (j->go)
    pthread_barrier_wait(j->go);
}

/* Reads what dispatch `d` of `n` items left into *sn and checks it: the
 * per-item invariants every correct run has, then, when rs is not NULL,
 * every word and statistic equal to that reference's. */
static void take_snapshot(job *j, rig *r, ws_scheduler *s, uint32_t d, uint32_t n, snapshot *sn,
                          const snapshot *rs) {
  ws_buffer *buf[7];
  uint32_t per[7];
  const char *name[7];
  const uint32_t nb = rig_outputs(r, buf, per, name);
  size_t count = 0;
  for (uint32_t b = 0; b < nb; ++b)
    count += (size_t)per[b] * r->N;
  sn->words = calloc(count, 4);
  sn->count = count;
  if (!sn->words) {
    job_fail(j, "out of host memory");
    return;
  }
  size_t at = 0;
  for (uint32_t b = 0; b < nb; ++b) {
    const size_t words = (size_t)per[b] * r->N;
    if (!job_ok(j, ws_buffer_read(buf[b], 0, sn->words + at, words * 4), r->dev, "ws_buffer_read"))
      return;
    at += words;
  }
  uint32_t errors[FZ_ERR_COUNT];
  if (!job_ok(j, ws_buffer_read(r->errors, 0, errors, sizeof errors), r->dev, "ws_buffer_read"))
    return;
  ws_scheduler_dispatch_stats(s, &sn->d);
  sn->d.elapsed_ms = 0;
  sn->d.device_ms = 0;
  for (uint32_t k = 0; k < NODES; ++k) {
    ws_node_stats ns;
    if (!job_ok(j, ws_scheduler_node_stats(s, k, &ns), r->dev, "ws_scheduler_node_stats"))
      return;
    sn->node[k] = (snap_node){.dispatches = ns.dispatch_count,
                              .executed = ns.executed_count,
                              .peak = ns.peak_queued_count};
    snprintf(sn->node[k].name, sizeof sn->node[k].name, "%s", ns.name);
  }
  const uint32_t na = ws_scheduler_aux_stats_count(s);
  if (na != (r->works ? (uint32_t)AUX : 0u)) {
    job_fail(j, "%u auxiliary statistics entries, expected %u", na, r->works ? AUX : 0);
    return;
  }
  for (uint32_t a = 0, w = 0, stage = 0; a < na; ++a) {
    ws_node_stats ns;
    if (!job_ok(j, ws_scheduler_aux_stats(s, a, &ns), r->dev, "ws_scheduler_aux_stats") ||
        !job_ok(j, ws_pool_stage_counters(r->pool[w], stage, &sn->counters[a]), r->dev,
                "ws_pool_stage_counters"))
      return;
    sn->aux[a] = (snap_node){.dispatches = ns.dispatch_count,
                             .executed = ns.executed_count,
                             .peak = ns.peak_queued_count};
    snprintf(sn->aux[a].name, sizeof sn->aux[a].name, "%s", ns.name);
    if (++stage == r->w[w].S) {
      stage = 0;
      ++w;
    }
  }

  /* invariants of any correct run */
  const char *what = r->works ? "pools" : "plain";
  for (uint32_t e = 0; e < FZ_ERR_COUNT; ++e)
    if (errors[e])
      job_fail(j, "%s, dispatch %u: error word %u = %u (corruption or pool overflow)", what, d, e,
               errors[e]);
  const uint32_t *done = sn->words + (size_t)FZ_MAX_K * r->N + r->N;
  for (uint32_t i = 0; i < r->N; ++i)
    if (done[i] != (i < n ? 1u : 0u))
      job_fail(j, "%s, dispatch %u of %u items: item %u completed %u times", what, d, n, i,
               done[i]);
  if (sn->d.generated_count != n)
    job_fail(j, "%s, dispatch %u: generated %" PRIu64 " of %u items", what, d,
             sn->d.generated_count, n);
  for (uint32_t w = 0; w < r->works; ++w)
    if (ws_pool_live(r->pool[w]) != 0 || ws_pool_errors(r->pool[w]) != 0)
      job_fail(j, "%s, dispatch %u: pool %u holds %u items, %u errors", what, d, w,
               ws_pool_live(r->pool[w]), ws_pool_errors(r->pool[w]));

  /* the same configuration alone on the main thread */
  if (!rs)
    return;
  if (rs->count != sn->count || !rs->words) {
    job_fail(j, "%s, dispatch %u: no reference to compare with", what, d);
    return;
  }
  at = 0;
  for (uint32_t b = 0; b < nb; ++b) {
    const size_t words = (size_t)per[b] * r->N;
    for (size_t x = 0; x < words; ++x)
      if (sn->words[at + x] != rs->words[at + x]) {
        job_fail(j,
                 "%s, dispatch %u: %s of item %zu (word %zu) is %u, %u when the same "
                 "configuration ran alone",
                 what, d, name[b], x / per[b], x % per[b], sn->words[at + x], rs->words[at + x]);
        break;
      }
    at += words;
  }
#define SAME_STAT(f)                                                                               \
  if (sn->d.f != rs->d.f)                                                                          \
  job_fail(j, "%s, dispatch %u: " #f " %" PRIu64 ", %" PRIu64 " alone", what, d,                   \
           (uint64_t)sn->d.f, (uint64_t)rs->d.f)
  SAME_STAT(iteration_count);
  SAME_STAT(generated_count);
  SAME_STAT(resumed_count);
  SAME_STAT(scanned_slot_count);
  SAME_STAT(max_active_count);
  SAME_STAT(aux_dispatch_count);
  SAME_STAT(forced_drain_count);
  SAME_STAT(blocked_count);
  SAME_STAT(loop);
  SAME_STAT(host_sync_count);
  SAME_STAT(tail_item_count);
#undef SAME_STAT
  for (uint32_t k = 0; k < NODES + AUX; ++k) {
    const snap_node *a = k < NODES ? &sn->node[k] : &sn->aux[k - NODES];
    const snap_node *b = k < NODES ? &rs->node[k] : &rs->aux[k - NODES];
    if (strcmp(a->name, b->name) != 0 || a->dispatches != b->dispatches ||
        a->executed != b->executed || a->peak != b->peak)
      job_fail(j,
               "%s, dispatch %u: %s '%s' dispatched %" PRIu64 ", executed %" PRIu64
               ", peak %" PRIu64 "; alone '%s' %" PRIu64 ", %" PRIu64 ", %" PRIu64,
               what, d, k < NODES ? "node" : "auxiliary stage", a->name, a->dispatches, a->executed,
               a->peak, b->name, b->dispatches, b->executed, b->peak);
  }
  for (uint32_t a = 0; a < AUX; ++a)
    if (sn->counters[a].dispatches != rs->counters[a].dispatches ||
        sn->counters[a].executed != rs->counters[a].executed)
      job_fail(j,
               "%s, dispatch %u: pool stage %u counted %" PRIu64 "/%" PRIu64 ", %" PRIu64
               "/%" PRIu64 " alone",
               what, d, a, sn->counters[a].dispatches, sn->counters[a].executed,
               rs->counters[a].dispatches, rs->counters[a].executed);
}

static ws_status open_device(job *j, ws_device **dev) {
  ws_device_config dc;
  memset(&dc, 0, sizeof dc);
  dc.backend = wt_backend;
  dc.device_index = -1;
  dc.cpu_threads = 2; /* this test's CI machine has 2 cores */
  dc.log = job_log;
  dc.log_user = j;
  return ws_device_create(&dc, dev);
}

/* A refused scheduler: its message (a block size no other job uses) goes to
 * this device's log callback, on this thread, and to this device's last
 * error, nowhere else. */
static void refused_scheduler(job *j, ws_device *dev) {
  ws_scheduler_config bad = config_at(j->config, false);
  bad.block_size = 33u + 32u * j->config;
  char want[64];
  snprintf(want, sizeof want, "block_size %u ", bad.block_size);
  ws_scheduler *s = NULL;
  const ws_status st = ws_scheduler_create(dev, &rig_coroutine, &bad, &s);
  if (st != WS_ECONFIG_BLOCK || s)
    job_fail(j, "block_size %u: ws_scheduler_create gave %s, expected WS_ECONFIG_BLOCK",
             bad.block_size, ws_status_name(st));
  ws_scheduler_destroy(s);
  if (j->log_calls != 1 || j->log_elsewhere || !strstr(j->log_text, want))
    job_fail(j,
             "the log callback: %u call(s), %u on another thread, last '%s'; expected one "
             "on this thread naming '%s'",
             j->log_calls, j->log_elsewhere, j->log_text, want);
  if (!strstr(ws_device_last_error(dev), want))
    job_fail(j, "ws_device_last_error: '%s', expected one naming '%s'", ws_device_last_error(dev),
             want);
}

/* One device, its two rigs and schedulers, DISPATCHES dispatches of each;
 * every object destroyed before it returns (the harness counts leaks). */
static void run_job(job *j) {
  j->self = pthread_self();
  ws_device *dev = NULL;
  rig r[2];
  ws_scheduler *s[2] = {NULL, NULL};
  memset(r, 0, sizeof r);

  const ws_scheduler_config cfg[2] = {config_at(j->config, false), config_at(j->config, true)};

  wait_go(j); /* the creations at once */
  bool ok = job_ok(j, open_device(j, &dev), NULL, "ws_device_create");
  if (ok)
    refused_scheduler(j, dev);
  for (uint32_t k = 0; ok && k < 2; ++k) {
    rig_init(&r[k], dev, g_size.N, k ? 2u : 0u, g_size.R, false);
    ok = job_ok(j, rig_create(&r[k]), dev, "rig_create") &&
         job_ok(j, ws_scheduler_create(dev, &rig_coroutine, &cfg[k], &s[k]), dev,
                "ws_scheduler_create");
    for (uint32_t w = 0; ok && w < r[k].works; ++w)
      ok = job_ok(j, ws_scheduler_add_aux(s[k], ws_pool_work(r[k].pool[w])), dev,
                  "ws_scheduler_add_aux");
  }

  wait_go(j); /* the first dispatches at once */
  for (uint32_t d = 0; ok && d < DISPATCHES; ++d)
    for (uint32_t k = 0; ok && k < 2; ++k) {
      ok = job_ok(j, rig_zero(&r[k]), dev, "rig_zero") &&
           job_ok(j, ws_scheduler_dispatch(s[k], items_at(d), &r[k].args, sizeof r[k].args), dev,
                  "ws_scheduler_dispatch");
      if (ok)
        take_snapshot(j, &r[k], s[k], d, items_at(d), &j->snap[k][d],
                      j->ref ? &j->ref->snap[k][d] : NULL);
      ok = ok && !j->error[0];
    }

  if (dev)
    j->backend_calls = ws_testing_backend_calls(dev);
  ws_scheduler_destroy(s[0]); /* the other goes with the device */
  for (uint32_t k = 0; k < 2; ++k)
    if (r[k].dev)
      rig_destroy(&r[k]);
  ws_device_destroy(dev);
}

static void *job_thread(void *arg) {
  run_job(arg);
  return NULL;
}

static void free_snapshots(job *j) {
  for (uint32_t k = 0; k < 2; ++k)
    for (uint32_t d = 0; d < DISPATCHES; ++d)
      free(j->snap[k][d].words);
}

/* fn on T threads at once, thread t given items + t * size, which hold `go`
 * (a barrier of T, made here) where they must meet; returns once all are
 * joined. A thread that cannot be created fails the test, and the ones
 * already waiting at `go` then wait forever (ctest's timeout reports it). */
static void run_threads(uint32_t T, void *(*fn)(void *), void *items, size_t size, pthread_t *tid,
                        pthread_barrier_t *go) {
  WT_CHECK(pthread_barrier_init(go, NULL, T) == 0, "pthread_barrier_init");
  uint32_t started = 0;
  for (; started < T; ++started)
    if (pthread_create(&tid[started], NULL, fn, (char *)items + started * size) != 0)
      break;
  WT_CHECK(started == T, "pthread_create failed after %u threads (the others wait forever)",
           started);
  for (uint32_t t = 0; t < T; ++t)
    pthread_join(tid[t], NULL);
  pthread_barrier_destroy(go);
}

static void test_independent_devices(void **state) {
  (void)state;
  const uint32_t T = g_size.threads;
  const uint32_t C = T < CONFIGS ? T : CONFIGS;
  job *ref = calloc(C, sizeof *ref);
  job *jobs = calloc(T, sizeof *jobs);
  pthread_t *tid = calloc(T, sizeof *tid);
  WT_CHECK(ref && jobs && tid, "out of host memory");

  /* each configuration alone on this thread first */
  for (uint32_t c = 0; c < C; ++c) {
    ref[c].config = c;
    run_job(&ref[c]);
    WT_CHECK(!ref[c].error[0], "configuration %u alone: %s", c, ref[c].error);
  }

  for (uint32_t c = 0; c < C; ++c) {
    const ws_dispatch_stats *p = &ref[c].snap[0][0].d, *q = &ref[c].snap[1][0].d;
    printf("[ threads  ] configuration %u: plain %s loop, %" PRIu64 " iterations; pools %s "
           "loop, %" PRIu64 " iterations, %" PRIu64 " stage dispatches\n",
           c, p->loop == WS_LOOP_DEVICE ? "device" : "host", p->iteration_count,
           q->loop == WS_LOOP_DEVICE ? "device" : "host", q->iteration_count,
           q->aux_dispatch_count);
  }
  fflush(stdout);

  /* then T devices at once; one arming of the next-device fault countdown
   * (0: count, never fail) must be claimed by exactly one creation */
  pthread_barrier_t go;
  for (uint32_t t = 0; t < T; ++t) {
    jobs[t].config = t % C;
    jobs[t].go = &go;
    jobs[t].ref = &ref[t % C];
  }
  ws_testing_fail_next_device_after(0);
  run_threads(T, job_thread, jobs, sizeof *jobs, tid, &go);

  uint32_t claimed = 0;
  for (uint32_t t = 0; t < T; ++t)
    claimed += jobs[t].backend_calls > 0;
  char first[1200] = "";
  for (uint32_t t = 0; t < T && !first[0]; ++t)
    if (jobs[t].error[0])
      snprintf(first, sizeof first, "thread %u (configuration %u): %s", t, jobs[t].config,
               jobs[t].error);
  for (uint32_t t = 0; t < T; ++t)
    free_snapshots(&jobs[t]);
  for (uint32_t c = 0; c < C; ++c)
    free_snapshots(&ref[c]);
  free(ref);
  free(jobs);
  free(tid);
  WT_CHECK(!first[0], "%s", first);
  WT_CHECK(claimed == 1,
           "%u of %u concurrent device creations claimed one ws_testing_fail_next_device_after",
           claimed, T);
}

/* ---- creations at once: the next-device arming (src/core/fault.c) ---- */
enum { MAX_ROUNDS = 300 };

typedef struct creator {
  uint32_t index, rounds;
  pthread_barrier_t *go;
  uint8_t claimed[MAX_ROUNDS]; /* whether this round's device took the arming */
  char error[256];
} creator;

/* Each round: thread 0 arms the countdown (0: count, never fail) while no
 * device opens, then every thread opens a device at once. The arming must go
 * to exactly one of them (fault.c N1, N2): a creation that clobbered another
 * one's claim leaves none, two that both saw it armed leave two. */
static void *creator_thread(void *arg) {
  creator *c = arg;
  job j; /* for the log callback only */
  memset(&j, 0, sizeof j);
  j.self = pthread_self();
  for (uint32_t r = 0; r < c->rounds; ++r) {
    pthread_barrier_wait(c->go); /* the previous round's devices are gone */
    if (c->index == 0)
      ws_testing_fail_next_device_after(0);
    pthread_barrier_wait(c->go); /* armed before any creation */
    ws_device *dev = NULL;
    const ws_status st = open_device(&j, &dev);
    if (st == WS_OK) {
      /* a wrapped device counts this call (ws_testing_backend_calls) */
      (void)ws_device_synchronize(dev);
      c->claimed[r] = ws_testing_backend_calls(dev) > 0;
    } else if (!c->error[0]) {
      snprintf(c->error, sizeof c->error, "round %u: ws_device_create: %s", r, ws_status_name(st));
    }
    ws_device_destroy(dev);
  }
  return NULL;
}

static void test_creations(void **state) {
  (void)state;
  const uint32_t T = g_size.threads;
  creator *c = calloc(T, sizeof *c);
  pthread_t *tid = calloc(T, sizeof *tid);
  WT_CHECK(c && tid, "out of host memory");
  pthread_barrier_t go;
  for (uint32_t t = 0; t < T; ++t) {
    c[t].index = t;
    c[t].rounds = g_size.rounds;
    c[t].go = &go;
  }
  run_threads(T, creator_thread, c, sizeof *c, tid, &go);
  char error[300] = "";
  for (uint32_t t = 0; t < T && !error[0]; ++t)
    if (c[t].error[0])
      snprintf(error, sizeof error, "thread %u: %s", t, c[t].error);
  for (uint32_t r = 0; r < g_size.rounds && !error[0]; ++r) {
    uint32_t claimed = 0;
    for (uint32_t t = 0; t < T; ++t)
      claimed += c[t].claimed[r];
    if (claimed != 1)
      snprintf(error, sizeof error,
               "round %u: %u of %u devices created at once took one arming of "
               "ws_testing_fail_next_device_after (expected exactly 1)",
               r, claimed, T);
  }
  free(c);
  free(tid);
  WT_CHECK(!error[0], "%s", error);
}

/* ---- one device, handed from thread to thread ---- */
typedef struct handoff {
  job j; /* its device, rig and scheduler belong to the main thread's run */
  rig *r;
  ws_scheduler *s;
  uint32_t d;
} handoff;

static void *handoff_thread(void *arg) {
  handoff *h = arg;
  h->j.self = pthread_self();
  if (job_ok(&h->j, rig_zero(h->r), h->r->dev, "rig_zero") &&
      job_ok(&h->j, rig_dispatch(h->r, h->s), h->r->dev, "ws_scheduler_dispatch"))
    take_snapshot(&h->j, h->r, h->s, h->d, g_size.N, &h->j.snap[1][h->d], &h->j.ref->snap[1][0]);
  return NULL;
}

static void test_handoff(void **state) {
  (void)state;
  job *ref = calloc(1, sizeof *ref);
  handoff *h = calloc(1, sizeof *h);
  WT_CHECK(ref && h, "out of host memory");
  ref->self = pthread_self();
  ref->config = 1; /* the host loop: the pools' callbacks run on each dispatching thread */
  ws_device *dev = NULL;
  rig r;
  memset(&r, 0, sizeof r);
  ws_scheduler *s = NULL;
  const ws_scheduler_config cfg = config_at(ref->config, true);
  bool ok = job_ok(ref, open_device(ref, &dev), NULL, "ws_device_create");
  if (ok) {
    rig_init(&r, dev, g_size.N, 2, g_size.R, false);
    ok =
        job_ok(ref, rig_create(&r), dev, "rig_create") &&
        job_ok(ref, ws_scheduler_create(dev, &rig_coroutine, &cfg, &s), dev, "ws_scheduler_create");
    for (uint32_t w = 0; ok && w < 2; ++w)
      ok = job_ok(ref, ws_scheduler_add_aux(s, ws_pool_work(r.pool[w])), dev,
                  "ws_scheduler_add_aux");
  }
  /* every dispatch runs all N items here: dispatch 0 on this thread is the
   * reference for dispatches 1 and 2 on two other threads */
  for (uint32_t d = 0; ok && d < DISPATCHES; ++d) {
    if (d == 0) {
      ok = job_ok(ref, rig_zero(&r), dev, "rig_zero") &&
           job_ok(ref, rig_dispatch(&r, s), dev, "ws_scheduler_dispatch");
      if (ok)
        take_snapshot(ref, &r, s, 0, g_size.N, &ref->snap[1][0], NULL);
      ok = ok && !ref->error[0];
      continue;
    }
    memset(&h->j, 0, sizeof h->j);
    h->j.ref = ref;
    h->r = &r;
    h->s = s;
    h->d = d;
    pthread_t t;
    ok = pthread_create(&t, NULL, handoff_thread, h) == 0;
    if (!ok)
      job_fail(ref, "pthread_create");
    else
      pthread_join(t, NULL);
    free(h->j.snap[1][d].words);
    if (h->j.error[0])
      job_fail(ref, "dispatch %u on its own thread: %s", d, h->j.error);
    ok = ok && !ref->error[0];
  }
  free(ref->snap[1][0].words);
  ws_scheduler_destroy(s);
  if (r.dev)
    rig_destroy(&r);
  ws_device_destroy(dev);
  char error[sizeof ref->error];
  snprintf(error, sizeof error, "%s", ref->error);
  free(ref);
  free(h);
  WT_CHECK(!error[0], "%s", error);
}

int main(int argc, char **argv) {
  const wt_need needs[] = {{&fz_kernels_modules, "fz_main"}, {&fz_kernels_modules, "fz_stage"}};
  wt_init(argc, argv, needs, 2);
  /* lavapipe compiles every device's pipelines: fewer, smaller devices */
  if (wt_backend == WS_BACKEND_CPU)
    g_size = (sizes){.threads = 4, .N = 6000, .R = 4096, .rounds = MAX_ROUNDS};
  else if (wt_backend == WS_BACKEND_VULKAN)
    g_size = (sizes){.threads = 2, .N = 600, .R = 256, .rounds = 2};
  else
    g_size = (sizes){.threads = 2, .N = 6000, .R = 4096, .rounds = 20};
  wt_add("independent_devices", test_independent_devices, NULL);
  wt_add("creations", test_creations, NULL);
  wt_add("handoff", test_handoff, NULL);
  return wt_run("threads");
}
