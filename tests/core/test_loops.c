/* SPDX-License-Identifier: MIT */
/* The host loop and the device loop (SPEC §2.2a) on the same inputs: every
 * configuration the core and auxiliary tests use runs once in each, and
 * every statistic and every item's result must be equal. The device loop
 * decides with the same code (decide.h) but runs on the device with its own
 * executor (the CPU reference, the CUDA graph, the Vulkan command buffers),
 * so any divergence of the executors, of the device-side observation or of
 * the loop control shows up here.
 *
 *   basic[combo]        t_basic (self-loops, many field types), N = 257, R = 64;
 *                       with and without the tail
 *   sched_*             t_order / t_align / t_forkjoin: tie-breaks, refill
 *                       thresholds and the alignment list
 *   steps[combo]        t_steps, stepped continuations (WS_CONTINUATION_STEPS
 *                       and _OF; lane refill on CUDA, with a pool larger than
 *                       the device's resident threads): equal statistics, a
 *                       clean dispatch, and every item's result checked
 *   steps_kernel        t_steps_kernel, a stepped plain kernel (WS_KERNEL_STEPS)
 *                       over more indices than CUDA holds threads: each result
 *                       checked, skipped indices untouched
 *   aux_*               the fuzzer's coroutine with one or two ws_pool works
 *                       described to the device: forced drains, partial
 *                       admission, several works, verification, all layouts
 *                       and accounting modes; and with append-allocated pools
 *                       (issue 18): the device loop's reclaims, compactions
 *                       and availability must give the host loop's decisions,
 *                       statistics and storage counters
 *   interval            observe_interval 1, 3, 7, 40 and 0: same results, one
 *                       host synchronization per interval (0: per dispatch, or
 *                       per 16 iterations on Vulkan, where main() sets it so)
 *   refused             a configuration the Vulkan loop cannot run: AUTO runs
 *                       the host loop, DEVICE fails with WS_ECONFIG_LOOP
 *   auto                which loop WS_LOOP_AUTO runs: the device loop on the
 *                       CPU and CUDA, the host loop on Vulkan (whose device
 *                       loop runs only when asked for, docs/decisions.md)
 *   errors              an iteration limit, a corrupted count under
 *                       verification, an invalid continuation index, a
 *                       producer over its bound: the same status and message
 *                       in both loops; a full pool's error word: the same
 *                       status, iteration and statistics, each loop's message
 */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "../reliability/rel_rig.h"
#include "t_basic_host.h"
#include "t_sched_host.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- comparing two dispatches ---- */

typedef struct outcome {
  ws_status status;
  char error[1024];
  ws_dispatch_stats d;
  ws_node_stats node[8];
  ws_node_stats aux[8];
  uint32_t nodes, auxn;
} outcome;

static void record(ws_scheduler *s, ws_status st, outcome *o) {
  memset(o, 0, sizeof *o);
  o->status = st;
  snprintf(o->error, sizeof o->error, "%s", ws_scheduler_last_error(s));
  ws_scheduler_dispatch_stats(s, &o->d);
  o->nodes = ws_scheduler_node_count(s);
  WT_CHECK(o->nodes <= 8, "test: too many nodes");
  for (uint32_t j = 0; j < o->nodes; ++j)
    WT_CHECK(ws_scheduler_node_stats(s, j, &o->node[j]) == WS_OK, "node statistics");
  o->auxn = ws_scheduler_aux_stats_count(s);
  WT_CHECK(o->auxn <= 8, "test: too many auxiliary entries");
  for (uint32_t i = 0; i < o->auxn; ++i)
    WT_CHECK(ws_scheduler_aux_stats(s, i, &o->aux[i]) == WS_OK, "auxiliary statistics");
}

#define SAME(field)                                                                                \
  WT_CHECK(h->field == v->field, "%s: " #field ": host loop %" PRIu64 ", device loop %" PRIu64,   \
           ctx, (uint64_t)h->field, (uint64_t)v->field)

static void same_outcome(const outcome *h, const outcome *v, const char *ctx) {
  WT_CHECK(h->d.loop == WS_LOOP_HOST, "%s: the host run ran in loop %d", ctx, (int)h->d.loop);
  WT_CHECK(v->d.loop == WS_LOOP_DEVICE, "%s: the device run ran in loop %d", ctx,
           (int)v->d.loop);
  WT_CHECK(h->status == v->status, "%s: host loop %s (%s), device loop %s (%s)", ctx,
           ws_status_name(h->status), h->error, ws_status_name(v->status), v->error);
  WT_CHECK(strcmp(h->error, v->error) == 0, "%s: messages differ:\n  host:   %s\n  device: %s", ctx,
           h->error, v->error);
  SAME(d.iteration_count);
  SAME(d.generated_count);
  SAME(d.resumed_count);
  SAME(d.scanned_slot_count);
  SAME(d.max_active_count);
  SAME(d.aux_dispatch_count);
  SAME(d.forced_drain_count);
  SAME(d.blocked_count);
  SAME(d.tail_item_count);
  SAME(nodes);
  SAME(auxn);
  for (uint32_t j = 0; j < h->nodes; ++j) {
    SAME(node[j].dispatch_count);
    SAME(node[j].executed_count);
    SAME(node[j].peak_queued_count);
  }
  for (uint32_t i = 0; i < h->auxn; ++i) {
    WT_CHECK(strcmp(h->aux[i].name, v->aux[i].name) == 0, "%s: auxiliary entry %u named %s / %s",
             ctx, i, h->aux[i].name, v->aux[i].name);
    SAME(aux[i].dispatch_count);
    SAME(aux[i].executed_count);
    SAME(aux[i].peak_queued_count);
  }
}

