/* SPDX-License-Identifier: MIT */
/* Shared by the reliability tests: a small but complete workload built on
 * the fuzzer's table-driven coroutine (tools/fuzz/fz.h): K = 3 main
 * continuations, every one a publisher of an auxiliary work, one or two
 * library pools (ws_pool) with 3 and 2 stages, self-loops, bypass edges and
 * early releases. Everything a test creates goes through rig_* so that a
 * failure anywhere can be torn down the same way. Header-only. */
#ifndef WS_TESTS_REL_RIG_H
#define WS_TESTS_REL_RIG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "fz.h"
#include "wavesched/pool.h"
#include "wavesched/wavesched.h"

extern const ws_module_set fz_kernels_modules;
WS_FRAME_DESC(fz_frame, FZ_FIELDS)
WS_CONTINUATION_NAMES(fz_names, FZ_CONTINUATIONS)

static const ws_coroutine_desc rig_coroutine = {"fz_main",       &fz_kernels_modules,
                                                &fz_frame_ws_desc, sizeof(fz_args),
                                                FZ_MAX_K,        fz_names};

typedef struct rig rig;

typedef struct rig_work {
  rig *r;
  uint32_t index, C, S;
  uint8_t anext[FZ_MAX_STAGES][2];
} rig_work;

struct rig {
  ws_device *dev;
  ws_kernel stage_k;
  uint32_t N, works;
  ws_buffer *visits, *result, *done, *errors, *released[FZ_MAX_WORKS], *aux_visits[FZ_MAX_WORKS];
  ws_pool *pool[FZ_MAX_WORKS];
  rig_work w[FZ_MAX_WORKS];
  fz_args args;
  bool append; /* the pools allocate by append (issue 18); set before rig_create */
};

static const char *const rig_stage_names[FZ_MAX_WORKS][FZ_MAX_STAGES] = {
    {"prepare", "iterate", "finish"}, {"trace", "shade", "unused"}};
static const char *const rig_work_names[FZ_MAX_WORKS] = {"side", "shadow"};
/* work 0: c1 publishes <= 1 into finish, c2 <= 1 into prepare;
 * work 1: c2 publishes <= 2 into shade, c3 <= 1 into trace */
static const ws_aux_producer rig_producers0[] = {{"c1", 1}, {"c2", 1}};
static const ws_aux_producer rig_producers1[] = {{"c2", 2}, {"c3", 1}};

static ws_status rig_run_stage(void *user, ws_pool *pool, uint32_t stage) {
  rig_work *w = user;
  fz_stage_args sa;
  memset(&sa, 0, sizeof sa);
  sa.pool = ws_pool_get_view(pool);
  sa.aux_visits = w->r->args.aux_visits[w->index];
  sa.released = w->r->args.released[w->index];
  sa.errors = w->r->args.errors;
  sa.seed = w->r->args.seed;
  sa.work = w->index;
  sa.stage = stage;
  sa.stage_count = w->S;
  memcpy(sa.anext, w->anext, sizeof sa.anext);
  return ws_kernel_launch(&w->r->stage_k, w->C, &sa, sizeof sa);
}

/* The main graph and the stage tables (no allocation). */
static void rig_init(rig *r, ws_device *dev, uint32_t N, uint32_t works, uint32_t R,
                     bool partial) {
  memset(r, 0, sizeof *r);
  r->dev = dev;
  r->N = N;
  r->works = works;
  fz_args *a = &r->args;
  a->seed = 0xC0FFEEu;
  a->K = 3;
  a->maxlen = 4;
  a->entry_next[0] = 1;
  a->entry_next[1] = 2;
  const uint8_t next[3][2] = {{2, 1}, {3, 3}, {1, 0}};
  memcpy(a->next, next, sizeof next);
  a->work_count = (uint8_t)works;
  /* work 0: prepare -> {iterate, finish}, iterate -> {iterate (self-loop), finish},
   * finish -> release */
  a->bound[0][0] = 1;
  a->pub_stage[0][0] = 2;
  a->bound[0][1] = 1;
  a->pub_stage[0][1] = 0;
  a->amax[0] = 4;
  r->w[0].S = 3;
  r->w[0].C = partial ? 3 : R;
  const uint8_t an0[3][2] = {{1, 2}, {1, 2}, {3, 3}};
  memcpy(r->w[0].anext, an0, sizeof an0);
  /* work 1: trace -> {shade, release}, shade -> {trace, release} */
  a->bound[1][1] = 2;
  a->pub_stage[1][1] = 1;
  a->bound[1][2] = 1;
  a->pub_stage[1][2] = 0;
  a->amax[1] = 3;
  r->w[1].S = 2;
  r->w[1].C = partial ? 2 : 2 * R;
  const uint8_t an1[3][2] = {{1, 2}, {0, 2}, {2, 2}};
  memcpy(r->w[1].anext, an1, sizeof an1);
  for (uint32_t w = 0; w < FZ_MAX_WORKS; ++w) {
    r->w[w].r = r;
    r->w[w].index = w;
  }
}

