/* SPDX-License-Identifier: MIT */
/* wavesched — the device loop, host side (SPEC §2.2a, docs/loop.md).
 *
 * The decisions of decide.h run where the data is: the loop state, the
 * works' records and the statistics live in one device buffer, and the
 * backend's loop (ops->loop_create / loop_run) runs observe, decide and the
 * plan iteration after iteration without the host. The host enqueues one
 * run, reads the state back and synchronizes once per `observe_interval`
 * iterations (once per dispatch by default); a violation found on the device
 * ends the run at that iteration and comes back as the same error record the
 * host loop would have written (loop_error.c formats both).
 *
 * Layout of the buffer (every offset 8-byte aligned), mirrored in host memory
 * and read back whole at each synchronization:
 *   [ws_dstate][ws_dec_work x W][bound: uint32_t[K + 1] x W][q: uint32_t[S_w]]
 *   [node statistics: uint64_t[3 (K + 1)]][auxiliary statistics: uint64_t[3 n]]
 *   [alignment list: uint32_t[K + 1]]
 */
#include <stddef.h>
#include <string.h>

#include "alloc.h"
#include "sched.h"

struct ws_dloop {
  void *backend;           /* ops->loop_create's handle */
  ws_buffer *mem;          /* the layout above, on the device */
  ws_readback *rb;         /* ... read back at each synchronization */
  ws_readback *rb2;        /* a pipelined loop's second readback (odd rounds): made at the
                              first dispatch that pipelines, else NULL */
  unsigned char *image;    /* ... and its host image, uploaded per dispatch */
  size_t size;
  size_t off_works, off_node, off_aux, off_align;
  size_t *off_bound, *off_q; /* [W] */
  ws_loop_stage *stages;     /* [aux_stats_count]: every work's stage kernels */
  ws_loop_storage *storage;  /* [W]: the append storages, storage_count of them */
  uint32_t storage_count;
};

static size_t align8(size_t x) { return (x + 7u) & ~(size_t)7u; }

bool ws_loop_device_wanted(const ws_scheduler *s) {
  if (s->cfg.loop == WS_LOOP_HOST || !s->dev->ops->loop_create || s->dloop_refused ||
      (!s->entry->launch_dev && !s->entry->spirv))
    return false;
  for (uint32_t i = 0; i < s->aux_count; ++i)
    if (s->aux[i].host_only)
      return false;
  /* Verification of materialized accounting checks each boundary's sorted
   * lists against that boundary's tokens, which only the host loop reads
   * (a device loop's observation comes after the launches that changed
   * them); verification observes every iteration anyway, so AUTO loses
   * nothing by running the host loop. WS_LOOP_DEVICE runs without that
   * one check (docs/loop.md). */
  if (s->cfg.loop == WS_LOOP_AUTO && s->verify_on &&
      s->cfg.accounting == WS_ACCOUNTING_MATERIALIZED)
    return false;
  return true;
}

void ws_loop_device_release(ws_scheduler *s) {
  ws_dloop *l = s->dloop;
  if (!l)
    return;
  if (l->backend && s->dev->ops->loop_destroy)
    s->dev->ops->loop_destroy(s->dev, l->backend);
  ws_buffer_destroy(l->mem);
  ws_readback_destroy(l->rb);
  ws_readback_destroy(l->rb2);
  ws_free(l->image);
  ws_free(l->off_bound);
  ws_free(l->off_q);
  ws_free(l->stages);
  ws_free(l->storage);
  ws_free(l);
  s->dloop = NULL;
}

/* The device loop of this scheduler: built once, by the first dispatch that
 * runs on the device (registration is closed by then, so nothing it holds
 * can change). */
