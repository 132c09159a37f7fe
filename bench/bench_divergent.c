/* SPDX-License-Identifier: MIT */
/* bench_divergent — wavefront vs megakernel throughput on a divergent
 * workload, measured in the same run.
 *
 * Items of very different lengths (90 % run 1..8 continuations, 10 % run
 * 64..511) and continuations of very different cost ("heavy": a dependent
 * chain of 200 FMAs, picked 1 time in 4; "light": one integer hash). The
 * megakernel runs each item from entry to end in one thread; the wavefront
 * runs it through the scheduler with a pool of R resident frames.
 *
 * Throughput = items / (wall time of ws_scheduler_dispatch + synchronize),
 * median over the repetitions, which interleave the configurations. Ratio =
 * wavefront items/s / megakernel items/s (> 1: the wavefront is faster).
 * Every dispatch's per-item results are compared with the first megakernel
 * run (bit-identical) and each item's continuation count with the host.
 */
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench_common.h"
#include "bench_kernels.h"

extern const ws_module_set bench_kernels_modules;

WS_FRAME_DESC(bench_dv_frame, BENCH_DV_FIELDS)
WS_CONTINUATION_NAMES(bench_dv_names, BENCH_DV_CONTINUATIONS)

static bool parse_accounting(const char *v, void *dst) {
  static const char *const names[] = {"materialized", "incremental", "fused"};
  for (int i = 0; i < 3; ++i)
    if (strcmp(v, names[i]) == 0) {
      *(int *)dst = i;
      return true;
    }
  return false;
}

typedef struct config {
  const char *kind; /* "megakernel" / "wavefront" */
  uint32_t pool;    /* 0 for the megakernel */
  ws_scheduler *s;
  double *t;        /* [reps] seconds */
  uint64_t iterations;
} config;