static void same_bytes(ws_buffer *a, ws_buffer *b, size_t bytes, const char *what, const char *ctx) {
  unsigned char *x = wt_calloc(bytes ? bytes : 1, 1), *y = wt_calloc(bytes ? bytes : 1, 1);
  wt_read(a, x, bytes);
  wt_read(b, y, bytes);
  for (size_t i = 0; i < bytes; ++i)
    WT_CHECK(x[i] == y[i], "%s: %s differs at byte %zu: host loop 0x%02x, device loop 0x%02x", ctx,
             what, i, x[i], y[i]);
}

static ws_scheduler_config with_loop(ws_scheduler_config c, ws_loop_kind loop) {
  c.loop = loop;
  return c;
}

/* ---- t_basic over every combination ---- */

static void basic_case(const wt_combo *c, uint32_t R, uint32_t threshold, uint32_t N,
                       uint32_t tail) {
  char ctx[200];
  snprintf(ctx, sizeof ctx, "t_basic %s, R = %u, refill threshold %u, N = %u, tail_frames %u",
           c->name, R, threshold, N, tail);
  ws_scheduler_config cfg = wt_config(c, R);
  cfg.refill_threshold = threshold;
  cfg.tail_frames = tail;
  basic_run r[2];
  outcome o[2];
  for (int k = 0; k < 2; ++k) {
    basic_init(&r[k], N);
    basic_reset(&r[k]);
    const ws_scheduler_config lc = with_loop(cfg, k ? WS_LOOP_DEVICE : WS_LOOP_HOST);
    ws_scheduler *s = wt_scheduler(&t_basic_coroutine, &lc);
    record(s, basic_dispatch(s, &r[k], N), &o[k]);
    WT_OK(o[k].status, s, ctx);
    basic_check(&r[k], N, ctx);
  }
  same_outcome(&o[0], &o[1], ctx);
  same_bytes(r[0].out, r[1].out, (size_t)N * 4, "item results", ctx);
}

static void test_basic(void **state) {
  const wt_combo *c = wt_state_combo(state);
  basic_case(c, 64, 0, 257, 0);
  basic_case(c, 64, 7, 257, 0);
  basic_case(c, 1, 0, 19, 0);
  basic_case(c, 300, 0, 257, 0); /* pool larger than the work */
  basic_case(c, 64, 0, 257, 24);  /* the tail */
  basic_case(c, 300, 0, 257, 300);
}

/* ---- t_sched: order, alignment, fork/join ---- */

static void test_sched(void **state) {
  const wt_combo *c = wt_state_combo(state);
  char ctx[200];
  { /* fork/join: ties between queues */
    outcome o[2];
    ws_buffer *out[2];
    for (int k = 0; k < 2; ++k) {
      out[k] = wt_buffer(64 * 4);
      t_forkjoin_args a = {ws_buffer_address(out[k])};
      const ws_scheduler_config lc = with_loop(wt_config(c, 64), k ? WS_LOOP_DEVICE : WS_LOOP_HOST);
      ws_scheduler *s = wt_scheduler(&t_forkjoin_coroutine, &lc);
      record(s, ws_scheduler_dispatch(s, 64, &a, sizeof a), &o[k]);
    }
    snprintf(ctx, sizeof ctx, "t_forkjoin %s", c->name);
    same_outcome(&o[0], &o[1], ctx);
    same_bytes(out[0], out[1], 64 * 4, "results", ctx);
  }
  { /* the order of launches and the alignment list */
    static const char *const align[] = {"b"};
    for (uint32_t variant = 0; variant < 3; ++variant) {
      outcome o[2];
      ws_buffer *out[2][3];
      for (int k = 0; k < 2; ++k) {
        for (int b = 0; b < 3; ++b)
          out[k][b] = wt_buffer(4096 * 4);
        ws_scheduler_config cfg = wt_config(c, 16);
        cfg.refill_threshold = variant == 1 ? 3 : 0;
        if (variant == 2) {
          cfg.refill_align = align;
          cfg.refill_align_count = 1;
        }
        const ws_scheduler_config lc = with_loop(cfg, k ? WS_LOOP_DEVICE : WS_LOOP_HOST);
        ws_status st;
        ws_scheduler *s;
        if (variant == 2) {
          /* the log holds (id, src, next) per run in launch order */
          t_align_args a = {ws_buffer_address(out[k][0]), ws_buffer_address(out[k][1]),
                            ws_buffer_address(out[k][2]), 4096 / 3, 0};
          s = wt_scheduler(&t_align_coroutine, &lc);
          st = ws_scheduler_dispatch(s, 100, &a, sizeof a);
        } else {
          t_order_args a = {ws_buffer_address(out[k][0]), ws_buffer_address(out[k][1]),
                            ws_buffer_address(out[k][2]), ws_buffer_address(out[k][2]) + 4000 * 4};
          s = wt_scheduler(&t_order_coroutine, &lc);
          st = ws_scheduler_dispatch(s, 100, &a, sizeof a);
        }
        record(s, st, &o[k]);
      }
      snprintf(ctx, sizeof ctx, "%s %s variant %u", variant == 2 ? "t_align" : "t_order", c->name,
               variant);
      same_outcome(&o[0], &o[1], ctx);
      if (variant != 2) /* completion ranks: the order of launches, exactly */
        same_bytes(out[0][0], out[1][0], 100 * 4, "completion ranks", ctx);
    }
  }
}

/* ---- a stepped continuation (kernel.h "stepped continuations") ----
 * On CUDA its launches run with lane refill, so the pool is made larger
 * than the device's resident threads: each block's share is then many
 * frames, and warps refill; elsewhere the continuation is one loop. Both
 * loops must give the same statistics, and every item its result. */
