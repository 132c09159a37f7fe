/* SPDX-License-Identifier: MIT */
/* Core dispatch tests (issue 2), each on every legal combination of
 * layout x accounting x compaction x policy:
 *   oversubscribed   N = 257 over R = 64: exact per-item results, every item
 *                    run exactly once, statistics consistent with the runs;
 *   undersubscribed  N = 37 over R = 64 (A = N);
 *   self_loop        items loop 0..11 times over an odd pool (R = 61) while
 *                    every frame field (uint8/16/32/64, float, double, a
 *                    4-byte struct) must survive every suspend;
 *   pool_of_one      R = 1, N = 3 makes progress;
 *   n_zero           N = 0 returns WS_OK and runs nothing;
 *   megakernel       the megakernel gives identical results;
 *   tail             tail_frames: the last frames finish in one launch of the
 *                    tail (CPU, CUDA; Vulkan modules have none and run the
 *                    ordinary loop), with identical results and fewer
 *                    iterations, in the host loop and where the backend has
 *                    one in the device loop; ws_scheduler_print_stats says
 *                    how many items finished in the tail when one ran;
 *   reuse            dispatching again gives identical results, and the
 *                    statistics describe the last dispatch only;
 *   defaults         the layout and accounting chosen per backend.
 */
#include "t_basic_host.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static ws_scheduler *basic_scheduler(const wt_combo *c, uint32_t R) {
  ws_scheduler_config cfg = wt_config(c, R);
  return wt_scheduler(&t_basic_coroutine, &cfg);
}

static void node_stats(ws_scheduler *s, uint32_t node, ws_node_stats *ns) {
  ws_status st = ws_scheduler_node_stats(s, node, ns);
  WT_OK(st, s, "ws_scheduler_node_stats");
}

/* Statistics that must hold for any t_basic dispatch of N items over R. */
static void basic_stats_check(ws_scheduler *s, uint32_t N, uint32_t R, const char *ctx) {
  ws_dispatch_stats d;
  ws_scheduler_dispatch_stats(s, &d);
  const uint64_t resumes = basic_expected_resumes(N);
  const uint32_t A = N < R ? N : R;
  WT_CHECK(d.generated_count == N, "%s: generated_count %" PRIu64 ", expected %u", ctx,
           d.generated_count, N);
  WT_CHECK(d.resumed_count == resumes, "%s: resumed_count %" PRIu64 ", expected %" PRIu64, ctx,
           d.resumed_count, resumes);
  WT_CHECK(d.max_active_count == A, "%s: max_active_count %" PRIu64 ", expected %u (pool %u)", ctx,
           d.max_active_count, A, R);
  /* Device time: every backend times the dispatch except a Vulkan queue
   * family without timestamps (-1). It lies inside the host's wall time,
   * which encloses the first and last operations (0.5 ms for clock skew). */
  const bool may_lack_timer = wt_backend == WS_BACKEND_VULKAN;
  WT_CHECK((d.device_ms >= 0 || (may_lack_timer && d.device_ms == -1.0)) &&
               d.device_ms <= d.elapsed_ms + 0.5,
           "%s: device_ms %.4f, host elapsed_ms %.4f", ctx, d.device_ms, d.elapsed_ms);
  WT_CHECK(ws_scheduler_node_count(s) == 4, "%s: %u nodes, expected 4", ctx,
           ws_scheduler_node_count(s));
  ws_node_stats e, loop, alt, fin;
  node_stats(s, 0, &e);
  node_stats(s, T_BASIC_LOOP, &loop);
  node_stats(s, T_BASIC_ALT, &alt);
  node_stats(s, T_BASIC_FINISH, &fin);
  WT_CHECK(strcmp(e.name, "<entry>") == 0 && strcmp(loop.name, "loop") == 0 &&
               strcmp(alt.name, "alt") == 0 && strcmp(fin.name, "finish") == 0,
           "%s: node names '%s' '%s' '%s' '%s'", ctx, e.name, loop.name, alt.name, fin.name);
  uint64_t want_loop = 0, want_alt = 0;
  for (uint32_t i = 0; i < N; ++i)
    for (uint32_t k = 0; k < t_basic_len(i); ++k)
      *(t_basic_step_cont(i, k) == T_BASIC_LOOP ? &want_loop : &want_alt) += 1;
  WT_CHECK(e.executed_count == N, "%s: entry executed %" PRIu64 ", expected %u", ctx,
           e.executed_count, N);
  WT_CHECK(
      loop.executed_count == want_loop && alt.executed_count == want_alt && fin.executed_count == N,
      "%s: executed loop %" PRIu64 " alt %" PRIu64 " finish %" PRIu64 ", expected %" PRIu64
      " %" PRIu64 " %u",
      ctx, loop.executed_count, alt.executed_count, fin.executed_count, want_loop, want_alt, N);
  /* every refill generates at most the free slots, so at least ceil(N/R) */
  WT_CHECK(e.dispatch_count >= (N + R - 1) / R && e.dispatch_count <= N,
           "%s: %" PRIu64 " refills for N = %u over R = %u", ctx, e.dispatch_count, N, R);
  WT_CHECK(loop.peak_queued_count <= A && alt.peak_queued_count <= A && fin.peak_queued_count <= A,
           "%s: a peak queue size exceeds the %u active slots", ctx, A);
  WT_CHECK(d.iteration_count >= e.dispatch_count + (fin.executed_count ? 1 : 0),
           "%s: %" PRIu64 " iterations for %" PRIu64 " refills", ctx, d.iteration_count,
           e.dispatch_count);
}