static ws_status build(ws_scheduler *s) {
  const uint32_t K = s->K, W = s->aux_count;
  ws_dloop *l = ws_calloc(1, sizeof *l);
  if (!l)
    return ws_sched_fail(s, WS_ENOMEM, "device loop: out of host memory");
  s->dloop = l;
  l->off_bound = ws_calloc(W ? W : 1, sizeof *l->off_bound);
  l->off_q = ws_calloc(W ? W : 1, sizeof *l->off_q);
  l->stages = ws_calloc(s->aux_stats_count ? s->aux_stats_count : 1, sizeof *l->stages);
  uint32_t appends = 0;
  for (uint32_t i = 0; i < W; ++i)
    appends += s->aux[i].device.extent != 0;
  l->storage = appends ? ws_calloc(appends, sizeof *l->storage) : NULL;
  if (!l->off_bound || !l->off_q || !l->stages || (appends && !l->storage))
    return ws_sched_fail(s, WS_ENOMEM, "device loop: out of host memory");
  size_t off = align8(sizeof(ws_dstate));
  l->off_works = off;
  off = align8(off + (size_t)W * sizeof(ws_dec_work));
  for (uint32_t i = 0; i < W; ++i) {
    l->off_bound[i] = off;
    off = align8(off + ((size_t)K + 1) * 4);
    l->off_q[i] = off;
    off = align8(off + (size_t)s->aux[i].stage_count * 4);
    memcpy(&l->stages[s->aux[i].first_stat], s->aux[i].stages,
           s->aux[i].stage_count * sizeof *l->stages);
  }
  l->off_node = off;
  off += 3 * ((size_t)K + 1) * 8;
  l->off_aux = off;
  off += 3 * (size_t)s->aux_stats_count * 8;
  l->off_align = off;
  off = align8(off + ((size_t)K + 1) * 4);
  l->size = off;
  l->image = ws_calloc(1, l->size);
  if (!l->image)
    return ws_sched_fail(s, WS_ENOMEM, "device loop: out of host memory");
  ws_status st;
  if ((st = ws_buffer_create(s->dev, l->size, &l->mem)) != WS_OK ||
      (st = ws_readback_create(s->dev, l->size, &l->rb)) != WS_OK)
    return ws_sched_fail(s, st, "device loop: cannot allocate its state (%zu bytes): %s", l->size,
                         ws_device_last_error(s->dev));

  ws_loop_desc desc;
  memset(&desc, 0, sizeof desc);
  const uint64_t base = ws_buffer_address(l->mem);
  desc.state = base;
  desc.state_bytes = (uint32_t)l->size;
  desc.entry = s->entry;
  ws_launch *ln = &desc.launch;
  ln->args = ws_buffer_address(s->args);
  ln->frames = ws_buffer_address(s->frames);
  ln->field_offsets = ws_buffer_address(s->field_offsets);
  ln->ids = ws_buffer_address(s->ids);
  ln->tokens = ws_buffer_address(s->tokens);
  ln->slots = ws_buffer_address(s->slots);
  ln->counts = ws_buffer_address(s->counts);
  ln->capacity = s->R;
  ln->layout = s->cfg.layout;
  ln->flags = s->cfg.accounting == WS_ACCOUNTING_FUSED ? WS_LAUNCH_FUSED : 0u;
  ln->continuation_count = K;
  ln->plan = base + offsetof(ws_dstate, plan);
  ws_queue_args *q = &desc.queue;
  q->tokens = ln->tokens;
  q->ids = ln->ids;
  q->counts = ln->counts;
  q->slots = ln->slots;
  q->offsets = ws_buffer_address(s->offsets);
  q->scratch = ws_buffer_address(s->scratch);
  q->counter = ws_buffer_address(s->counter);
  q->queue_count = K;
  q->frames = ln->frames;
  q->field_offsets = ln->field_offsets;
  q->host_field_offsets = s->soa_offsets;
  q->field_sizes = s->field_sizes;
  q->field_count = s->coro.frame->field_count;
  q->frame_size = s->coro.frame->size;
  q->layout = s->cfg.layout;
  q->capacity = s->R;
  q->flags = s->verify_on ? 0u : WS_QUEUE_COUNTER_UNUSED;
  desc.recount = ws_buffer_address(s->verify_counts);
  ws_dstate probe;
  ws_loop_init_state(s, &probe, s->R);
  desc.flags = probe.flags;
  desc.K = K;
  desc.R = s->R;
  desc.block = s->block;
  desc.stages = l->stages;
  desc.stage_count = s->aux_stats_count;
  desc.interval = probe.interval;
  /* append storages (issue 18): compacted over the decision's range */
  for (uint32_t i = 0; i < W; ++i) {
    const ws_aux_device *dv = &s->aux[i].device;
    if (!dv->extent)
      continue;
    ws_loop_storage *sg = &l->storage[l->storage_count++];
    sg->q.tokens = dv->tokens;
    sg->q.ids = dv->ids;
    sg->q.scratch = dv->scratch;
    sg->q.frames = dv->payload;
    sg->q.frame_size = dv->payload_stride;
    sg->q.layout = WS_LAYOUT_AOS;
    sg->q.capacity = s->aux[i].w.capacity;
    const uint64_t wrec = base + l->off_works + (uint64_t)i * sizeof(ws_dec_work);
    sg->live = wrec + offsetof(ws_dec_work, compact_live);
    sg->scan = wrec + offsetof(ws_dec_work, compact_scan);
  }
  desc.storage = l->storage;
  desc.storage_count = l->storage_count;
  if ((st = s->dev->ops->loop_create(s->dev, &desc, &l->backend)) != WS_OK)
    return ws_sched_fail(s, st, "device loop: the backend could not build it: %s",
                         ws_device_last_error(s->dev));
  return WS_OK;
}

