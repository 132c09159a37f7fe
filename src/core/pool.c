/* SPDX-License-Identifier: MIT */
/* wavesched — the library's multi-stage slot pool (pool.h). Host side only:
 * reset writes the free stack once per dispatch; the per-iteration path is
 * one enqueued readback of 3 + S words (free count, errors, stage counts,
 * append extent). An append pool's storage work — reclaiming an empty
 * extent, compacting the live items below it — is enqueued at admission
 * boundaries only (prepare_for_admission), in stream order, through the
 * backend's frame compaction (the items are "frames" of one AoS field, the
 * payload record; their tokens are the stage tokens, which move with them). */
#include "wavesched/pool.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "device.h"
#include "memory.h"
#include "sched.h"

/* Words of the host chunk the free stack is written from: the full stack
 * is C words, and C is the user's (up to 2^32 - 1), so it is never imaged
 * on the host at once. 64 Ki words = 256 KiB per write. */
#define WS_POOL_CHUNK_WORDS 65536u

/* Cycles' compaction rule (issue 18): compact only when the extent is at
 * least this large and at least twice the live count; below it a forced
 * drain is cheaper than moving items. */
#define WS_POOL_COMPACT_MIN_EXTENT 32u

struct ws_pool {
  ws_device *dev;
  ws_owned node;
  ws_pool_config cfg;
  ws_aux_work work;
  ws_aux_device device;             /* with stage kernels: the device loop's view */
  ws_aux_stage_kernel *stage_kernels; /* [S], argument blocks in stage_args; what runs
                                         once work.device is set */
  unsigned char (*stage_args)[WS_MAX_KERNEL_ARGS];
  ws_buffer *device_counters;       /* uint64_t[2 S + 3]: the device loop's dispatches and
                                       executed per stage, then its append storage work:
                                       reclaims, compactions, peak extent */
  ws_buffer *tokens, *stack, *state, *payload;
  ws_buffer *scratch; /* append mode: uint32_t[C], the compaction's hole/mover lists */
  ws_readback *rb;
  /* append mode: the extent at this boundary (the observed one, lowered by
   * a reclaim or compaction in prepare_for_admission) and what was done */
  ws_pool_storage storage;
  uint32_t allocation; /* WS_POOL_STACK or WS_POOL_APPEND (ws_pool_set_allocation) */
  /* the view or the work was handed out: the allocation is fixed, since
   * both carry it (a view by value, a work copied at registration) */
  bool handed_out;
  bool was_reset; /* a dispatch reset the device words: they mean something */
  bool found_kernels; /* ws_scheduler_add_pool set the stage kernels, not the caller */
  uint32_t *chunk; /* [min(C, WS_POOL_CHUNK_WORDS)]: staging for the free stack */
  ws_pool_counters *counters;
  char error[512];
};

/* Writes the full free stack, slot 0 on top (the first publications take
 * low slots): stack[i] = C - 1 - i, one bounded chunk at a time. */
static ws_status write_free_stack(ws_pool *p) {
  const uint32_t C = p->cfg.capacity;
  for (uint64_t base = 0; base < C; base += WS_POOL_CHUNK_WORDS) {
    const uint32_t n = C - base < WS_POOL_CHUNK_WORDS ? (uint32_t)(C - base) : WS_POOL_CHUNK_WORDS;
    for (uint32_t i = 0; i < n; ++i)
      p->chunk[i] = (uint32_t)(C - 1u - (base + i));
    ws_status st = ws_buffer_write(p->stack, (size_t)base * 4u, p->chunk, (size_t)n * 4u);
    if (st != WS_OK)
      return st;
  }
  return WS_OK;
}

static const uint32_t *observed(const ws_pool *p) { return ws_readback_data(p->rb); }

/* Words of the state buffer and of its readback: free count, error count,
 * S stage counts, the append extent. */
static size_t state_words(const ws_pool *p) { return 3u + (size_t)p->cfg.stage_count; }

static bool append_mode(const ws_pool *p) { return p->allocation == WS_POOL_APPEND; }

/* uint32 words of device_counters: 2 S uint64 stage counters, 3 storage ones */
static size_t device_counter_words(const ws_pool *p) {
  return 4u * (size_t)p->cfg.stage_count + 6u;
}