/* Creates buffers and pools; stops at the first failure (returned). */
static ws_status rig_create(rig *r) {
  ws_status st;
  const size_t n = r->N ? r->N : 1;
  if ((st = ws_kernel_find(r->dev, &fz_kernels_modules, "fz_stage", &r->stage_k)) != WS_OK ||
      (st = ws_buffer_create(r->dev, n * FZ_MAX_K * 4, &r->visits)) != WS_OK ||
      (st = ws_buffer_create(r->dev, n * 4, &r->result)) != WS_OK ||
      (st = ws_buffer_create(r->dev, n * 4, &r->done)) != WS_OK ||
      (st = ws_buffer_create(r->dev, FZ_ERR_COUNT * 4, &r->errors)) != WS_OK)
    return st;
  fz_args *a = &r->args;
  a->visits = ws_buffer_address(r->visits);
  a->result = ws_buffer_address(r->result);
  a->done = ws_buffer_address(r->done);
  a->errors = ws_buffer_address(r->errors);
  for (uint32_t w = 0; w < r->works; ++w) {
    if ((st = ws_buffer_create(r->dev, n * 4, &r->released[w])) != WS_OK ||
        (st = ws_buffer_create(r->dev, n * FZ_MAX_STAGES * 4, &r->aux_visits[w])) != WS_OK)
      return st;
    a->released[w] = ws_buffer_address(r->released[w]);
    a->aux_visits[w] = ws_buffer_address(r->aux_visits[w]);
    ws_pool_config pc;
    memset(&pc, 0, sizeof pc);
    pc.name = rig_work_names[w];
    pc.capacity = r->w[w].C;
    pc.stage_count = r->w[w].S;
    pc.stage_names = rig_stage_names[w];
    pc.payload_stride = sizeof(fz_item);
    pc.producers = w == 0 ? rig_producers0 : rig_producers1;
    pc.producer_count = 2;
    pc.run_stage = rig_run_stage;
    pc.user = &r->w[w];
    if ((st = ws_pool_create(r->dev, &pc, &r->pool[w])) != WS_OK ||
        (r->append && (st = ws_pool_set_allocation(r->pool[w], WS_POOL_APPEND)) != WS_OK))
      return st;
    a->pool[w] = ws_pool_get_view(r->pool[w]);
  }
  return WS_OK;
}

static void rig_destroy(rig *r) {
  ws_buffer *b[] = {r->visits, r->result, r->done, r->errors, r->released[0], r->released[1],
                    r->aux_visits[0], r->aux_visits[1]};
  for (size_t i = 0; i < sizeof b / sizeof b[0]; ++i)
    ws_buffer_destroy(b[i]);
  for (uint32_t w = 0; w < FZ_MAX_WORKS; ++w)
    ws_pool_destroy(r->pool[w]);
  memset(r->pool, 0, sizeof r->pool);
  r->visits = r->result = r->done = r->errors = NULL;
  memset(r->released, 0, sizeof r->released);
  memset(r->aux_visits, 0, sizeof r->aux_visits);
}

/* Zeroes the outputs (enqueued fills). */
static ws_status rig_zero(rig *r) {
  ws_status st;
  const size_t n = r->N ? r->N : 1;
  if ((st = ws_buffer_fill_u32(r->visits, 0, 0, n * FZ_MAX_K)) ||
      (st = ws_buffer_fill_u32(r->result, 0, 0, n)) ||
      (st = ws_buffer_fill_u32(r->done, 0, 0, n)) ||
      (st = ws_buffer_fill_u32(r->errors, 0, 0, FZ_ERR_COUNT)))
    return st;
  for (uint32_t w = 0; w < r->works; ++w)
    if ((st = ws_buffer_fill_u32(r->released[w], 0, 0, n)) ||
        (st = ws_buffer_fill_u32(r->aux_visits[w], 0, 0, n * FZ_MAX_STAGES)))
      return st;
  return WS_OK;
}

static ws_status rig_dispatch(rig *r, ws_scheduler *s) {
  return ws_scheduler_dispatch(s, r->N, &r->args, sizeof r->args);
}

#endif