static void run_basic_case(const wt_combo *c, uint32_t N, uint32_t R) {
  char ctx[160];
  snprintf(ctx, sizeof ctx, "%s N=%u R=%u", c->name, N, R);
  ws_scheduler *s = basic_scheduler(c, R);
  basic_run r;
  basic_init(&r, N + 3); /* three extra items that must never run */
  ws_status st = basic_dispatch(s, &r, N);
  WT_OK(st, s, ctx);
  basic_check(&r, N, ctx);
  basic_stats_check(s, N, R, ctx);
}

static void test_oversubscribed(void **state) {
  run_basic_case(wt_state_combo(state), 257, 64);
}
static void test_undersubscribed(void **state) {
  run_basic_case(wt_state_combo(state), 37, 64);
}
static void test_self_loop(void **state) {
  run_basic_case(wt_state_combo(state), 300, 61);
}

static void test_pool_of_one(void **state) {
  const wt_combo *c = wt_state_combo(state);
  run_basic_case(c, 3, 1);
  /* and a longer run through the single slot */
  run_basic_case(c, 20, 1);
}

static void test_n_zero(void **state) {
  const wt_combo *c = wt_state_combo(state);
  ws_scheduler *s = basic_scheduler(c, 64);
  basic_run r;
  basic_init(&r, 8);
  ws_status st = basic_dispatch(s, &r, 0);
  WT_OK(st, s, "dispatch of N = 0");
  basic_check(&r, 0, "N = 0");
  ws_dispatch_stats d;
  ws_scheduler_dispatch_stats(s, &d);
  WT_CHECK(d.iteration_count == 0 && d.generated_count == 0 && d.resumed_count == 0,
           "N = 0: stats show %" PRIu64 " iterations, %" PRIu64 " generated, %" PRIu64 " resumed",
           d.iteration_count, d.generated_count, d.resumed_count);
  for (uint32_t j = 0; j < ws_scheduler_node_count(s); ++j) {
    ws_node_stats ns;
    node_stats(s, j, &ns);
    WT_CHECK(ns.dispatch_count == 0 && ns.executed_count == 0,
             "N = 0: node '%s' dispatched %" PRIu64 " times", ns.name, ns.dispatch_count);
  }
  /* the scheduler is still usable afterwards */
  st = basic_dispatch(s, &r, 5);
  WT_OK(st, s, "dispatch of N = 5 after N = 0");
  basic_check(&r, 5, "N = 5 after N = 0");
}

