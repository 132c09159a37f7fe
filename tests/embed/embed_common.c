/* SPDX-License-Identifier: MIT */
/* Embedding tests: the shared dispatch and checks (embed_common.h). */
#include "embed_common.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "collatz.h"
#include "wavesched/pool.h"

extern const ws_module_set collatz_modules;

static int failures;

void embed_check_(int cond, const char *file, int line, const char *fmt, ...) {
  if (cond)
    return;
  ++failures;
  fprintf(stderr, "FAIL %s:%d: ", file, line);
  va_list ap;
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
}

int embed_failures(void) { return failures; }

typedef struct collatz_run {
  ws_kernel store;
  collatz_args args;
  uint32_t capacity;
} collatz_run;

static ws_status run_store(void *user, ws_pool *pool, uint32_t stage) {
  (void)pool, (void)stage;
  collatz_run *r = user;
  return ws_kernel_launch(&r->store, r->capacity, &r->args, sizeof r->args);
}

static uint32_t collatz_steps(uint64_t v) {
  uint32_t n = 0;
  for (; v != 1u; ++n)
    v = v % 2u ? 3u * v + 1u : v / 2u;
  return n;
}

int embed_run_collatz(ws_device *dev, uint32_t n, const char *what) {
  collatz_run run = {.capacity = 256};
  const char *const stages[] = {"store"};
  const ws_aux_producer even = {"even", 1};
  const ws_pool_config pc = {.name = "results",
                             .capacity = run.capacity,
                             .stage_count = 1,
                             .stage_names = stages,
                             .payload_stride = sizeof(uint64_t), /* id << 32 | steps */
                             .producers = &even,
                             .producer_count = 1,
                             .run_stage = run_store,
                             .user = &run};
  /* the frame and continuations as the kernels recorded them (collatz.kern.h) */
  const ws_coroutine_desc co = {.name = "collatz", .modules = &collatz_modules};
  ws_scheduler_config cfg = ws_scheduler_config_default();
  cfg.resident_frames = run.capacity;
  cfg.iteration_limit = 100000; /* a hang would be a bug: make it an error */
  uint32_t *steps = calloc(n, sizeof *steps);
  ws_buffer *out = NULL;
  ws_pool *pool = NULL;
  ws_scheduler *s = NULL;
  ws_status st = steps ? WS_OK : WS_ENOMEM;
  if (!st && !(st = ws_buffer_create(dev, (size_t)n * 4u, &out)) &&
      !(st = ws_kernel_find(dev, &collatz_modules, "collatz_store", &run.store)) &&
      !(st = ws_pool_create(dev, &pc, &pool)) && !(st = ws_scheduler_create(dev, &co, &cfg, &s)) &&
      !(st = ws_scheduler_add_aux(s, ws_pool_work(pool)))) {
    run.args.pool = ws_pool_get_view(pool);
    run.args.result = ws_buffer_address(out);
    if (!(st = ws_scheduler_dispatch(s, n, &run.args, sizeof run.args)))
      st = ws_buffer_read(out, 0, steps, (size_t)n * 4u);
  }
  EMBED_CHECK(st == WS_OK, "%s: %s: %s %s", what, ws_status_name(st), ws_device_last_error(dev),
              ws_scheduler_last_error(s));
  uint32_t wrong = 0, first = 0;
  for (uint32_t i = 0; st == WS_OK && i < n; ++i) {
    if (steps[i] != collatz_steps(i + 2u) && wrong++ == 0)
      first = i;
  }
  EMBED_CHECK(wrong == 0, "%s: %u of %u results wrong, the first item %u: %u steps, expected %u",
              what, wrong, n, first, steps[first], collatz_steps(first + 2u));
  ws_scheduler_destroy(s);
  ws_pool_destroy(pool);
  ws_buffer_destroy(out);
  free(steps);
  return st != WS_OK || wrong != 0;
}
