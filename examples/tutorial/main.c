/* SPDX-License-Identifier: MIT */
/* The tutorial's host (docs/tutorial.md): Collatz steps of 2..N+1. tutorial [cpu|cuda|vulkan] */
#include "collatz.h"
#include "wavesched/pool.h"

#include <stdio.h>

enum { N = 10000, R = 1024 };               /* items; resident frames = pool capacity */
extern const ws_module_set collatz_modules; /* every backend's kernels (ws_add_kernels) */
static uint32_t steps[N];

int main(int argc, char **argv) {
  ws_device_config dc = {0}; /* the CPU unless the command line names a backend */
  if (argc > 1 && ws_backend_parse(argv[1], &dc.backend) != WS_OK)
    return 2;
  const ws_aux_producer even = {"even", 1}; /* "even" publishes at most 1 record per run */
  const ws_pool_config pc = {.name = "results",
                             .capacity = R,
                             .stage_count = 1,
                             .stage_names = (const char *[]){"store"},
                             .payload_stride = sizeof(collatz_record),
                             .producers = &even,
                             .producer_count = 1};
  /* the coroutine: its frame and continuations as the kernels recorded them */
  const ws_coroutine_desc co = {.name = "collatz", .modules = &collatz_modules};
  ws_scheduler_config cfg = ws_scheduler_config_default();
  cfg.resident_frames = R;
  ws_device *dev = NULL;
  ws_buffer *out = NULL;
  ws_pool *pool = NULL;
  ws_scheduler *s = NULL;
  ws_aux_stage_kernel store = {.count = R}; /* the stage: collatz_store over the R slots */
  collatz_args args;
  ws_status st = ws_device_create(&dc, &dev); /* every call returns WS_OK (0) or an error */
  if (!st && !(st = ws_buffer_create(dev, sizeof steps, &out)) &&
      !(st = ws_pool_create(dev, &pc, &pool)) &&
      !(st = ws_kernel_find(dev, &collatz_modules, "collatz_store", &store.kernel))) {
    args = (collatz_args){ws_pool_get_view(pool), ws_buffer_address(out)};
    store.args = &args;
    store.args_size = sizeof args;
    if (!(st = ws_pool_set_stage_kernels(pool, &store)) &&
        !(st = ws_scheduler_create(dev, &co, &cfg, &s)) &&
        !(st = ws_scheduler_add_aux(s, ws_pool_work(pool))) &&
        !(st = ws_scheduler_dispatch(s, N, &args, sizeof args)))
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
    fprintf(stderr, "tutorial: %s %s\n", ws_strerror(st), ws_device_last_error(dev));
  else
    printf("%s: %d items, %u wrong\n", ws_device_name(dev), N, wrong);
  ws_scheduler_destroy(s);
  ws_pool_destroy(pool);
  ws_buffer_destroy(out);
  ws_device_destroy(dev);
  return st == WS_ENODEV ? 77 : st || wrong ? 1 : 0; /* 77: no such device here */
}