static void test_megakernel(void **state) {
  const wt_combo *c = wt_state_combo(state);
  const uint32_t N = 257;
  char ctx[160];
  snprintf(ctx, sizeof ctx, "%s megakernel vs wavefront", c->name);
  ws_scheduler_config mcfg = wt_config(c, 64);
  mcfg.kind = WS_SCHEDULER_MEGAKERNEL;
  ws_scheduler *mega = wt_scheduler(&t_basic_coroutine, &mcfg);
  ws_scheduler *wave = basic_scheduler(c, 64);
  basic_run rm, rw;
  basic_init(&rm, N);
  basic_init(&rw, N);
  WT_OK(basic_dispatch(mega, &rm, N), mega, "megakernel dispatch");
  WT_OK(basic_dispatch(wave, &rw, N), wave, "wavefront dispatch");
  basic_check(&rm, N, "megakernel");
  basic_check(&rw, N, ctx);
  for (uint32_t i = 0; i < N; ++i) {
    WT_CHECK(rm.h_out[i] == rw.h_out[i] && rm.h_step[i] == rw.h_step[i],
             "%s: item %u: megakernel 0x%08x after %u steps, wavefront 0x%08x after %u steps", ctx,
             i, rm.h_out[i], rm.h_step[i], rw.h_out[i], rw.h_step[i]);
  }
  ws_dispatch_stats d;
  ws_scheduler_dispatch_stats(mega, &d);
  WT_CHECK(d.generated_count == N, "megakernel: generated_count %" PRIu64 ", expected %u",
           d.generated_count, N);
  /* the megakernel can be dispatched again too */
  basic_reset(&rm);
  WT_OK(basic_dispatch(mega, &rm, 100), mega, "second megakernel dispatch");
  basic_check(&rm, 100, "megakernel, second dispatch (N = 100)");
}