static void test_steps(void **state) {
  const wt_combo *c = wt_state_combo(state);
  const uint32_t R = wt_backend == WS_BACKEND_CUDA     ? 1u << 19
                     : wt_backend == WS_BACKEND_VULKAN ? 1024u
                                                       : 4096u;
  const uint32_t N = 2u * R + 77u;
  char ctx[200];
  snprintf(ctx, sizeof ctx, "t_steps %s, R = %u, N = %u", c->name, R, N);
  outcome o[2];
  ws_buffer *out[2];
  for (int k = 0; k < 2; ++k) {
    out[k] = wt_buffer((size_t)N * 4);
    t_steps_args a = {ws_buffer_address(out[k])};
    const ws_scheduler_config lc = with_loop(wt_config(c, R), k ? WS_LOOP_DEVICE : WS_LOOP_HOST);
    ws_scheduler *s = wt_scheduler(&t_steps_coroutine, &lc);
    record(s, ws_scheduler_dispatch(s, N, &a, sizeof a), &o[k]);
    WT_CHECK(o[k].status == WS_OK, "%s, %s loop: dispatch: %s", ctx, k ? "device" : "host",
             o[k].error);
  }
  same_outcome(&o[0], &o[1], ctx);
  for (int k = 0; k < 2; ++k) {
    uint32_t *r = wt_calloc(N, 4);
    wt_read(out[k], r, (size_t)N * 4);
    uint32_t bad = 0, first = N;
    for (uint32_t i = 0; i < N; ++i)
      if (r[i] != t_steps_result(i) && bad++ == 0)
        first = i;
    WT_CHECK(bad == 0, "%s, %s loop: %u of %u items have a wrong result (first: item %u, %u, expected %u)",
             ctx, k ? "device" : "host", bad, N, first, first < N ? r[first] : 0u,
             first < N ? t_steps_result(first) : 0u);
  }
}

/* A stepped plain kernel (WS_KERNEL_STEPS), over more indices than the
 * device holds threads on CUDA: every index whose begin has work gets its
 * walk's length, every fifth keeps its sentinel. */
static void test_steps_kernel(void **state) {
  (void)state;
  const uint32_t n = wt_backend == WS_BACKEND_CUDA ? 3u << 20 : 20011u;
  ws_buffer *out = wt_buffer((size_t)n * 4);
  WT_CHECK(ws_buffer_fill_u32(out, 0, 0xdeadbeefu, n) == WS_OK, "fill: %s",
           ws_device_last_error(wt_dev));
  ws_kernel k;
  WT_CHECK(ws_kernel_find(wt_dev, &t_sched_modules, "t_steps_kernel", &k) == WS_OK,
           "t_steps_kernel: %s", ws_device_last_error(wt_dev));
  const t_steps_kernel_args a = {ws_buffer_address(out)};
  WT_CHECK(ws_kernel_launch(&k, n, &a, sizeof a) == WS_OK, "launch: %s",
           ws_device_last_error(wt_dev));
  uint32_t *r = wt_calloc(n, 4);
  wt_read(out, r, (size_t)n * 4);
  uint32_t bad = 0, first = n, want_first = 0;
  for (uint32_t i = 0; i < n; ++i) {
    uint32_t want = 0xdeadbeefu;
    if (i % 5u != 0u) {
      want = 0;
      for (uint32_t v = t_steps_start(i, 7u); v != 1u; v = t_steps_next(v))
        ++want;
    }
    if (r[i] != want && bad++ == 0) {
      first = i;
      want_first = want;
    }
  }
  WT_CHECK(bad == 0, "t_steps_kernel over %u indices: %u wrong (first: index %u, %u, expected %u)",
           n, bad, first, first < n ? r[first] : 0u, want_first);
}

/* ---- the fuzzer's coroutine with pools described to the device ---- */

/* The rig's pools, their stages as kernels (what rig_run_stage launches). */
static void describe_pools(rig *r) {
  for (uint32_t w = 0; w < r->works; ++w) {
    ws_aux_stage_kernel sk[FZ_MAX_STAGES];
    fz_stage_args sa[FZ_MAX_STAGES];
    for (uint32_t s = 0; s < r->w[w].S; ++s) {
      memset(&sa[s], 0, sizeof sa[s]);
      sa[s].pool = ws_pool_get_view(r->pool[w]);
      sa[s].aux_visits = r->args.aux_visits[w];
      sa[s].released = r->args.released[w];
      sa[s].errors = r->args.errors;
      sa[s].seed = r->args.seed;
      sa[s].work = w;
      sa[s].stage = s;
      sa[s].stage_count = r->w[w].S;
      memcpy(sa[s].anext, r->w[w].anext, sizeof sa[s].anext);
      sk[s].kernel = r->stage_k;
      sk[s].args = &sa[s];
      sk[s].args_size = sizeof sa[s];
      sk[s].count = r->w[w].C;
    }
    WT_CHECK(ws_pool_set_stage_kernels(r->pool[w], sk) == WS_OK, "ws_pool_set_stage_kernels: %s",
             ws_device_last_error(r->dev));
  }
}

typedef struct aux_case {
  uint32_t N, works, R;
  bool partial, verify;
  uint32_t seed;
  bool append;
} aux_case;

/* What a pool counted in a dispatch: its stages' counters and its storage
 * statistics (zero for a free-stack pool). */
typedef struct pool_record {
  ws_pool_counters stage[FZ_MAX_STAGES];
  ws_pool_storage storage;
} pool_record;