/* The host image of the state for this dispatch: the configuration the host
 * loop would use, with every address a device address. */
static void fill_image(ws_scheduler *s, uint32_t N) {
  ws_dloop *l = s->dloop;
  const uint64_t base = ws_buffer_address(l->mem);
  memset(l->image, 0, l->size);
  ws_dstate *d = (ws_dstate *)(void *)l->image;
  ws_loop_init_state(s, d, N);
  d->counts = ws_buffer_address(s->counts);
  d->recount = ws_buffer_address(s->verify_counts);
  d->gather_count = ws_buffer_address(s->counter);
  d->align = base + l->off_align;
  d->works = base + l->off_works;
  d->node_stats = base + l->off_node;
  d->aux_stats = base + l->off_aux;
  memcpy(l->image + l->off_align, s->align, ((size_t)s->K + 1) * 4);
  ws_dec_work *works = (ws_dec_work *)(void *)(l->image + l->off_works);
  for (uint32_t i = 0; i < s->aux_count; ++i) {
    const ws_aux_entry *a = &s->aux[i];
    ws_dec_work *w = &works[i];
    w->bound = base + l->off_bound[i];
    w->q = base + l->off_q[i];
    w->capacity = a->w.capacity;
    w->stage_count = a->stage_count;
    w->first_stat = a->first_stat;
    w->last = WS_LAST_NONE;
    w->src_live = a->device.live;
    w->live_is_free = a->device.live_is_free;
    w->src_stages = a->device.stage_counts;
    w->src_error = a->device.error;
    w->counters = a->device.counters;
    w->src_extent = a->device.extent;
    w->storage_counters = a->device.extent ? a->device.storage_counters : 0u;
    memcpy(l->image + l->off_bound[i], a->bound, ((size_t)s->K + 1) * 4);
  }
}

/* The statistics and state of the last synchronization, into the
 * scheduler's host copies (what ws_scheduler_*_stats read). */
static void read_image(ws_scheduler *s, const unsigned char *img) {
  const ws_dloop *l = s->dloop;
  memcpy(&s->d, img, sizeof s->d);
  memcpy(s->node_stats, img + l->off_node, 3 * ((size_t)s->K + 1) * 8);
  if (s->aux_stats_count)
    memcpy(s->aux_stats, img + l->off_aux, 3 * (size_t)s->aux_stats_count * 8);
}

/* A backend call of the loop's runs failed; `d` is the last state read. */
static ws_status run_failed(ws_scheduler *s, ws_status st, const ws_dstate *d) {
  return ws_sched_fail(s, st, "iteration %llu: device loop failed: %s",
                       (unsigned long long)d->pass, ws_device_last_error(s->dev));
}

/* The end of a dispatch whose last readback is `img`: the scheduler's
 * copies of the state and statistics, then its status. */
static ws_status finish(ws_scheduler *s, const unsigned char *img, bool timed) {
  read_image(s, img);
  s->obs_msg[0] = '\0';
  if (s->d.status == WS_DEC_ERROR)
    return ws_loop_error(s, &s->d.err);
  return timed ? ws_loop_read_timer(s, s->d.pass) : WS_OK;
}

/* The pipelined loop (backend.h loop_pipelined, flush): the first run is
 * waited for as in the plain loop, so that a dispatch of one run costs one
 * synchronization and nothing more; from the second on, run r + 1 is
 * submitted before the host waits for run r and reads its state (readbacks
 * alternate between rb and rb2), so the device goes on with r + 1 while
 * the host decides whether another is needed. The run queued behind the
 * one that ended the dispatch executes no iteration (backend.h) and is
 * waited for before the statistics are read. Every wait counts as a host
 * synchronization. */