static void test_tail(void **state) {
  const wt_combo *c = wt_state_combo(state);
  const uint32_t N = 257, R = 64;
  /* whether the tail can run here: the module has the tail launcher */
  const bool has_tail = wt_backend != WS_BACKEND_VULKAN;
  ws_scheduler *plain = basic_scheduler(c, R);
  basic_run rp;
  basic_init(&rp, N);
  WT_OK(basic_dispatch(plain, &rp, N), plain, "without a tail");
  basic_check(&rp, N, "without a tail");
  ws_dispatch_stats dp;
  ws_scheduler_dispatch_stats(plain, &dp);
  WT_CHECK(dp.tail_item_count == 0, "without a tail: %" PRIu64 " items in the tail",
           dp.tail_item_count);
  const uint32_t tails[] = {1, 20, R, R + 1};
  for (size_t t = 0; t < sizeof tails / sizeof tails[0]; ++t) {
    for (int loop = 0; loop < 2; ++loop) {
      char ctx[200];
      snprintf(ctx, sizeof ctx, "%s, tail_frames %u, %s loop", c->name, tails[t],
               loop ? "device" : "host");
      ws_scheduler_config cfg = wt_config(c, R);
      cfg.tail_frames = tails[t];
      cfg.loop = loop ? WS_LOOP_DEVICE : WS_LOOP_HOST;
      ws_scheduler *s = NULL;
      const ws_status cs = ws_scheduler_create(wt_dev, &t_basic_coroutine, &cfg, &s);
      if (loop && cs == WS_ECONFIG_LOOP)
        continue; /* no device loop on this backend */
      WT_CHECK(cs == WS_OK, "%s: create: %s", ctx, ws_status_name(cs));
      basic_run r;
      basic_init(&r, N);
      WT_OK(basic_dispatch(s, &r, N), s, ctx);
      basic_check(&r, N, ctx);
      for (uint32_t i = 0; i < N; ++i)
        WT_CHECK(r.h_out[i] == rp.h_out[i] && r.h_step[i] == rp.h_step[i],
                 "%s: item %u: 0x%08x after %u steps, without a tail 0x%08x after %u", ctx, i,
                 r.h_out[i], r.h_step[i], rp.h_out[i], rp.h_step[i]);
      ws_dispatch_stats d;
      ws_scheduler_dispatch_stats(s, &d);
      /* tail_frames 1 never runs (live >= 1 when there is anything to run) */
      const bool runs = has_tail && tails[t] > 1;
      WT_CHECK((d.tail_item_count != 0) == runs,
               "%s: %" PRIu64 " items finished in the tail (a tail was %sexpected)", ctx,
               d.tail_item_count, runs ? "" : "not ");
      WT_CHECK(d.tail_item_count < tails[t] || !runs,
               "%s: %" PRIu64 " items in a tail of fewer than %u frames", ctx, d.tail_item_count,
               tails[t]);
      WT_CHECK(d.generated_count == N, "%s: generated %" PRIu64, ctx, d.generated_count);
      {
        /* ws_scheduler_print_stats names the tail's items exactly when it ran */
        char text[4096] = {0}, want[96];
        FILE *f = tmpfile();
        WT_CHECK(f != NULL, "%s: tmpfile", ctx);
        ws_scheduler_print_stats(s, f);
        rewind(f);
        const size_t got = fread(text, 1, sizeof text - 1, f);
        fclose(f);
        text[got] = '\0';
        snprintf(want, sizeof want, "; %" PRIu64 " items finished in the tail\n",
                 d.tail_item_count);
        WT_CHECK((strstr(text, want) != NULL) == runs &&
                     (strstr(text, "finished in the tail") != NULL) == runs,
                 "%s: print_stats should %ssay '%s': %s", ctx, runs ? "" : "not ", want, text);
      }
      if (runs) {
        /* fewer passes and fewer continuation runs counted per node; the
         * rest ran in the tail (basic_check saw every run of every item) */
        WT_CHECK(d.iteration_count < dp.iteration_count &&
                     d.resumed_count < dp.resumed_count,
                 "%s: %" PRIu64 " iterations and %" PRIu64 " resumed, without a tail %" PRIu64
                 " and %" PRIu64,
                 ctx, d.iteration_count, d.resumed_count, dp.iteration_count, dp.resumed_count);
      } else {
        WT_CHECK(d.iteration_count == dp.iteration_count && d.resumed_count == dp.resumed_count,
                 "%s: no tail ran, yet %" PRIu64 " iterations and %" PRIu64
                 " resumed, without a tail %" PRIu64 " and %" PRIu64,
                 ctx, d.iteration_count, d.resumed_count, dp.iteration_count, dp.resumed_count);
      }
      /* and once more: the tail leaves the scheduler ready */
      basic_reset(&r);
      WT_OK(basic_dispatch(s, &r, N), s, ctx);
      basic_check(&r, N, ctx);
      ws_scheduler_destroy(s);
    }
  }
}

static void stats_snapshot(ws_scheduler *s, ws_dispatch_stats *d, ws_node_stats ns[4]) {
  ws_scheduler_dispatch_stats(s, d);
  d->elapsed_ms = 0;
  for (uint32_t j = 0; j < 4; ++j)
    node_stats(s, j, &ns[j]);
}