static void pool_read(rig *r, uint32_t w, pool_record *pr, const char *ctx) {
  memset(pr, 0, sizeof *pr);
  for (uint32_t s = 0; s < r->w[w].S; ++s)
    WT_CHECK(ws_pool_stage_counters(r->pool[w], s, &pr->stage[s]) == WS_OK,
             "%s: work %u stage %u: pool counters", ctx, w, s);
  WT_CHECK(ws_pool_storage_stats(r->pool[w], &pr->storage) == WS_OK,
           "%s: work %u: pool storage statistics", ctx, w);
}

/* Append pools' storage work summed over a test (both loops count the same). */
static uint64_t g_compactions, g_reclaims;

static void aux_run(const wt_combo *c, const aux_case *ac) {
  char ctx[240];
  snprintf(ctx, sizeof ctx, "fz_main %s, N = %u, %u work(s), R = %u%s%s%s, seed 0x%x", c->name,
           ac->N, ac->works, ac->R, ac->partial ? ", partial admission" : "",
           ac->verify ? ", verified" : "", ac->append ? ", append pools" : "", ac->seed);
  rig r[2];
  outcome o[2];
  for (int k = 0; k < 2; ++k) {
    rig_init(&r[k], wt_dev, ac->N, ac->works, ac->R, ac->partial);
    r[k].args.seed = ac->seed;
    r[k].append = ac->append;
    WT_CHECK(rig_create(&r[k]) == WS_OK, "%s: rig: %s", ctx, ws_device_last_error(wt_dev));
    describe_pools(&r[k]);
    WT_CHECK(rig_zero(&r[k]) == WS_OK, "%s: rig zero", ctx);
    ws_scheduler_config cfg = wt_config(c, ac->R);
    cfg.partial_admission = ac->partial;
    cfg.verify_queues = ac->verify;
    cfg.loop = k ? WS_LOOP_DEVICE : WS_LOOP_HOST;
    ws_scheduler *s = wt_scheduler(&rig_coroutine, &cfg);
    for (uint32_t w = 0; w < ac->works; ++w)
      WT_CHECK(ws_scheduler_add_aux(s, ws_pool_work(r[k].pool[w])) == WS_OK, "%s: add_aux: %s",
               ctx, ws_scheduler_last_error(s));
    /* Twice: a pool starts every dispatch afresh (pool_reset), so the
     * second must count what the first did, storage work included. */
    pool_record first[FZ_MAX_WORKS];
    for (int round = 0; round < 2; ++round) {
      if (round)
        WT_CHECK(rig_zero(&r[k]) == WS_OK, "%s: rig zero", ctx);
      record(s, rig_dispatch(&r[k], s), &o[k]);
      WT_OK(o[k].status, s, ctx);
      for (uint32_t w = 0; w < ac->works; ++w) {
        pool_record now;
        pool_read(&r[k], w, &now, ctx);
        if (!round)
          first[w] = now;
        else
          WT_CHECK(memcmp(&now, &first[w], sizeof now) == 0,
                   "%s (%s loop): work %u: the second dispatch's pool counters or storage "
                   "statistics (extent %u, peak %u, reclaims %" PRIu64 ", compactions %" PRIu64
                   ") are not the first's (%u, %u, %" PRIu64 ", %" PRIu64 ")",
                   ctx, k ? "device" : "host", w, now.storage.extent, now.storage.peak_extent,
                   now.storage.reclaims, now.storage.compactions, first[w].storage.extent,
                   first[w].storage.peak_extent, first[w].storage.reclaims,
                   first[w].storage.compactions);
      }
    }
    uint32_t err[FZ_ERR_COUNT];
    wt_read(r[k].errors, err, sizeof err);
    WT_CHECK(err[FZ_ERR_FRAME] == 0 && err[FZ_ERR_PAYLOAD] == 0 && err[FZ_ERR_PUBLISH] == 0,
             "%s (%s loop): kernel errors %u %u %u", ctx, k ? "device" : "host", err[0], err[1],
             err[2]);
  }
  same_outcome(&o[0], &o[1], ctx);
  same_bytes(r[0].result, r[1].result, (size_t)ac->N * 4, "item digests", ctx);
  same_bytes(r[0].done, r[1].done, (size_t)ac->N * 4, "terminations", ctx);
  same_bytes(r[0].visits, r[1].visits, (size_t)ac->N * FZ_MAX_K * 4, "continuation visits", ctx);
  for (uint32_t w = 0; w < ac->works; ++w) {
    same_bytes(r[0].aux_visits[w], r[1].aux_visits[w], (size_t)ac->N * FZ_MAX_STAGES * 4,
               "auxiliary visits", ctx);
    for (uint32_t s = 0; s < r[0].w[w].S; ++s) {
      ws_pool_counters pc[2];
      WT_CHECK(ws_pool_stage_counters(r[0].pool[w], s, &pc[0]) == WS_OK &&
                   ws_pool_stage_counters(r[1].pool[w], s, &pc[1]) == WS_OK,
               "%s: pool counters", ctx);
      WT_CHECK(pc[0].dispatches == pc[1].dispatches && pc[0].executed == pc[1].executed,
               "%s: work %u stage %u: the pool counted %" PRIu64 "/%" PRIu64 " (host loop) and %" PRIu64
               "/%" PRIu64 " (device loop) dispatches/executed",
               ctx, w, s, pc[0].dispatches, pc[0].executed, pc[1].dispatches, pc[1].executed);
    }
    ws_pool_storage ps[2];
    WT_CHECK(ws_pool_storage_stats(r[0].pool[w], &ps[0]) == WS_OK &&
                 ws_pool_storage_stats(r[1].pool[w], &ps[1]) == WS_OK,
             "%s: pool storage statistics", ctx);
    WT_CHECK(ps[0].extent == ps[1].extent && ps[0].peak_extent == ps[1].peak_extent &&
                 ps[0].reclaims == ps[1].reclaims && ps[0].compactions == ps[1].compactions,
             "%s: work %u: append storage extent/peak/reclaims/compactions %u/%u/%" PRIu64
             "/%" PRIu64 " (host loop) and %u/%u/%" PRIu64 "/%" PRIu64 " (device loop)",
             ctx, w, ps[0].extent, ps[0].peak_extent, ps[0].reclaims, ps[0].compactions,
             ps[1].extent, ps[1].peak_extent, ps[1].reclaims, ps[1].compactions);
    g_compactions += ps[0].compactions;
    g_reclaims += ps[0].reclaims;
  }
  for (int k = 0; k < 2; ++k)
    rig_destroy(&r[k]);
}

