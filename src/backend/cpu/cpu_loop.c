/* SPDX-License-Identifier: MIT */
/* wavesched — the CPU backend's device loop: the reference of every other
 * backend's device loop (backend.h ws_loop_desc). The "device" is the host
 * here, so one run executes the iterations in the order the GPU loops record
 * them — the observation kernels, the decisions of decide.h on the state in
 * (device = host) memory, the plan through the backend's own operations and
 * the coroutine's device-loop launcher — until the state leaves RUNNING or
 * its interval ends. The differential tests compare it with the host loop
 * (same decisions, other driver) and with the CUDA and Vulkan loops (same
 * driver, other device). */
#include <string.h>

#include "../../core/alloc.h"
#include "wavesched/detail/decide.h"
#include "../../core/device.h"
#include "cpu_internal.h"

typedef struct cpu_loop {
  ws_loop_desc d;
  ws_loop_stage *stages;    /* [d.stage_count], owned */
  ws_loop_storage *storage; /* [d.storage_count], owned */
} cpu_loop;

ws_status ws_cpu_loop_create(ws_device *dev, const ws_loop_desc *desc, void **out) {
  cpu_loop *l = ws_calloc(1, sizeof *l);
  if (!l)
    return ws_dev_fail(dev, WS_ENOMEM, "cpu: device loop: out of host memory");
  l->d = *desc;
  if (desc->stage_count) {
    l->stages = ws_calloc(desc->stage_count, sizeof *l->stages);
    if (!l->stages) {
      ws_free(l);
      return ws_dev_fail(dev, WS_ENOMEM, "cpu: device loop: out of host memory");
    }
    memcpy(l->stages, desc->stages, desc->stage_count * sizeof *l->stages);
  }
  if (desc->storage_count) {
    l->storage = ws_calloc(desc->storage_count, sizeof *l->storage);
    if (!l->storage) {
      ws_free(l->stages);
      ws_free(l);
      return ws_dev_fail(dev, WS_ENOMEM, "cpu: device loop: out of host memory");
    }
    memcpy(l->storage, desc->storage, desc->storage_count * sizeof *l->storage);
  }
  l->d.stages = l->stages;
  l->d.storage = l->storage;
  *out = l;
  return WS_OK;
}

void ws_cpu_loop_destroy(ws_device *dev, void *loop) {
  (void)dev;
  cpu_loop *l = loop;
  if (!l)
    return;
  ws_free(l->stages);
  ws_free(l->storage);
  ws_free(l);
}

static ws_status launch(ws_device *dev, const cpu_loop *l, uint32_t src) {
  const int rc = l->d.entry->launch_dev(src, 1, &l->d.launch, l->d.block, ws_cpu_pool_of(dev));
  if (rc != 0)
    return ws_dev_fail(dev, WS_EBACKEND, "cpu: device loop: '%s' continuation %u failed with %d",
                       l->d.entry->name, src, rc);
  return WS_OK;
}

/* The plan of one iteration (backend.h: the order every device loop keeps). */
static ws_status run_plan(ws_device *dev, const cpu_loop *l, const ws_dstate *st,
                          const ws_dec_plan *p) {
  const ws_backend_ops *ops = dev->ops;
  ws_queue_args q = l->d.queue;
  ws_status r;
  switch (p->action) {
  case WS_ACT_STAGE: {
    const ws_dec_work *w = ws_dec_work_at(st, p->work);
    const ws_loop_stage *k = &l->stages[w->first_stat + p->stage];
    const int rc = k->entry->launch(k->count, k->args, l->d.block, ws_cpu_pool_of(dev));
    if (rc != 0)
      return ws_dev_fail(dev, WS_EBACKEND, "cpu: device loop: stage kernel '%s' failed with %d",
                         k->entry->name, rc);
    return WS_OK;
  }
  case WS_ACT_TAIL: {
    const int rc = l->d.entry->launch_tail(l->d.R, &l->d.launch, l->d.block, ws_cpu_pool_of(dev));
    if (rc != 0)
      return ws_dev_fail(dev, WS_EBACKEND, "cpu: device loop: '%s' tail failed with %d",
                         l->d.entry->name, rc);
    return WS_OK;
  }
  case WS_ACT_RESUME_ALL:
    for (uint32_t j = 1; j <= l->d.K; ++j)
      if ((r = launch(dev, l, j)) != WS_OK)
        return r;
    return WS_OK;
  case WS_ACT_REFILL:
  case WS_ACT_RESUME:
    if (p->compact) {
      q.n = p->compact_live;
      q.scan = p->compact_scan;
      if ((r = ops->queue_compact(dev, &q)) != WS_OK)
        return r;
    }
    if (p->gather) {
      q.token = p->gather_token;
      q.scan = p->gather_scan;
      if ((r = ops->queue_gather(dev, &q)) != WS_OK)
        return r;
    }
    if ((r = launch(dev, l, p->queue)) != WS_OK)
      return r;
    if (l->d.flags & WS_DEC_PUBLISH) {
      ws_queue_args pq = l->d.queue;
      pq.slots = p->use_slots == 1 ? l->d.queue.slots + 4u * p->slot_offset : 0u;
      pq.slot_base = p->slot_base;
      pq.n = p->count;
      pq.src = p->queue;
      return ops->queue_publish(dev, &pq);
    }
    return WS_OK;
  default:
    return WS_OK;
  }
}

ws_status ws_cpu_loop_run(ws_device *dev, void *loop, uint32_t round) {
  (void)round; /* it runs to the interval or the end */
  const cpu_loop *l = loop;
  ws_dstate *st = WS_DEC_PTR(ws_dstate, l->d.state);
  const ws_backend_ops *ops = dev->ops;
  for (;;) {
    ws_queue_args q = l->d.queue;
    q.scan = st->high;
    ws_status r;
    if (l->d.flags & WS_DEC_MATERIALIZED) {
      if ((r = ops->queue_count(dev, &q)) != WS_OK || (r = ops->queue_gather_all(dev, &q)) != WS_OK)
        return r;
    }
    if (l->d.flags & WS_DEC_VERIFY) {
      ws_queue_args rq = q;
      rq.counts = l->d.recount;
      if ((r = ops->queue_count(dev, &rq)) != WS_OK)
        return r;
    }
    ws_dec_observe_works(st);
    ws_dec_decide(st);
    /* append storages the decision compacted (issue 18), before the plan */
    for (uint32_t i = 0; i < l->d.storage_count; ++i) {
      ws_queue_args sq = l->storage[i].q;
      sq.n = *WS_DEC_PTR(const uint32_t, l->storage[i].live);
      sq.scan = *WS_DEC_PTR(const uint32_t, l->storage[i].scan);
      if (sq.scan > sq.n && (r = ops->queue_compact(dev, &sq)) != WS_OK)
        return r;
    }
    const ws_dec_plan plan = st->plan;
    const uint32_t more = ws_dec_loop_next(st);
    if ((r = run_plan(dev, l, st, &plan)) != WS_OK)
      return r;
    if (!more)
      return WS_OK;
  }
}
