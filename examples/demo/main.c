/* SPDX-License-Identifier: MIT */
/* wavesched-demo: runs the built-in divergent workload (or the auxiliary
 * pipeline scenario) on a chosen backend and prints the statistics table.
 *
 * Checks before memory: every number is parsed strictly and every size is
 * computed in 64 bits and compared with what the device says it can hold
 * before anything is allocated, so a bad or oversized option fails at once
 * with a message naming it and the limit.
 *
 * Built a second time with DEMO_MPI as wavesched-demo-mpi (WS_MPI,
 * docs/mpi.md): under mpirun each rank runs a contiguous block of the items
 * (ws_partition_range) on its own device; rank 0 folds the ranks' checksums
 * in rank order into the single-process checksum and prints the statistics
 * with their per-rank spread (ws_dispatch_stats_combine). What a run holds is its output
 * (two words per item on the device), the scheduler's pool of at most
 * min(--pool, --items) frames, and a bounded host chunk the results are read
 * through. Exit status: 0 success, 1 a run that failed (including a request
 * larger than the device), 2 a malformed command line. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "demo.h"
#ifdef DEMO_MPI
#include "pt_mpi.h" /* the path tracer's MPI glue (examples/pathtracer) */
#endif
#include "pipeline.h"
#include "wavesched/wavesched.h"

extern const ws_module_set demo_kernels_modules;

WS_FRAME_DESC(demo_frame, DEMO_FIELDS)
WS_CONTINUATION_NAMES(demo_names, DEMO_CONTINUATIONS)

/* Items whose results are read back per host chunk (two arrays of this many
 * words: 512 KiB whatever --items is). */
#define DEMO_CHUNK_ITEMS 65536u

static void usage(FILE *f) {
  fprintf(f,
          "usage: wavesched-demo [options]\n"
          "  --scenario demo|pipeline    the divergent demo workload (default), or the\n"
          "                              auxiliary-pipeline regression scenario (SPEC 6)\n"
          "  --backend cpu|cuda|vulkan   backend (default cpu)\n"
          "  --scheduler wavefront|megakernel (default wavefront)\n"
          "  --layout aos|soa            frame layout (default: the backend's, soa on GPUs)\n"
          "  --accounting materialized|incremental|fused (default: the backend's,\n"
          "                              fused on CUDA, else incremental)\n"
          "  --policy greedy|all         queue policy (default greedy)\n"
          "  --compaction on|off         (default on)\n"
          "  --items N                   logical items, 0..4294967295 (default 100000)\n"
          "  --pool R                    resident frames, 1..4294967295 (default 4096); a pool\n"
          "                              larger than --items is reduced to --items\n"
          "  --cpu-threads T             CPU backend threads, 0 = one per CPU (default 0)\n"
          "  --stats                     print the statistics table (default on)\n"
          "  --verify                    verify queues every iteration\n"
#ifdef DEMO_MPI
          "  --fail-rank K               testing: rank K fails as if its device could not\n"
          "                              be opened (every rank must stop)\n"
#endif
          "  --help                      this text\n"
          "exit status: 0 ok, 1 the run failed or does not fit the device, 2 bad options\n");
}

