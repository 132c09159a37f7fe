/* SPDX-License-Identifier: MIT */
/* Fault injection (issue 6, issue 12; SQLite's method): for N = 1, 2, ...
 * fail the Nth host allocation (ws_testing_fail_alloc_after) or the Nth
 * backend call (ws_testing_fail_backend_after: a wrapper around the
 * device's backend table; the backends also count their own allocations
 * inside and outside those calls, src/core/fault.h) until N passes the
 * number the scenario makes. Two sweeps, on every backend:
 *
 *   open      ws_device_create alone, with every host allocation and every
 *             backend allocation it makes failed in turn
 *             (ws_testing_fail_next_device_after): CUDA's stream, events,
 *             pinned error words and control block, Vulkan's command pool,
 *             buffer, fence, staging and state buffers;
 *   scenario  on one device (opening a Vulkan device on lavapipe takes most
 *             of a second): pools (ws_pool) create, scheduler create,
 *             add_aux, dispatch, read and check the results, dispatch again
 *             (reuse), destroy everything, for six configurations.
 *
 * For every N:
 *   - every call returns WS_OK or an error that fits the fault: WS_ENOMEM for
 *     a host allocation; WS_EDEVMEM / WS_ENOMEM / WS_EBACKEND for a device
 *     allocation / readback memory / other backend call; WS_EPROTO_CLIENT
 *     when the fault hit an auxiliary client's call inside a dispatch (its
 *     message names the client's own status);
 *   - the fault is reported by some call (never swallowed), with a message;
 *   - a dispatch that failed is retried on the same scheduler and must then
 *     run cleanly with exact results (nothing was left half-done);
 *   - after destroying everything the library's live allocation count is
 *     back to its starting value (and ASan/LSan see no leak or bad access);
 *   - nothing hangs (every dispatch has an iteration limit as a backstop).
 * N = (allocations or calls of a clean run) + 1 must hit no fault and pass.
 *
 * Usage: fault_injection --backend cpu|cuda|vulkan [--verbose] [--stride S]
 *                        [--fresh-device] [--check-doc FILE]
 * --fresh-device opens a device per scenario, so that its open and its lazy
 * caches (CUB's temporary storage with WS_CUDA_QUEUES=cub, Vulkan pipelines)
 * are swept too: for CUDA on the GPU machine (cheap there, slow on lavapipe).
 * --stride S fails every backend call up to the first dispatch (where every
 * allocation of the scenario is) but only every S-th one after it; the
 * default is 1, and 5 on lavapipe (a CPU-emulated Vulkan device, where the
 * full sweep takes about a minute on two cores). --check-doc
 * compares the summary table this run prints with the one FILE holds
 * between its fault-injection markers (docs/reliability.md), so the
 * documented figures cannot drift from what the test sweeps. */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rel_rig.h"
#include "wavesched/testing.h"

static ws_backend_kind g_backend = WS_BACKEND_CPU;
static int g_verbose;
static unsigned long g_stride = 1;
static ws_device *g_dev; /* the scenario sweep's device */
static bool g_fresh;     /* --fresh-device: each scenario opens its own */

static ws_status open_device(ws_device **out);

