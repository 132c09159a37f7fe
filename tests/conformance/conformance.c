/* SPDX-License-Identifier: MIT */
/* Cross-backend conformance (issue 5): the same cases on every backend that
 * is available at run time — the CPU always, CUDA and Vulkan when
 * ws_device_create succeeds — with every integer result compared exactly
 * against the CPU backend's.
 *
 * Cases, for every scheduler configuration (layout x accounting x
 * compaction x policy, the 16 legal ones) plus the megakernel:
 *   demo   the CLI's divergent workload (examples/demo/demo.kern.h, GLSL in
 *          examples/demo/glsl): per-item outputs and step counts, and the
 *          scheduler's statistics (iterations, per-continuation counts...);
 *          the CPU's outputs are also checked against a host model.
 *   reg    the auxiliary-pipeline regression of SPEC §6 (reg_kernels, GLSL
 *          in tests/aux/glsl/reg_kernels) with three clients: the library's
 *          pool, a hand-written raw client under the multi-stage protocol,
 *          and the same under the legacy single-stage protocol. Visits and
 *          diagnostics per path, dispatch/registration status, main and
 *          per-stage statistics. The CPU's visits are also checked against
 *          the SPEC §6 expectations (multi-stage clients).
 * Results that backend.h leaves unspecified (slot order within a queue,
 * where compaction moves a frame) never reach these numbers: the
 * scheduler's decisions depend on queue counts only.
 *
 * Output: one line per case and backend ("ok" / "FAIL" with the first
 * difference), lines for backends that are absent, and a final
 * "N passed, M failed". Exit status 0 when nothing failed.
 *
 * usage: conformance [--items N] [--pool R] [--only SUBSTRING] [--verbose]
 *                    [--require cuda,vulkan]
 * A backend named by --require (or the comma list in WS_CONFORMANCE_REQUIRE)
 * that is not built or has no device is a failure instead of a skip.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "demo.h"
#include "regression.h"
#include "wavesched/pool.h"
#include "wavesched/wavesched.h"

extern const ws_module_set demo_kernels_modules;
extern const ws_module_set reg_kernels_modules;

WS_FRAME_DESC(demo_frame, DEMO_FIELDS)
WS_CONTINUATION_NAMES(demo_names, DEMO_CONTINUATIONS)
WS_FRAME_DESC(reg_frame, REG_FIELDS)
WS_CONTINUATION_NAMES(reg_names, REG_CONTINUATIONS)

/* ---- options ---- */
static uint32_t opt_items = 3000;
static uint32_t opt_pool = 256;
static const char *opt_only = NULL;
static bool opt_verbose = false;

/* ---- a case's results: a flat list of labelled integers ---- */
typedef struct rec_entry {
  const char *what; /* static string */
  uint32_t index;   /* element index, or UINT32_MAX for a scalar */
  uint64_t value;
} rec_entry;

typedef struct rec {
  rec_entry *v;
  size_t n, cap;
  bool oom;
  char error[256]; /* a failed run: why (compared like a value: must be "" on both) */
  char note[160];  /* a short summary for the output line */
} rec;

static void rec_reset(rec *r) {
  r->n = 0;
  r->oom = false;
  r->error[0] = '\0';
  r->note[0] = '\0';
}

static void rec_put(rec *r, const char *what, uint32_t index, uint64_t value) {
  if (r->n == r->cap) {
    size_t cap = r->cap ? 2 * r->cap : 1024;
    rec_entry *v = realloc(r->v, cap * sizeof *v);
    if (!v) {
      r->oom = true;
      return;
    }
    r->v = v;
    r->cap = cap;
  }
  r->v[r->n++] = (rec_entry){what, index, value};
}

static void rec_add(rec *r, const char *what, uint64_t value) { rec_put(r, what, UINT32_MAX, value); }

static void rec_array(rec *r, const char *what, const uint32_t *a, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i)
    rec_put(r, what, i, a[i]);
}

