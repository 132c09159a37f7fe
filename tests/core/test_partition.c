/* SPDX-License-Identifier: MIT */
/* Scale-out helpers (wavesched.h, docs/mpi.md; issue 17), pure host code:
 *   cover        for n in 0..70 and R in 1..9, both kinds: every index of
 *                [0, n) lands in exactly one share, each share increases by
 *                its stride, counts differ by at most one and
 *                ws_partition_index walks the share;
 *   blocks       exact shares of 10 over 4 (3, 3, 2, 2 from 0, 3, 6, 8);
 *   interleaved  exact shares of 10 over 4 (rows 1, 5, 9 for rank 1);
 *   large        n near 2^64: no overflow in first / count;
 *   bad_args     NULL out, 0 ranks, rank >= ranks, unknown kind: WS_EINVAL,
 *                *out untouched;
 *   combine      three ranks' statistics: counts summed, peaks and times the
 *                largest, min / max per field, fastest / slowest rank;
 *   combine_edge one rank is itself; an unknown device time anywhere makes
 *                every device_ms -1; different loops make loop WS_LOOP_AUTO;
 *                NULL / 0 ranks: WS_EINVAL. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "wavesched/wavesched.h"

static void test_cover(void **state) {
  (void)state;
  for (int kind = 0; kind < 2; ++kind)
    for (uint32_t ranks = 1; ranks <= 9; ++ranks)
      for (uint64_t n = 0; n <= 70; ++n) {
        unsigned char seen[70] = {0};
        uint64_t lo = UINT64_MAX, hi = 0, total = 0;
        for (uint32_t r = 0; r < ranks; ++r) {
          ws_partition p;
          assert_int_equal(ws_partition_range(n, ranks, r, (ws_partition_kind)kind, &p), WS_OK);
          assert_int_equal(p.stride, kind == WS_PARTITION_BLOCKS ? 1u : ranks);
          lo = p.count < lo ? p.count : lo;
          hi = p.count > hi ? p.count : hi;
          total += p.count;
          for (uint64_t k = 0; k < p.count; ++k) {
            const uint64_t i = ws_partition_index(&p, k);
            assert_true(i < n);
            assert_int_equal(seen[i], 0);
            seen[i] = 1;
            if (k)
              assert_int_equal(i, ws_partition_index(&p, k - 1) + p.stride);
          }
        }
        assert_int_equal(total, n);
        assert_true(hi - lo <= 1);
      }
}

static void expect_share(uint64_t n, uint32_t ranks, uint32_t r, ws_partition_kind kind,
                         uint64_t first, uint64_t count, uint64_t stride) {
  ws_partition p;
  assert_int_equal(ws_partition_range(n, ranks, r, kind, &p), WS_OK);
  assert_int_equal(p.first, first);
  assert_int_equal(p.count, count);
  assert_int_equal(p.stride, stride);
}

static void test_blocks(void **state) {
  (void)state;
  expect_share(10, 4, 0, WS_PARTITION_BLOCKS, 0, 3, 1);
  expect_share(10, 4, 1, WS_PARTITION_BLOCKS, 3, 3, 1);
  expect_share(10, 4, 2, WS_PARTITION_BLOCKS, 6, 2, 1);
  expect_share(10, 4, 3, WS_PARTITION_BLOCKS, 8, 2, 1);
  expect_share(2, 3, 2, WS_PARTITION_BLOCKS, 2, 0, 1);
}

static void test_interleaved(void **state) {
  (void)state;
  expect_share(10, 4, 0, WS_PARTITION_INTERLEAVED, 0, 3, 4);
  expect_share(10, 4, 1, WS_PARTITION_INTERLEAVED, 1, 3, 4);
  expect_share(10, 4, 2, WS_PARTITION_INTERLEAVED, 2, 2, 4);
  expect_share(10, 4, 3, WS_PARTITION_INTERLEAVED, 3, 2, 4);
  expect_share(2, 3, 2, WS_PARTITION_INTERLEAVED, 2, 0, 3);
  ws_partition p;
  assert_int_equal(ws_partition_range(10, 4, 1, WS_PARTITION_INTERLEAVED, &p), WS_OK);
  assert_int_equal(ws_partition_index(&p, 2), 9);
}

static void test_large(void **state) {
  (void)state;
  const uint64_t n = UINT64_MAX - 2;
  const uint32_t ranks = 0xffffffffu;
  ws_partition a, b;
  assert_int_equal(ws_partition_range(n, ranks, ranks - 1, WS_PARTITION_BLOCKS, &a), WS_OK);
  assert_int_equal(a.first + a.count, n); /* the last block ends at n */
  assert_int_equal(ws_partition_range(n, ranks, ranks - 1, WS_PARTITION_INTERLEAVED, &b), WS_OK);
  assert_true(ws_partition_index(&b, b.count - 1) < n);
  assert_true(ws_partition_index(&b, b.count - 1) + ranks >= n);
  assert_int_equal(ws_partition_range(n, ranks, 0, WS_PARTITION_INTERLEAVED, &b), WS_OK);
  assert_int_equal(b.count, (n - 1) / ranks + 1);
  assert_int_equal(ws_partition_range(n, 2, 1, WS_PARTITION_BLOCKS, &a), WS_OK);
  assert_int_equal(a.first, n / 2 + 1);
  assert_int_equal(a.first + a.count, n);
}

