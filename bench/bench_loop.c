/* SPDX-License-Identifier: MIT */
/* bench_loop — the dispatch loop's overhead per iteration, as a ratio to the
 * bare floor of one host-driven iteration measured in the same run.
 *
 * Workload: N = R frames (all resident, so every iteration is one
 * continuation over all of them) bounce between "ping" and "pong" `bounces`
 * times; a dispatch is ~bounces + 1 iterations of the greedy loop.
 * per-iteration time = (wall time of ws_scheduler_dispatch + synchronize) /
 * iteration_count (ws_dispatch_stats), median over the timed dispatches.
 *
 * Bare floor: one empty kernel over 1 item (ws_kernel_launch) + a 64-byte
 * readback (ws_readback_enqueue) + ws_device_synchronize, timed one by one,
 * median. Floor samples and dispatches are interleaved in blocks, so a slow
 * phase of a noisy machine lands in both.
 */
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench_common.h"
#include "bench_kernels.h"

extern const ws_module_set bench_kernels_modules;

WS_FRAME_DESC(bench_pp_frame, BENCH_PP_FIELDS)
WS_CONTINUATION_NAMES(bench_pp_names, BENCH_PP_CONTINUATIONS)

/* accounting x loop: the host loop's three modes, then the device loop's */
enum {
  MODE_MATERIALIZED,
  MODE_INCREMENTAL,
  MODE_FUSED,
  MODE_DEV_MATERIALIZED,
  MODE_DEV_INCREMENTAL,
  MODE_DEV_FUSED,
  MODE_COUNT
};
static const char *const mode_names[MODE_COUNT] = {
    "host/materialized",   "host/incremental",   "host/fused",
    "device/materialized", "device/incremental", "device/fused"};
#define GOAL_INCREMENTAL 1.3
/* issue 13: the device loop's per-iteration time, microseconds */
#define GOAL_DEVICE_CUDA_US 6.0
#define GOAL_DEVICE_VULKAN_US 15.0
static bool is_device(int m) { return m >= MODE_DEV_MATERIALIZED; }

typedef struct floor_kind {
  const char *name;
  uint32_t launches; /* empty launches before the readback; 0 = launches only */
  bool readback;
} floor_kind;

/* [0] is the bare floor the ratios use; the others give context. */
static const floor_kind floors[] = {
    {"bare floor: 1 empty launch + 64 B readback + sync", 1, true},
    {"3 empty launches + 64 B readback + sync", 3, true},
    {"64 B readback + sync (no launch)", 0, true},
};
#define FLOOR_COUNT (sizeof floors / sizeof floors[0])

typedef struct ctx {
  ws_device *dev;
  ws_kernel empty;
  ws_buffer *small;
  ws_readback *rb;
} ctx;

static double floor_sample(ctx *c, const floor_kind *k) {
  bench_empty_args ea = {0};
  const double t0 = bench_now_s();
  for (uint32_t l = 0; l < k->launches; ++l)
    BENCH_TRY(c->dev, ws_kernel_launch(&c->empty, 1, &ea, sizeof ea));
  if (k->readback)
    BENCH_TRY(c->dev, ws_readback_enqueue(c->rb, 0, c->small, 0, 64));
  BENCH_TRY(c->dev, ws_device_synchronize(c->dev));
  return bench_now_s() - t0;
}

/* Checks every item's accumulator and the dispatch statistics. */
static bool verify_dispatch(ws_device *dev, ws_scheduler *s, ws_buffer *out, uint32_t *host,
                            const uint32_t *expect, uint32_t n, uint32_t bounces,
                            const char *mode) {
  BENCH_TRY(dev, ws_buffer_read(out, 0, host, (size_t)n * 4));
  for (uint32_t i = 0; i < n; ++i) {
    if (host[i] != expect[i]) {
      fprintf(stderr, "bench_loop: %s: item %u finished with %08x, expected %08x\n", mode, i,
              host[i], expect[i]);
      return false;
    }
  }
  ws_dispatch_stats ds;
  ws_scheduler_dispatch_stats(s, &ds);
  if (ds.generated_count != n || ds.resumed_count != (uint64_t)n * bounces ||
      ds.iteration_count < bounces) {
    fprintf(stderr,
            "bench_loop: %s: statistics say %" PRIu64 " generated, %" PRIu64
            " resumed, %" PRIu64 " iterations; expected %u, %" PRIu64 ", >= %u\n",
            mode, ds.generated_count, ds.resumed_count, ds.iteration_count, n,
            (uint64_t)n * bounces, bounces);
    return false;
  }
  return true;
}