static void test_aux(void **state) {
  const wt_combo *c = wt_state_combo(state);
  if (!c->greedy)
    return; /* auxiliary work needs the greedy policy */
  const aux_case cases[] = {
      {40, 1, 8, false, false, 0xC0FFEEu, false}, {40, 2, 8, false, false, 0x1234u, false},
      {40, 2, 4, true, false, 0xBEEFu, false},    {64, 2, 8, false, true, 0x5EEDu, false},
      {17, 1, 1, false, false, 0x77u, false},     {90, 2, 16, true, true, 0xABCDu, false},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i)
    aux_run(c, &cases[i]);
}

/* Issue 18: append pools described to the device (their extent, storage and
 * counters): pools of 32 and 64 slots compact, small ones only reclaim, and
 * partial admission admits against C - extent. */
static void test_aux_append(void **state) {
  const wt_combo *c = wt_state_combo(state);
  if (!c->greedy)
    return;
  const aux_case cases[] = {
      {200, 2, 32, false, false, 0xA99E4Du, true}, {160, 1, 32, false, false, 0x5EEDu, true},
      {120, 2, 16, false, true, 0xC0FFEEu, true},  {90, 2, 8, true, false, 0xABCDu, true},
      {40, 2, 4, false, false, 0x1234u, true},
  };
  g_compactions = g_reclaims = 0;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i)
    aux_run(c, &cases[i]);
  /* the cases exercise what they are for: both kinds of storage work */
  WT_CHECK(g_compactions > 0 && g_reclaims > 0,
           "%s: append pools: %" PRIu64 " compactions, %" PRIu64 " reclaims in all", c->name,
           g_compactions, g_reclaims);
}

/* ---- the observation interval ---- */

/* Iterations the Vulkan loop records per submission (vk_loop.c): main()
 * sets WS_VULKAN_LOOP_ITERATIONS to it, so that observe_interval 0 (no
 * interval: until done) synchronizes once per this many iterations there,
 * and once per dispatch on the backends whose loop runs until done. */
#define VK_LOOP_ITERATIONS 16u

static void test_interval(void **state) {
  (void)state;
  /* 40: more than the Vulkan loop records, so one submission executes its
   * recording several times */
  const uint32_t intervals[] = {1, 3, 7, 40, 0};
  outcome ref;
  basic_run r;
  basic_init(&r, 257);
  ws_scheduler_config cfg = wt_config(NULL, 64);
  cfg.loop = WS_LOOP_HOST;
  ws_scheduler *s = wt_scheduler(&t_basic_coroutine, &cfg);
  basic_reset(&r);
  record(s, basic_dispatch(s, &r, 257), &ref);
  WT_OK(ref.status, s, "host loop");
  for (size_t i = 0; i < sizeof intervals / sizeof intervals[0]; ++i) {
    char ctx[96];
    snprintf(ctx, sizeof ctx, "observe_interval %u", intervals[i]);
    cfg.loop = WS_LOOP_DEVICE;
    cfg.observe_interval = intervals[i];
    s = wt_scheduler(&t_basic_coroutine, &cfg);
    outcome o;
    for (int round = 0; round < 2; ++round) { /* the loop is reused */
      basic_reset(&r);
      record(s, basic_dispatch(s, &r, 257), &o);
      WT_OK(o.status, s, ctx);
      basic_check(&r, 257, ctx);
      same_outcome(&ref, &o, ctx);
      const uint64_t it = o.d.iteration_count;
      uint64_t want;
      if (intervals[i]) {
        want = (it + intervals[i] - 1) / intervals[i];
      } else if (wt_backend == WS_BACKEND_VULKAN) {
        /* pipelined submissions of VK_LOOP_ITERATIONS (vk_loop.c,
         * loop_device.c): each one that ran iterations is waited for, and
         * after the first the empty one queued behind the last */
        const uint64_t runs = (it + VK_LOOP_ITERATIONS - 1) / VK_LOOP_ITERATIONS;
        want = runs == 1 ? 1 : runs + 1;
      } else {
        want = 1;
      }
      WT_CHECK(o.d.host_sync_count == want,
               "%s: %" PRIu64 " host synchronizations for %" PRIu64 " iterations, expected %" PRIu64,
               ctx, o.d.host_sync_count, it, want);
    }
  }
}

/* ---- errors: the same status and message from both loops ---- */