/* The device loop's view of the append storage (ws_aux_device.extent...):
 * it then prepares the storage before admission itself, by the rule of
 * pool_prepare_for_admission. Cleared for a free-stack pool. */
static void describe_storage(ws_pool *p) {
  ws_aux_device *dv = &p->device;
  const uint32_t S = p->cfg.stage_count;
  const bool on = append_mode(p) && p->device_counters;
  dv->extent = on ? ws_buffer_address(p->state) + 4u * (2u + (uint64_t)S) : 0u;
  dv->storage_counters = on ? ws_buffer_address(p->device_counters) + 16u * (uint64_t)S : 0u;
  dv->tokens = on ? ws_buffer_address(p->tokens) : 0u;
  dv->ids = on ? ws_buffer_address(p->stack) : 0u;
  dv->scratch = on ? ws_buffer_address(p->scratch) : 0u;
  dv->payload = on ? ws_buffer_address(p->payload) : 0u;
  dv->payload_stride = on ? (p->cfg.payload_stride ? p->cfg.payload_stride : 4u) : 0u;
}

/* The message goes on the pool and on the device, where the scheduler's
 * report of a failed client call picks it up. */
static ws_status pool_fail(ws_pool *p, ws_status st, const char *what) {
  snprintf(p->error, sizeof p->error, "pool '%s': %s", p->cfg.name, what);
  return ws_dev_fail(p->dev, st, "%s", p->error);
}

static ws_status pool_reset(void *user) {
  ws_pool *p = user;
  const uint32_t C = p->cfg.capacity, S = p->cfg.stage_count;
  ws_status st;
  /* append mode: the stack is the compaction's id array, whose values
   * mean nothing but are defined */
  if ((st = ws_buffer_fill_u32(p->tokens, 0, 0, C)) != WS_OK ||
      (st = ws_buffer_fill_u32(p->state, 0, 0, state_words(p))) != WS_OK ||
      (st = ws_buffer_fill_u32(p->state, 0, C, 1)) != WS_OK ||
      (st = append_mode(p) ? ws_buffer_fill_u32(p->stack, 0, 0, C) : write_free_stack(p)) !=
          WS_OK ||
      (p->device_counters &&
       (st = ws_buffer_fill_u32(p->device_counters, 0, 0, device_counter_words(p))) != WS_OK)) {
    char why[256];
    snprintf(why, sizeof why, "reset failed: %s", ws_device_last_error(p->dev));
    return pool_fail(p, st, why);
  }
  memset(p->counters, 0, S * sizeof *p->counters);
  memset(&p->storage, 0, sizeof p->storage);
  p->was_reset = true;
  return WS_OK;
}

static ws_status pool_enqueue_readback(void *user) {
  ws_pool *p = user;
  return ws_readback_enqueue(p->rb, 0, p->state, 0, state_words(p) * 4);
}

/* The live count of the last boundary, checked: no kernel counted an error. */
static ws_status observed_live(ws_pool *p, uint32_t *count) {
  const uint32_t *h = observed(p);
  if (h[1] != 0) {
    char msg[200];
    snprintf(msg, sizeof msg, "%u publish/release error(s): a producer exceeded its bound, "
             "published past the append extent, or an item was released twice", h[1]);
    return pool_fail(p, WS_EPROTO_CLIENT, msg);
  }
  int32_t free_count = (int32_t)h[0];
  *count = free_count < 0 ? p->cfg.capacity : p->cfg.capacity - (uint32_t)free_count;
  return WS_OK;
}

/* The scheduler's observation: every boundary starts the append storage
 * view afresh from the readback. */
static ws_status pool_host_count(void *user, uint32_t *count) {
  ws_pool *p = user;
  ws_status st = observed_live(p, count);
  if (st == WS_OK && append_mode(p)) {
    p->storage.extent = observed(p)[2 + p->cfg.stage_count];
    if (p->storage.extent > p->storage.peak_extent)
      p->storage.peak_extent = p->storage.extent;
  }
  return st;
}

/* Issue 18, before admission is evaluated (no kernel runs until the
 * scheduler enqueues the next launch): Cycles' rule. With nothing live the
 * extent goes back to 0 (every token below it is 0 already); with an extent
 * of at least 32 and at least twice the live count, the L live items move
 * into the holes of [0, L) — token, payload and all, so each keeps its stage
 * — and the extent becomes L. No count changes. */