/* The summary table (--check-doc): one row per sweep. */
static char g_table[8192];
static size_t g_table_len;
static void table_row(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void table_row(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(g_table + g_table_len, sizeof g_table - g_table_len, fmt, ap);
  va_end(ap);
  if (n > 0 && (size_t)n < sizeof g_table - g_table_len)
    g_table_len += (size_t)n;
}

typedef enum { FAULT_NONE = 0, FAULT_ALLOC = 1, FAULT_BACKEND = 2 } fault_kind;

typedef struct variant {
  const char *name;
  uint32_t layout;
  int accounting; /* 0 materialized, 1 incremental, 2 fused */
  bool compaction, verify, mega, allq, partial;
  uint32_t works, N, R;
  bool append; /* the pools allocate by append (their extent resets and compactions) */
} variant;

/* What a fault may turn into (see the header comment). */
static bool fits_alloc_fault(ws_status st) { return st == WS_ENOMEM || st == WS_EPROTO_CLIENT; }
static bool fits_backend_fault(ws_status st) {
  return st == WS_ENOMEM || st == WS_EDEVMEM || st == WS_EBACKEND || st == WS_EPROTO_CLIENT;
}

typedef struct outcome {
  const variant *v;
  fault_kind kind;
  unsigned long n;
  unsigned errors;        /* calls that returned an error */
  ws_status first;        /* the first of them */
  char first_call[48];
  bool completed;         /* every dispatch ran and was verified */
  unsigned retries;       /* failed dispatches retried */
  unsigned long allocs;   /* successful host allocations in the scenario */
  unsigned long calls;    /* backend calls (FAULT_BACKEND) */
  unsigned long setup_calls; /* of which before the first dispatch */
  unsigned long faults;   /* injected backend faults that fired */
  ws_device *dev;         /* whose message a call without a scheduler leaves */
} outcome;

/* Status histogram over a sweep (index -code). */
static unsigned long g_hist[128];

static void fail_at(const outcome *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail_at(const outcome *o, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  fail_msg("[%s, %s fault at N = %lu] %s", o->v->name,
           o->kind == FAULT_ALLOC ? "host allocation" : o->kind == FAULT_BACKEND ? "backend" : "no",
           o->n, msg);
}

/* Checks a status against what the fault may produce; returns st == WS_OK. */
static bool chk(outcome *o, ws_status st, const char *call, const ws_scheduler *s) {
  if (st == WS_OK)
    return true;
  const bool fits = o->kind == FAULT_ALLOC     ? fits_alloc_fault(st)
                   : o->kind == FAULT_BACKEND ? fits_backend_fault(st)
                                              : false;
  if (!fits || (int)st > 0 || (int)st <= -128)
    fail_at(o, "%s returned %s (%s): %s", call, ws_status_name(st), ws_strerror(st),
            s ? ws_scheduler_last_error(s) : "-");
  if (st == WS_EPROTO_CLIENT) {
    /* the scheduler names the client call and the client's own status */
    const char *msg = s ? ws_scheduler_last_error(s) : "";
    if (!strstr(msg, "WS_E"))
      fail_at(o, "%s: WS_EPROTO_CLIENT without the client's status: '%s'", call, msg);
  }
  if (s && ws_scheduler_last_error(s)[0] == '\0')
    fail_at(o, "%s returned %s with an empty scheduler message", call, ws_status_name(st));
  /* The cause travels up: every layer that reports a backend fault quotes
   * the message of the layer below, down to the fault's own: the wrapper's
   * text, or the driver error a backend's own allocation then emulates
   * (src/core/fault.h). */
  const char *msg = s ? ws_scheduler_last_error(s) : o->dev ? ws_device_last_error(o->dev) : NULL;
  if (o->kind == FAULT_BACKEND && msg && !strstr(msg, "injected fault") &&
      !strstr(msg, "VK_ERROR_OUT_OF_DEVICE_MEMORY") && !strstr(msg, "cudaErrorMemoryAllocation"))
    fail_at(o, "%s returned %s, and its message lost the fault's: '%s'", call,
            ws_status_name(st), msg);
  g_hist[-(int)st] += 1;
  if (o->errors++ == 0) {
    o->first = st;
    snprintf(o->first_call, sizeof o->first_call, "%s", call);
  }
  return false;
}

/* Reads and checks the results of one dispatch against what any correct
 * run gives: every item completed once, auxiliary items all released, the
 * statistics add up to the per-item counters, no frame/payload corruption.
 * Returns false when an (allowed) injected fault hit one of the reads. */
static bool verify_run(outcome *o, rig *r, ws_scheduler *s, const char *when) {
  static uint32_t visits[256 * FZ_MAX_K], done[256], released[256], aux[256 * FZ_MAX_STAGES];
  uint32_t errors[FZ_ERR_COUNT];
  const uint32_t N = r->N;
  if (!chk(o, ws_buffer_read(r->errors, 0, errors, sizeof errors), "ws_buffer_read", NULL) ||
      !chk(o, ws_buffer_read(r->done, 0, done, N * 4), "ws_buffer_read", NULL) ||
      !chk(o, ws_buffer_read(r->visits, 0, visits, N * FZ_MAX_K * 4), "ws_buffer_read", NULL))
    return false;
  for (uint32_t e = 0; e < FZ_ERR_COUNT; ++e)
    if (errors[e])
      fail_at(o, "%s: error word %u = %u (frame/payload corruption or pool overflow)", when, e,
              errors[e]);
  uint64_t runs[FZ_MAX_K + 1] = {0};
  for (uint32_t i = 0; i < N; ++i) {
    if (done[i] != 1)
      fail_at(o, "%s: item %u completed %u times", when, i, done[i]);
    for (uint32_t k = 0; k < FZ_MAX_K; ++k)
      runs[k + 1] += visits[i * FZ_MAX_K + k];
  }
  ws_dispatch_stats d;
  ws_scheduler_dispatch_stats(s, &d);
  if (d.generated_count != N)
    fail_at(o, "%s: generated %" PRIu64 " of %u", when, d.generated_count, N);
  uint64_t total = 0;
  for (uint32_t k = 1; k <= FZ_MAX_K; ++k) {
    ws_node_stats ns;
    assert_int_equal(ws_scheduler_node_stats(s, k, &ns), WS_OK);
    if (!o->v->mega && ns.executed_count != runs[k])
      fail_at(o, "%s: c%u executed %" PRIu64 ", items ran it %" PRIu64 " times", when, k,
              ns.executed_count, runs[k]);
    total += runs[k];
  }
  if (!o->v->mega && d.resumed_count != total)
    fail_at(o, "%s: resumed %" PRIu64 ", items ran %" PRIu64 " continuations", when,
            d.resumed_count, total);
  uint32_t entry = 0;
  for (uint32_t w = 0; w < r->works; ++w) {
    if (!chk(o, ws_buffer_read(r->released[w], 0, released, N * 4), "ws_buffer_read", NULL) ||
        !chk(o, ws_buffer_read(r->aux_visits[w], 0, aux, N * FZ_MAX_STAGES * 4),
             "ws_buffer_read", NULL))
      return false;
    if (ws_pool_live(r->pool[w]) != 0 || ws_pool_errors(r->pool[w]) != 0)
      fail_at(o, "%s: pool %u holds %u items, %u errors", when, w, ws_pool_live(r->pool[w]),
              ws_pool_errors(r->pool[w]));
    for (uint32_t sg = 0; sg < r->w[w].S; ++sg, ++entry) {
      uint64_t visited = 0;
      for (uint32_t i = 0; i < N; ++i)
        visited += aux[i * FZ_MAX_STAGES + sg];
      ws_node_stats ns;
      assert_int_equal(ws_scheduler_aux_stats(s, entry, &ns), WS_OK);
      if (ns.executed_count != visited)
        fail_at(o, "%s: work %u stage %u executed %" PRIu64 ", items visited it %" PRIu64,
                when, w, sg, ns.executed_count, visited);
    }
  }
  return true;
}

/* One dispatch (outputs zeroed first); a failed one is retried once: the
 * fault fired already, so the retry must run cleanly. */
static bool run_dispatch(outcome *o, rig *r, ws_scheduler *s, const char *when) {
  for (int attempt = 0; attempt < 3; ++attempt) {
    if (chk(o, rig_zero(r), "ws_buffer_fill_u32", NULL) &&
        chk(o, rig_dispatch(r, s), "ws_scheduler_dispatch", s) && verify_run(o, r, s, when))
      return true;
    o->retries += 1;
  }
  fail_at(o, "%s: the dispatch still fails after the injected fault fired: %s", when,
          ws_scheduler_last_error(s));
  return false;
}

static ws_scheduler_config variant_config(const variant *v) {
  ws_scheduler_config c = ws_scheduler_config_default();
  c.kind = v->mega ? WS_SCHEDULER_MEGAKERNEL : WS_SCHEDULER_WAVEFRONT;
  c.resident_frames = v->R;
  c.layout = v->layout;
  c.largest_first = !v->allq;
  c.accounting = (ws_accounting)v->accounting;
  c.compaction = v->compaction;
  c.verify_queues = v->verify;
  c.partial_admission = v->partial;
  c.block_size = 32;
  c.statistics = true;
  c.iteration_limit = 100000; /* a hang becomes WS_EITERATION_LIMIT: a test failure */
  return c;
}

static void scenario(const variant *v, fault_kind kind, unsigned long n, outcome *o) {
  memset(o, 0, sizeof *o);
  o->v = v;
  o->kind = kind;
  o->n = n;
  const unsigned long live0 = ws_testing_live_allocations();
  const unsigned long total0 = ws_testing_total_allocations();
  ws_device *dev = g_dev;
  ws_scheduler *s = NULL;
  rig r;
  memset(&r, 0, sizeof r);
  if (kind == FAULT_ALLOC)
    ws_testing_fail_alloc_after(n);
  if (g_fresh) {
    /* the device's open and its lazy caches (CUB storage, Vulkan
     * pipelines) are then part of every scenario */
    ws_testing_fail_next_device_after(kind == FAULT_BACKEND ? n : 0);
    dev = NULL;
    if (!chk(o, open_device(&dev), "ws_device_create", NULL)) {
      dev = NULL;
      o->faults = kind == FAULT_BACKEND ? 1 : 0; /* the device that counted is gone */
      goto out;
    }
  } else {
    /* the wrapper stays installed (and counting) for the whole sweep */
    assert_int_equal(ws_testing_fail_backend_after(dev, kind == FAULT_BACKEND ? n : 0), WS_OK);
  }
  o->dev = dev;
  rig_init(&r, dev, v->N, v->works, v->R, v->partial);
  r.append = v->append;
  if (!chk(o, rig_create(&r), "rig_create (buffers, ws_pool_create)", NULL))
    goto out;
  ws_scheduler_config cfg = variant_config(v);
  if (!chk(o, ws_scheduler_create(dev, &rig_coroutine, &cfg, &s), "ws_scheduler_create", NULL)) {
    if (s)
      fail_at(o, "ws_scheduler_create failed but set *out");
    goto out;
  }
  for (uint32_t w = 0; w < r.works; ++w) {
    uint32_t before = ws_scheduler_aux_stats_count(s);
    if (!chk(o, ws_scheduler_add_aux(s, ws_pool_work(r.pool[w])), "ws_scheduler_add_aux", s)) {
      if (ws_scheduler_aux_stats_count(s) != before)
        fail_at(o, "a failed ws_scheduler_add_aux registered something");
      goto out;
    }
  }
  o->setup_calls = ws_testing_backend_calls(dev);
  if (!run_dispatch(o, &r, s, "first dispatch") || !run_dispatch(o, &r, s, "second dispatch"))
    goto out;
  o->completed = true;
out:
  if (kind == FAULT_ALLOC)
    ws_testing_fail_alloc_after(0);
  o->allocs = ws_testing_total_allocations() - total0;
  if (dev) {
    o->calls = ws_testing_backend_calls(dev);
    o->faults = ws_testing_backend_faults(dev);
  }
  ws_scheduler_destroy(s);
  rig_destroy(&r);
  if (g_fresh)
    ws_device_destroy(dev);
  else
    ws_testing_fail_backend_after(dev, 0);
  if (ws_testing_live_allocations() != live0)
    fail_at(o, "%lu host allocation(s) leaked (first error %s in %s)",
            ws_testing_live_allocations() - live0, ws_status_name(o->first), o->first_call);
}

/* Sums over the sweeps: [0] host allocations, [1] backend calls. */
static unsigned long g_sum_swept[2], g_sum_total[2];

static void print_hist(const char *what, const char *name, unsigned long swept,
                       unsigned long total, const outcome *clean) {
  char hist[512] = "";
  size_t len = 0;
  for (int i = 0; i < 128; ++i)
    if (g_hist[i]) {
      int w = snprintf(hist + len, sizeof hist - len, " %s x%lu", ws_status_name((ws_status)-i),
                       g_hist[i]);
      if (w > 0 && (size_t)w < sizeof hist - len)
        len += (size_t)w;
    }
  printf("  %-36s %-14s N = 1..%lu (%lu failed):%s; N = %lu clean (%lu allocations, %lu "
         "backend calls)\n",
         name, what, total, swept, hist, total + 1, clean->allocs, clean->calls);
  table_row("| %s | %s | %lu of %lu |%s |\n", name, what, swept, total, hist);
  const int k = strstr(what, "host") ? 0 : 1;
  g_sum_swept[k] += swept;
  g_sum_total[k] += total;
  fflush(stdout);
}

/* Which N a backend sweep fails: every call up to the first dispatch, then
 * every g_stride-th. */
static bool swept(unsigned long n, unsigned long setup) {
  return n <= setup || (n - setup - 1) % g_stride == 0;
}

static void sweep(const variant *v, fault_kind kind) {
  outcome base;
  /* a first clean run fills the device's lazy caches (Vulkan pipelines,
   * CUB storage), which outlive a scenario by design */
  scenario(v, FAULT_NONE, 0, &base);
  /* the clean run (with the backend wrapper installed but never failing)
   * says how many allocations / calls there are to fail */
  scenario(v, kind, 0, &base);
  if (base.errors || !base.completed)
    fail_at(&base, "the clean scenario failed: %s in %s", ws_status_name(base.first),
            base.first_call);
  const unsigned long total = kind == FAULT_ALLOC ? base.allocs : base.calls;
  assert_true(total > 0);
  memset(g_hist, 0, sizeof g_hist);
  unsigned long retried = 0, count = 0;
  for (unsigned long n = 1; n <= total; ++n) {
    if (kind == FAULT_BACKEND && !swept(n, base.setup_calls))
      continue;
    outcome o;
    scenario(v, kind, n, &o);
    ++count;
    if (kind == FAULT_BACKEND && o.faults != 1)
      fail_at(&o, "the fault did not fire (%lu backend calls, clean run %lu): the scenario is "
                  "not deterministic",
              o.calls, total);
    if (o.errors == 0)
      fail_at(&o, "the injected fault was swallowed: every call returned WS_OK");
    if (g_verbose)
      printf("    N = %lu: %s in %s%s\n", n, ws_status_name(o.first), o.first_call,
             o.completed ? " (recovered, completed)" : "");
    retried += o.retries;
  }
  outcome last;
  scenario(v, kind, total + 1, &last);
  if (last.errors || !last.completed || (kind == FAULT_BACKEND && last.faults != 0))
    fail_at(&last, "N past the last call still hit a fault: %s in %s", ws_status_name(last.first),
            last.first_call);
  print_hist(kind == FAULT_ALLOC ? "host allocations" : "backend calls", v->name, count, total,
             &base);
  if (g_verbose)
    printf("    %lu failed dispatches were retried and then completed\n", retried);
}

/* ---- device open: every host allocation and every backend allocation of
 * ws_device_create failed in turn ---- */

static ws_status open_device(ws_device **out) {
  ws_device_config dc;
  memset(&dc, 0, sizeof dc);
  dc.backend = g_backend;
  dc.device_index = -1;
  return ws_device_create(&dc, out);
}

static void open_sweep(fault_kind kind) {
  variant none = {"ws_device_create", 0, 0, false, false, false, false, false, 0, 0, 0, false};
  const unsigned long live0 = ws_testing_live_allocations();
  /* the clean open counts what there is to fail */
  const unsigned long total0 = ws_testing_total_allocations();
  ws_device *dev = NULL;
  if (kind == FAULT_BACKEND)
    ws_testing_fail_next_device_after(0);
  assert_int_equal(open_device(&dev), WS_OK);
  const unsigned long total = kind == FAULT_ALLOC ? ws_testing_total_allocations() - total0
                                                  : ws_testing_backend_calls(dev);
  ws_device_destroy(dev);
  assert_int_equal(ws_testing_live_allocations(), live0);
  memset(g_hist, 0, sizeof g_hist);
  for (unsigned long n = 1; n <= total + 1; ++n) {
    outcome o;
    memset(&o, 0, sizeof o);
    o.v = &none;
    o.kind = kind;
    o.n = n;
    if (kind == FAULT_ALLOC)
      ws_testing_fail_alloc_after(n);
    else
      ws_testing_fail_next_device_after(n);
    dev = (ws_device *)(uintptr_t)8;
    const ws_status st = open_device(&dev);
    ws_testing_fail_alloc_after(0);
    if (n <= total) {
      if (st == WS_OK)
        fail_at(&o, "ws_device_create succeeded although allocation %lu of %lu failed", n, total);
      chk(&o, st, "ws_device_create", NULL);
      if (dev)
        fail_at(&o, "a failed ws_device_create set *out");
    } else {
      if (st != WS_OK)
        fail_at(&o, "ws_device_create failed past the last allocation: %s", ws_status_name(st));
      if (kind == FAULT_BACKEND && ws_testing_backend_faults(dev) != 0)
        fail_at(&o, "a fault fired past the last backend allocation");
      ws_device_destroy(dev);
    }
    if (ws_testing_live_allocations() != live0)
      fail_at(&o, "%lu host allocation(s) leaked", ws_testing_live_allocations() - live0);
  }
  outcome clean;
  memset(&clean, 0, sizeof clean);
  clean.allocs = kind == FAULT_ALLOC ? total : 0;
  clean.calls = kind == FAULT_BACKEND ? total : 0;
  print_hist(kind == FAULT_ALLOC ? "host allocations" : "backend allocations",
             "ws_device_create", total, total, &clean);
}

static void test_open_faults(void **state) {
  (void)state;
  open_sweep(FAULT_ALLOC);
  open_sweep(FAULT_BACKEND);
}

/* ---- the variants: every layout, accounting, compaction, verification,
 * partial admission, one and two works, the megakernel, all-queues, append
 * pools ---- */
static const variant variants[] = {
    {"aos/incremental/compact/1 work", WS_LAYOUT_AOS, 1, true, false, false, false, false, 1, 12, 4,
     false},
    {"soa/materialized/nocompact/verify/2", WS_LAYOUT_SOA, 0, false, true, false, false, false, 2,
     12, 4, false},
    {"soa/fused/compact/partial/2 works", WS_LAYOUT_SOA, 2, true, false, false, false, true, 2, 12,
     4, false},
    {"aos/materialized/all-queues", WS_LAYOUT_AOS, 0, true, true, false, true, false, 0, 12, 4,
     false},
    {"megakernel", WS_LAYOUT_AOS, 1, true, false, true, false, false, 0, 12, 4, false},
    {"aos/fused/append pools/2 works", WS_LAYOUT_AOS, 2, true, false, false, false, false, 2, 12, 4,
     true},
};
#define NVARIANTS (sizeof variants / sizeof variants[0])

static int open_shared(void **state) {
  (void)state;
  if (g_fresh)
    return 0;
  /* the fault wrapper's one allocation, made here: it lives with the device */
  return open_device(&g_dev) == WS_OK && ws_testing_fail_backend_after(g_dev, 0) == WS_OK ? 0
                                                                                          : -1;
}
static int close_shared(void **state) {
  (void)state;
  ws_device_destroy(g_dev);
  g_dev = NULL;
  return 0;
}

static void test_alloc_faults(void **state) {
  (void)state;
  for (size_t i = 0; i < NVARIANTS; ++i)
    sweep(&variants[i], FAULT_ALLOC);
}

static void test_backend_faults(void **state) {
  (void)state;
  for (size_t i = 0; i < NVARIANTS; ++i)
    sweep(&variants[i], FAULT_BACKEND);
}

/* The hook itself: counts, fires once, maps statuses, and leaks nothing. */
static void test_backend_fault_hook(void **state) {
  (void)state;
  const unsigned long live0 = ws_testing_live_allocations();
  ws_device *dev = NULL;
  ws_device_config dc;
  memset(&dc, 0, sizeof dc);
  dc.backend = g_backend;
  dc.device_index = -1;
  assert_int_equal(ws_device_create(&dc, &dev), WS_OK);
  assert_int_equal(ws_testing_fail_backend_after(NULL, 1), WS_EINVAL);
  assert_int_equal(ws_testing_backend_calls(dev), 0);
  assert_int_equal(ws_testing_fail_backend_after(dev, 1), WS_OK);
  ws_buffer *b = NULL;
  assert_int_equal(ws_buffer_create(dev, 64, &b), WS_EDEVMEM);
  assert_null(b);
  assert_non_null(strstr(ws_device_last_error(dev), "injected fault in buffer_alloc"));
  assert_int_equal(ws_testing_backend_faults(dev), 1);
  assert_int_equal(ws_buffer_create(dev, 64, &b), WS_OK); /* fired once only */
  assert_int_equal(ws_testing_fail_backend_after(dev, 2), WS_OK);
  uint32_t v = 7;
  assert_int_equal(ws_buffer_write(b, 0, &v, 4), WS_OK);
  assert_int_equal(ws_buffer_write(b, 0, &v, 4), WS_EBACKEND);
  assert_int_equal(ws_testing_backend_calls(dev), 2);
  ws_readback *rb = NULL;
  assert_int_equal(ws_testing_fail_backend_after(dev, 1), WS_OK);
  assert_int_equal(ws_readback_create(dev, 16, &rb), WS_ENOMEM);
  assert_null(rb);
  assert_int_equal(ws_testing_fail_backend_after(dev, 0), WS_OK);
  assert_int_equal(ws_buffer_read(b, 0, &v, 4), WS_OK);
  assert_int_equal(v, 7);
  assert_int_equal(ws_testing_backend_faults(dev), 0);
  ws_buffer_destroy(b);
  ws_device_destroy(dev); /* frees the wrapper */
  assert_int_equal(ws_testing_live_allocations(), live0);
  /* the wrapper's own allocation can fail */
  assert_int_equal(ws_device_create(&dc, &dev), WS_OK);
  ws_testing_fail_alloc_after(1);
  assert_int_equal(ws_testing_fail_backend_after(dev, 1), WS_ENOMEM);
  ws_testing_fail_alloc_after(0);
  ws_device_destroy(dev);
  assert_int_equal(ws_testing_live_allocations(), live0);
}

/* --check-doc: the summary table of this run against the one FILE holds
 * between the markers, so that docs/reliability.md states what the test
 * sweeps. Returns 0 when they are equal. */
#define DOC_BEGIN "<!-- fault-injection-table: begin -->\n"
#define DOC_END "<!-- fault-injection-table: end -->"

static int check_doc(const char *path) {
  static char doc[1 << 16];
  FILE *f = fopen(path, "r");
  if (!f) {
    fprintf(stderr, "fault_injection: cannot read %s\n", path);
    return 1;
  }
  const size_t n = fread(doc, 1, sizeof doc - 1, f);
  fclose(f);
  doc[n] = '\0';
  const char *b = strstr(doc, DOC_BEGIN), *e = b ? strstr(b, DOC_END) : NULL;
  char want[sizeof g_table + 512];
  snprintf(want, sizeof want,
           "| sweep | failed | of | statuses seen |\n|---|---|---|---|\n%s"
           "| **all** | host allocations | %lu of %lu | |\n"
           "| **all** | backend calls and allocations | %lu of %lu | |\n",
           g_table, g_sum_swept[0], g_sum_total[0], g_sum_swept[1], g_sum_total[1]);
  if (b && e && (size_t)(e - b - strlen(DOC_BEGIN)) == strlen(want) &&
      strncmp(b + strlen(DOC_BEGIN), want, strlen(want)) == 0) {
    printf("%s states exactly what this run swept\n", path);
    return 0;
  }
  fprintf(stderr,
          "fault_injection: %s does not state what this run swept; put this between its "
          "markers\n%s%s%s\n",
          path, DOC_BEGIN, want, DOC_END);
  return 1;
}

int main(int argc, char **argv) {
  const char *doc = NULL;
  bool stride_given = false;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--backend") == 0 && i + 1 < argc) {
      if (ws_backend_parse(argv[++i], &g_backend) != WS_OK) {
        fprintf(stderr, "unknown backend '%s'\n", argv[i]);
        return 2;
      }
    } else if (strcmp(argv[i], "--verbose") == 0) {
      g_verbose = 1;
    } else if (strcmp(argv[i], "--stride") == 0 && i + 1 < argc) {
      stride_given = true;
      g_stride = strtoul(argv[++i], NULL, 10);
      if (g_stride == 0)
        g_stride = 1;
    } else if (strcmp(argv[i], "--fresh-device") == 0) {
      g_fresh = true;
    } else if (strcmp(argv[i], "--check-doc") == 0 && i + 1 < argc) {
      doc = argv[++i];
    } else {
      fprintf(stderr,
              "usage: %s [--backend cpu|cuda|vulkan] [--verbose] [--stride S] [--fresh-device] "
              "[--check-doc FILE]\n",
              argv[0]);
      return 2;
    }
  }
  if (!fz_kernels_modules.by_backend[g_backend]) {
    printf("SKIP: the fuzz kernels were not built for the %s backend\n", ws_backend_name(g_backend));
    return 77;
  }
  ws_device *probe = NULL;
  ws_status st = open_device(&probe);
  if (st == WS_ENODEV) {
    printf("SKIP: no %s device\n", ws_backend_name(g_backend));
    return 77;
  }
  if (st != WS_OK)
    return 1;
  /* lavapipe runs shaders on the CPU: a full backend sweep there takes about
   * a minute on two cores, so by default it fails every 5th call after the
   * first dispatch (every allocation comes before it) */
  if (!stride_given && strstr(ws_device_name(probe), "llvmpipe"))
    g_stride = 5;
  ws_device_destroy(probe);
  printf("%s backend, backend calls after the first dispatch: every %lu%s\n",
         ws_backend_name(g_backend), g_stride, g_stride == 1 ? " (all)" : "th");
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_backend_fault_hook),
      cmocka_unit_test(test_open_faults),
      cmocka_unit_test_setup_teardown(test_alloc_faults, open_shared, close_shared),
      cmocka_unit_test_setup_teardown(test_backend_faults, open_shared, close_shared),
  };
  const int failed = cmocka_run_group_tests(tests, NULL, NULL);
  if (failed)
    return 1;
  return doc ? check_doc(doc) : 0;
}