static void test_errors(void **state) {
  const wt_combo *c = wt_state_combo(state);
  char ctx[200];
  for (int kind = 0; kind < 3; ++kind) {
    if (kind == 1 && c->accounting == WT_MATERIALIZED)
      continue; /* a recount overwrites the damaged count */
    outcome o[2];
    for (int k = 0; k < 2; ++k) {
      basic_run r;
      basic_init(&r, 257);
      basic_reset(&r);
      ws_scheduler_config cfg = with_loop(wt_config(c, 64), k ? WS_LOOP_DEVICE : WS_LOOP_HOST);
      if (kind == 0)
        cfg.iteration_limit = 9;
      if (kind == 1)
        cfg.verify_queues = true;
      ws_scheduler *s = wt_scheduler(&t_basic_coroutine, &cfg);
      if (kind == 1)
        ws_testing_corrupt_count(s, T_BASIC_ALT, 3);
      record(s, basic_dispatch(s, &r, 257), &o[k]);
    }
    snprintf(ctx, sizeof ctx, "%s, %s", c->name,
             kind == 0 ? "iteration limit 9" : kind == 1 ? "corrupted count" : "done");
    if (kind < 2)
      WT_CHECK(o[0].status != WS_OK, "%s: the host loop succeeded", ctx);
    same_outcome(&o[0], &o[1], ctx);
  }
  if (!c->greedy)
    return;
  /* an invalid continuation index; a producer over its bound in a pool with
   * room (the live count exceeds what admission allowed); the same in a
   * 3-slot pool under partial admission, which the pool cannot hold: its
   * error word rises while the live count stays within the allowance, so
   * only the error word (ws_aux_device.error) tells the device loop */
  static const char *const what[4] = {"invalid continuation index", "producer over its bound",
                                      "full pool's error word",
                                      "append extent below the live count"};
  for (int kind = 0; kind < 4; ++kind) {
    outcome o[2];
    for (int k = 0; k < 2; ++k) {
      rig r;
      rig_init(&r, wt_dev, 20, 1, 8, kind == 2);
      r.append = kind == 3;
      WT_CHECK(rig_create(&r) == WS_OK, "rig");
      describe_pools(&r);
      if (kind == 0)
        r.args.bad_next = FZ_MAX_K + 2;
      else if (kind < 3)
        r.args.bound[0][0] = kind == 1 ? 3 : 20; /* c1 publishes up to this, declares 1 */
      else /* kernels that publish into the append pool as into a free stack: the
            * live count rises, the extent does not */
        r.args.pool[0].mode = WS_POOL_STACK;
      WT_CHECK(rig_zero(&r) == WS_OK, "rig zero");
      ws_scheduler_config cfg = with_loop(wt_config(c, 8), k ? WS_LOOP_DEVICE : WS_LOOP_HOST);
      cfg.partial_admission = kind == 2;
      ws_scheduler *s = wt_scheduler(&rig_coroutine, &cfg);
      WT_CHECK(ws_scheduler_add_aux(s, ws_pool_work(r.pool[0])) == WS_OK, "add_aux");
      record(s, rig_dispatch(&r, s), &o[k]);
      rig_destroy(&r);
    }
    snprintf(ctx, sizeof ctx, "%s, %s", c->name, what[kind]);
    WT_CHECK(o[0].status != WS_OK, "%s: the host loop succeeded", ctx);
    /* the pool's own message (host loop) and the device word's (device loop)
     * differ in wording; status, iteration and statistics may not */
    if (kind == 2) {
      WT_CHECK(o[0].status == o[1].status, "%s: host %s, device %s", ctx,
               ws_status_name(o[0].status), ws_status_name(o[1].status));
      WT_CHECK(strstr(o[0].error, "pool 'side': ") && strstr(o[0].error, "publish/release error"),
               "%s: the host loop's message is not the pool's: %s", ctx, o[0].error);
      WT_CHECK(strstr(o[1].error, "iteration ") &&
                   strstr(o[1].error, "auxiliary work 'side': its device words report "),
               "%s: the device loop's message is not the error word's: %s", ctx, o[1].error);
      strcpy(o[1].error, o[0].error);
    }
    if (kind == 3) {
      WT_CHECK(strstr(o[0].error, "iteration 2: auxiliary work 'side': prepare_for_admission() "
                                  "failed with WS_EPROTO_CLIENT (pool 'side': append extent 0 is "
                                  "not within [live count 1, capacity 8]") &&
                   strstr(o[1].error, "iteration 2: auxiliary work 'side': append extent 0 is not "
                                      "within [live count 1, capacity 8]"),
               "%s: a message does not name the extent and the live count:\n  host:   %s\n"
               "  device: %s", ctx, o[0].error, o[1].error);
      strcpy(o[1].error, o[0].error);
    }
    same_outcome(&o[0], &o[1], ctx);
  }
}

/* ---- a configuration the backend's loop refuses (Vulkan) ----
 * A stage kernel over more slots than one indirect dispatch covers
 * (32,768 workgroups of 32 here): WS_LOOP_AUTO runs the host loop, with the
 * host loop's results; WS_LOOP_DEVICE fails with WS_ECONFIG_LOOP and says
 * why. The other backends' loops have no such limit. */