static ws_status pool_prepare_for_admission(void *user) {
  ws_pool *p = user;
  const uint32_t C = p->cfg.capacity, S = p->cfg.stage_count;
  const int32_t free_count = (int32_t)observed(p)[0];
  const uint32_t live = free_count < 0 ? C : C - (uint32_t)free_count;
  const uint32_t extent = p->storage.extent;
  char why[384];
  ws_status st;
  if (extent > C || live > extent) {
    snprintf(why, sizeof why,
             "append extent %u is not within [live count %u, capacity %u]: a publication "
             "past the extent or a lost release",
             extent, live, C);
    return pool_fail(p, WS_EPROTO_CLIENT, why);
  }
  if (live == 0) {
    if (extent == 0)
      return WS_OK;
    if ((st = ws_buffer_fill_u32(p->state, 4 * (2 + (size_t)S), 0, 1)) != WS_OK) {
      snprintf(why, sizeof why, "extent reset failed: %s", ws_device_last_error(p->dev));
      return pool_fail(p, st, why);
    }
    p->storage.extent = 0;
    p->storage.reclaims += 1;
    return WS_OK;
  }
  if (extent < WS_POOL_COMPACT_MIN_EXTENT || extent < 2ull * live)
    return WS_OK;
  ws_queue_args q;
  memset(&q, 0, sizeof q);
  q.tokens = ws_buffer_address(p->tokens);
  q.ids = ws_buffer_address(p->stack);
  q.scratch = ws_buffer_address(p->scratch);
  q.frames = ws_buffer_address(p->payload);
  q.frame_size = p->cfg.payload_stride ? p->cfg.payload_stride : 4u;
  q.layout = WS_LAYOUT_AOS;
  q.capacity = C;
  q.n = live;
  q.scan = extent;
  if ((st = p->dev->ops->queue_compact(p->dev, &q)) != WS_OK ||
      (st = ws_buffer_fill_u32(p->state, 4 * (2 + (size_t)S), live, 1)) != WS_OK) {
    snprintf(why, sizeof why, "compaction of %u live items below extent %u failed: %s", live,
             extent, ws_device_last_error(p->dev));
    return pool_fail(p, st, why);
  }
  p->storage.extent = live;
  p->storage.compactions += 1;
  return WS_OK;
}

/* Only the slots above the extent can be written: C - extent <= C - L. */
static ws_status pool_available_slots(void *user, uint32_t *available) {
  ws_pool *p = user;
  const uint32_t C = p->cfg.capacity;
  *available = p->storage.extent < C ? C - p->storage.extent : 0u;
  return WS_OK;
}

static uint32_t pool_stage_count(void *user) { return ((ws_pool *)user)->cfg.stage_count; }

static const char *pool_stage_name(void *user, uint32_t stage) {
  ws_pool *p = user;
  return stage < p->cfg.stage_count ? p->cfg.stage_names[stage] : NULL;
}

static ws_status pool_stage_host_count(void *user, uint32_t stage, uint32_t *count) {
  ws_pool *p = user;
  *count = observed(p)[2 + stage];
  return WS_OK;
}

static ws_status pool_dispatch_stage(void *user, uint32_t stage) {
  ws_pool *p = user;
  p->counters[stage].dispatches += 1;
  p->counters[stage].executed += observed(p)[2 + stage];
  if (p->cfg.run_stage)
    return p->cfg.run_stage(p->cfg.user, p, stage);
  if (!p->work.device) /* set by a ws_pool_set_stage_kernels that succeeded */
    return pool_fail(p, WS_EINVAL,
                     "no run_stage and no stage kernels (register it with "
                     "ws_scheduler_add_pool, which finds the kernels named like its stages, "
                     "or set them: ws_pool_set_stage_kernels)");
  const ws_aux_stage_kernel *k = &p->stage_kernels[stage];
  return ws_kernel_launch(&k->kernel, k->count, k->args, k->args_size);
}