int main(int argc, char **argv) {
  uint32_t items = 0, heavy = UINT32_MAX, long_percent = 10; /* UINT32_MAX: per size */
  bench_u32_list pools = {0, {0}};
  int accounting = 1;
  const bench_extra_opt extra[] = {
      {"items", "N", "logical items (default 2^20; quick 2^15)", bench_parse_u32, &items},
      {"pools", "R1,R2,..", "wavefront pool sizes (default 16384,65536,262144,1048576)",
       bench_parse_u32_list, &pools},
      {"heavy-fmas", "F", "FMAs per heavy continuation (default 200; smoke 50)",
       bench_parse_u32, &heavy},
      {"long-percent", "P", "share of long items in % (default 10)", bench_parse_u32,
       &long_percent},
      {"accounting", "A", "wavefront accounting: materialized|incremental|fused (default "
                          "incremental)",
       parse_accounting, &accounting},
  };
  bench_opts o;
  bench_parse_args(argc, argv, &o,
                   "Wavefront vs megakernel: throughput ratio on a divergent workload (items\n"
                   "of very different lengths, continuations of very different cost).",
                   extra, sizeof extra / sizeof extra[0]);
  int reps;
  switch (o.size) {
  case BENCH_SMOKE:
    reps = 1;
    if (!items)
      items = 2000;
    if (heavy == UINT32_MAX)
      heavy = 50; /* lavapipe's per-invocation loop limit (docs/benchmarks.md) */
    if (!pools.n)
      pools = (bench_u32_list){2, {256, 2048}};
    break;
  case BENCH_QUICK:
    reps = 3;
    if (!items)
      items = 1u << 15;
    if (!pools.n)
      pools = (bench_u32_list){3, {1024, 4096, 32768}};
    break;
  default:
    reps = 5;
    if (!items)
      items = 1u << 20;
    if (!pools.n)
      pools = (bench_u32_list){4, {1u << 14, 1u << 16, 1u << 18, 1u << 20}};
    break;
  }
  if (o.reps)
    reps = o.reps;
  if (heavy == UINT32_MAX)
    heavy = 200;
  if (items == 0 || long_percent > 100) {
    fprintf(stderr, "bench_divergent: --items must be >= 1 and --long-percent <= 100\n");
    return BENCH_EXIT_USAGE;
  }
  for (uint32_t i = 0; i < pools.n; ++i)
    if (pools.v[i] == 0) {
      fprintf(stderr, "bench_divergent: pool sizes must be >= 1\n");
      return BENCH_EXIT_USAGE;
    }

  ws_device *dev = bench_open_device(&o, &bench_kernels_modules);
  const ws_coroutine_desc co = {"bench_divergent", &bench_kernels_modules,
                                &bench_dv_frame_ws_desc, sizeof(bench_dv_args), 2,
                                bench_dv_names};
  static const char *const acc_names[] = {"materialized", "incremental", "fused"};

  /* host expectations: continuation runs per item */
  uint32_t *want_steps = (uint32_t *)bench_xmalloc((size_t)items * 4);
  uint64_t total_runs = 0, long_items = 0;
  for (uint32_t i = 0; i < items; ++i) {
    want_steps[i] = bench_dv_length(i, long_percent);
    total_runs += want_steps[i];
    long_items += want_steps[i] >= 64;
  }

  const uint32_t nconf = 1 + pools.n;
  config *cf = (config *)calloc(nconf, sizeof(config));
  if (!cf)
    return BENCH_EXIT_FAIL;
  for (uint32_t k = 0; k < nconf; ++k) {
    ws_scheduler_config sc = ws_scheduler_config_default();
    if (k == 0) {
      sc.kind = WS_SCHEDULER_MEGAKERNEL;
      cf[k].kind = "megakernel";
    } else {
      sc.kind = WS_SCHEDULER_WAVEFRONT;
      sc.resident_frames = pools.v[k - 1];
      sc.accounting = (ws_accounting)accounting;
      sc.layout = WS_LAYOUT_AOS; /* as the header line says, and every recorded run had */
      cf[k].kind = "wavefront";
      cf[k].pool = pools.v[k - 1];
    }
    sc.statistics = false;
    ws_status st = ws_scheduler_create(dev, &co, &sc, &cf[k].s);
    if (st != WS_OK) {
      fprintf(stderr, "bench_divergent: %s scheduler (R %u): %s: %s\n", cf[k].kind, cf[k].pool,
              ws_strerror(st), cf[k].s ? ws_scheduler_last_error(cf[k].s) : ws_device_last_error(dev));
      return BENCH_EXIT_FAIL;
    }
    cf[k].t = (double *)bench_xmalloc((size_t)reps * sizeof(double));
  }

  ws_buffer *out = NULL, *steps = NULL;
  BENCH_TRY(dev, ws_buffer_create(dev, (size_t)items * 4, &out));
  BENCH_TRY(dev, ws_buffer_create(dev, (size_t)items * 4, &steps));
  bench_dv_args args;
  memset(&args, 0, sizeof args);
  args.out = ws_buffer_address(out);
  args.steps = ws_buffer_address(steps);
  args.heavy_fmas = heavy;
  args.long_percent = long_percent;
  uint32_t *ref_out = (uint32_t *)bench_xmalloc((size_t)items * 4);
  uint32_t *got_out = (uint32_t *)bench_xmalloc((size_t)items * 4);
  uint32_t *got_steps = (uint32_t *)bench_xmalloc((size_t)items * 4);

  printf("bench_divergent: %u items (%" PRIu64 " long, %.1f %%), %" PRIu64
         " continuation runs (mean %.1f per item), heavy = %u FMAs (1 run in 4), "
         "wavefront: greedy, %s accounting, AoS, compaction on; %d repetitions\n",
         items, long_items, 100.0 * (double)long_items / items, total_runs,
         (double)total_runs / items, heavy, acc_names[accounting], reps);
  fflush(stdout);

  /* One dispatch of configuration k; returns seconds; verifies its results
   * (the first megakernel run becomes the reference). */
  bool have_ref = false;
#define RUN_ONE(k, secs)                                                                   \
  do {                                                                                     \
    BENCH_TRY(dev, ws_buffer_fill_u32(out, 0, 0xffffffffu, items));                        \
    BENCH_TRY(dev, ws_buffer_fill_u32(steps, 0, 0, items));                                \
    BENCH_TRY(dev, ws_device_synchronize(dev));                                            \
    const double t0_ = bench_now_s();                                                      \
    ws_status st_ = ws_scheduler_dispatch(cf[k].s, items, &args, sizeof args);             \
    if (st_ == WS_OK)                                                                      \
      st_ = ws_device_synchronize(dev);                                                    \
    (secs) = bench_now_s() - t0_;                                                          \
    if (st_ != WS_OK) {                                                                    \
      fprintf(stderr, "bench_divergent: %s (R %u) dispatch: %s: %s\n", cf[k].kind,         \
              cf[k].pool, ws_strerror(st_), ws_scheduler_last_error(cf[k].s));             \
      return BENCH_EXIT_FAIL;                                                              \
    }                                                                                      \
    ws_dispatch_stats ds_;                                                                 \
    ws_scheduler_dispatch_stats(cf[k].s, &ds_);                                            \
    cf[k].iterations = ds_.iteration_count;                                                \
    BENCH_TRY(dev, ws_buffer_read(out, 0, have_ref ? got_out : ref_out, (size_t)items * 4)); \
    BENCH_TRY(dev, ws_buffer_read(steps, 0, got_steps, (size_t)items * 4));                \
    for (uint32_t i_ = 0; i_ < items; ++i_) {                                              \
      if (got_steps[i_] != want_steps[i_]) {                                               \
        fprintf(stderr,                                                                    \
                "bench_divergent: VERIFY FAILED: %s (R %u): item %u ran %u continuations, " \
                "expected %u\n",                                                           \
                cf[k].kind, cf[k].pool, i_, got_steps[i_], want_steps[i_]);                \
        return BENCH_EXIT_FAIL;                                                            \
      }                                                                                    \
      if (have_ref && got_out[i_] != ref_out[i_]) {                                        \
        fprintf(stderr,                                                                    \
                "bench_divergent: VERIFY FAILED: %s (R %u): item %u result %08x, "         \
                "megakernel %08x\n",                                                       \
                cf[k].kind, cf[k].pool, i_, got_out[i_], ref_out[i_]);                     \
        return BENCH_EXIT_FAIL;                                                            \
      }                                                                                    \
    }                                                                                      \
    have_ref = true;                                                                       \
  } while (0)

  /* warm-up: one run of each (the megakernel's is the reference) */
  for (uint32_t k = 0; k < nconf; ++k) {
    double s;
    RUN_ONE(k, s);
    (void)s;
  }
  for (int r = 0; r < reps; ++r)
    for (uint32_t kk = 0; kk < nconf; ++kk) {
      const uint32_t k = (kk + (uint32_t)r) % nconf;
      RUN_ONE(k, cf[k].t[r]);
    }
#undef RUN_ONE

  /* ---- report ---- */
  const double mega = bench_median(cf[0].t, (size_t)reps);
  printf("\n  %-11s %9s %11s %11s %11s %13s %11s %10s\n", "scheduler", "pool R", "median ms",
         "min ms", "max ms", "items/s", "ratio", "iterations");
  double *ratio = (double *)bench_xmalloc(nconf * sizeof(double));
  for (uint32_t k = 0; k < nconf; ++k) {
    const double med = bench_median(cf[k].t, (size_t)reps);
    ratio[k] = mega / med;
    char pool[16] = "-";
    if (cf[k].pool)
      snprintf(pool, sizeof pool, "%u", cf[k].pool);
    printf("  %-11s %9s %11.3f %11.3f %11.3f %13.4g %10.3fx %10" PRIu64 "\n", cf[k].kind, pool,
           med * 1e3, bench_min(cf[k].t, (size_t)reps) * 1e3,
           bench_max(cf[k].t, (size_t)reps) * 1e3, items / med, ratio[k], cf[k].iterations);
  }
  printf("  ratio = wavefront items/s / megakernel items/s (> 1: the wavefront is faster)\n");
  printf("verification: on every dispatch each item ran its host-computed number of "
         "continuations and produced the megakernel's bit-identical result\n\n");

  bench_json j;
  if (!bench_json_open(&j, &o, "divergent", dev))
    return BENCH_EXIT_FAIL;
  bench_json_obj(&j, "params");
  bench_json_u64(&j, "items", items);
  bench_json_u64(&j, "long_items", long_items);
  bench_json_u64(&j, "long_percent", long_percent);
  bench_json_u64(&j, "continuation_runs", total_runs);
  bench_json_u64(&j, "heavy_fmas", heavy);
  bench_json_str(&j, "heavy_share", "1/4 of runs");
  bench_json_str(&j, "accounting", acc_names[accounting]);
  bench_json_u64(&j, "repetitions", (uint64_t)reps);
  bench_json_end_obj(&j);
  bench_json_arr(&j, "results");
  for (uint32_t k = 0; k < nconf; ++k) {
    const double med = bench_median(cf[k].t, (size_t)reps);
    bench_json_obj(&j, NULL);
    bench_json_str(&j, "scheduler", cf[k].kind);
    bench_json_u64(&j, "pool", cf[k].pool);
    bench_json_num(&j, "median_ms", med * 1e3);
    bench_json_num(&j, "min_ms", bench_min(cf[k].t, (size_t)reps) * 1e3);
    bench_json_num(&j, "max_ms", bench_max(cf[k].t, (size_t)reps) * 1e3);
    bench_json_num(&j, "items_per_s", items / med);
    bench_json_num(&j, "ratio_to_megakernel", ratio[k]);
    bench_json_u64(&j, "iterations", cf[k].iterations);
    bench_json_end_obj(&j);
  }
  bench_json_end_arr(&j);
  bench_json_bool(&j, "verified", true);
  bench_json_close(&j);

  for (uint32_t k = 1; k < nconf; ++k) {
    char what[96], v[32], note[96];
    snprintf(what, sizeof what, "divergent R=%u: wavefront / megakernel items/s", cf[k].pool);
    snprintf(v, sizeof v, "%.3fx", ratio[k]);
    snprintf(note, sizeof note, "%s; %.2f ms vs %.2f ms",
             ratio[k] >= 1.0 ? "wavefront faster" : "megakernel faster",
             bench_median(cf[k].t, (size_t)reps) * 1e3, mega * 1e3);
    bench_summary("divergent", what, v, NULL, note);
  }

  for (uint32_t k = 0; k < nconf; ++k) {
    ws_scheduler_destroy(cf[k].s);
    free(cf[k].t);
  }
  free(cf);
  free(ratio);
  free(want_steps);
  free(ref_out);
  free(got_out);
  free(got_steps);
  ws_buffer_destroy(out);
  ws_buffer_destroy(steps);
  ws_device_destroy(dev);
  return BENCH_EXIT_OK;
}
