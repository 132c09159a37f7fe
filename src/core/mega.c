/* wavesched — the megakernel scheduler (SPEC §2.3): one launch over N
 * items, each thread running its item from the entry to termination. No
 * pool, no queues: the baseline every benchmark compares against, driven
 * by the same coroutine description as the wavefront. */
#include <string.h>

#include "sched.h"

ws_status ws_mega_dispatch(ws_scheduler *s, uint32_t N) {
  ws_launch l;
  memset(&l, 0, sizeof l);
  l.args = ws_buffer_address(s->args);
  l.counts = ws_buffer_address(s->counts);
  l.count = N;
  l.continuation_count = s->K;
  ws_status st;
  if ((st = ws_buffer_fill_u32(s->counts, 0, 0, s->K + 2)) != WS_OK)
    return ws_sched_fail(s, st, "megakernel: count reset failed: %s",
                         ws_device_last_error(s->dev));
  if ((st = s->dev->ops->launch(s->dev, s->entry, true, N, &l, sizeof l, s->block)) != WS_OK)
    return ws_sched_fail(s, st, "megakernel: launch failed: %s", ws_device_last_error(s->dev));
  if ((st = ws_readback_enqueue(s->rb, 0, s->counts, 0, (s->K + 2) * 4u)) != WS_OK ||
      (st = s->dev->ops->synchronize(s->dev)) != WS_OK)
    return ws_sched_fail(s, st, "megakernel: readback failed: %s", ws_device_last_error(s->dev));
  const uint32_t *h = ws_readback_data(s->rb);
  if (h[s->K + 1] != 0)
    return ws_sched_fail(s, WS_EPROTO_INTERNAL,
                         "megakernel: %u frame(s) returned a continuation index outside 1..%u",
                         h[s->K + 1], s->K);
  s->d.iterations = 1;
  s->d.generated = N;
  s->node_stats[0] = 1;
  s->node_stats[1] = N;
  return WS_OK;
}
