/* SPDX-License-Identifier: MIT */
/* The tutorial's host (docs/tutorial.md): Collatz steps of 2..N+1. tutorial [cpu|cuda|vulkan] */
#include "collatz.h"
#include "wavesched/pool.h"

#include <stdio.h>

enum { N = 10000, R = 1024 };               /* items; resident frames = pool capacity */
extern const ws_module_set collatz_modules; /* every backend's kernels (ws_add_kernels) */
WS_FRAME_DESC(collatz_frame, COLLATZ_FIELDS)
WS_CONTINUATION_NAMES(names, COLLATZ_CONTINUATIONS)
static ws_kernel store;
static collatz_args args;
static uint32_t steps[N];

static void log_message(void *user, ws_log_level level, const char *message) {
  (void)user, (void)level; /* why a device or scheduler could not be created */
  fprintf(stderr, "wavesched: %s\n", message);
}

static ws_status run_store(void *user, ws_pool *pool, uint32_t stage) { /* the pool's stage */
  (void)user, (void)pool, (void)stage;
  return ws_kernel_launch(&store, R, &args, sizeof args);
}

int main(int argc, char **argv) {
  ws_device_config dc = {.log = log_message};
  if (argc > 1 && ws_backend_parse(argv[1], &dc.backend) != WS_OK)
    return 2;
  const char *const stages[] = {"store"};
  const ws_aux_producer even = {"even", 1}; /* "even" publishes at most 1 record per run */
  const ws_pool_config pc = {.name = "results",
                             .capacity = R,
                             .stage_count = 1,
                             .stage_names = stages,
                             .payload_stride = sizeof(collatz_record),
                             .producers = &even,
                             .producer_count = 1,
                             .run_stage = run_store};
  const ws_coroutine_desc co = {
      "collatz", &collatz_modules, &collatz_frame_ws_desc, sizeof(collatz_args), 2, names};
  ws_scheduler_config cfg = ws_scheduler_config_default();
  cfg.resident_frames = R;
  ws_device *dev = NULL;
  ws_buffer *out = NULL;
  ws_pool *pool = NULL;
  ws_scheduler *s = NULL;
  ws_status st = ws_device_create(&dc, &dev); /* every call returns WS_OK (0) or an error */
  if (!st && !(st = ws_buffer_create(dev, sizeof steps, &out)) &&
      !(st = ws_kernel_find(dev, &collatz_modules, "collatz_store", &store)) &&
      !(st = ws_pool_create(dev, &pc, &pool)) && !(st = ws_scheduler_create(dev, &co, &cfg, &s)) &&
      !(st = ws_scheduler_add_aux(s, ws_pool_work(pool)))) {
    args = (collatz_args){ws_pool_get_view(pool), ws_buffer_address(out)};
    if (!(st = ws_scheduler_dispatch(s, N, &args, sizeof args)))
      st = ws_buffer_read(out, 0, steps, sizeof steps);
  }
  uint32_t wrong = 0; /* check every result on the host */
  for (uint32_t i = 0; !st && i < N; ++i) {
    uint32_t n = 0;
    for (uint64_t v = i + 2u; v != 1u; ++n)
      v = v % 2u ? 3u * v + 1u : v / 2u;
    wrong += steps[i] != n;
  }
  if (st)
    fprintf(stderr, "tutorial: %s %s%s\n", ws_strerror(st), ws_device_last_error(dev),
            ws_scheduler_last_error(s));
  else
    printf("%s: %d items, %u wrong\n", ws_device_name(dev), N, wrong);
  ws_scheduler_destroy(s);
  ws_pool_destroy(pool);
  ws_buffer_destroy(out);
  ws_device_destroy(dev);
  return st == WS_ENODEV ? 77 : st || wrong ? 1 : 0; /* 77: no such device here */
}