static void stats_equal(const ws_dispatch_stats *a, const ws_node_stats *na,
                        const ws_dispatch_stats *b, const ws_node_stats *nb, const char *ctx) {
  WT_CHECK(a->iteration_count == b->iteration_count && a->generated_count == b->generated_count &&
               a->resumed_count == b->resumed_count &&
               a->scanned_slot_count == b->scanned_slot_count &&
               a->max_active_count == b->max_active_count,
           "%s: dispatch statistics differ: iterations %" PRIu64 "/%" PRIu64 ", generated %" PRIu64
           "/%" PRIu64 ", resumed %" PRIu64 "/%" PRIu64 ", scanned %" PRIu64 "/%" PRIu64
           ", max active %" PRIu64 "/%" PRIu64,
           ctx, a->iteration_count, b->iteration_count, a->generated_count, b->generated_count,
           a->resumed_count, b->resumed_count, a->scanned_slot_count, b->scanned_slot_count,
           a->max_active_count, b->max_active_count);
  for (uint32_t j = 0; j < 4; ++j)
    WT_CHECK(na[j].dispatch_count == nb[j].dispatch_count &&
                 na[j].executed_count == nb[j].executed_count &&
                 na[j].peak_queued_count == nb[j].peak_queued_count,
             "%s: node '%s': dispatched %" PRIu64 "/%" PRIu64 ", executed %" PRIu64 "/%" PRIu64
             ", peak %" PRIu64 "/%" PRIu64,
             ctx, na[j].name, na[j].dispatch_count, nb[j].dispatch_count, na[j].executed_count,
             nb[j].executed_count, na[j].peak_queued_count, nb[j].peak_queued_count);
}

static void test_reuse(void **state) {
  const wt_combo *c = wt_state_combo(state);
  const uint32_t N = 257, R = 64;
  char ctx[160];
  ws_scheduler *s = basic_scheduler(c, R);
  basic_run r;
  basic_init(&r, N);
  ws_dispatch_stats d1, d2;
  ws_node_stats n1[4], n2[4];

  WT_OK(basic_dispatch(s, &r, N), s, "first dispatch");
  snprintf(ctx, sizeof ctx, "%s, first dispatch", c->name);
  basic_check(&r, N, ctx);
  uint32_t *first = wt_calloc(N, 4);
  memcpy(first, r.h_out, (size_t)N * 4);
  stats_snapshot(s, &d1, n1);

  basic_reset(&r);
  WT_OK(basic_dispatch(s, &r, N), s, "second dispatch");
  snprintf(ctx, sizeof ctx, "%s, second dispatch", c->name);
  basic_check(&r, N, ctx);
  WT_CHECK(memcmp(first, r.h_out, (size_t)N * 4) == 0, "%s: results differ from the first dispatch",
           ctx);
  stats_snapshot(s, &d2, n2);
  stats_equal(&d1, n1, &d2, n2, ctx);

  /* a smaller dispatch: statistics describe it alone */
  basic_reset(&r);
  WT_OK(basic_dispatch(s, &r, 10), s, "third dispatch (N = 10)");
  snprintf(ctx, sizeof ctx, "%s, third dispatch (N = 10)", c->name);
  basic_check(&r, 10, ctx);
  basic_stats_check(s, 10, R, ctx);

  /* and the first workload again */
  basic_reset(&r);
  WT_OK(basic_dispatch(s, &r, N), s, "fourth dispatch");
  snprintf(ctx, sizeof ctx, "%s, fourth dispatch", c->name);
  basic_check(&r, N, ctx);
  stats_snapshot(s, &d2, n2);
  stats_equal(&d1, n1, &d2, n2, ctx);
}

/* Thread-block size is a launch parameter only: results must not depend on it. */
static void test_block_sizes(void **state) {
  (void)state;
  static const uint32_t blocks[] = {32, 64, 96, 256, 1024};
  for (size_t b = 0; b < sizeof blocks / sizeof blocks[0]; ++b) {
    for (uint32_t ci = 0; ci < wt_combo_count(); ci += 5) {
      const wt_combo *c = wt_combo_at(ci);
      char ctx[160];
      snprintf(ctx, sizeof ctx, "%s block %u", c->name, blocks[b]);
      ws_scheduler_config cfg = wt_config(c, 64);
      cfg.block_size = blocks[b];
      ws_scheduler *s = wt_scheduler(&t_basic_coroutine, &cfg);
      basic_run r;
      basic_init(&r, 257);
      WT_OK(basic_dispatch(s, &r, 257), s, ctx);
      basic_check(&r, 257, ctx);
    }
  }
}

