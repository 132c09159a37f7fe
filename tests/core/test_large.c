/* SPDX-License-Identifier: MIT */
/* Large logical counts (issue 2): N = 1,000,000 items over R = 4,096
 * resident frames complete with exact per-item results, on a few
 * combinations (the full matrix runs at small N in core_dispatch), and the
 * megakernel agrees. A test, not a benchmark: it prints the time. */
#include "t_basic_host.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LARGE_N 1000000u
#define LARGE_R 4096u

static basic_run large;
static uint32_t *reference; /* megakernel results */

static void run_large(const wt_combo *c, ws_scheduler_kind kind) {
  char ctx[160];
  snprintf(ctx, sizeof ctx, "%s N=%u R=%u",
           kind == WS_SCHEDULER_MEGAKERNEL ? "megakernel" : c->name, LARGE_N, LARGE_R);
  ws_scheduler_config cfg = wt_config(c, LARGE_R);
  cfg.kind = kind;
  ws_scheduler *s = wt_scheduler(&t_basic_coroutine, &cfg);
  basic_init(&large, LARGE_N);
  ws_status st = basic_dispatch(s, &large, LARGE_N);
  WT_OK(st, s, ctx);
  basic_check(&large, LARGE_N, ctx);
  ws_dispatch_stats d;
  ws_scheduler_dispatch_stats(s, &d);
  WT_CHECK(d.generated_count == LARGE_N, "%s: generated %" PRIu64, ctx, d.generated_count);
  if (kind == WS_SCHEDULER_WAVEFRONT) {
    WT_CHECK(d.resumed_count == basic_expected_resumes(LARGE_N), "%s: resumed %" PRIu64, ctx,
             d.resumed_count);
    WT_CHECK(d.max_active_count == LARGE_R, "%s: max active %" PRIu64, ctx, d.max_active_count);
  }
  print_message("    %s: %" PRIu64 " iterations, %.1f ms\n", ctx, d.iteration_count, d.elapsed_ms);
  if (!reference) {
    reference = malloc((size_t)LARGE_N * 4);
    WT_CHECK(reference != NULL, "out of memory");
    memcpy(reference, large.h_out, (size_t)LARGE_N * 4);
  } else {
    WT_CHECK(memcmp(reference, large.h_out, (size_t)LARGE_N * 4) == 0,
             "%s: results differ from the first run", ctx);
  }
}

static void test_megakernel(void **state) {
  (void)state;
  run_large(wt_combo_at(0), WS_SCHEDULER_MEGAKERNEL);
}
static void test_wavefront(void **state) {
  run_large(wt_state_combo(state), WS_SCHEDULER_WAVEFRONT);
}

int main(int argc, char **argv) {
  const wt_need needs[] = {{&t_basic_modules, "t_basic"}};
  wt_init(argc, argv, needs, 1);
  wt_add("megakernel", test_megakernel, NULL);
  /* three combinations that between them cover every layout, accounting,
   * compaction and policy value */
  static const char *const picks[] = {"aos/incremental/compact/greedy",
                                      "soa/fused/nocompact/greedy", "soa/materialized/compact/allq",
                                      "aos/materialized/nocompact/greedy"};
  for (size_t p = 0; p < sizeof picks / sizeof picks[0]; ++p)
    for (uint32_t i = 0; i < wt_combo_count(); ++i)
      if (strcmp(wt_combo_at(i)->name, picks[p]) == 0) {
        char name[128];
        snprintf(name, sizeof name, "large[%s]", picks[p]);
        wt_add(name, test_wavefront, (void *)wt_combo_at(i));
      }
  int rc = wt_run("core_large");
  free(reference);
  return rc;
}