static void test_refused(void **state) {
  (void)state;
  if (wt_backend != WS_BACKEND_VULKAN)
    return;
  outcome o[3];
  const ws_loop_kind loops[3] = {WS_LOOP_HOST, WS_LOOP_AUTO, WS_LOOP_DEVICE};
  for (int k = 0; k < 3; ++k) {
    rig r;
    rig_init(&r, wt_dev, 20, 1, 8, false);
    r.w[0].C = 32u * 32768u + 1u;
    WT_CHECK(rig_create(&r) == WS_OK, "rig: %s", ws_device_last_error(wt_dev));
    describe_pools(&r);
    WT_CHECK(rig_zero(&r) == WS_OK, "rig zero");
    ws_scheduler_config cfg = with_loop(wt_config(NULL, 8), loops[k]);
    cfg.block_size = 32;
    ws_scheduler *s = wt_scheduler(&rig_coroutine, &cfg);
    WT_CHECK(ws_scheduler_add_aux(s, ws_pool_work(r.pool[0])) == WS_OK, "add_aux: %s",
             ws_scheduler_last_error(s));
    record(s, rig_dispatch(&r, s), &o[k]);
    rig_destroy(&r);
  }
  WT_CHECK(o[0].status == WS_OK, "host loop: %s", o[0].error);
  /* AUTO fell back: the host loop ran, with the host loop's results exactly
   * (same_outcome expects its second run from the device loop: say so once
   * the loop has been checked) */
  WT_CHECK(o[1].d.loop == WS_LOOP_HOST, "WS_LOOP_AUTO: ran loop %d, not the host loop (%s)",
           (int)o[1].d.loop, o[1].error);
  o[1].d.loop = WS_LOOP_DEVICE;
  same_outcome(&o[0], &o[1], "WS_LOOP_AUTO with a refused device loop");
  printf("WS_LOOP_DEVICE, refused: %s\n", o[2].error);
  WT_CHECK(o[2].status == WS_ECONFIG_LOOP && strstr(o[2].error, "indirect dispatch"),
           "WS_LOOP_DEVICE with a refused device loop: %s (%s)", ws_status_name(o[2].status),
           o[2].error);
}

/* ---- the loop WS_LOOP_AUTO chooses ---- */
static void test_auto(void **state) {
  (void)state;
  rig r;
  rig_init(&r, wt_dev, 20, 1, 8, false);
  WT_CHECK(rig_create(&r) == WS_OK, "rig: %s", ws_device_last_error(wt_dev));
  describe_pools(&r);
  WT_CHECK(rig_zero(&r) == WS_OK, "rig zero");
  const ws_scheduler_config cfg = with_loop(wt_config(NULL, 8), WS_LOOP_AUTO);
  ws_scheduler *s = wt_scheduler(&rig_coroutine, &cfg);
  WT_CHECK(ws_scheduler_add_aux(s, ws_pool_work(r.pool[0])) == WS_OK, "add_aux: %s",
           ws_scheduler_last_error(s));
  outcome o;
  record(s, rig_dispatch(&r, s), &o);
  rig_destroy(&r);
  const ws_loop_kind want = WS_LOOP_DEVICE; /* every backend's, pools described */
  WT_CHECK(o.status == WS_OK && o.d.loop == want,
           "WS_LOOP_AUTO on %s: status %s, ran loop %d, expected %d (%s)",
           ws_backend_name(wt_backend), ws_status_name(o.status), (int)o.d.loop, (int)want,
           o.error);
}

/* ---- the device loops' knobs (docs/cuda.md, docs/vulkan.md) ----
 * Read when a scheduler builds its device loop (its first device-loop
 * dispatch): a value outside the documented ones fails that dispatch with a
 * message naming the variable and the value; the loop is never built from
 * a guess. Fused accounting, so the CUDA persistent kernel would be used. */
static void test_knobs(void **state) {
  (void)state;
  static const char *const cuda_bad[][2] = {{"WS_CUDA_LOOP_PERSIST", "maybe"},
                                            {"WS_CUDA_LOOP_PERSIST", "0"},
                                            {"WS_CUDA_LOOP_SELECT", "chains"},
                                            {"WS_CUDA_LOOP_UNROLL", "17"}};
  static const char *const vulkan_bad[][2] = {{"WS_VULKAN_LOOP_BARRIERS", "some"},
                                              {"WS_VULKAN_LOOP_TIMESTAMPS", "yes"},
                                              {"WS_VULKAN_LOOP_PREFETCH", "1"},
                                              {"WS_VULKAN_LOOP_STEPS", "all"},
                                              {"WS_VULKAN_LOOP_PIPELINE", "2"}};
  const char *const(*bad)[2] = wt_backend == WS_BACKEND_CUDA     ? cuda_bad
                               : wt_backend == WS_BACKEND_VULKAN ? vulkan_bad
                                                                 : NULL;
  const size_t n = wt_backend == WS_BACKEND_CUDA     ? sizeof cuda_bad / sizeof cuda_bad[0]
                   : wt_backend == WS_BACKEND_VULKAN ? sizeof vulkan_bad / sizeof vulkan_bad[0]
                                                     : 0;
  for (size_t i = 0; i < n; ++i) {
    /* the ctest variants set these variables: put each back */
    const char *was = getenv(bad[i][0]);
    char saved[64] = {0};
    if (was)
      snprintf(saved, sizeof saved, "%s", was);
    setenv(bad[i][0], bad[i][1], 1);
    basic_run r;
    basic_init(&r, 19);
    basic_reset(&r);
    ws_scheduler_config cfg = with_loop(wt_config(NULL, 8), WS_LOOP_DEVICE);
    cfg.accounting = WS_ACCOUNTING_FUSED;
    ws_scheduler *s = wt_scheduler(&t_basic_coroutine, &cfg);
    outcome o;
    record(s, basic_dispatch(s, &r, 19), &o);
    if (was)
      setenv(bad[i][0], saved, 1);
    else
      unsetenv(bad[i][0]);
    char want[96];
    snprintf(want, sizeof want, "%s='%s'", bad[i][0], bad[i][1]);
    printf("%s: %s: %s\n", want, ws_status_name(o.status), o.error);
    WT_CHECK(o.status != WS_OK && strstr(o.error, want),
             "%s: the dispatch returned %s (%s), expected a failure naming it", want,
             ws_status_name(o.status), o.error);
  }
}

/* WS_SCAN_SHARE (docs/loop.md): read when a scheduler is created; anything
 * but a whole percent 0..100 or "off" refuses the scheduler with a message
 * naming the variable and the value. */
