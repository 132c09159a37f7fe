/* wavesched-demo: runs the built-in divergent workload (or the auxiliary
 * pipeline scenario) on a chosen backend and prints the statistics table. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "demo.h"
#include "pipeline.h"
#include "wavesched/wavesched.h"

extern const ws_module_set demo_kernels_modules;

WS_FRAME_DESC(demo_frame, DEMO_FIELDS)
WS_CONTINUATION_NAMES(demo_names, DEMO_CONTINUATIONS)

static void usage(FILE *f) {
  fprintf(f,
          "usage: wavesched-demo [options]\n"
          "  --scenario demo|pipeline    the divergent demo workload (default), or the\n"
          "                              auxiliary-pipeline regression scenario (SPEC 6)\n"
          "  --backend cpu|cuda|vulkan   backend (default cpu)\n"
          "  --scheduler wavefront|megakernel (default wavefront)\n"
          "  --layout aos|soa            frame layout (default aos)\n"
          "  --accounting materialized|incremental|fused (default incremental)\n"
          "  --policy greedy|all         queue policy (default greedy)\n"
          "  --compaction on|off         (default on)\n"
          "  --items N                   logical items (default 100000)\n"
          "  --pool R                    resident frames (default 4096)\n"
          "  --stats                     print the statistics table (default on)\n"
          "  --verify                    verify queues every iteration\n"
          "  --help                      this text\n");
}

static int pick(const char *opt, const char *v, const char *const *names, int count) {
  for (int i = 0; i < count; ++i)
    if (strcmp(v, names[i]) == 0)
      return i;
  fprintf(stderr, "wavesched-demo: --%s: unknown value '%s'\n", opt, v);
  exit(2);
}

int main(int argc, char **argv) {
  ws_device_config dc = {0};
  ws_scheduler_config sc = ws_scheduler_config_default();
  uint32_t items = 100000;
  sc.statistics = true;
  static const struct option opts[] = {
      {"backend", required_argument, 0, 'b'},    {"scheduler", required_argument, 0, 's'},
      {"layout", required_argument, 0, 'l'},     {"accounting", required_argument, 0, 'a'},
      {"policy", required_argument, 0, 'p'},     {"compaction", required_argument, 0, 'c'},
      {"items", required_argument, 0, 'n'},      {"pool", required_argument, 0, 'r'},
      {"stats", no_argument, 0, 'S'},            {"verify", no_argument, 0, 'V'},
      {"help", no_argument, 0, 'h'},             {"scenario", required_argument, 0, 'x'},
      {0, 0, 0, 0}};
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
      if (ws_backend_parse(optarg, &dc.backend) != WS_OK) {
        fprintf(stderr, "wavesched-demo: --backend: unknown backend '%s'\n", optarg);
        return 2;
      }
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
      items = (uint32_t)strtoul(optarg, NULL, 10);
      break;
    case 'r':
      sc.resident_frames = (uint32_t)strtoul(optarg, NULL, 10);
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
    case 'h':
      usage(stdout);
      return 0;
    default:
      usage(stderr);
      return 2;
    }
  }

  ws_device *dev = NULL;
  ws_status st = ws_device_create(&dc, &dev);
  if (st != WS_OK) {
    fprintf(stderr, "wavesched-demo: cannot open the %s backend: %s\n",
            ws_backend_name(dc.backend), ws_strerror(st));
    return 1;
  }
  if (scenario == 1) {
    int prc = demo_pipeline(dev, sc);
    ws_device_destroy(dev);
    return prc;
  }
  const ws_coroutine_desc co = {"demo", &demo_kernels_modules, &demo_frame_ws_desc,
                                sizeof(demo_args), 3, demo_names};
  ws_scheduler *s = NULL;
  ws_buffer *out = NULL, *steps = NULL;
  int rc = 1;
  uint32_t *h_out = malloc((size_t)items * 4 + 4), *h_steps = malloc((size_t)items * 4 + 4);
  if (!h_out || !h_steps)
    goto done;
  if ((st = ws_scheduler_create(dev, &co, &sc, &s)) != WS_OK) {
    fprintf(stderr, "wavesched-demo: %s\n", ws_strerror(st));
    goto done;
  }
  if ((st = ws_buffer_create(dev, (size_t)items * 4 + 4, &out)) != WS_OK ||
      (st = ws_buffer_create(dev, (size_t)items * 4 + 4, &steps)) != WS_OK ||
      (st = ws_buffer_fill_u32(steps, 0, 0, items)) != WS_OK)
    goto done;
  demo_args args = {ws_buffer_address(out), ws_buffer_address(steps)};
  printf("wavesched-demo: %u items on %s, %s scheduler, pool %u, %s, %s accounting, %s policy\n",
         items, ws_device_name(dev), sched_names[sc.kind], sc.resident_frames,
         layout_names[sc.layout], acc_names[sc.accounting],
         pol_names[!sc.largest_first]);
  if ((st = ws_scheduler_dispatch(s, items, &args, sizeof args)) != WS_OK) {
    fprintf(stderr, "wavesched-demo: dispatch failed: %s: %s\n", ws_strerror(st),
            ws_scheduler_last_error(s));
    goto done;
  }
  if ((st = ws_buffer_read(out, 0, h_out, (size_t)items * 4)) != WS_OK ||
      (st = ws_buffer_read(steps, 0, h_steps, (size_t)items * 4)) != WS_OK)
    goto done;
  uint64_t total = 0, checksum = 0;
  for (uint32_t i = 0; i < items; ++i) {
    total += h_steps[i];
    checksum = checksum * 31u + h_out[i];
  }
  printf("items %u, continuation runs %" PRIu64 ", checksum %016" PRIx64 "\n", items, total,
         checksum);
  if (sc.statistics)
    ws_scheduler_print_stats(s, stdout);
  rc = 0;
done:
  if (st != WS_OK && rc)
    fprintf(stderr, "wavesched-demo: %s (%s)\n", ws_strerror(st), ws_device_last_error(dev));
  free(h_out);
  free(h_steps);
  ws_buffer_destroy(out);
  ws_buffer_destroy(steps);
  ws_scheduler_destroy(s);
  ws_device_destroy(dev);
  return rc;
}
