/* SPDX-License-Identifier: MIT */
/* wavesched — scale-out helpers (wavesched.h, docs/mpi.md): a logical range
 * split over ranks, and per-rank statistics put together. Pure arithmetic on
 * the caller's values: no device, no MPI, no message. */
#include "wavesched/wavesched.h"

ws_status ws_partition_range(uint64_t n, uint32_t ranks, uint32_t rank, ws_partition_kind kind,
                             ws_partition *out) {
  if (!out || ranks == 0 || rank >= ranks)
    return WS_EINVAL;
  ws_partition p;
  switch (kind) {
  case WS_PARTITION_BLOCKS: {
    /* ranks below n % R take q + 1 indices, the rest q; rank r starts after
     * the r shares before it: r * q plus one for each longer one among them */
    const uint64_t q = n / ranks, extra = n % ranks;
    p.count = q + (rank < extra ? 1u : 0u);
    p.first = (uint64_t)rank * q + (rank < extra ? rank : extra);
    p.stride = 1;
    break;
  }
  case WS_PARTITION_INTERLEAVED:
    /* the indices rank, rank + R, ... below n; written so that nothing
     * overflows for n near 2^64 */
    p.first = rank;
    p.count = rank < n ? (n - rank - 1) / ranks + 1 : 0;
    p.stride = ranks;
    break;
  default:
    return WS_EINVAL;
  }
  *out = p;
  return WS_OK;
}

uint64_t ws_partition_index(const ws_partition *p, uint64_t local) {
  return p->first + local * p->stride;
}

#define WS_MIN_(a, b) ((b) < (a) ? (b) : (a))
#define WS_MAX_(a, b) ((b) > (a) ? (b) : (a))

ws_status ws_dispatch_stats_combine(const ws_dispatch_stats *per_rank, uint32_t ranks,
                                    ws_dispatch_stats_ranks *out) {
  if (!per_rank || !out || ranks == 0)
    return WS_EINVAL;
  ws_dispatch_stats_ranks c;
  c.ranks = ranks;
  c.total = c.min = c.max = per_rank[0];
  c.fastest_rank = c.slowest_rank = 0;
  int device_known = per_rank[0].device_ms >= 0;
  for (uint32_t r = 1; r < ranks; ++r) {
    const ws_dispatch_stats *d = &per_rank[r];
#define WS_COUNT_(f)                                                                       \
  c.total.f += d->f;                                                                       \
  c.min.f = WS_MIN_(c.min.f, d->f);                                                        \
  c.max.f = WS_MAX_(c.max.f, d->f);
#define WS_PEAK_(f)                                                                        \
  c.total.f = WS_MAX_(c.total.f, d->f);                                                    \
  c.min.f = WS_MIN_(c.min.f, d->f);                                                        \
  c.max.f = WS_MAX_(c.max.f, d->f);
    WS_COUNT_(iteration_count)
    WS_COUNT_(generated_count)
    WS_COUNT_(resumed_count)
    WS_COUNT_(scanned_slot_count)
    WS_COUNT_(aux_dispatch_count)
    WS_COUNT_(forced_drain_count)
    WS_COUNT_(blocked_count)
    WS_COUNT_(host_sync_count)
    WS_COUNT_(tail_item_count)
    WS_PEAK_(max_active_count)
    WS_PEAK_(elapsed_ms)
    WS_PEAK_(device_ms)
#undef WS_COUNT_
#undef WS_PEAK_
    if (d->elapsed_ms < per_rank[c.fastest_rank].elapsed_ms)
      c.fastest_rank = r;
    if (d->elapsed_ms > per_rank[c.slowest_rank].elapsed_ms)
      c.slowest_rank = r;
    if (d->device_ms < 0)
      device_known = 0;
    if (d->loop != c.total.loop)
      c.total.loop = WS_LOOP_AUTO;
  }
  if (!device_known)
    c.total.device_ms = c.min.device_ms = c.max.device_ms = -1.0;
  c.min.loop = c.max.loop = c.total.loop;
  *out = c;
  return WS_OK;
}