static void test_scan_share_env(void **state) {
  (void)state;
  static const char *const bad[] = {"101", "x", "-1", "50%", " 5", "4294967346",
                                      "OFF", "of", "offx", "off "};
  wt_setenv("WS_SCAN_SHARE", NULL); /* the ctest variants set it: restored by the teardown */
  const ws_scheduler_config cfg = with_loop(wt_config(NULL, 8), WS_LOOP_DEVICE);
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
    setenv("WS_SCAN_SHARE", bad[i], 1);
    char text[512];
    const ws_status st = wt_scheduler_try(&t_basic_coroutine, &cfg, text, sizeof text);
    char want[64];
    snprintf(want, sizeof want, "WS_SCAN_SHARE='%s'", bad[i]);
    WT_CHECK(st == WS_EINVAL && strstr(text, want) && strstr(text, "scheduler 't_basic'"),
             "%s: ws_scheduler_create returned %s (%s), expected WS_EINVAL naming it and the "
             "scheduler", want, ws_status_name(st), text);
  }
  static const char *const good[] = {"100", "off", "0"};
  for (size_t i = 0; i < sizeof good / sizeof good[0]; ++i) {
    setenv("WS_SCAN_SHARE", good[i], 1);
    const ws_status ok = wt_scheduler_try(&t_basic_coroutine, &cfg, NULL, 0);
    WT_CHECK(ok == WS_OK, "WS_SCAN_SHARE='%s': ws_scheduler_create returned %s", good[i],
             ws_status_name(ok));
  }
}

/* timestamps (Vulkan, WS_VULKAN_LOOP_TIMESTAMPS=1, docs/vulkan.md): the
 * recording with its timestamps gives the same results and statistics as
 * the host loop, as it does without them, and destroying the scheduler logs the phase times of exactly the
 * iterations that decided before each submission's halt, which are the
 * dispatch's working iterations (the last one's loop_next sets the halt). */
static void test_timestamps(void **state) {
  (void)state;
  if (wt_backend != WS_BACKEND_VULKAN) {
    printf("not Vulkan: nothing to check\n");
    return;
  }
  enum { N = 61 };
  outcome host, o[2];
  basic_run r;
  basic_init(&r, N);
  const ws_scheduler_config hc = with_loop(wt_config(NULL, 8), WS_LOOP_HOST);
  ws_scheduler *hs = wt_scheduler(&t_basic_coroutine, &hc);
  basic_reset(&r);
  record(hs, basic_dispatch(hs, &r, N), &host);
  for (int on = 0; on < 2; ++on) {
    wt_setenv("WS_VULKAN_LOOP_TIMESTAMPS", on ? "1" : NULL); /* restored by the teardown */
    ws_scheduler_config cfg = with_loop(wt_config(NULL, 8), WS_LOOP_DEVICE);
    ws_scheduler *s = NULL;
    WT_CHECK(ws_scheduler_create(wt_dev, &t_basic_coroutine, &cfg, &s) == WS_OK, "create");
    basic_reset(&r);
    record(s, basic_dispatch(s, &r, N), &o[on]);
    basic_check(&r, N, on ? "timestamps" : "no timestamps");
    wt_clear_log();
    ws_scheduler_destroy(s);
    char want[96];
    snprintf(want, sizeof want, "timestamps of %llu iterations, us per iteration: observe ",
             (unsigned long long)o[on].d.iteration_count);
    const char *log = wt_last_log();
    printf("%s: %s\n", on ? "on" : "off", log);
    WT_CHECK(on ? strstr(log, want) != NULL : strstr(log, "timestamps") == NULL,
             "timestamps %s: the log says '%s', expected %s'%s'", on ? "on" : "off", log,
             on ? "" : "nothing like ", on ? want : "timestamps");
  }
  same_outcome(&host, &o[0], "no timestamps");
  same_outcome(&host, &o[1], "timestamps");
}

int main(int argc, char **argv) {
  static const wt_need needs[] = {
      {&t_basic_modules, "t_basic"}, {&t_sched_modules, "t_order"}, {&fz_kernels_modules, "fz_main"}};
  /* before any device loop is built (it reads the variable then) */
  setenv("WS_VULKAN_LOOP_ITERATIONS", "16", 1);
  _Static_assert(VK_LOOP_ITERATIONS == 16u, "the value set above");
  wt_init(argc, argv, needs, 3);
  ws_scheduler_config probe = ws_scheduler_config_default();
  probe.loop = WS_LOOP_DEVICE;
  ws_scheduler *s = NULL;
  if (ws_scheduler_create(wt_dev, &t_basic_coroutine, &probe, &s) == WS_ECONFIG_LOOP) {
    printf("SKIP: the %s backend has no device loop in this build\n", ws_backend_name(wt_backend));
    return WT_SKIP;
  }
  ws_scheduler_destroy(s);
  wt_add_per_combo("basic", test_basic);
  wt_add_per_combo("sched", test_sched);
  wt_add_per_combo("steps", test_steps);
  wt_add("steps_kernel", test_steps_kernel, NULL);
  wt_add_per_combo("aux", test_aux);
  wt_add_per_combo("aux_append", test_aux_append);
  wt_add("interval", test_interval, NULL);
  wt_add_per_combo("errors", test_errors);
  wt_add("refused", test_refused, NULL);
  wt_add("auto", test_auto, NULL);
  wt_add("knobs", test_knobs, NULL);
  wt_add("scan_share_env", test_scan_share_env, NULL);
  wt_add("timestamps", test_timestamps, NULL);
  return wt_run("loop_differential");
}