void ws_pool_destroy(ws_pool *p) {
  if (!p)
    return;
  ws_dev_disown(p->dev, &p->node);
  ws_buffer_destroy(p->tokens);
  ws_buffer_destroy(p->stack);
  ws_buffer_destroy(p->state);
  ws_buffer_destroy(p->payload);
  ws_buffer_destroy(p->scratch);
  ws_buffer_destroy(p->device_counters);
  ws_readback_destroy(p->rb);
  ws_free(p->chunk);
  ws_free(p->counters);
  ws_free(p->stage_kernels);
  ws_free(p->stage_args);
  ws_free(p);
}

/* The pool as the device loop sees it (ws_aux_device): the free count is
 * its live word, the error word is checked every iteration, and the loop
 * keeps the pool's own dispatch counters in device_counters. */
ws_status ws_pool_set_stage_kernels(ws_pool *p, const ws_aux_stage_kernel *kernels) {
  if (!p || !kernels)
    return WS_EINVAL;
  const uint32_t S = p->cfg.stage_count;
  for (uint32_t i = 0; i < S; ++i) {
    const ws_aux_stage_kernel *k = &kernels[i];
    if (!k->kernel.entry || k->kernel.dev != p->dev || k->kernel.entry->kind != WS_ENTRY_KERNEL ||
        k->args_size != k->kernel.entry->args_size || (k->args_size && !k->args))
      return ws_dev_fail(p->dev, WS_EINVAL,
                         "pool '%s': stage kernel %u is no kernel of this device, or its "
                         "argument block (%u bytes) is not the kernel's",
                         p->cfg.name, i, k->args_size);
  }
  /* A refused or failed call changes nothing the pool runs with (the
   * kernels, found_kernels, the device description): the kernel arrays
   * exist from ws_pool_create, and the counters are kept only once filled. */
  if (!p->device_counters) {
    ws_buffer *counters = NULL;
    ws_status st = ws_buffer_create(p->dev, 4 * device_counter_words(p), &counters);
    if (st == WS_OK)
      st = ws_buffer_fill_u32(counters, 0, 0, device_counter_words(p));
    if (st != WS_OK) {
      char why[320];
      snprintf(why, sizeof why, "%s", ws_device_last_error(p->dev));
      ws_buffer_destroy(counters);
      return ws_dev_fail(p->dev, st, "pool '%s': cannot allocate its stage counters: %s",
                         p->cfg.name, why);
    }
    p->device_counters = counters;
  }
  p->found_kernels = false;
  for (uint32_t i = 0; i < S; ++i) {
    p->stage_kernels[i] = kernels[i];
    if (kernels[i].args_size)
      memcpy(p->stage_args[i], kernels[i].args, kernels[i].args_size);
    p->stage_kernels[i].args = p->stage_args[i];
  }
  p->device.live = ws_buffer_address(p->state);
  p->device.live_is_free = 1;
  p->device.stage_counts = ws_buffer_address(p->state) + 8;
  p->device.error = ws_buffer_address(p->state) + 4;
  p->device.counters = ws_buffer_address(p->device_counters);
  describe_storage(p);
  p->device.stages = p->stage_kernels;
  p->work.device = &p->device;
  return WS_OK;
}

static void destroy_pool(void *p) { ws_pool_destroy(p); }

/* Every error of ws_pool_create leaves its message on the device (the
 * pool, if any, is gone). */