static ws_status pipelined(ws_scheduler *s, bool timed) {
  ws_dloop *l = s->dloop;
  const ws_backend_ops *ops = s->dev->ops;
  ws_readback *rb[2] = {l->rb, l->rb2};
  const ws_dstate *d = (const ws_dstate *)ws_readback_data(l->rb);
  ws_status st;
  uint32_t round = 0;
  for (;;) {
    if ((st = ops->loop_run(s->dev, l->backend, round)) != WS_OK ||
        (st = ws_readback_enqueue(rb[round & 1u], 0, l->mem, 0, l->size)) != WS_OK ||
        (st = round == 0 ? ops->synchronize(s->dev) : ops->flush(s->dev)) != WS_OK)
      return run_failed(s, st, d);
    /* the run just waited for: the first itself, then the one before each
     * flush (round 1's flush had none to wait for: run 0 was still RUNNING) */
    if (round != 1) {
      s->host_syncs += 1;
      d = (const ws_dstate *)ws_readback_data(rb[(round == 0 ? 0u : round - 1u) & 1u]);
    }
    round += 1;
    if (d->status != WS_DEC_RUNNING)
      break;
  }
  if (round > 1) { /* the run behind the last one checked */
    if ((st = ops->synchronize(s->dev)) != WS_OK)
      return run_failed(s, st, d);
    s->host_syncs += 1;
  }
  return finish(s, (const unsigned char *)d, timed);
}

ws_status ws_loop_device_dispatch(ws_scheduler *s, uint32_t N, bool timed) {
  ws_status st;
  if (!s->dloop && (st = build(s)) != WS_OK) {
    ws_loop_device_release(s);
    if (st == WS_ECONFIG_LOOP && s->cfg.loop == WS_LOOP_AUTO) {
      /* the backend's loop cannot run this configuration: the host loop
       * runs this dispatch and every later one (the statistics say which) */
      s->dloop_refused = true;
      s->error[0] = '\0';
      s->dev->error[0] = '\0';
      return WS_ECONFIG_LOOP;
    }
    return st;
  }
  ws_dloop *l = s->dloop;
  s->ran = WS_LOOP_DEVICE;
  if ((st = ws_loop_prologue(s)) != WS_OK)
    return st;
  fill_image(s, N);
  if ((st = ws_buffer_write(l->mem, 0, l->image, l->size)) != WS_OK)
    return ws_sched_fail(s, st, "device loop: state upload failed: %s",
                         ws_device_last_error(s->dev));
  if (timed && (st = s->dev->ops->timer_mark(s->dev, false)) != WS_OK)
    return ws_sched_fail(s, st, "device timer failed: %s", ws_device_last_error(s->dev));
  const unsigned char *img = ws_readback_data(l->rb);
  const ws_dstate *d = (const ws_dstate *)(const void *)img;
  uint32_t round = 0;
  if (!s->verify_on && s->dev->ops->loop_pipelined &&
      s->dev->ops->loop_pipelined(s->dev, l->backend)) {
    if (!l->rb2 && (st = ws_readback_create(s->dev, l->size, &l->rb2)) != WS_OK)
      return ws_sched_fail(s, st,
                           "device loop: cannot allocate its second readback (%zu bytes): %s",
                           l->size, ws_device_last_error(s->dev));
    return pipelined(s, timed);
  }
  do {
    if ((st = s->dev->ops->loop_run(s->dev, l->backend, round++)) != WS_OK ||
        (st = ws_readback_enqueue(l->rb, 0, l->mem, 0, l->size)) != WS_OK ||
        (st = s->dev->ops->synchronize(s->dev)) != WS_OK)
      return run_failed(s, st, d);
    s->host_syncs += 1;
    /* verification: the host loop's token checks at this boundary (the
     * decisions ran the device-side recount and gather checks) */
    uint32_t *tokens;
    if (s->verify_on && d->status == WS_DEC_RUNNING &&
        ((st = ws_loop_read_tokens(s, d->pass, 0u, &tokens)) != WS_OK ||
         (st = ws_loop_check_tokens(s, d->pass, d->high, tokens)) != WS_OK)) {
      read_image(s, img);
      return st;
    }
  } while (d->status == WS_DEC_RUNNING);
  return finish(s, img, timed);
}