static void rec_fail(rec *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void rec_fail(rec *r, const char *fmt, ...) {
  if (r->error[0])
    return; /* keep the first */
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(r->error, sizeof r->error, fmt, ap);
  va_end(ap);
}

static void rec_label(char *buf, size_t cap, const rec_entry *e) {
  if (e->index == UINT32_MAX)
    snprintf(buf, cap, "%s", e->what);
  else
    snprintf(buf, cap, "%s[%u]", e->what, e->index);
}

/* Compares `got` with the CPU's `ref`; writes the first difference. */
static bool rec_equal(const rec *ref, const rec *got, char *diff, size_t cap) {
  if (ref->oom || got->oom) {
    snprintf(diff, cap, "out of host memory while recording results");
    return false;
  }
  if (strcmp(ref->error, got->error) != 0) {
    snprintf(diff, cap, "cpu: %s | this backend: %s", ref->error[0] ? ref->error : "ok",
             got->error[0] ? got->error : "ok");
    return false;
  }
  size_t n = ref->n < got->n ? ref->n : got->n;
  for (size_t i = 0; i < n; ++i) {
    const rec_entry *a = &ref->v[i], *b = &got->v[i];
    char la[96], lb[96];
    rec_label(la, sizeof la, a);
    rec_label(lb, sizeof lb, b);
    if (strcmp(la, lb) != 0) {
      snprintf(diff, cap, "result %zu is %s on the cpu, %s here", i, la, lb);
      return false;
    }
    if (a->value != b->value) {
      size_t diffs = 0;
      for (size_t j = i; j < n; ++j)
        diffs += ref->v[j].value != got->v[j].value;
      snprintf(diff, cap, "%s: cpu %" PRIu64 ", this backend %" PRIu64 " (%zu value(s) differ)", la,
               a->value, b->value, diffs);
      return false;
    }
  }
  if (ref->n != got->n) {
    snprintf(diff, cap, "%zu results on the cpu, %zu here", ref->n, got->n);
    return false;
  }
  return true;
}

/* ---- backends ---- */
typedef struct backend {
  ws_backend_kind kind;
  ws_device *dev; /* NULL: absent */
} backend;

static backend g_backends[WS_BACKEND_COUNT];
static uint32_t g_backend_count;
static uint64_t g_passed, g_failed;

/* Backends that must be present (--require / WS_CONFORMANCE_REQUIRE): on
 * the GPU machine an absent CUDA or Vulkan device must fail the run, not
 * pass it with the CPU compared against itself. */
static bool g_required[WS_BACKEND_COUNT];

static bool parse_required(const char *list) {
  for (const char *t = list; *t;) {
    const size_t len = strcspn(t, ",");
    char name[32];
    snprintf(name, sizeof name, "%.*s", (int)(len < sizeof name ? len : sizeof name - 1), t);
    ws_backend_kind kind;
    if (ws_backend_parse(name, &kind) != WS_OK) {
      fprintf(stderr, "conformance: unknown backend '%s' in the required list '%s'\n", name,
              list);
      return false;
    }
    g_required[kind] = true;
    t += len + (t[len] == ',');
  }
  return true;
}

static void open_backends(void) {
  for (int k = 0; k < WS_BACKEND_COUNT; ++k) {
    ws_backend_kind kind = (ws_backend_kind)k;
    const char *name = ws_backend_name(kind);
    if (!ws_backend_compiled(kind)) {
      if (g_required[kind]) {
        printf("FAIL backend %s is required but not built into this library\n", name);
        g_failed += 1;
      } else {
        printf("backend %-7s not built into this library: skipped\n", name);
      }
      continue;
    }
    ws_device_config dc = {0};
    dc.backend = kind;
    dc.device_index = -1;
    ws_device *dev = NULL;
    ws_status st = ws_device_create(&dc, &dev);
    if (st != WS_OK) {
      /* the CPU must always work; any other backend may be absent here */
      const bool absent = kind != WS_BACKEND_CPU && st == WS_ENODEV && !g_required[kind];
      if (absent)
        printf("backend %-7s has no usable device: skipped (%s)\n", name, ws_status_name(st));
      else
        printf("FAIL backend %s cannot be opened: %s\n", name, ws_status_name(st));
      if (!absent)
        g_failed += 1;
      continue;
    }
    printf("backend %-7s %s\n", name, ws_device_name(dev));
    g_backends[g_backend_count++] = (backend){kind, dev};
  }
}

static void close_backends(void) {
  for (uint32_t b = 0; b < g_backend_count; ++b)
    ws_device_destroy(g_backends[b].dev);
}

/* ---- scheduler configurations ---- */
typedef struct combo {
  ws_scheduler_kind kind;
  uint32_t layout;
  int accounting; /* 0 materialized, 1 incremental, 2 fused */
  bool compaction;
  bool greedy;
  char name[64];
} combo;

static combo g_combos[20];
static uint32_t g_combo_count;

static void make_combos(void) {
  static const char *const acc[] = {"materialized", "incremental", "fused"};
  for (uint32_t layout = 0; layout < 2; ++layout)
    for (int compaction = 1; compaction >= 0; --compaction)
      for (int a = 0; a < 4; ++a) { /* 3 = materialized with the all-queues policy */
        combo *c = &g_combos[g_combo_count++];
        c->kind = WS_SCHEDULER_WAVEFRONT;
        c->layout = layout;
        c->accounting = a == 3 ? 0 : a;
        c->compaction = compaction;
        c->greedy = a != 3;
        snprintf(c->name, sizeof c->name, "%s/%s/%s/%s", layout ? "soa" : "aos", acc[c->accounting],
                 compaction ? "compact" : "nocompact", c->greedy ? "greedy" : "allq");
      }
  combo *m = &g_combos[g_combo_count++];
  memset(m, 0, sizeof *m);
  m->kind = WS_SCHEDULER_MEGAKERNEL;
  m->greedy = true;
  snprintf(m->name, sizeof m->name, "megakernel");
}

static ws_scheduler_config combo_config(const combo *c, uint32_t resident) {
  ws_scheduler_config cfg = ws_scheduler_config_default();
  cfg.kind = c->kind;
  cfg.resident_frames = resident;
  cfg.layout = c->layout;
  cfg.largest_first = c->greedy;
  cfg.accounting = (ws_accounting)c->accounting;
  cfg.compaction = c->compaction;
  cfg.statistics = true;
  cfg.iteration_limit = 10000000; /* a scheduler bug ends as an error, not a hang */
  return cfg;
}

/* Statistics that depend on queue counts only (never the elapsed time). */
static void record_stats(rec *r, const ws_scheduler *s) {
  ws_dispatch_stats ds;
  ws_scheduler_dispatch_stats(s, &ds);
  rec_add(r, "iterations", ds.iteration_count);
  rec_add(r, "generated", ds.generated_count);
  rec_add(r, "resumed", ds.resumed_count);
  rec_add(r, "scanned slots", ds.scanned_slot_count);
  rec_add(r, "max active", ds.max_active_count);
  rec_add(r, "aux dispatches", ds.aux_dispatch_count);
  rec_add(r, "forced drains", ds.forced_drain_count);
  rec_add(r, "blocked iterations", ds.blocked_count);
  const uint32_t nodes = ws_scheduler_node_count(s);
  rec_add(r, "main nodes", nodes);
  for (uint32_t j = 0; j < nodes; ++j) {
    ws_node_stats ns;
    if (ws_scheduler_node_stats(s, j, &ns) != WS_OK)
      continue;
    rec_put(r, "node dispatches", j, ns.dispatch_count);
    rec_put(r, "node executed", j, ns.executed_count);
    rec_put(r, "node peak queued", j, ns.peak_queued_count);
  }
  const uint32_t aux = ws_scheduler_aux_stats_count(s);
  rec_add(r, "aux entries", aux);
  for (uint32_t j = 0; j < aux; ++j) {
    ws_node_stats ns;
    if (ws_scheduler_aux_stats(s, j, &ns) != WS_OK)
      continue;
    rec_put(r, "stage dispatches", j, ns.dispatch_count);
    rec_put(r, "stage executed", j, ns.executed_count);
    rec_put(r, "stage peak queued", j, ns.peak_queued_count);
  }
  snprintf(r->note, sizeof r->note, "%" PRIu64 " iterations, %" PRIu64 " resumed", ds.iteration_count,
           ds.resumed_count);
}

/* ======================================================================
 * The demo workload
 * ====================================================================== */

/* Host model of one item: its output and its continuation runs. */
static void host_demo_item(uint32_t id, uint32_t *out, uint32_t *steps) {
  uint32_t remaining = demo_length(id), hash = id, n = 0;
  uint16_t blends = 0;
  uint32_t cont = DEMO_MIX;
  for (;;) {
    n += 1;
    if (cont == DEMO_MIX) {
      hash = ws_hash32(hash);
      remaining -= 1;
      if (remaining == 0)
        cont = DEMO_FINISH;
      else
        cont = (hash & 3u) == 0 ? DEMO_BLEND : DEMO_MIX;
    } else if (cont == DEMO_BLEND) {
      blends = (uint16_t)(blends + 1);
      cont = DEMO_MIX;
    } else {
      *out = hash ^ ((uint32_t)blends << 24);
      *steps = n;
      return;
    }
  }
}

static void run_demo(ws_device *dev, const combo *c, rec *r) {
  const uint32_t N = opt_items;
  const ws_coroutine_desc co = {"demo", &demo_kernels_modules, &demo_frame_ws_desc,
                                sizeof(demo_args), 3, demo_names};
  ws_scheduler_config cfg = combo_config(c, opt_pool);
  ws_scheduler *s = NULL;
  ws_buffer *out = NULL, *steps = NULL;
  uint32_t *h_out = calloc(N ? N : 1, 4), *h_steps = calloc(N ? N : 1, 4);
  ws_status st;
  if (!h_out || !h_steps) {
    rec_fail(r, "out of host memory");
    goto done;
  }
  if ((st = ws_scheduler_create(dev, &co, &cfg, &s)) != WS_OK) {
    rec_fail(r, "ws_scheduler_create: %s", ws_status_name(st));
    goto done;
  }
  if ((st = ws_buffer_create(dev, (size_t)N * 4 + 4, &out)) != WS_OK ||
      (st = ws_buffer_create(dev, (size_t)N * 4 + 4, &steps)) != WS_OK ||
      (st = ws_buffer_fill_u32(out, 0, 0, N)) != WS_OK ||
      (st = ws_buffer_fill_u32(steps, 0, 0, N)) != WS_OK) {
    rec_fail(r, "buffers: %s", ws_status_name(st));
    goto done;
  }
  demo_args args = {ws_buffer_address(out), ws_buffer_address(steps), 0, 0};
  st = ws_scheduler_dispatch(s, N, &args, sizeof args);
  rec_add(r, "dispatch status", (uint64_t)(int64_t)st);
  if (st != WS_OK) {
    rec_fail(r, "dispatch: %s", ws_status_name(st));
    goto done;
  }
  if ((st = ws_buffer_read(out, 0, h_out, (size_t)N * 4)) != WS_OK ||
      (st = ws_buffer_read(steps, 0, h_steps, (size_t)N * 4)) != WS_OK) {
    rec_fail(r, "readback: %s", ws_status_name(st));
    goto done;
  }
  rec_array(r, "out", h_out, N);
  rec_array(r, "steps", h_steps, N);
  record_stats(r, s);
done:
  free(h_out);
  free(h_steps);
  ws_buffer_destroy(out);
  ws_buffer_destroy(steps);
  ws_scheduler_destroy(s);
}

/* The CPU reference itself, against the host model. */
static bool check_demo_model(const rec *r, char *why, size_t cap) {
  uint32_t checked = 0;
  for (size_t i = 0; i < r->n; ++i) {
    const rec_entry *e = &r->v[i];
    const bool is_out = strcmp(e->what, "out") == 0, is_steps = strcmp(e->what, "steps") == 0;
    if (!is_out && !is_steps)
      continue;
    uint32_t out, steps;
    host_demo_item(e->index, &out, &steps);
    const uint32_t want = is_out ? out : steps;
    if (e->value != want) {
      snprintf(why, cap, "%s[%u] is %" PRIu64 ", the host model says %u", e->what, e->index,
               e->value, want);
      return false;
    }
    checked += 1;
  }
  if (checked != 2 * opt_items) {
    snprintf(why, cap, "%u of %u per-item results recorded", checked, 2 * opt_items);
    return false;
  }
  return true;
}

/* ======================================================================
 * The auxiliary-pipeline regression (SPEC §6)
 * ====================================================================== */
typedef enum reg_client_kind { REG_POOL = 0, REG_RAW = 1, REG_RAW_SINGLE = 2 } reg_client_kind;
static const char *const reg_client_names[] = {"pool", "raw", "raw-single-stage"};
static const char *const reg_stage_names[REG_STAGES] = {"prepare", "iterate", "finish"};

/* A hand-written client over the raw storage (state = [free, stage 0..2]),
 * with only the calls the protocol requires plus the stage ones; the
 * defaults pick the drain stage. */
typedef struct reg_client {
  ws_kernel kernel;
  reg_stage_args sa;
  ws_buffer *items, *tokens, *stack, *state;
  ws_readback *rb;
} reg_client;

static const uint32_t *reg_obs(const reg_client *c) { return ws_readback_data(c->rb); }

static ws_status reg_reset(void *user) {
  reg_client *c = user;
  uint32_t state0[4] = {REG_C, 0, 0, 0}, stack[REG_C];
  for (uint32_t i = 0; i < REG_C; ++i)
    stack[i] = REG_C - 1 - i;
  ws_status st;
  if ((st = ws_buffer_fill_u32(c->tokens, 0, 0, REG_C)) != WS_OK ||
      (st = ws_buffer_write(c->state, 0, state0, sizeof state0)) != WS_OK ||
      (st = ws_buffer_write(c->stack, 0, stack, sizeof stack)) != WS_OK)
    return st;
  return WS_OK;
}

static ws_status reg_enqueue(void *user) {
  reg_client *c = user;
  return ws_readback_enqueue(c->rb, 0, c->state, 0, 16);
}

static ws_status reg_host_count(void *user, uint32_t *count) {
  const int32_t free_count = (int32_t)reg_obs(user)[0];
  *count = free_count < 0 ? REG_C + 1 : REG_C - (uint32_t)free_count;
  return WS_OK;
}

static uint32_t reg_stage_count(void *user) {
  (void)user;
  return REG_STAGES;
}

static const char *reg_stage_name(void *user, uint32_t s) {
  (void)user;
  return s < REG_STAGES ? reg_stage_names[s] : NULL;
}

static ws_status reg_stage_host_count(void *user, uint32_t s, uint32_t *count) {
  *count = reg_obs(user)[1 + s];
  return WS_OK;
}

static ws_status reg_launch(reg_client *c, uint32_t s) {
  c->sa.stage = s;
  return ws_kernel_launch(&c->kernel, REG_C, &c->sa, sizeof c->sa);
}

static ws_status reg_dispatch_stage(void *user, uint32_t s) { return reg_launch(user, s); }

/* Legacy single-stage dispatch: the first non-empty stage. */
static ws_status reg_dispatch(void *user) {
  reg_client *c = user;
  for (uint32_t s = 0; s < REG_STAGES; ++s)
    if (reg_obs(c)[1 + s])
      return reg_launch(c, s);
  return WS_OK;
}

static ws_status reg_pool_run_stage(void *user, ws_pool *pool, uint32_t stage) {
  (void)pool;
  return reg_launch(user, stage);
}

static void run_reg(ws_device *dev, const combo *c, reg_client_kind kind, rec *r) {
  reg_client cl;
  memset(&cl, 0, sizeof cl);
  ws_pool *pool = NULL;
  ws_scheduler *s = NULL;
  ws_buffer *visits = NULL, *diag = NULL;
  ws_status st;
  static const ws_aux_producer producers[] = {{"sparse_publish", 1}, {"dense_publish", 1}};
  if ((st = ws_buffer_create(dev, 3 * REG_N * 4, &visits)) != WS_OK ||
      (st = ws_buffer_create(dev, (REG_N + 2) * 4, &diag)) != WS_OK ||
      (st = ws_buffer_fill_u32(visits, 0, 0, 3 * REG_N)) != WS_OK ||
      (st = ws_buffer_fill_u32(diag, 0, 0, REG_N + 2)) != WS_OK ||
      (st = ws_buffer_create(dev, REG_C * sizeof(reg_item), &cl.items)) != WS_OK ||
      (st = ws_buffer_create(dev, REG_C * 4, &cl.tokens)) != WS_OK ||
      (st = ws_buffer_create(dev, REG_C * 4, &cl.stack)) != WS_OK ||
      (st = ws_buffer_create(dev, 16, &cl.state)) != WS_OK ||
      (st = ws_readback_create(dev, 16, &cl.rb)) != WS_OK) {
    rec_fail(r, "setup: %s", ws_status_name(st));
    goto done;
  }
  if ((st = ws_kernel_find(dev, &reg_kernels_modules,
                           kind == REG_POOL ? "reg_pool_stage" : "reg_raw_stage", &cl.kernel)) !=
      WS_OK) {
    rec_fail(r, "ws_kernel_find: %s", ws_status_name(st));
    goto done;
  }
  reg_args *a = &cl.sa.a;
  a->visits = ws_buffer_address(visits);
  a->diagnostics = ws_buffer_address(diag);
  a->raw.items = ws_buffer_address(cl.items);
  a->raw.tokens = ws_buffer_address(cl.tokens);
  a->raw.stack = ws_buffer_address(cl.stack);
  a->raw.state = ws_buffer_address(cl.state);
  a->use_pool = kind == REG_POOL;
  a->capacity = REG_C;
  ws_aux_work w;
  memset(&w, 0, sizeof w);
  const ws_aux_work *work = &w;
  if (kind == REG_POOL) {
    ws_pool_config pc = {"aux", REG_C, REG_STAGES, reg_stage_names, sizeof(reg_item),
                         producers, 2, reg_pool_run_stage, &cl};
    if ((st = ws_pool_create(dev, &pc, &pool)) != WS_OK) {
      rec_fail(r, "ws_pool_create: %s", ws_status_name(st));
      goto done;
    }
    a->pool = ws_pool_get_view(pool);
    work = ws_pool_work(pool);
  } else {
    w.name = "aux";
    w.capacity = REG_C;
    w.producers = producers;
    w.producer_count = 2;
    w.user = &cl;
    w.reset = reg_reset;
    w.enqueue_count_readback = reg_enqueue;
    w.host_count = reg_host_count;
    w.dispatch = reg_dispatch;
    w.stage_count = reg_stage_count;
    w.stage_name = reg_stage_name;
    w.stage_host_count = reg_stage_host_count;
    w.dispatch_stage = reg_dispatch_stage;
  }
  ws_scheduler_config cfg = combo_config(c, REG_R);
  cfg.block_size = 32;
  cfg.aux_protocol = kind == REG_RAW_SINGLE ? WS_AUX_SINGLE_STAGE : WS_AUX_MULTI_STAGE;
  const ws_coroutine_desc co = {"reg_main", &reg_kernels_modules, &reg_frame_ws_desc,
                                sizeof(reg_args), 3, reg_names};
  if ((st = ws_scheduler_create(dev, &co, &cfg, &s)) != WS_OK) {
    rec_fail(r, "ws_scheduler_create: %s", ws_status_name(st));
    goto done;
  }
  /* the all-queues policy and the megakernel take no auxiliary work: the
   * refusal is a result like any other */
  st = ws_scheduler_add_aux(s, work);
  rec_add(r, "add_aux status", (uint64_t)(int64_t)st);
  if (st != WS_OK) {
    snprintf(r->note, sizeof r->note, "registration refused: %s", ws_status_name(st));
    goto done;
  }
  /* two dispatches on one scheduler: reset and reuse */
  for (uint32_t d = 0; d < 2; ++d) {
    if (d > 0 && ((st = ws_buffer_fill_u32(visits, 0, 0, 3 * REG_N)) != WS_OK ||
                  (st = ws_buffer_fill_u32(diag, 0, 0, REG_N + 2)) != WS_OK)) {
      rec_fail(r, "reset: %s", ws_status_name(st));
      goto done;
    }
    st = ws_scheduler_dispatch(s, REG_N, a, sizeof *a);
    rec_put(r, "dispatch status", d, (uint64_t)(int64_t)st);
    if (st != WS_OK) {
      rec_fail(r, "dispatch %u: %s", d + 1, ws_status_name(st));
      goto done;
    }
    uint32_t v[3 * REG_N], dg[REG_N + 2];
    if ((st = ws_buffer_read(visits, 0, v, sizeof v)) != WS_OK ||
        (st = ws_buffer_read(diag, 0, dg, sizeof dg)) != WS_OK) {
      rec_fail(r, "readback: %s", ws_status_name(st));
      goto done;
    }
    rec_array(r, d ? "visits (2nd dispatch)" : "visits", v, 3 * REG_N);
    rec_array(r, d ? "diagnostics (2nd dispatch)" : "diagnostics", dg, REG_N + 2);
    if (kind == REG_POOL) {
      rec_put(r, "pool live", d, ws_pool_live(pool));
      rec_put(r, "pool errors", d, ws_pool_errors(pool));
      for (uint32_t k = 0; k < REG_STAGES; ++k) {
        ws_pool_counters pc;
        ws_pool_stage_counters(pool, k, &pc);
        rec_put(r, "pool stage dispatches", d * REG_STAGES + k, pc.dispatches);
        rec_put(r, "pool stage executed", d * REG_STAGES + k, pc.executed);
      }
    }
    record_stats(r, s);
  }
done:
  ws_scheduler_destroy(s);
  ws_pool_destroy(pool);
  ws_buffer_destroy(visits);
  ws_buffer_destroy(diag);
  ws_buffer_destroy(cl.items);
  ws_buffer_destroy(cl.tokens);
  ws_buffer_destroy(cl.stack);
  ws_buffer_destroy(cl.state);
  ws_readback_destroy(cl.rb);
}

/* The CPU reference itself, against SPEC §6 (both dispatches). */
static bool check_reg_spec(const rec *r, char *why, size_t cap) {
  uint32_t checked = 0;
  for (size_t i = 0; i < r->n; ++i) {
    const rec_entry *e = &r->v[i];
    uint64_t want;
    if (strncmp(e->what, "visits", 6) == 0) {
      const uint32_t id = e->index / 3, stage = e->index % 3;
      want = stage == 0 ? 1u : stage == 1 ? (id % 3 == 0 ? 0u : 2u) : 1u + (id % 8 == 0);
    } else if (strncmp(e->what, "diagnostics", 11) == 0) {
      if (e->index == 1)
        continue; /* progress with live items: any non-zero count */
      want = e->index == 0 ? 0u : 1u;
    } else {
      continue;
    }
    if (e->value != want) {
      snprintf(why, cap, "%s[%u] is %" PRIu64 ", SPEC §6 says %" PRIu64, e->what, e->index,
               e->value, want);
      return false;
    }
    checked += 1;
  }
  if (checked == 0) {
    snprintf(why, cap, "no results");
    return false;
  }
  return true;
}

/* ======================================================================
 * Driver
 * ====================================================================== */
typedef void (*case_fn)(ws_device *dev, const combo *c, int variant, rec *r);
typedef bool (*check_fn)(const rec *r, char *why, size_t cap);

static void demo_case(ws_device *dev, const combo *c, int variant, rec *r) {
  (void)variant;
  run_demo(dev, c, r);
}

static void reg_case(ws_device *dev, const combo *c, int variant, rec *r) {
  run_reg(dev, c, (reg_client_kind)variant, r);
}

static rec ref, got; /* the CPU's results and another backend's */

static void run_case(const char *label, case_fn fn, const combo *c, int variant, check_fn check) {
  if (opt_only && !strstr(label, opt_only))
    return;
  rec_reset(&ref);
  for (uint32_t b = 0; b < g_backend_count; ++b) {
    const backend *be = &g_backends[b];
    const char *bname = ws_backend_name(be->kind);
    rec *r = be->kind == WS_BACKEND_CPU ? &ref : &got;
    rec_reset(r);
    fn(be->dev, c, variant, r);
    char why[600] = "";
    bool ok;
    if (be->kind == WS_BACKEND_CPU) {
      /* the reference must have run, and agree with its own model */
      ok = false;
      if (r->oom)
        snprintf(why, sizeof why, "out of host memory while recording results");
      else if (r->error[0])
        snprintf(why, sizeof why, "%s", r->error);
      else
        ok = check == NULL || check(r, why, sizeof why);
    } else {
      ok = rec_equal(&ref, r, why, sizeof why);
    }
    if (ok) {
      g_passed += 1;
      printf("ok   %-52s %-7s %zu values%s%s%s\n", label, bname, r->n, r->note[0] ? " (" : "",
             r->note, r->note[0] ? ")" : "");
    } else {
      g_failed += 1;
      printf("FAIL %-52s %-7s %s\n", label, bname, why);
      if (r->error[0] && opt_verbose)
        printf("     %s\n", ws_device_last_error(be->dev));
    }
    fflush(stdout);
  }
}

/* Visits and payloads hold under both protocols (docs/protocol.md: the
 * single-stage red baseline fails only its protocol assertions); a refused
 * registration has nothing to check but its status. */
static bool check_reg(const rec *r, char *why, size_t cap) {
  for (size_t i = 0; i < r->n; ++i)
    if (strcmp(r->v[i].what, "add_aux status") == 0 && r->v[i].value != (uint64_t)WS_OK)
      return true;
  return check_reg_spec(r, why, cap);
}

int main(int argc, char **argv) {
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--items") == 0 && i + 1 < argc) {
      opt_items = (uint32_t)strtoul(argv[++i], NULL, 10);
    } else if (strcmp(argv[i], "--pool") == 0 && i + 1 < argc) {
      opt_pool = (uint32_t)strtoul(argv[++i], NULL, 10);
    } else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) {
      opt_only = argv[++i];
    } else if (strcmp(argv[i], "--verbose") == 0) {
      opt_verbose = true;
    } else if (strcmp(argv[i], "--require") == 0 && i + 1 < argc) {
      if (!parse_required(argv[++i]))
        return 2;
    } else {
      fprintf(stderr,
              "usage: %s [--items N] [--pool R] [--only SUBSTRING] [--verbose] [--require LIST]\n"
              "  runs every case on every available backend and compares it with the cpu;\n"
              "  --require cuda,vulkan (or WS_CONFORMANCE_REQUIRE) fails when one is absent\n",
              argv[0]);
      return 2;
    }
  }
  const char *req = getenv("WS_CONFORMANCE_REQUIRE");
  if (req && *req && !parse_required(req))
    return 2;
  if (opt_items == 0 || opt_pool == 0) {
    fprintf(stderr, "conformance: --items and --pool must be positive\n");
    return 2;
  }
  open_backends();
  if (g_backend_count == 0 || g_backends[0].kind != WS_BACKEND_CPU) {
    printf("0 passed, %" PRIu64 " failed\n", g_failed + 1);
    close_backends();
    return 1;
  }
  make_combos();
  printf("cases: demo (%u items, pool %u) and the SPEC §6 regression (%u paths, pool %u, "
         "capacity %u), %u configurations each\n",
         opt_items, opt_pool, REG_N, REG_R, REG_C, g_combo_count);
  char label[128];
  for (uint32_t i = 0; i < g_combo_count; ++i) {
    snprintf(label, sizeof label, "demo %s", g_combos[i].name);
    run_case(label, demo_case, &g_combos[i], 0, check_demo_model);
  }
  for (int k = REG_POOL; k <= REG_RAW_SINGLE; ++k) {
    for (uint32_t i = 0; i < g_combo_count; ++i) {
      snprintf(label, sizeof label, "reg %s %s", reg_client_names[k], g_combos[i].name);
      run_case(label, reg_case, &g_combos[i], k, check_reg);
    }
  }
  close_backends();
  free(ref.v);
  free(got.v);
  printf("%" PRIu64 " passed, %" PRIu64 " failed\n", g_passed, g_failed);
  return g_failed == 0 ? 0 : 1;
}