static ws_status create_fail(ws_device *dev, ws_status st, const ws_pool_config *c,
                             const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static ws_status create_fail(ws_device *dev, ws_status st, const ws_pool_config *c,
                             const char *fmt, ...) {
  char what[320];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  return ws_dev_fail(dev, st, "ws_pool_create: pool '%s': %s", c && c->name ? c->name : "(null)",
                     what);
}

ws_status ws_pool_create(ws_device *dev, const ws_pool_config *c, ws_pool **out) {
  if (out)
    *out = NULL;
  if (!dev)
    return WS_EINVAL;
  if (!out)
    return create_fail(dev, WS_EINVAL, c, "out is NULL");
  if (!c)
    return create_fail(dev, WS_EINVAL, c, "config is NULL");
  /* run_stage may be NULL: the stages can be set as kernels afterwards */
  if (!c->name || !c->stage_names)
    return create_fail(dev, WS_EINVAL, c, "config lacks %s",
                       !c->name ? "a name" : "stage_names");
  if (c->capacity == 0)
    return create_fail(dev, WS_EAUX_CAPACITY, c, "capacity is 0");
  if (c->stage_count == 0)
    return create_fail(dev, WS_EAUX_STAGES, c, "stage_count is 0");
  const uint32_t C = c->capacity, S = c->stage_count;
  const uint32_t stride = c->payload_stride ? c->payload_stride : 4u;
  /* Sizes in 64 bits, checked before anything is allocated or written:
   * (C + 1) x stride reaches 2^64 - 2^32 for legal values. C records and a
   * spare one past them for a publication into a full pool
   * (ws_pool_publish_record), which then corrupts nothing else. */
  const uint64_t payload = ((uint64_t)C + 1u) * stride, words = 4u * (uint64_t)C;
  const uint64_t device = ws_mem_add(payload, 2u * words + (3u + (uint64_t)S) * 4u);
  char what[160];
  snprintf(what, sizeof what,
           "capacity %u x payload_stride %u + 1 spare record = %" PRIu64 " payload bytes", C,
           stride, payload);
  ws_status st = ws_dev_check_fit(dev, device, payload > words ? payload : words, what);
  if (st != WS_OK) {
    char why[512];
    snprintf(why, sizeof why, "%s", ws_device_last_error(dev));
    return create_fail(dev, st, c, "%s", why);
  }
  ws_pool *p = ws_calloc(1, sizeof *p);
  if (!p)
    return create_fail(dev, WS_ENOMEM, c, "no host memory for the pool");
  p->dev = dev;
  p->cfg = *c;
  p->chunk = ws_calloc(C < WS_POOL_CHUNK_WORDS ? C : WS_POOL_CHUNK_WORDS, sizeof *p->chunk);
  p->counters = ws_calloc(S, sizeof *p->counters);
  /* the stage kernels' arrays (S x 128 bytes and less), made here so that
   * ws_pool_set_stage_kernels has no half-made state to leave */
  p->stage_kernels = ws_calloc(S, sizeof *p->stage_kernels);
  p->stage_args = ws_calloc(S, sizeof *p->stage_args);
  if (!p->chunk || !p->counters || !p->stage_kernels || !p->stage_args) {
    ws_pool_destroy(p);
    return create_fail(dev, WS_ENOMEM, c, "no host memory for its %u stages' state", S);
  }
  /* device memory first (the large part), then the small host readback */
  const char *failed = "tokens";
  if ((st = ws_buffer_create(dev, (size_t)words, &p->tokens)) != WS_OK ||
      (failed = "free stack", st = ws_buffer_create(dev, (size_t)words, &p->stack)) != WS_OK ||
      (failed = "state words",
       st = ws_buffer_create(dev, (3 + (size_t)S) * 4, &p->state)) != WS_OK ||
      (failed = "payload", st = ws_buffer_create(dev, (size_t)payload, &p->payload)) != WS_OK ||
      (failed = "count readback",
       st = ws_readback_create(dev, (3 + (size_t)S) * 4, &p->rb)) != WS_OK) {
    char why[512];
    snprintf(why, sizeof why, "%s", ws_device_last_error(dev));
    ws_pool_destroy(p);
    return create_fail(dev, st, c, "cannot allocate its %s: %s", failed, why);
  }
  /* Before the first boundary the pool reads as empty (free = C). */
  ((uint32_t *)p->rb->ptr)[0] = C;
  ((uint32_t *)p->rb->ptr)[2 + S] = 0;
  ws_aux_work *w = &p->work;
  w->name = c->name;
  w->capacity = C;
  w->producers = c->producers;
  w->producer_count = c->producer_count;
  w->user = p;
  w->reset = pool_reset;
  w->enqueue_count_readback = pool_enqueue_readback;
  w->host_count = pool_host_count;
  w->stage_count = pool_stage_count;
  w->stage_name = pool_stage_name;
  w->stage_host_count = pool_stage_host_count;
  w->dispatch_stage = pool_dispatch_stage;
  /* admission_stage and prepare_for_producer keep their defaults: the first
   * non-empty stage drains, and a producer's storage is ready once admission
   * admitted it (an append pool compacts before admission, never after). */
  ws_dev_own(dev, &p->node, WS_OWNED_POOL, destroy_pool, p);
  *out = p;
  return WS_OK;
}

/* Stage s is the kernel named like it, in the module set of the scheduler's
 * coroutine, over the C slots with the argument block given. Checked here
 * so that the message names the stage, the kernel and both sizes. */
static ws_status find_stage_kernels(ws_scheduler *s, ws_pool *p, const void *args,
                                    size_t args_size, ws_aux_stage_kernel *kernels) {
  for (uint32_t i = 0; i < p->cfg.stage_count; ++i) {
    const char *name = p->cfg.stage_names[i];
    ws_aux_stage_kernel *k = &kernels[i];
    ws_status st = name ? ws_kernel_find(s->dev, s->coro.modules, name, &k->kernel) : WS_EINVAL;
    if (st != WS_OK)
      return ws_sched_fail(s, st, "ws_scheduler_add_pool: pool '%s', stage %u: %s", p->cfg.name,
                           i, name ? ws_device_last_error(s->dev) : "its name is NULL");
    if (k->kernel.entry->kind != WS_ENTRY_KERNEL)
      return ws_sched_fail(s, WS_EINVAL,
                           "ws_scheduler_add_pool: pool '%s', stage %u: '%s' is a coroutine, not "
                           "a kernel (WS_KERNEL)",
                           p->cfg.name, i, name);
    if (args_size != k->kernel.entry->args_size || (args_size && !args))
      return ws_sched_fail(s, WS_EINVAL,
                           "ws_scheduler_add_pool: pool '%s', stage %u: kernel '%s' takes %u "
                           "argument bytes, the block given has %zu%s",
                           p->cfg.name, i, name, k->kernel.entry->args_size, args_size,
                           args_size && !args ? " at NULL" : "");
    k->args = args;
    k->args_size = (uint32_t)args_size;
    k->count = p->cfg.capacity;
  }
  return WS_OK;
}

ws_status ws_scheduler_add_pool(ws_scheduler *s, ws_pool *p, const void *args, size_t args_size) {
  if (!s)
    return WS_EINVAL;
  if (!p)
    return ws_sched_fail(s, WS_EINVAL, "ws_scheduler_add_pool: pool is NULL");
  if (p->dev != s->dev)
    return ws_sched_fail(s, WS_EINVAL,
                         "ws_scheduler_add_pool: pool '%s' is on another device than the "
                         "scheduler ('%s', '%s')",
                         p->cfg.name, ws_device_name(p->dev), ws_device_name(s->dev));
  /* stages the caller runs (run_stage) or described (ws_pool_set_stage_kernels) */
  if (p->cfg.run_stage || (p->work.device && !p->found_kernels)) {
    if (args || args_size)
      return ws_sched_fail(s, WS_EINVAL,
                           "ws_scheduler_add_pool: pool '%s' runs its stages %s, so the argument "
                           "block of %zu bytes has no kernel to go to",
                           p->cfg.name,
                           p->cfg.run_stage ? "through run_stage"
                                            : "with the kernels ws_pool_set_stage_kernels set",
                           args_size);
    return ws_scheduler_add_aux(s, ws_pool_work(p));
  }
  ws_aux_stage_kernel *kernels = ws_calloc(p->cfg.stage_count, sizeof *kernels);
  if (!kernels)
    return ws_sched_fail(s, WS_ENOMEM, "ws_scheduler_add_pool: out of host memory");
  ws_status st = find_stage_kernels(s, p, args, args_size, kernels);
  if (st == WS_OK && (st = ws_pool_set_stage_kernels(p, kernels)) != WS_OK)
    ws_sched_fail(s, st, "ws_scheduler_add_pool: %s", ws_device_last_error(s->dev));
  /* kernels found here are found again by the next ws_scheduler_add_pool
   * (a retry after an error, another scheduler) */
  if (st == WS_OK)
    p->found_kernels = true;
  if (st == WS_OK)
    st = ws_scheduler_add_aux(s, ws_pool_work(p));
  ws_free(kernels);
  return st;
}

ws_pool_view ws_pool_get_view(const ws_pool *p) {
  ws_pool_view v;
  memset(&v, 0, sizeof v);
  if (!p)
    return v;
  v.tokens = ws_buffer_address(p->tokens);
  v.stack = ws_buffer_address(p->stack);
  v.state = ws_buffer_address(p->state);
  v.payload = ws_buffer_address(p->payload);
  v.capacity = p->cfg.capacity;
  v.stage_count = p->cfg.stage_count;
  v.stride = p->cfg.payload_stride ? p->cfg.payload_stride : 4;
  v.mode = p->allocation;
  /* the pool is the caller's, not const: the flag fixes the allocation */
  ((ws_pool *)p)->handed_out = true;
  return v;
}

const ws_aux_work *ws_pool_work(const ws_pool *p) {
  if (!p)
    return NULL;
  ((ws_pool *)p)->handed_out = true;
  return &p->work;
}

ws_status ws_pool_set_allocation(ws_pool *p, uint32_t allocation) {
  if (!p)
    return WS_EINVAL;
  if (allocation != WS_POOL_STACK && allocation != WS_POOL_APPEND)
    return pool_fail(p, WS_EINVAL,
                     "ws_pool_set_allocation: allocation is neither WS_POOL_STACK (0) nor "
                     "WS_POOL_APPEND (1)");
  if (p->handed_out && allocation != p->allocation)
    return pool_fail(p, WS_EINVAL,
                     "ws_pool_set_allocation: the view or the work was already handed out, "
                     "and both carry the allocation; set it right after ws_pool_create");
  if (allocation == WS_POOL_APPEND && !p->scratch) {
    const uint64_t words = 4u * (uint64_t)p->cfg.capacity;
    char what[160];
    snprintf(what, sizeof what, "append pool '%s': compaction scratch of %" PRIu64 " bytes",
             p->cfg.name, words);
    ws_status st = ws_dev_check_fit(p->dev, words, words, what);
    if (st == WS_OK)
      st = ws_buffer_create(p->dev, (size_t)words, &p->scratch);
    if (st != WS_OK) {
      char why[320];
      snprintf(why, sizeof why, "ws_pool_set_allocation: cannot allocate the compaction "
               "scratch: %s", ws_device_last_error(p->dev));
      return pool_fail(p, st, why);
    }
  }
  p->allocation = allocation;
  const bool append = allocation == WS_POOL_APPEND;
  p->work.prepare_for_admission = append ? pool_prepare_for_admission : NULL;
  p->work.available_slots = append ? pool_available_slots : NULL;
  describe_storage(p);
  return WS_OK;
}

uint32_t ws_pool_live(const ws_pool *p) {
  if (!p)
    return 0;
  uint32_t n = 0;
  return observed_live((ws_pool *)p, &n) == WS_OK ? n : p->cfg.capacity;
}

uint32_t ws_pool_errors(const ws_pool *p) { return p ? observed(p)[1] : 0; }

ws_status ws_pool_stage_counters(const ws_pool *p, uint32_t stage, ws_pool_counters *out) {
  if (!p || !out || stage >= p->cfg.stage_count)
    return WS_EINVAL;
  *out = p->counters[stage];
  if (p->device_counters) {
    /* a dispatch ran in one loop: the other's counters are still zero */
    uint64_t dc[2];
    ws_status st = ws_buffer_read(p->device_counters, 16 * (size_t)stage, dc, sizeof dc);
    if (st != WS_OK)
      return st;
    out->dispatches += dc[0];
    out->executed += dc[1];
  }
  return WS_OK;
}

ws_status ws_pool_storage_stats(const ws_pool *p, ws_pool_storage *out) {
  if (!p || !out)
    return WS_EINVAL;
  *out = p->storage;
  if (!append_mode(p) || !p->was_reset)
    return WS_OK; /* before the first dispatch the device words are unwritten */
  /* The extent word itself: the one the last boundary left (the stream is
   * idle between dispatches), whichever loop prepared it. A dispatch ran in
   * one loop: the other's counters are still zero. */
  const uint32_t S = p->cfg.stage_count;
  ws_status st = ws_buffer_read(p->state, 4 * (2 + (size_t)S), &out->extent, 4);
  if (st != WS_OK)
    return st;
  if (p->device_counters) {
    uint64_t dc[3];
    if ((st = ws_buffer_read(p->device_counters, 16 * (size_t)S, dc, sizeof dc)) != WS_OK)
      return st;
    out->reclaims += dc[0];
    out->compactions += dc[1];
    if (dc[2] > out->peak_extent)
      out->peak_extent = (uint32_t)dc[2];
  }
  return WS_OK;
}

const char *ws_pool_last_error(const ws_pool *p) { return p ? p->error : ""; }