int main(int argc, char **argv) {
  uint32_t frames = 0, bounces = 0;
  const bench_extra_opt extra[] = {
      {"frames", "N", "frames N = resident pool R (default 1024)", bench_parse_u32, &frames},
      {"bounces", "B", "continuation runs per frame (default 2000, quick 1000)",
       bench_parse_u32, &bounces},
  };
  bench_opts o;
  bench_parse_args(argc, argv, &o,
                   "Loop overhead: per-iteration time of a ping/pong coroutine in the three\n"
                   "accounting modes, as a ratio to the bare floor (empty launch + 64-byte\n"
                   "readback + synchronize) measured in the same run.",
                   extra, 2);
  uint32_t blocks, floor_per_block;
  switch (o.size) {
  case BENCH_SMOKE:
    blocks = 2, floor_per_block = 50;
    if (!frames)
      frames = 64;
    if (!bounces)
      bounces = 50;
    break;
  case BENCH_QUICK:
    blocks = 7, floor_per_block = 300;
    if (!frames)
      frames = 1024;
    if (!bounces)
      bounces = 1000;
    break;
  default:
    blocks = 15, floor_per_block = 400;
    if (!frames)
      frames = 1024;
    if (!bounces)
      bounces = 2000;
    break;
  }
  if (o.reps)
    blocks = (uint32_t)o.reps;
  if (frames == 0 || bounces == 0) {
    fprintf(stderr, "bench_loop: --frames and --bounces must be >= 1\n");
    return BENCH_EXIT_USAGE;
  }

  ctx c;
  memset(&c, 0, sizeof c);
  c.dev = bench_open_device(&o, &bench_kernels_modules);
  ws_device *dev = c.dev;
  c.empty = bench_find_kernel(dev, &bench_kernels_modules, "bench_empty");
  BENCH_TRY(dev, ws_buffer_create(dev, 64, &c.small));
  BENCH_TRY(dev, ws_buffer_fill_u32(c.small, 0, 7u, 16));
  BENCH_TRY(dev, ws_readback_create(dev, 64, &c.rb));

  ws_buffer *out = NULL;
  BENCH_TRY(dev, ws_buffer_create(dev, (size_t)frames * 4, &out));
  uint32_t *host = (uint32_t *)bench_xmalloc((size_t)frames * 4);
  uint32_t *expect = (uint32_t *)bench_xmalloc((size_t)frames * 4);
  for (uint32_t i = 0; i < frames; ++i) {
    uint32_t acc = i;
    for (uint32_t b = 0; b < bounces; ++b)
      acc = bench_pp_step(acc);
    expect[i] = acc;
  }

  const ws_coroutine_desc co = {"bench_pingpong", &bench_kernels_modules, &bench_pp_frame_ws_desc,
                                sizeof(bench_pp_args), 2, bench_pp_names};
  ws_scheduler *sched[MODE_COUNT] = {0};
  int modes = MODE_COUNT;
  for (int m = 0; m < MODE_COUNT; ++m) {
    ws_scheduler_config sc = ws_scheduler_config_default();
    sc.resident_frames = frames;
    sc.layout = WS_LAYOUT_AOS;
    sc.largest_first = true;
    const int a = m % 3;
    sc.accounting = a == 0 ? WS_ACCOUNTING_MATERIALIZED
                    : a == 2 ? WS_ACCOUNTING_FUSED
                             : WS_ACCOUNTING_INCREMENTAL;
    sc.loop = is_device(m) ? WS_LOOP_DEVICE : WS_LOOP_HOST;
    sc.compaction = true;
    sc.statistics = false;
    ws_status st = ws_scheduler_create(dev, &co, &sc, &sched[m]);
    if (st == WS_ECONFIG_LOOP) {
      /* this backend has no device loop in this build: host modes only */
      printf("bench_loop: no device loop on %s: %s\n", ws_backend_name(ws_device_backend(dev)),
             ws_device_last_error(dev));
      modes = MODE_DEV_MATERIALIZED;
      break;
    }
    if (st != WS_OK) {
      fprintf(stderr, "bench_loop: scheduler (%s): %s: %s\n", mode_names[m], ws_strerror(st),
              sched[m] ? ws_scheduler_last_error(sched[m]) : ws_device_last_error(dev));
      return BENCH_EXIT_FAIL;
    }
  }
  bench_pp_args args;
  memset(&args, 0, sizeof args);
  args.out = ws_buffer_address(out);
  args.bounces = bounces;

  printf("bench_loop: %u frames (= pool R), %u bounces each, greedy, AoS, compaction on; "
         "%u blocks of (%u samples of each floor + 1 dispatch per mode)\n",
         frames, bounces, blocks, floor_per_block);
  fflush(stdout);

  /* ---- warm-up and first verification ---- */
  for (uint32_t w = 0; w < 20; ++w)
    for (size_t k = 0; k < FLOOR_COUNT; ++k)
      (void)floor_sample(&c, &floors[k]);
  bool ok = true;
  for (int m = 0; m < modes; ++m) {
    BENCH_TRY(dev, ws_buffer_fill_u32(out, 0, 0, frames));
    ws_status st = ws_scheduler_dispatch(sched[m], frames, &args, sizeof args);
    if (st != WS_OK) {
      fprintf(stderr, "bench_loop: %s dispatch: %s: %s\n", mode_names[m], ws_strerror(st),
              ws_scheduler_last_error(sched[m]));
      return BENCH_EXIT_FAIL;
    }
    ok = ok && verify_dispatch(dev, sched[m], out, host, expect, frames, bounces, mode_names[m]);
  }
  if (!ok)
    return BENCH_EXIT_FAIL;

  /* ---- measurement: interleaved blocks ---- */
  const size_t fn = (size_t)blocks * floor_per_block;
  double *fs[FLOOR_COUNT];
  double *fblock[FLOOR_COUNT];
  for (size_t k = 0; k < FLOOR_COUNT; ++k) {
    fs[k] = (double *)bench_xmalloc(fn * sizeof(double));
    fblock[k] = (double *)bench_xmalloc(blocks * sizeof(double));
  }
  double *per_iter[MODE_COUNT], *disp_s[MODE_COUNT];
  uint64_t iters[MODE_COUNT] = {0}, syncs[MODE_COUNT] = {0};
  for (int m = 0; m < modes; ++m) {
    per_iter[m] = (double *)bench_xmalloc(blocks * sizeof(double));
    disp_s[m] = (double *)bench_xmalloc(blocks * sizeof(double));
  }
  double launch_only = 0;
  {
    /* informational: empty launches back to back, per launch */
    bench_empty_args ea = {0};
    double best = INFINITY;
    for (int r = 0; r < 5; ++r) {
      const double t0 = bench_now_s();
      for (int l = 0; l < 200; ++l)
        BENCH_TRY(dev, ws_kernel_launch(&c.empty, 1, &ea, sizeof ea));
      BENCH_TRY(dev, ws_device_synchronize(dev));
      const double t = (bench_now_s() - t0) / 200.0;
      best = t < best ? t : best;
    }
    launch_only = best;
  }
  for (uint32_t b = 0; b < blocks; ++b) {
    for (size_t k = 0; k < FLOOR_COUNT; ++k) {
      double *dst = fs[k] + (size_t)b * floor_per_block;
      for (uint32_t i = 0; i < floor_per_block; ++i)
        dst[i] = floor_sample(&c, &floors[k]);
      fblock[k][b] = bench_median(dst, floor_per_block);
    }
    for (int mm = 0; mm < modes; ++mm) {
      const int m = (int)((mm + b) % (uint32_t)modes); /* rotate the order */
      BENCH_TRY(dev, ws_buffer_fill_u32(out, 0, 0, frames));
      BENCH_TRY(dev, ws_device_synchronize(dev));
      const double t0 = bench_now_s();
      ws_status st = ws_scheduler_dispatch(sched[m], frames, &args, sizeof args);
      if (st == WS_OK)
        st = ws_device_synchronize(dev);
      const double t = bench_now_s() - t0;
      if (st != WS_OK) {
        fprintf(stderr, "bench_loop: %s dispatch: %s: %s\n", mode_names[m], ws_strerror(st),
                ws_scheduler_last_error(sched[m]));
        return BENCH_EXIT_FAIL;
      }
      ws_dispatch_stats ds;
      ws_scheduler_dispatch_stats(sched[m], &ds);
      if (!verify_dispatch(dev, sched[m], out, host, expect, frames, bounces, mode_names[m]))
        return BENCH_EXIT_FAIL;
      iters[m] = ds.iteration_count;
      syncs[m] = ds.host_sync_count;
      disp_s[m][b] = t;
      per_iter[m][b] = t / (double)ds.iteration_count;
    }
  }

  /* ---- report ---- */
  double floor_med[FLOOR_COUNT];
  printf("\nbaselines (host clock around the synchronize; %zu samples each, in %u blocks)\n", fn,
         blocks);
  printf("  %-52s %10s %10s %10s %21s\n", "what", "median us", "p10 us", "p90 us",
         "block medians us");
  for (size_t k = 0; k < FLOOR_COUNT; ++k) {
    floor_med[k] = bench_median(fs[k], fn);
    printf("  %-52s %10.3f %10.3f %10.3f %10.3f..%-10.3f\n", floors[k].name, floor_med[k] * 1e6,
           bench_quantile(fs[k], fn, 0.1) * 1e6, bench_quantile(fs[k], fn, 0.9) * 1e6,
           bench_min(fblock[k], blocks) * 1e6, bench_max(fblock[k], blocks) * 1e6);
  }
  printf("  %-52s %10.3f\n", "empty launch, back to back (per launch, best of 5x200)",
         launch_only * 1e6);

  const double bare = floor_med[0];
  printf("\nper-iteration time, median over %u dispatches (ratio = per-iteration / bare floor "
         "%.3f us)\n",
         blocks, bare * 1e6);
  const ws_backend_kind kind = ws_device_backend(dev);
  const double dev_goal_us = kind == WS_BACKEND_CUDA     ? GOAL_DEVICE_CUDA_US
                             : kind == WS_BACKEND_VULKAN ? GOAL_DEVICE_VULKAN_US
                                                         : 0.0;
  printf("  %-20s %10s %8s %14s %10s %10s %12s %9s  %s\n", "loop/accounting", "iterations",
         "syncs", "dispatch ms", "median us", "min us", "max us", "ratio", "goal");
  double ratio[MODE_COUNT];
  for (int m = 0; m < modes; ++m) {
    const double med = bench_median(per_iter[m], blocks);
    ratio[m] = med / bare;
    char goal[64] = "-";
    if (m == MODE_INCREMENTAL)
      snprintf(goal, sizeof goal, "<= %.1fx: %s", GOAL_INCREMENTAL,
               ratio[m] <= GOAL_INCREMENTAL ? "met" : "NOT met");
    if (is_device(m) && dev_goal_us > 0)
      snprintf(goal, sizeof goal, "<= %.0f us: %s", dev_goal_us,
               med * 1e6 <= dev_goal_us ? "met" : "NOT met");
    printf("  %-20s %10" PRIu64 " %8" PRIu64 " %14.3f %10.3f %10.3f %12.3f %8.2fx  %s\n",
           mode_names[m], iters[m], syncs[m], bench_median(disp_s[m], blocks) * 1e3, med * 1e6,
           bench_min(per_iter[m], blocks) * 1e6, bench_max(per_iter[m], blocks) * 1e6, ratio[m],
           goal);
  }
  printf("  (each dispatch's prologue and final observation are included and amortized over "
         "its iterations)\n");
  printf("verification: every item's accumulator and the generated/resumed counts matched on "
         "all %u dispatches\n\n",
         blocks * (uint32_t)modes + (uint32_t)modes);

  bench_json j;
  if (!bench_json_open(&j, &o, "loop", dev))
    return BENCH_EXIT_FAIL;
  bench_json_obj(&j, "params");
  bench_json_u64(&j, "frames", frames);
  bench_json_u64(&j, "resident_frames", frames);
  bench_json_u64(&j, "bounces", bounces);
  bench_json_u64(&j, "blocks", blocks);
  bench_json_u64(&j, "floor_samples_per_block", floor_per_block);
  bench_json_str(&j, "layout", "aos");
  bench_json_str(&j, "policy", "greedy");
  bench_json_bool(&j, "compaction", true);
  bench_json_end_obj(&j);
  bench_json_arr(&j, "baselines");
  for (size_t k = 0; k < FLOOR_COUNT; ++k) {
    bench_json_obj(&j, NULL);
    bench_json_str(&j, "what", floors[k].name);
    bench_json_u64(&j, "launches", floors[k].launches);
    bench_json_num(&j, "median_us", floor_med[k] * 1e6);
    bench_json_num(&j, "p10_us", bench_quantile(fs[k], fn, 0.1) * 1e6);
    bench_json_num(&j, "p90_us", bench_quantile(fs[k], fn, 0.9) * 1e6);
    bench_json_num(&j, "block_median_min_us", bench_min(fblock[k], blocks) * 1e6);
    bench_json_num(&j, "block_median_max_us", bench_max(fblock[k], blocks) * 1e6);
    bench_json_u64(&j, "samples", fn);
    bench_json_end_obj(&j);
  }
  bench_json_end_arr(&j);
  bench_json_num(&j, "bare_floor_us", bare * 1e6);
  bench_json_num(&j, "empty_launch_back_to_back_us", launch_only * 1e6);
  bench_json_arr(&j, "modes");
  for (int m = 0; m < modes; ++m) {
    bench_json_obj(&j, NULL);
    bench_json_str(&j, "accounting", mode_names[m]);
    bench_json_str(&j, "loop", is_device(m) ? "device" : "host");
    bench_json_u64(&j, "iterations_per_dispatch", iters[m]);
    bench_json_u64(&j, "host_syncs_per_dispatch", syncs[m]);
    if (is_device(m) && dev_goal_us > 0) {
      bench_json_num(&j, "goal_max_us", dev_goal_us);
      bench_json_bool(&j, "goal_met", bench_median(per_iter[m], blocks) * 1e6 <= dev_goal_us);
    }
    bench_json_num(&j, "dispatch_median_ms", bench_median(disp_s[m], blocks) * 1e3);
    bench_json_num(&j, "per_iteration_median_us", bench_median(per_iter[m], blocks) * 1e6);
    bench_json_num(&j, "per_iteration_min_us", bench_min(per_iter[m], blocks) * 1e6);
    bench_json_num(&j, "per_iteration_max_us", bench_max(per_iter[m], blocks) * 1e6);
    bench_json_num(&j, "ratio_to_bare_floor", ratio[m]);
    if (m == MODE_INCREMENTAL) {
      bench_json_num(&j, "goal_max_ratio", GOAL_INCREMENTAL);
      bench_json_bool(&j, "goal_met", ratio[m] <= GOAL_INCREMENTAL);
    }
    bench_json_u64(&j, "dispatches", blocks);
    bench_json_end_obj(&j);
  }
  bench_json_end_arr(&j);
  bench_json_bool(&j, "verified", true);
  bench_json_close(&j);

  char v[64], note[96];
  for (int m = 0; m < modes; ++m) {
    char what[96];
    if (is_device(m)) {
      const double us = bench_median(per_iter[m], blocks) * 1e6;
      snprintf(what, sizeof what, "loop %s: per-iteration", mode_names[m]);
      snprintf(v, sizeof v, "%.2f us", us);
      snprintf(note, sizeof note, "%" PRIu64 " iterations, %" PRIu64 " host syncs", iters[m],
               syncs[m]);
      char goal[48];
      snprintf(goal, sizeof goal, "<= %.0f us (%s)", dev_goal_us,
               us <= dev_goal_us ? "met" : "not met");
      bench_summary("loop", what, v, dev_goal_us > 0 ? goal : NULL, note);
      continue;
    }
    snprintf(what, sizeof what, "loop %s: per-iteration / bare floor", mode_names[m]);
    snprintf(v, sizeof v, "%.2fx", ratio[m]);
    snprintf(note, sizeof note, "%.2f us / %.2f us", bench_median(per_iter[m], blocks) * 1e6,
             bare * 1e6);
    if (m == MODE_INCREMENTAL) {
      char goal[48];
      snprintf(goal, sizeof goal, "<= %.1fx (%s)", GOAL_INCREMENTAL,
               ratio[m] <= GOAL_INCREMENTAL ? "met" : "not met");
      bench_summary("loop", what, v, goal, note);
    } else {
      bench_summary("loop", what, v, NULL, note);
    }
  }

  for (size_t k = 0; k < FLOOR_COUNT; ++k) {
    free(fs[k]);
    free(fblock[k]);
  }
  for (int m = 0; m < modes; ++m) {
    free(per_iter[m]);
    free(disp_s[m]);
  }
  for (int m = 0; m < MODE_COUNT; ++m)
    ws_scheduler_destroy(sched[m]);
  free(host);
  free(expect);
  ws_buffer_destroy(out);
  ws_buffer_destroy(c.small);
  ws_readback_destroy(c.rb);
  ws_device_destroy(dev);
  return BENCH_EXIT_OK;
}
