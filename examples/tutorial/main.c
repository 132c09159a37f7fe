/* SPDX-License-Identifier: MIT */
/* The tutorial's host (docs/tutorial.md): Collatz steps of 2..N+1. tutorial [cpu|cuda|vulkan] */
#include "collatz.h"

#include <stdio.h>
enum { N = 10000, R = 4096 }; /* items; pool capacity = the scheduler's default 4096 frames */
extern const ws_module_set collatz_modules; /* every backend's kernels (ws_add_kernels) */
static uint32_t steps[N];
int main(int argc, char **argv) {
  const ws_pool_config pc = {.name = "results",
                             .capacity = R,
                             .stage_count = 1, /* run by the kernel of its name */
                             .stage_names = (const char *[]){"collatz_store"},
                             .payload_stride = sizeof(uint64_t),
                             .producers = &(const ws_aux_producer){"even", 1}, /* 1 per run */
                             .producer_count = 1};
  const ws_coroutine_desc co = {.name = "collatz", .modules = &collatz_modules};
  ws_device_config dc = {0}; /* the backend the command line names, the CPU by default */
  ws_status st = argc > 1 ? ws_backend_parse(argv[1], &dc.backend) : WS_OK;
  ws_device *dev = NULL; /* it owns what is created on it */
  ws_buffer *out;
  ws_pool *pool;
  ws_scheduler *s;
  if (!st && !(st = ws_device_create(&dc, &dev)) &&
      !(st = ws_buffer_create(dev, sizeof steps, &out)) &&
      !(st = ws_pool_create(dev, &pc, &pool)) && !(st = ws_scheduler_create(dev, &co, NULL, &s))) {
    const collatz_args args = {ws_pool_get_view(pool), ws_buffer_address(out)};
    if (!(st = ws_scheduler_add_pool(s, pool, &args, sizeof args)) &&
        !(st = ws_scheduler_dispatch(s, N, &args, sizeof args)))
      st = ws_buffer_read(out, 0, steps, sizeof steps);
  }
  uint32_t wrong = 0; /* check every result on the host: n counts the steps of i + 2 */
  for (uint32_t i = 0, n = 0; !st && i < N; wrong += steps[i++] != n, n = 0)
    for (uint64_t v = i + 2u; v != 1u; ++n)
      v = v % 2u ? 3u * v + 1u : v / 2u;
  if (st)
    fprintf(stderr, "tutorial: %s %s\n", ws_strerror(st), ws_device_last_error(dev));
  else
    printf("%s: %d items, %u wrong\n", ws_device_name(dev), N, wrong);
  ws_device_destroy(dev); /* and the buffer, the pool and the scheduler */
  return st == WS_ENODEV ? 77 : st || wrong ? 1 : 0; /* 77: no such device here */
}
