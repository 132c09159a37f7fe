/* SPDX-License-Identifier: MIT */
/* Host side of the t_basic test coroutine: buffers, a run, exact checks.
 * Shared by the core test programs (header-only, static functions). */
#ifndef WS_TESTS_T_BASIC_HOST_H
#define WS_TESTS_T_BASIC_HOST_H

#include "t_basic.h"
#include "ws_test.h"

#include <stdio.h>
#include <string.h>

extern const ws_module_set t_basic_modules;

WS_FRAME_DESC(t_basic_frame, T_BASIC_FIELDS)
WS_CONTINUATION_NAMES(t_basic_names, T_BASIC_CONTINUATIONS)

static const ws_coroutine_desc t_basic_coroutine = {
    "t_basic", &t_basic_modules, &t_basic_frame_ws_desc, sizeof(t_basic_args), 3, t_basic_names};

typedef struct basic_run {
  uint32_t n; /* capacity in items */
  ws_buffer *out, *entry_runs, *step_runs, *finish_runs, *bad, *total;
  t_basic_args args;
  /* host copies after basic_read() */
  uint32_t *h_out, *h_entry, *h_step, *h_finish, *h_bad;
  uint32_t h_total;
} basic_run;

/* A run over up to n items on the buffers `b` (out, entry_runs, step_runs,
 * finish_runs, bad: n words each; total: one), with host copies (freed by
 * the test's teardown). */
static inline void basic_bind(basic_run *r, uint32_t n, ws_buffer *const b[6]) {
  memset(r, 0, sizeof *r);
  r->n = n;
  r->out = b[0];
  r->entry_runs = b[1];
  r->step_runs = b[2];
  r->finish_runs = b[3];
  r->bad = b[4];
  r->total = b[5];
  r->args.out = ws_buffer_address(r->out);
  r->args.entry_runs = ws_buffer_address(r->entry_runs);
  r->args.step_runs = ws_buffer_address(r->step_runs);
  r->args.finish_runs = ws_buffer_address(r->finish_runs);
  r->args.bad = ws_buffer_address(r->bad);
  r->args.total_runs = ws_buffer_address(r->total);
  r->h_out = wt_calloc(n, 4);
  r->h_entry = wt_calloc(n, 4);
  r->h_step = wt_calloc(n, 4);
  r->h_finish = wt_calloc(n, 4);
  r->h_bad = wt_calloc(n, 4);
}

/* Device buffers on the test's device and host copies for up to n items
 * (freed by the test's teardown). */
static inline void basic_init(basic_run *r, uint32_t n) {
  const size_t bytes = (size_t)(n ? n : 1) * 4;
  ws_buffer *const b[6] = {wt_buffer(bytes), wt_buffer(bytes), wt_buffer(bytes),
                           wt_buffer(bytes), wt_buffer(bytes), wt_buffer(4)};
  basic_bind(r, n, b);
}

static inline void basic_reset(basic_run *r) {
  wt_zero(r->out);
  wt_zero(r->entry_runs);
  wt_zero(r->step_runs);
  wt_zero(r->finish_runs);
  wt_zero(r->bad);
  wt_zero(r->total);
}

static inline void basic_read(basic_run *r) {
  const size_t bytes = (size_t)(r->n ? r->n : 1) * 4;
  wt_read(r->out, r->h_out, bytes);
  wt_read(r->entry_runs, r->h_entry, bytes);
  wt_read(r->step_runs, r->h_step, bytes);
  wt_read(r->finish_runs, r->h_finish, bytes);
  wt_read(r->bad, r->h_bad, bytes);
  wt_read(r->total, &r->h_total, 4);
}

static inline ws_status basic_dispatch(ws_scheduler *s, basic_run *r, uint32_t items) {
  return ws_scheduler_dispatch(s, items, &r->args, sizeof r->args);
}

/* Sum over items of the continuation runs (steps + finish). */
static inline uint64_t basic_expected_resumes(uint32_t items) {
  uint64_t total = 0;
  for (uint32_t i = 0; i < items; ++i)
    total += t_basic_len(i) + 1u;
  return total;
}

/* Reads the buffers back and checks, for items 0..items-1: each ran its
 * entry and finish exactly once, exactly len(id) steps, every frame field
 * survived every suspend, and the digest is exact; items >= items (up to
 * capacity) never ran. `ctx` names the case in failure messages. */
static inline void basic_check(basic_run *r, uint32_t items, const char *ctx) {
  basic_read(r);
  for (uint32_t i = 0; i < items; ++i) {
    WT_CHECK(r->h_bad[i] == 0,
             "%s: item %u: frame fields corrupted across a suspend (bad mask 0x%x: 1 tag, 2 d, "
             "4 steps, 8 f, 16 pair, 32 big, 64 remaining, 128 tail, 256 wrong continuation)",
             ctx, i, r->h_bad[i]);
    WT_CHECK(r->h_entry[i] == 1, "%s: item %u ran its entry %u times (expected once)", ctx, i,
             r->h_entry[i]);
    WT_CHECK(r->h_step[i] == t_basic_len(i), "%s: item %u ran %u steps, expected %u", ctx, i,
             r->h_step[i], t_basic_len(i));
    WT_CHECK(r->h_finish[i] == 1, "%s: item %u finished %u times (expected once)", ctx, i,
             r->h_finish[i]);
    WT_CHECK(r->h_out[i] == t_basic_result(i), "%s: item %u: result 0x%08x, expected 0x%08x", ctx,
             i, r->h_out[i], t_basic_result(i));
  }
  for (uint32_t i = items; i < r->n; ++i)
    WT_CHECK(r->h_entry[i] == 0 && r->h_finish[i] == 0 && r->h_step[i] == 0,
             "%s: item %u (beyond N = %u) ran", ctx, i, items);
  uint64_t want = basic_expected_resumes(items);
  WT_CHECK(r->h_total == want, "%s: %u continuation runs in total, expected %llu", ctx, r->h_total,
           (unsigned long long)want);
}

#endif
