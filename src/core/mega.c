/* SPDX-License-Identifier: MIT */
/* wavesched — the megakernel scheduler (SPEC §2.3): one launch over N
 * items, each thread running its item from the entry to termination. No
 * pool, no queues: the baseline every benchmark compares against, driven
 * by the same coroutine description as the wavefront. */
#include <inttypes.h>
#include <string.h>

#include "sched.h"

ws_status ws_mega_dispatch(ws_scheduler *s, uint32_t N) {
  const uint32_t words = WS_COUNTS_WORDS(s->K);
  ws_launch l;
  memset(&l, 0, sizeof l);
  l.args = ws_buffer_address(s->args);
  l.counts = ws_buffer_address(s->counts);
  l.count = N;
  l.continuation_count = s->K;
  l.limit = s->d.iteration_limit;
  ws_status st;
  if ((st = ws_buffer_fill_u32(s->counts, 0, 0, words)) != WS_OK)
    return ws_sched_fail(s, st, "megakernel: count reset failed: %s",
                         ws_device_last_error(s->dev));
  if ((st = s->dev->ops->launch(s->dev, s->entry, WS_FORM_MEGA, N, &l, sizeof l, s->block)) != WS_OK)
    return ws_sched_fail(s, st, "megakernel: launch failed: %s", ws_device_last_error(s->dev));
  if ((st = ws_readback_enqueue(s->rb, 0, s->counts, 0, words * 4u)) != WS_OK ||
      (st = s->dev->ops->synchronize(s->dev)) != WS_OK)
    return ws_sched_fail(s, st, "megakernel: readback failed: %s", ws_device_last_error(s->dev));
  const uint32_t *h = ws_readback_data(s->rb);
  if (h[WS_COUNTS_BAD(s->K)] != 0)
    return ws_sched_fail(s, WS_EPROTO_INTERNAL,
                         "megakernel: %u frame(s) returned a continuation index outside 1..%u",
                         h[WS_COUNTS_BAD(s->K)], s->K);
  if (h[WS_COUNTS_LIMIT(s->K)] != 0)
    return ws_sched_fail(s, WS_EITERATION_LIMIT,
                         "megakernel: iteration limit %" PRIu64 " reached: %u of %u items ran "
                         "that many continuations without terminating and were stopped",
                         s->d.iteration_limit, h[WS_COUNTS_LIMIT(s->K)], N);
  s->d.iterations = 1;
  s->d.generated = N;
  s->node_stats[0] = 1;
  s->node_stats[1] = N;
  return WS_OK;
}