static void bad_option(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void bad_option(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("wavesched-demo: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  exit(2);
}

static int pick(const char *opt, const char *v, const char *const *names, int count) {
  for (int i = 0; i < count; ++i)
    if (strcmp(v, names[i]) == 0)
      return i;
  bad_option("--%s: unknown value '%s'", opt, v);
}

/* A decimal number in [lo, hi]: digits only (strtoull alone would accept
 * blanks, a sign, "-1" as 2^64 - 1 and trailing junk), no overflow. */
static uint64_t number(const char *opt, const char *v, uint64_t lo, uint64_t hi) {
  const char *p = v;
  while (*p >= '0' && *p <= '9')
    ++p;
  if (p == v || *p != '\0')
    bad_option("--%s: expected a decimal number in %" PRIu64 "..%" PRIu64 ", got '%s'", opt, lo,
               hi, v);
  errno = 0;
  const unsigned long long x = strtoull(v, NULL, 10);
  if (errno == ERANGE || x < lo || x > hi)
    bad_option("--%s: %s is out of range %" PRIu64 "..%" PRIu64, opt, v, lo, hi);
  return (uint64_t)x;
}

/* The library's creation errors arrive here (ws_device_config.log): the
 * last one is printed with the option it concerns. */
static char g_log[1536];
static void on_log(void *user, ws_log_level level, const char *message) {
  (void)user;
  if (level == WS_LOG_ERROR)
    snprintf(g_log, sizeof g_log, "%s", message);
}

/* Reads `n` result words of both buffers through one host chunk and folds
 * them into the totals, so host memory stays bounded whatever --items is. */
static ws_status fold_results(ws_buffer *out, ws_buffer *steps, uint32_t n, uint32_t *chunk_out,
                              uint32_t *chunk_steps, uint64_t *total, uint64_t *checksum) {
  for (uint64_t base = 0; base < n; base += DEMO_CHUNK_ITEMS) {
    const size_t m = n - base < DEMO_CHUNK_ITEMS ? (size_t)(n - base) : DEMO_CHUNK_ITEMS;
    ws_status st;
    if ((st = ws_buffer_read(out, (size_t)base * 4, chunk_out, m * 4)) != WS_OK ||
        (st = ws_buffer_read(steps, (size_t)base * 4, chunk_steps, m * 4)) != WS_OK)
      return st;
    for (size_t i = 0; i < m; ++i) {
      *total += chunk_steps[i];
      *checksum = *checksum * 31u + chunk_out[i];
    }
  }
  return WS_OK;
}

#ifdef DEMO_MPI
static pt_mpi mpi = {0, 1, 0};

/* What a rank sends rank 0: its share, its results, its statistics (node
 * names are rank 0's: every rank runs the same coroutine). */
typedef struct demo_rank {
  uint64_t first, count;     /* the share of the items */
  uint64_t runs, checksum;   /* continuation runs, checksum of the share alone */
  ws_dispatch_stats d;
  uint64_t node[4][3];       /* per node: dispatches, executed, peak */
  char device[64];
} demo_rank;

/* 31^e modulo 2^64 */
static uint64_t pow31(uint64_t e) {
  uint64_t r = 1, b = 31;
  for (; e; e >>= 1, b *= b)
    if (e & 1)
      r *= b;
  return r;
}

/* Every rank's verdict, then rank 0's report. The checksum folds the items
 * in order (h = h * 31 + out[i]), so the share of rank r joins the ones
 * before it as h * 31^count_r + h_r: the single-process value, exactly. */
static int demo_mpi_report(int rc, const demo_rank *mine, const ws_scheduler *s, uint32_t items,
                           ws_device *dev, const ws_scheduler_config *sc) {
  if (pt_mpi_agree(&mpi, rc != 0, "wavesched-demo-mpi", "running the shares"))
    return 1;
  demo_rank *all = mpi.rank == 0 ? malloc((size_t)mpi.size * sizeof *all) : NULL;
  int bad = mpi.rank == 0 && !all;
  if (pt_mpi_agree(&mpi, bad, "wavesched-demo-mpi", "gathering the results")) {
    free(all);
    return 1;
  }
  pt_mpi_gather_bytes(&mpi, mine, sizeof *mine, all);
  if (mpi.rank != 0)
    return 0;
  uint64_t runs = 0, checksum = 0;
  uint64_t node[4][3] = {{0}};
  /* the statistics of the ranks that had items (all of them for 0 items):
   * an empty dispatch has no loop worth naming */
  ws_dispatch_stats *d = malloc((size_t)mpi.size * sizeof *d);
  uint32_t with_items = 0;
  for (int r = 0; r < mpi.size; ++r) {
    checksum = checksum * pow31(all[r].count) + all[r].checksum;
    runs += all[r].runs;
    if (d && (all[r].count || items == 0))
      d[with_items++] = all[r].d;
    for (int j = 0; j < 4; ++j) {
      node[j][0] += all[r].node[j][0];
      node[j][1] += all[r].node[j][1];
      if (all[r].node[j][2] > node[j][2])
        node[j][2] = all[r].node[j][2];
    }
  }
  printf("wavesched-demo: %u items over %d ranks (blocks), rank 0 on %s\n", items, mpi.size,
         ws_device_name(dev));
  printf("items %u, continuation runs %" PRIu64 ", checksum %016" PRIx64 "\n", items, runs,
         checksum);
  ws_dispatch_stats_ranks c;
  if (sc->statistics && d && ws_dispatch_stats_combine(d, with_items, &c) == WS_OK) {
    const ws_dispatch_stats *t = &c.total;
    printf("dispatch: %" PRIu64 " iterations, %" PRIu64 " generated, %" PRIu64 " resumed, %" PRIu64
           " slots scanned, max %" PRIu64 " active, %.3f ms (slowest rank); %s loop\n",
           t->iteration_count, t->generated_count, t->resumed_count, t->scanned_slot_count,
           t->max_active_count, t->elapsed_ms,
           t->loop == WS_LOOP_DEVICE ? "device" : t->loop == WS_LOOP_HOST ? "host" : "mixed");
    printf("%-6s %-24s %12s %14s %12s\n", "kind", "name", "dispatches", "executed", "peak");
    for (uint32_t j = 0; j < 4; ++j) {
      ws_node_stats n;
      if (ws_scheduler_node_stats(s, j, &n) == WS_OK)
        printf("%-6s %-24s %12" PRIu64 " %14" PRIu64 " %12" PRIu64 "\n", "main", n.name,
               node[j][0], node[j][1], node[j][2]);
    }
    printf("%-5s %-28s %12s %12s %12s %12s\n", "rank", "device", "items", "iterations",
           "resumed", "ms");
    for (int r = 0; r < mpi.size; ++r)
      printf("%-5d %-28.28s %12" PRIu64 " %12" PRIu64 " %12" PRIu64 " %12.3f\n", r,
             all[r].device, all[r].count, all[r].d.iteration_count, all[r].d.resumed_count,
             all[r].d.elapsed_ms);
    printf("spread over %u ranks with items: %.3f .. %.3f ms; iterations %" PRIu64
           " .. %" PRIu64 "; resumed %" PRIu64 " .. %" PRIu64 "\n",
           with_items, c.min.elapsed_ms, c.max.elapsed_ms,
           c.min.iteration_count, c.max.iteration_count, c.min.resumed_count,
           c.max.resumed_count);
  }
  free(d);
  free(all);
  return 0;
}
#endif

int main(int argc, char **argv) {
  ws_device_config dc = {0};
  dc.device_index = -1;
  dc.log = on_log;
  ws_scheduler_config sc = ws_scheduler_config_default();
  uint32_t items = 100000;
  bool items_given = false, pool_given = false;
  sc.statistics = true;
  static const struct option opts[] = {
      {"backend", required_argument, 0, 'b'},    {"scheduler", required_argument, 0, 's'},
      {"layout", required_argument, 0, 'l'},     {"accounting", required_argument, 0, 'a'},
      {"policy", required_argument, 0, 'p'},     {"compaction", required_argument, 0, 'c'},
      {"items", required_argument, 0, 'n'},      {"pool", required_argument, 0, 'r'},
      {"stats", no_argument, 0, 'S'},            {"verify", no_argument, 0, 'V'},
      {"help", no_argument, 0, 'h'},             {"scenario", required_argument, 0, 'x'},
      {"cpu-threads", required_argument, 0, 't'},
#ifdef DEMO_MPI
      {"fail-rank", required_argument, 0, 'K'},
#endif
      {0, 0, 0, 0}};
#ifdef DEMO_MPI
  int64_t fail_rank = -1;
#endif
  static const char *const scenario_names[] = {"demo", "pipeline"};
  int scenario = 0;
  static const char *const sched_names[] = {"wavefront", "megakernel"};
  static const char *const layout_names[] = {"aos", "soa"};
  static const char *const acc_names[] = {"materialized", "incremental", "fused"};
  static const char *const pol_names[] = {"greedy", "all"};
  static const char *const onoff[] = {"off", "on"};
  int c;
  while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
    switch (c) {
    case 'b':
      if (ws_backend_parse(optarg, &dc.backend) != WS_OK)
        bad_option("--backend: unknown backend '%s'", optarg);
      break;
    case 's':
      sc.kind = (ws_scheduler_kind)pick("scheduler", optarg, sched_names, 2);
      break;
    case 'l':
      sc.layout = (uint32_t)pick("layout", optarg, layout_names, 2);
      break;
    case 'a': {
      int a = pick("accounting", optarg, acc_names, 3);
      sc.accounting = (ws_accounting)a;
      break;
    }
    case 'p':
      sc.largest_first = pick("policy", optarg, pol_names, 2) == 0;
      if (!sc.largest_first)
        sc.accounting = WS_ACCOUNTING_MATERIALIZED;
      break;
    case 'c':
      sc.compaction = pick("compaction", optarg, onoff, 2) == 1;
      break;
    case 'n':
      items = (uint32_t)number("items", optarg, 0, UINT32_MAX);
      items_given = true;
      break;
    case 'r':
      sc.resident_frames = (uint32_t)number("pool", optarg, 1, UINT32_MAX);
      pool_given = true;
      break;
    case 't':
      dc.cpu_threads = (int)number("cpu-threads", optarg, 0, 1024);
      break;
    case 'S':
      sc.statistics = true;
      break;
    case 'V':
      sc.verify_queues = true;
      break;
    case 'x':
      scenario = pick("scenario", optarg, scenario_names, 2);
      break;
#ifdef DEMO_MPI
    case 'K':
      fail_rank = (int64_t)number("fail-rank", optarg, 0, INT32_MAX);
      break;
#endif
    case 'h':
      usage(stdout);
      return 0;
    default:
      usage(stderr);
      return 2;
    }
  }
  if (optind < argc)
    bad_option("unexpected argument '%s' (options start with --)", argv[optind]);
  if (scenario == 1 && (items_given || pool_given))
    bad_option("--items and --pool do not apply to --scenario pipeline (SPEC 6 fixes 67 paths "
               "and a pool of 8)");

  /* this process's items: all of them, or its rank's block */
  uint64_t first = 0;
  const uint32_t all_items = items;
  ws_device *dev = NULL;
  ws_status st;
#ifdef DEMO_MPI
  demo_rank mine; /* what this rank reports (demo_mpi_report) */
  memset(&mine, 0, sizeof mine);
  if (scenario == 1)
    bad_option("--scenario pipeline is one fixed regression (SPEC 6): run it without mpirun");
  char err[256];
  if (pt_mpi_init(&mpi, err, sizeof err) != 0) {
    fprintf(stderr, "wavesched-demo: %s\n", err);
    return 1;
  }
  {
    ws_partition part;
    ws_partition_range(items, (uint32_t)mpi.size, (uint32_t)mpi.rank, WS_PARTITION_BLOCKS, &part);
    first = part.first;
    items = (uint32_t)part.count;
  }
  /* a failing rank still takes part in the verdict (demo_mpi_report) */
  if (fail_rank == mpi.rank) {
    st = WS_ENODEV;
    snprintf(g_log, sizeof g_log, "rank %d: --fail-rank %d", mpi.rank, mpi.rank);
  } else
#endif
  {
    st = ws_device_create(&dc, &dev);
  }
  if (st != WS_OK) {
    fprintf(stderr, "wavesched-demo: cannot open the %s backend: %s: %s\n",
            ws_backend_name(dc.backend), ws_strerror(st), g_log);
#ifdef DEMO_MPI
    pt_mpi_agree(&mpi, 1, "wavesched-demo-mpi", "running the shares");
    pt_mpi_finalize();
#endif
    return 1;
  }
  if (scenario == 1) {
    int prc = demo_pipeline(dev, sc);
    ws_device_destroy(dev);
    return prc;
  }
  /* A slot beyond the item count can never hold a frame (A = min(R, N)):
   * reserving it only costs memory, so the pool is reduced to the items. */
  const uint32_t slots_needed = items ? items : 1u;
  if (sc.kind == WS_SCHEDULER_WAVEFRONT && sc.resident_frames > slots_needed) {
    if (pool_given)
      fprintf(stderr, "wavesched-demo: --pool %u is larger than --items %u: using %u resident "
                      "frames (the others could never be used)\n",
              sc.resident_frames, items, slots_needed);
    sc.resident_frames = slots_needed;
  }
  const ws_coroutine_desc co = {"demo", &demo_kernels_modules, &demo_frame_ws_desc,
                                sizeof(demo_args), 3, demo_names};
  ws_scheduler *s = NULL;
  ws_buffer *out = NULL, *steps = NULL;
  uint32_t *chunk = NULL;
  int rc = 1;
  const char *failed = "setup";
  /* The scheduler checks its own reservation against the device. */
  if ((st = ws_scheduler_create(dev, &co, &sc, &s)) != WS_OK) {
    if (st == WS_EDEVMEM || st == WS_ENOMEM)
      fprintf(stderr, "wavesched-demo: --pool %u does not fit the %s device: %s\n",
              sc.resident_frames, ws_backend_name(dc.backend), g_log);
    else
      fprintf(stderr, "wavesched-demo: cannot create the scheduler: %s: %s\n", ws_strerror(st),
              g_log);
    st = WS_OK; /* reported */
    goto done;
  }
  /* The output: two words per item on the device. */
  const uint64_t out_bytes = 2u * ((uint64_t)items * 4u + 4u);
  uint64_t available = UINT64_MAX;
  if (ws_device_memory_available(dev, &available, NULL) == WS_OK && out_bytes > available) {
    fprintf(stderr,
            "wavesched-demo: --items %u: the results need %" PRIu64 " bytes of device memory, "
            "%" PRIu64 " available on the %s device (at most %" PRIu64 " items fit)\n",
            items, out_bytes, available, ws_backend_name(dc.backend),
            available / 8u > 1u ? available / 8u - 1u : 0u);
    goto done;
  }
  failed = "allocating the results";
  chunk = malloc(2u * DEMO_CHUNK_ITEMS * sizeof *chunk);
  if (!chunk) {
    fprintf(stderr, "wavesched-demo: no host memory for a %u-item result chunk\n",
            DEMO_CHUNK_ITEMS);
    goto done;
  }
  if ((st = ws_buffer_create(dev, (size_t)items * 4 + 4, &out)) != WS_OK ||
      (st = ws_buffer_create(dev, (size_t)items * 4 + 4, &steps)) != WS_OK ||
      (st = ws_buffer_fill_u32(steps, 0, 0, items)) != WS_OK)
    goto done;
  demo_args args = {ws_buffer_address(out), ws_buffer_address(steps), (uint32_t)first, 0};
  /* what the scheduler runs with: the backend chose what was not given */
  (void)ws_scheduler_get_config(s, &sc);
#ifndef DEMO_MPI /* rank 0 prints the whole run's (demo_mpi_report) */
  printf("wavesched-demo: %u items on %s, %s scheduler, pool %u, %s, %s accounting, %s policy\n",
         items, ws_device_name(dev), sched_names[sc.kind], sc.resident_frames,
         layout_names[sc.layout], acc_names[sc.accounting],
         pol_names[!sc.largest_first]);
#endif
  if ((st = ws_scheduler_dispatch(s, items, &args, sizeof args)) != WS_OK) {
    fprintf(stderr, "wavesched-demo: dispatch failed: %s: %s\n", ws_strerror(st),
            ws_scheduler_last_error(s));
    st = WS_OK; /* reported */
    goto done;
  }
  failed = "reading the results";
  uint64_t total = 0, checksum = 0;
  if ((st = fold_results(out, steps, items, chunk, chunk + DEMO_CHUNK_ITEMS, &total,
                         &checksum)) != WS_OK)
    goto done;
#ifdef DEMO_MPI
  mine.first = first;
  mine.count = items;
  mine.runs = total;
  mine.checksum = checksum;
  ws_scheduler_dispatch_stats(s, &mine.d);
  for (uint32_t j = 0; j < 4; ++j) {
    ws_node_stats n;
    if (ws_scheduler_node_stats(s, j, &n) == WS_OK) {
      mine.node[j][0] = n.dispatch_count;
      mine.node[j][1] = n.executed_count;
      mine.node[j][2] = n.peak_queued_count;
    }
  }
  snprintf(mine.device, sizeof mine.device, "%s", ws_device_name(dev));
#else
  printf("items %u, continuation runs %" PRIu64 ", checksum %016" PRIx64 "\n", items, total,
         checksum);
  if (sc.statistics)
    ws_scheduler_print_stats(s, stdout);
#endif
  rc = 0;
done:
  if (st != WS_OK && rc)
    fprintf(stderr, "wavesched-demo: %s: %s (%s)\n", failed, ws_strerror(st),
            ws_device_last_error(dev));
#ifdef DEMO_MPI
  rc = demo_mpi_report(rc, &mine, s, all_items, dev, &sc);
#else
  (void)all_items;
#endif
  free(chunk);
  ws_buffer_destroy(out);
  ws_buffer_destroy(steps);
  ws_scheduler_destroy(s);
  ws_device_destroy(dev);
#ifdef DEMO_MPI
  pt_mpi_finalize();
#endif
  return rc;
}