/* The defaults (ws_scheduler_config_default): the layout and accounting
 * the backend's measurements chose, reported by ws_scheduler_get_config,
 * materialized accounting under the all-queues policy, explicit values
 * kept; and a default scheduler runs t_basic exactly. */
static void test_defaults(void **state) {
  (void)state;
  const bool cpu = wt_backend == WS_BACKEND_CPU;
  ws_scheduler_config cfg = ws_scheduler_config_default();
  WT_CHECK(cfg.layout == WS_LAYOUT_AUTO && cfg.accounting == WS_ACCOUNTING_AUTO,
           "ws_scheduler_config_default: layout %u, accounting %d", cfg.layout,
           (int)cfg.accounting);
  cfg.resident_frames = 64;
  ws_scheduler *s = wt_scheduler(&t_basic_coroutine, &cfg);
  ws_scheduler_config got;
  WT_CHECK(ws_scheduler_get_config(s, &got) == WS_OK, "ws_scheduler_get_config");
  const uint32_t want_layout = cpu ? WS_LAYOUT_AOS : WS_LAYOUT_SOA;
  const ws_accounting want_acc = cpu ? WS_ACCOUNTING_INCREMENTAL : WS_ACCOUNTING_FUSED;
  WT_CHECK(got.layout == want_layout && got.accounting == want_acc,
           "defaults on %s: layout %u, accounting %d; expected %u, %d",
           ws_backend_name(wt_backend), got.layout, (int)got.accounting, want_layout,
           (int)want_acc);
  WT_CHECK(got.resident_frames == 64 && got.largest_first && got.compaction,
           "ws_scheduler_get_config changed what was given");
  basic_run r;
  basic_init(&r, 257);
  WT_OK(basic_dispatch(s, &r, 257), s, "the defaults");
  basic_check(&r, 257, "the defaults");

  cfg.largest_first = false;
  s = wt_scheduler(&t_basic_coroutine, &cfg);
  WT_CHECK(ws_scheduler_get_config(s, &got) == WS_OK &&
               got.accounting == WS_ACCOUNTING_MATERIALIZED,
           "all-queues policy: accounting %d, expected materialized", (int)got.accounting);
  basic_reset(&r);
  WT_OK(basic_dispatch(s, &r, 257), s, "the defaults, all-queues policy");
  basic_check(&r, 257, "the defaults, all-queues policy");

  cfg = ws_scheduler_config_default();
  cfg.resident_frames = 64;
  cfg.layout = WS_LAYOUT_AOS;
  cfg.accounting = WS_ACCOUNTING_MATERIALIZED;
  s = wt_scheduler(&t_basic_coroutine, &cfg);
  WT_CHECK(ws_scheduler_get_config(s, &got) == WS_OK && got.layout == WS_LAYOUT_AOS &&
               got.accounting == WS_ACCOUNTING_MATERIALIZED,
           "explicit AoS and materialized became layout %u, accounting %d", got.layout,
           (int)got.accounting);
  WT_CHECK(ws_scheduler_get_config(NULL, &got) == WS_EINVAL &&
               ws_scheduler_get_config(s, NULL) == WS_EINVAL,
           "ws_scheduler_get_config accepted NULL");
}

int main(int argc, char **argv) {
  const wt_need needs[] = {{&t_basic_modules, "t_basic"}};
  wt_init(argc, argv, needs, 1);
  wt_add_per_combo("oversubscribed", test_oversubscribed);
  wt_add_per_combo("undersubscribed", test_undersubscribed);
  wt_add_per_combo("self_loop", test_self_loop);
  wt_add_per_combo("pool_of_one", test_pool_of_one);
  wt_add_per_combo("n_zero", test_n_zero);
  wt_add_per_combo("megakernel", test_megakernel);
  wt_add_per_combo("tail", test_tail);
  wt_add_per_combo("reuse", test_reuse);
  wt_add("block_sizes", test_block_sizes, NULL);
  wt_add("defaults", test_defaults, NULL);
  return wt_run("core_dispatch");
}
