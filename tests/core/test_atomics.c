/* SPDX-License-Identifier: MIT */
/* The warp-aggregated atomics (kernel.h, kernel.glsl: ws_atomic_add_u32_agg)
 * with one word, a few words and many words per warp, values all 1 and
 * values 1..3 (tests/kernels/t_agg.kern.h): every index gets the old value
 * plain atomics in some order would have given it, so per word the ranges
 * [old, old + value) of its indices tile [0, its final count) exactly. On
 * lavapipe the GLSL form that combined several words per subgroup (a loop
 * over the words, by subgroup arithmetic or by ballots) returned overlapping
 * old values from 7 words on (docs/decisions.md); this test shows it. */
#include "t_agg.h"
#include "ws_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const ws_module_set t_agg_modules;

typedef struct {
  uint32_t old, len;
} range;

static int by_old(const void *x, const void *y) {
  const range *a = x, *b = y;
  return a->old < b->old ? -1 : a->old > b->old;
}

static void agg_case(uint32_t n, uint32_t keys, uint32_t uniform) {
  char ctx[96];
  snprintf(ctx, sizeof ctx, "%u indices, %u words, values %s", n, keys,
           uniform ? "1" : "1..3");
  ws_buffer *counters = wt_buffer((size_t)keys * 4), *old = wt_buffer((size_t)n * 4);
  WT_CHECK(ws_buffer_fill_u32(counters, 0, 0, keys) == WS_OK, "%s: fill: %s", ctx,
           ws_device_last_error(wt_dev));
  ws_kernel k;
  WT_CHECK(ws_kernel_find(wt_dev, &t_agg_modules, "t_agg", &k) == WS_OK, "t_agg: %s",
           ws_device_last_error(wt_dev));
  const t_agg_args a = {ws_buffer_address(counters), ws_buffer_address(old), keys, uniform};
  WT_CHECK(ws_kernel_launch(&k, n, &a, sizeof a) == WS_OK, "%s: launch: %s", ctx,
           ws_device_last_error(wt_dev));
  uint32_t *got = malloc((size_t)n * 4), *count = malloc((size_t)keys * 4);
  uint32_t *fill = calloc(keys, 4), *start = calloc((size_t)keys + 1u, 4);
  range *r = malloc((size_t)n * sizeof *r);
  uint32_t *at = calloc(keys, 4);
  WT_CHECK(got && count && fill && start && r && at, "test: out of memory");
  wt_read(old, got, (size_t)n * 4);
  wt_read(counters, count, (size_t)keys * 4);
  /* the indices of each word together, then each word's ranges in order */
  for (uint32_t i = 0; i < n; ++i)
    start[t_agg_key(i, keys) + 1u] += 1u;
  for (uint32_t w = 0; w < keys; ++w)
    start[w + 1u] += start[w];
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t w = t_agg_key(i, keys);
    r[start[w] + at[w]++] = (range){got[i], t_agg_value(i, uniform)};
    fill[w] += t_agg_value(i, uniform);
  }
  uint32_t bad_words = 0, first_bad = 0;
  for (uint32_t w = 0; w < keys; ++w) {
    qsort(r + start[w], start[w + 1u] - start[w], sizeof *r, by_old);
    uint32_t next = 0;
    bool ok = count[w] == fill[w];
    for (uint32_t j = start[w]; ok && j < start[w + 1u]; ++j) {
      ok = r[j].old == next;
      next += r[j].len;
    }
    if (!ok && bad_words++ == 0)
      first_bad = w;
  }
  WT_CHECK(bad_words == 0,
           "%s: %u of %u words were not tiled by their indices' old values (e.g. word %u: "
           "count %u, values summing to %u)",
           ctx, bad_words, keys, first_bad, count[first_bad], fill[first_bad]);
  free(got), free(count), free(fill), free(start), free(r), free(at);
}

static void test_aggregated(void **state) {
  (void)state;
  static const uint32_t keys[] = {1, 7, 100, 5000};
  for (size_t k = 0; k < sizeof keys / sizeof keys[0]; ++k)
    for (uint32_t uniform = 2; uniform-- > 0;)
      agg_case(50000, keys[k], uniform);
}

int main(int argc, char **argv) {
  static const wt_need needs[] = {{&t_agg_modules, "t_agg"}};
  wt_init(argc, argv, needs, 1);
  wt_add("aggregated", test_aggregated, NULL);
  return wt_run("core_atomics");
}
