/* SPDX-License-Identifier: MIT */
/* wavesched-demo --scenario pipeline: the permanent regression's pipeline
 * (tests/aux/regression.kern.h, SPEC §6) driven through the library's slot
 * pool, with the per-continuation and per-stage statistics table. */
#include "pipeline.h"

#include <stdio.h>
#include <string.h>

#include "regression.h"
#include "wavesched/pool.h"

extern const ws_module_set reg_kernels_modules;
WS_FRAME_DESC(reg_frame, REG_FIELDS)
WS_CONTINUATION_NAMES(reg_names, REG_CONTINUATIONS)

typedef struct stage_runner {
  ws_kernel kernel;
  reg_stage_args sa;
} stage_runner;

static ws_status run_stage(void *user, ws_pool *pool, uint32_t stage) {
  stage_runner *r = user;
  r->sa.a.pool = ws_pool_get_view(pool);
  r->sa.stage = stage;
  return ws_kernel_launch(&r->kernel, REG_C, &r->sa, sizeof r->sa);
}

int demo_pipeline(ws_device *dev, ws_scheduler_config sc) {
  static const char *const stages[REG_STAGES] = {"prepare", "iterate", "finish"};
  static const ws_aux_producer producers[] = {{"sparse_publish", 1}, {"dense_publish", 1}};
  stage_runner runner;
  memset(&runner, 0, sizeof runner);
  ws_pool *pool = NULL;
  ws_scheduler *s = NULL;
  ws_buffer *visits = NULL, *diag = NULL;
  int rc = 1;
  ws_status st;
  ws_pool_config pc = {"shadow", REG_C, REG_STAGES, stages, sizeof(reg_item),
                       producers, 2, run_stage, &runner};
  sc.resident_frames = REG_R;
  sc.statistics = true;
  const ws_coroutine_desc co = {"reg_main", &reg_kernels_modules, &reg_frame_ws_desc,
                                sizeof(reg_args), 3, reg_names};
  if ((st = ws_kernel_find(dev, &reg_kernels_modules, "reg_pool_stage", &runner.kernel)) ||
      (st = ws_pool_create(dev, &pc, &pool)) || (st = ws_scheduler_create(dev, &co, &sc, &s)) ||
      (st = ws_scheduler_add_aux(s, ws_pool_work(pool))) ||
      (st = ws_buffer_create(dev, 3 * REG_N * 4, &visits)) ||
      (st = ws_buffer_create(dev, (REG_N + 2) * 4, &diag)) ||
      (st = ws_buffer_fill_u32(visits, 0, 0, 3 * REG_N)) ||
      (st = ws_buffer_fill_u32(diag, 0, 0, REG_N + 2))) {
    fprintf(stderr, "wavesched-demo: pipeline setup failed: %s: %s %s\n", ws_strerror(st),
            ws_device_last_error(dev), s ? ws_scheduler_last_error(s) : "");
    goto done;
  }
  reg_args *a = &runner.sa.a;
  a->visits = ws_buffer_address(visits);
  a->diagnostics = ws_buffer_address(diag);
  a->pool = ws_pool_get_view(pool);
  a->use_pool = 1;
  a->capacity = REG_C;
  printf("wavesched-demo: pipeline scenario (SPEC §6): %u paths, pool %u frames, shadow work of "
         "capacity %u with stages prepare/iterate/finish, on %s\n",
         REG_N, REG_R, REG_C, ws_device_name(dev));
  if ((st = ws_scheduler_dispatch(s, REG_N, a, sizeof *a)) != WS_OK) {
    fprintf(stderr, "wavesched-demo: dispatch failed: %s: %s\n", ws_strerror(st),
            ws_scheduler_last_error(s));
    goto done;
  }
  uint32_t v[3 * REG_N], d[REG_N + 2];
  if ((st = ws_buffer_read(visits, 0, v, sizeof v)) || (st = ws_buffer_read(diag, 0, d, sizeof d)))
    goto done;
  uint32_t bad = d[0];
  for (uint32_t i = 0; i < REG_N; ++i)
    bad += d[2 + i] != 1 || v[3 * i] != 1 || v[3 * i + 1] != (i % 3 ? 2u : 0u) ||
           v[3 * i + 2] != 1u + (i % 8 == 0);
  printf("paths checked: %u, mismatches %u, overflow/corruption %u\n", REG_N, bad, d[0]);
  ws_scheduler_print_stats(s, stdout);
  rc = bad ? 1 : 0;
done:
  ws_buffer_destroy(visits);
  ws_buffer_destroy(diag);
  ws_scheduler_destroy(s);
  ws_pool_destroy(pool);
  return rc;
}