static void test_bad_args(void **state) {
  (void)state;
  ws_partition p = {7, 7, 7};
  assert_int_equal(ws_partition_range(10, 2, 0, WS_PARTITION_BLOCKS, NULL), WS_EINVAL);
  assert_int_equal(ws_partition_range(10, 0, 0, WS_PARTITION_BLOCKS, &p), WS_EINVAL);
  assert_int_equal(ws_partition_range(10, 2, 2, WS_PARTITION_INTERLEAVED, &p), WS_EINVAL);
  assert_int_equal(ws_partition_range(10, 2, 0, (ws_partition_kind)2, &p), WS_EINVAL);
  assert_int_equal(p.first, 7);
  assert_int_equal(p.count, 7);
  assert_int_equal(p.stride, 7);
}

static ws_dispatch_stats stats(uint64_t base, double ms, double device_ms, ws_loop_kind loop) {
  ws_dispatch_stats d;
  memset(&d, 0, sizeof d);
  d.iteration_count = base;
  d.generated_count = base + 1;
  d.resumed_count = base + 2;
  d.scanned_slot_count = base + 3;
  d.max_active_count = base + 4;
  d.aux_dispatch_count = base + 5;
  d.forced_drain_count = base + 6;
  d.blocked_count = base + 7;
  d.host_sync_count = base + 8;
  d.tail_item_count = base + 9;
  d.elapsed_ms = ms;
  d.device_ms = device_ms;
  d.loop = loop;
  return d;
}

static void test_combine(void **state) {
  (void)state;
  const ws_dispatch_stats r[3] = {stats(100, 5.0, 4.0, WS_LOOP_DEVICE),
                                  stats(10, 9.0, 8.5, WS_LOOP_DEVICE),
                                  stats(1000, 2.0, 1.5, WS_LOOP_DEVICE)};
  ws_dispatch_stats_ranks c;
  memset(&c, 0xff, sizeof c);
  assert_int_equal(ws_dispatch_stats_combine(r, 3, &c), WS_OK);
  assert_int_equal(c.ranks, 3);
  assert_int_equal(c.total.iteration_count, 1110);
  assert_int_equal(c.total.generated_count, 1113);
  assert_int_equal(c.total.resumed_count, 1116);
  assert_int_equal(c.total.scanned_slot_count, 1119);
  assert_int_equal(c.total.aux_dispatch_count, 1125);
  assert_int_equal(c.total.forced_drain_count, 1128);
  assert_int_equal(c.total.blocked_count, 1131);
  assert_int_equal(c.total.host_sync_count, 1134);
  assert_int_equal(c.total.tail_item_count, 1137);
  assert_int_equal(c.total.max_active_count, 1004); /* a peak: the largest */
  assert_true(c.total.elapsed_ms == 9.0);          /* the slowest rank */
  assert_true(c.total.device_ms == 8.5);
  assert_int_equal(c.total.loop, WS_LOOP_DEVICE);
  assert_int_equal(c.min.iteration_count, 10);
  assert_int_equal(c.max.iteration_count, 1000);
  assert_int_equal(c.min.max_active_count, 14);
  assert_int_equal(c.max.tail_item_count, 1009);
  assert_true(c.min.elapsed_ms == 2.0 && c.max.elapsed_ms == 9.0);
  assert_true(c.min.device_ms == 1.5 && c.max.device_ms == 8.5);
  assert_int_equal(c.fastest_rank, 2);
  assert_int_equal(c.slowest_rank, 1);
}

static void test_combine_edge(void **state) {
  (void)state;
  const ws_dispatch_stats one = stats(42, 3.0, 2.0, WS_LOOP_HOST);
  ws_dispatch_stats_ranks c;
  assert_int_equal(ws_dispatch_stats_combine(&one, 1, &c), WS_OK);
  assert_memory_equal(&c.total, &one, sizeof one);
  assert_memory_equal(&c.min, &one, sizeof one);
  assert_memory_equal(&c.max, &one, sizeof one);
  assert_int_equal(c.fastest_rank, 0);
  assert_int_equal(c.slowest_rank, 0);

  const ws_dispatch_stats mixed[2] = {stats(1, 1.0, 0.5, WS_LOOP_HOST),
                                      stats(2, 2.0, -1.0, WS_LOOP_DEVICE)};
  assert_int_equal(ws_dispatch_stats_combine(mixed, 2, &c), WS_OK);
  assert_true(c.total.device_ms == -1.0 && c.min.device_ms == -1.0 && c.max.device_ms == -1.0);
  assert_int_equal(c.total.loop, WS_LOOP_AUTO);
  assert_int_equal(c.min.loop, WS_LOOP_AUTO);
  /* an unknown time on rank 0 only */
  const ws_dispatch_stats first[2] = {stats(1, 1.0, -1.0, WS_LOOP_HOST),
                                      stats(2, 2.0, 7.0, WS_LOOP_HOST)};
  assert_int_equal(ws_dispatch_stats_combine(first, 2, &c), WS_OK);
  assert_true(c.total.device_ms == -1.0 && c.max.device_ms == -1.0);
  assert_int_equal(c.total.loop, WS_LOOP_HOST);

  assert_int_equal(ws_dispatch_stats_combine(NULL, 1, &c), WS_EINVAL);
  assert_int_equal(ws_dispatch_stats_combine(&one, 0, &c), WS_EINVAL);
  assert_int_equal(ws_dispatch_stats_combine(&one, 1, NULL), WS_EINVAL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_cover),     cmocka_unit_test(test_blocks),
      cmocka_unit_test(test_interleaved), cmocka_unit_test(test_large),
      cmocka_unit_test(test_bad_args),  cmocka_unit_test(test_combine),
      cmocka_unit_test(test_combine_edge),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
