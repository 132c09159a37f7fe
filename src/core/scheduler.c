/* SPDX-License-Identifier: MIT */
/* wavesched — scheduler creation, configuration checks and statistics. The
 * dispatch loop itself is in loop.c, auxiliary work in aux.c. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "memory.h"
#include "sched.h"

ws_status ws_sched_fail(ws_scheduler *s, ws_status status, const char *fmt, ...) {
  if (s) {
    va_list ap;
    va_start(ap, fmt);
    int n = snprintf(s->error, sizeof s->error, "scheduler '%s': ",
                     s->coro.name ? s->coro.name : "?");
    if (n < 0 || (size_t)n >= sizeof s->error)
      n = 0;
    vsnprintf(s->error + n, sizeof s->error - (size_t)n, fmt, ap);
    va_end(ap);
    /* the device keeps the last message of anything on it, so that one
     * ws_device_last_error reports every call (docs/errors.md) */
    ws_dev_fail(s->dev, status, "%s", s->error);
  }
  return status;
}

static bool env_flag(const char *name) {
  const char *v = getenv(name);
  return v && v[0] != '\0' && strcmp(v, "0") != 0;
}

/* WS_SCAN_SHARE (docs/loop.md): unset or empty = 0 (every fused whole-queue
 * resume scans), a whole percent P from 0 to 100 (scan only a queue holding at
 * least P % of the scanned range), or "off" (never scan: each launch gathers
 * its frames, as under verification). One knob, since these are one choice. */
static ws_status env_scan_share(ws_scheduler *s, bool *off, uint32_t *share) {
  static const char name[] = "WS_SCAN_SHARE";
  const char *v = getenv(name);
  *off = false;
  *share = 0;
  if (!v || v[0] == '\0')
    return WS_OK;
  if (strcmp(v, "off") == 0) {
    *off = true;
    return WS_OK;
  }
  char *end = NULL;
  errno = 0;
  const unsigned long p = strtoul(v, &end, 10);
  if (errno != 0 || *end != '\0' || v[0] < '0' || v[0] > '9' || p > 100)
    return ws_sched_fail(s, WS_EINVAL, "%s='%s': expected a whole percent from 0 to 100 or 'off'",
                         name, v);
  *share = (uint32_t)p;
  return WS_OK;
}

ws_scheduler_config ws_scheduler_config_default(void) {
  ws_scheduler_config c;
  memset(&c, 0, sizeof c);
  c.kind = WS_SCHEDULER_WAVEFRONT;
  c.resident_frames = 4096;
  c.layout = WS_LAYOUT_AUTO;
  c.largest_first = true;
  c.accounting = WS_ACCOUNTING_AUTO;
  c.compaction = true;
  c.block_size = 128;
  return c;
}

ws_status ws_scheduler_get_config(const ws_scheduler *s, ws_scheduler_config *out) {
  if (!s || !out)
    return WS_EINVAL;
  *out = s->cfg;
  return WS_OK;
}

uint32_t ws_scheduler_continuation_index(const ws_scheduler *s, const char *name) {
  if (!s || !name)
    return 0;
  for (uint32_t j = 1; j <= s->K; ++j)
    if (strcmp(s->coro.continuation_names[j - 1], name) == 0)
      return j;
  return 0;
}

/* A description of a name and modules only takes the rest from what
 * WS_COROUTINE recorded: the device backend's entry, else the CPU module's
 * (Vulkan entries record nothing; every build has the CPU module). Leaves
 * *d as it is when the host described the coroutine itself or when no
 * module records it (check_config then names what is missing). */
static void describe_from_module(ws_device *dev, ws_coroutine_desc *d) {
  if (!d->name || !d->modules || d->frame || d->args_size || d->continuation_count ||
      d->continuation_names)
    return;
  const ws_module *const mods[2] = {dev->kind < WS_BACKEND_COUNT
                                        ? d->modules->by_backend[dev->kind]
                                        : NULL,
                                    d->modules->by_backend[WS_BACKEND_CPU]};
  for (int m = 0; m < 2; ++m)
    for (uint32_t i = 0; mods[m] && i < mods[m]->entry_count; ++i) {
      const ws_module_entry *e = &mods[m]->entries[i];
      if (e->kind == WS_ENTRY_COROUTINE && e->describe && e->name &&
          strcmp(e->name, d->name) == 0) {
        e->describe(d);
        return;
      }
    }
}

/* Configuration checks that need no allocation; `s` only receives the
 * message. */
static ws_status check_config(ws_scheduler *s, const ws_coroutine_desc *co,
                              const ws_scheduler_config *c) {
  if (!co->name || !co->modules || !co->frame)
    return ws_sched_fail(s, WS_ECONFIG_COROUTINE,
                         "coroutine description lacks a name, modules or a frame description "
                         "(and no module records coroutine '%s' to take it from)",
                         co->name ? co->name : "(null)");
  if (co->continuation_count == 0 || !co->continuation_names)
    return ws_sched_fail(s, WS_ECONFIG_COROUTINE, "coroutine has no continuations");
  if (co->frame->field_count && !co->frame->fields)
    return ws_sched_fail(s, WS_ECONFIG_COROUTINE, "frame declares %u fields but no field table",
                         co->frame->field_count);
  if (co->frame->field_count > WS_MAX_FRAME_FIELDS || co->frame->size == 0)
    return ws_sched_fail(s, WS_ECONFIG_COROUTINE,
                         "frame has %u fields (at most %u) and size %u (must be > 0)",
                         co->frame->field_count, WS_MAX_FRAME_FIELDS, co->frame->size);
  for (uint32_t i = 0; i < co->frame->field_count; ++i) {
    const ws_frame_field *f = &co->frame->fields[i];
    if (f->size == 0 || f->align == 0 || (f->align & (f->align - 1)) != 0 || f->size % f->align)
      return ws_sched_fail(s, WS_ECONFIG_COROUTINE,
                           "frame field %u ('%s') has size %u and alignment %u (the size must be "
                           "a positive multiple of a power-of-two alignment)",
                           i, f->name ? f->name : "?", f->size, f->align);
  }
  for (uint32_t a = 0; a < co->continuation_count; ++a) {
    const char *na = co->continuation_names[a];
    if (!na || !na[0])
      return ws_sched_fail(s, WS_ECONFIG_NAME, "continuation %u has an empty name", a + 1);
    if (strcmp(na, "<entry>") == 0)
      return ws_sched_fail(s, WS_ECONFIG_NAME, "continuation %u may not be named '<entry>'",
                           a + 1);
    for (uint32_t b = 0; b < a; ++b)
      if (strcmp(na, co->continuation_names[b]) == 0)
        return ws_sched_fail(s, WS_ECONFIG_NAME, "continuations %u and %u are both named '%s'",
                             b + 1, a + 1, na);
  }
  if ((unsigned)c->kind > WS_SCHEDULER_MEGAKERNEL || c->layout > WS_LAYOUT_SOA ||
      (unsigned)c->aux_protocol > WS_AUX_SINGLE_STAGE ||
      (unsigned)c->accounting > WS_ACCOUNTING_FUSED || (unsigned)c->loop > WS_LOOP_DEVICE)
    return ws_sched_fail(s, WS_ECONFIG_ENUM,
                         "kind %d, layout %u, aux_protocol %d, accounting %d or loop %d out of "
                         "range",
                         (int)c->kind, c->layout, (int)c->aux_protocol, (int)c->accounting,
                         (int)c->loop);
  if (c->kind == WS_SCHEDULER_WAVEFRONT && c->resident_frames == 0)
    return ws_sched_fail(s, WS_ECONFIG_POOL, "resident_frames is 0");
  if (c->accounting != WS_ACCOUNTING_MATERIALIZED && !c->largest_first)
    return ws_sched_fail(s, WS_ECONFIG_ACCOUNTING,
                         "%s accounting needs largest_first (the all-queues policy resumes every "
                         "queue and needs materialized counts)",
                         c->accounting == WS_ACCOUNTING_FUSED ? "fused" : "incremental");
  if (c->block_size != 0 && (c->block_size % 32 != 0 || c->block_size > 1024))
    return ws_sched_fail(s, WS_ECONFIG_BLOCK, "block_size %u is not a multiple of 32 in 32..1024",
                         c->block_size);
  if (c->refill_align_count && !c->refill_align)
    return ws_sched_fail(s, WS_ECONFIG_CONTINUATION, "refill_align is NULL with count %u",
                         c->refill_align_count);
  return WS_OK;
}

/* The description must match what the kernels were compiled for (sizes
 * recorded in the module entry; a Vulkan entry records none, so the CPU
 * module's entry of the same name, which every build has, stands in):
 * otherwise the launch reads a shorter argument block than the kernel's
 * struct, or frames overlap in a pool sized from the wrong record. */
static ws_status check_compiled(ws_scheduler *s, const ws_coroutine_desc *co,
                                const ws_module_entry *e) {
  if (e->frame_size == 0) {
    const ws_module *cpu = co->modules->by_backend[WS_BACKEND_CPU];
    e = NULL;
    for (uint32_t i = 0; cpu && i < cpu->entry_count; ++i)
      if (strcmp(cpu->entries[i].name, co->name) == 0)
        e = &cpu->entries[i];
    if (!e || e->frame_size == 0)
      return WS_OK; /* nothing recorded to check against */
  }
  const ws_frame_desc *fd = co->frame;
  uint64_t field_bytes = 0;
  for (uint32_t i = 0; i < fd->field_count; ++i)
    field_bytes += fd->fields[i].size;
  if (co->args_size != e->user_args_size)
    return ws_sched_fail(s, WS_ECONFIG_COROUTINE,
                         "the description's argument struct is %u bytes, the kernels of '%s' were "
                         "compiled for %u",
                         co->args_size, co->name, e->user_args_size);
  if (fd->size != e->frame_size || fd->field_count != e->frame_fields ||
      field_bytes != e->frame_field_bytes)
    return ws_sched_fail(s, WS_ECONFIG_COROUTINE,
                         "the description's frame (%u bytes, %u fields of %" PRIu64
                         " bytes) is not the one the kernels of '%s' were compiled for (%u bytes, "
                         "%u fields of %u bytes): describe it with WS_FRAME_DESC",
                         fd->size, fd->field_count, field_bytes, co->name, e->frame_size,
                         e->frame_fields, e->frame_field_bytes);
  return WS_OK;
}

/* SoA: arrays by decreasing alignment (stable in declaration order), each
 * aligned for its type, so typed access is aligned for any R. */
static uint64_t layout_soa(ws_scheduler *s) {
  const ws_frame_desc *fd = s->coro.frame;
  uint32_t order[WS_MAX_FRAME_FIELDS];
  for (uint32_t i = 0; i < fd->field_count; ++i)
    order[i] = i;
  for (uint32_t i = 1; i < fd->field_count; ++i) {
    uint32_t v = order[i], k = i;
    while (k > 0 && fd->fields[order[k - 1]].align < fd->fields[v].align) {
      order[k] = order[k - 1];
      --k;
    }
    order[k] = v;
  }
  uint64_t off = 0;
  for (uint32_t i = 0; i < fd->field_count; ++i) {
    const ws_frame_field *f = &fd->fields[order[i]];
    uint64_t al = f->align ? f->align : 1;
    off = ws_mem_add(off, al - 1) / al * al;
    s->soa_offsets[order[i]] = off;
    s->field_sizes[order[i]] = f->size;
    /* saturating: check_sizes then refuses what cannot exist */
    off = ws_mem_add(off, ws_mem_mul(s->R, f->size));
  }
  return off;
}

static ws_status create_buffer(ws_scheduler *s, size_t size, ws_buffer **out, const char *what) {
  ws_status st = ws_buffer_create(s->dev, size ? size : 4, out);
  if (st != WS_OK)
    return ws_sched_fail(s, st, "cannot allocate the %s (%zu bytes): %s", what, size,
                         ws_device_last_error(s->dev));
  return WS_OK;
}

/* Every size reserve() will ask for, in 64 bits, checked against the
 * device's memory before anything is allocated or filled: R and the frame
 * come from the user, and R x frame size, 4R and 8R exceed 32 bits (and, on
 * a 32-bit host, size_t) for legal values. */
static ws_status check_sizes(ws_scheduler *s, uint64_t frame_bytes) {
  const uint64_t R = s->R, words = WS_COUNTS_WORDS((uint64_t)s->K);
  /* frames; ids, tokens, slots, scratch; counts, offsets, verification
   * counts; counter, arguments, SoA offsets */
  const uint64_t device =
      ws_mem_add(frame_bytes, 4u * 4u * R + 3u * 4u * words + 16u +
                                  (s->coro.args_size ? s->coro.args_size : 4u) +
                                  (uint64_t)sizeof s->soa_offsets);
  const uint64_t largest = frame_bytes > 4u * R ? frame_bytes : 4u * R;
  char what[160];
  snprintf(what, sizeof what,
           "resident_frames %" PRIu64 " (frame pool %" PRIu64 " bytes = %" PRIu64 " x %u-byte "
           "%s frames)",
           R, frame_bytes, R, s->coro.frame->size,
           s->cfg.layout == WS_LAYOUT_SOA ? "SoA" : "AoS");
  ws_status st = ws_dev_check_fit(s->dev, device, largest, what);
  if (st != WS_OK)
    return ws_sched_fail(s, st, "%s", ws_device_last_error(s->dev));
  /* readbacks are host memory: counts, and in verification mode slots and
   * tokens (8R bytes) */
  const uint64_t host = (2u * words + 1u) * 4u + (s->verify_on ? 8u * R : 0u);
  const uint64_t host_avail = ws_host_memory_available();
  if (host > (uint64_t)SIZE_MAX || host > host_avail)
    return ws_sched_fail(s, WS_ENOMEM,
                         "resident_frames %" PRIu64 "%s: the readbacks need %" PRIu64
                         " bytes of host memory, %" PRIu64 " available",
                         R, s->verify_on ? " with verify_queues" : "", host,
                         host_avail == WS_MEM_UNKNOWN ? (uint64_t)SIZE_MAX : host_avail);
  return WS_OK;
}

static ws_status reserve(ws_scheduler *s) {
  const uint32_t R = s->R, K = s->K;
  const size_t words = WS_COUNTS_WORDS(K);
  ws_status st;
  uint64_t frame_bytes = s->cfg.layout == WS_LAYOUT_SOA
                             ? layout_soa(s)
                             : ws_mem_mul(R, s->coro.frame->size);
  if (s->cfg.layout != WS_LAYOUT_SOA) {
    for (uint32_t i = 0; i < s->coro.frame->field_count; ++i)
      s->field_sizes[i] = s->coro.frame->fields[i].size;
  }
  if ((st = check_sizes(s, frame_bytes)) != WS_OK)
    return st;
  if ((st = create_buffer(s, (size_t)frame_bytes, &s->frames, "frame pool")) ||
      (st = create_buffer(s, (size_t)R * 4, &s->ids, "id array")) ||
      (st = create_buffer(s, (size_t)R * 4, &s->tokens, "token array")) ||
      (st = create_buffer(s, words * 4, &s->counts, "queue counts")) ||
      (st = create_buffer(s, (size_t)R * 4, &s->slots, "slot list")) ||
      (st = create_buffer(s, words * 4, &s->offsets, "queue offsets")) ||
      (st = create_buffer(s, (size_t)R * 4, &s->scratch, "compaction scratch")) ||
      (st = create_buffer(s, 16, &s->counter, "gather counter")) ||
      (st = create_buffer(s, s->coro.args_size, &s->args, "argument block")) ||
      (st = create_buffer(s, sizeof s->soa_offsets, &s->field_offsets, "SoA offsets")) ||
      (st = create_buffer(s, words * 4, &s->verify_counts, "verification counts")))
    return st;
  st = ws_readback_create(s->dev, (2 * words + 1) * 4, &s->rb);
  if (st != WS_OK)
    return ws_sched_fail(s, st, "cannot allocate the readback buffer: %s",
                         ws_device_last_error(s->dev));
  if (s->verify_on) {
    st = ws_readback_create(s->dev, (size_t)R * 8, &s->verify_rb);
    if (st != WS_OK)
      return ws_sched_fail(s, st, "cannot allocate the verification readback: %s",
                           ws_device_last_error(s->dev));
  }
  /* Stale slot entries must always name a slot < R: a corrupted count can
   * then misdirect a launch but never send it out of bounds. */
  if ((st = ws_buffer_fill_u32(s->slots, 0, 0, R)) || (st = ws_buffer_fill_u32(s->tokens, 0, 0, R)) ||
      (st = ws_buffer_fill_u32(s->ids, 0, 0, R)) ||
      (st = ws_buffer_write(s->field_offsets, 0, s->soa_offsets, sizeof s->soa_offsets)))
    return ws_sched_fail(s, st, "cannot initialise device state: %s", ws_device_last_error(s->dev));
  return WS_OK;
}

static void destroy_scheduler(void *s) { ws_scheduler_destroy(s); }

ws_status ws_scheduler_create(ws_device *dev, const ws_coroutine_desc *co,
                              const ws_scheduler_config *config, ws_scheduler **out) {
  if (!out)
    return WS_EINVAL;
  *out = NULL;
  if (!dev || !co)
    return WS_EINVAL;
  ws_scheduler_config cfg = config ? *config : ws_scheduler_config_default();
  /* WS_LOOP=host|device overrides the loop of every scheduler (comparisons
   * without rebuilding a program); anything else leaves the config's choice */
  const char *loop_env = getenv("WS_LOOP");
  if (loop_env && strcmp(loop_env, "host") == 0)
    cfg.loop = WS_LOOP_HOST;
  else if (loop_env && strcmp(loop_env, "device") == 0)
    cfg.loop = WS_LOOP_DEVICE;
  /* the defaults measured per backend (docs/decisions.md, "The library's
   * defaults per backend"): SoA coalesces a warp's frame accesses on GPUs,
   * and on both GPU backends fused accounting (warp-aggregated counts, scan
   * mode, no publish launches) beats the publish kernels wherever the loop's
   * own cost shows and loses at most 2 % where the continuations' work
   * dominates; on the CPU a frame's fields share cache lines and fused
   * accounting is the slower mode */
  const ws_backend_kind bk = ws_device_backend(dev);
  if (cfg.layout == WS_LAYOUT_AUTO)
    cfg.layout = bk == WS_BACKEND_CPU ? WS_LAYOUT_AOS : WS_LAYOUT_SOA;
  if (cfg.accounting == WS_ACCOUNTING_AUTO)
    cfg.accounting = !cfg.largest_first      ? WS_ACCOUNTING_MATERIALIZED
                     : bk == WS_BACKEND_CPU ? WS_ACCOUNTING_INCREMENTAL
                                            : WS_ACCOUNTING_FUSED;
  ws_scheduler *s = ws_calloc(1, sizeof *s);
  if (!s)
    return WS_ENOMEM;
  s->dev = dev;
  ws_coroutine_desc desc = *co;
  describe_from_module(dev, &desc);
  co = &desc;
  s->coro = desc;
  s->cfg = cfg;
  ws_status st = check_config(s, co, &cfg);
  if (st != WS_OK)
    goto fail;
  s->K = co->continuation_count;
  s->R = cfg.kind == WS_SCHEDULER_WAVEFRONT ? cfg.resident_frames : 1u;
  s->block = cfg.block_size ? cfg.block_size : 128u;
  s->stats_on = cfg.statistics || env_flag("WS_STATS");
  s->verify_on = cfg.verify_queues || env_flag("WS_VERIFY_QUEUES");
  if ((st = env_scan_share(s, &s->no_scan, &s->scan_share)) != WS_OK)
    goto fail;

  ws_kernel k;
  st = ws_kernel_find(dev, co->modules, co->name, &k);
  if (st != WS_OK) {
    ws_sched_fail(s, st, "%s", ws_device_last_error(dev));
    goto fail;
  }
  if (k.entry->kind != WS_ENTRY_COROUTINE) {
    st = ws_sched_fail(s, WS_ECONFIG_COROUTINE, "module entry '%s' is not a coroutine", co->name);
    goto fail;
  }
  s->entry = k.entry;
  if ((st = check_compiled(s, co, k.entry)) != WS_OK)
    goto fail;
  if (cfg.kind == WS_SCHEDULER_WAVEFRONT && cfg.loop == WS_LOOP_DEVICE) {
    const char *why = !dev->ops->loop_create ? "the backend has no device loop"
                      : !k.entry->launch_dev && !k.entry->spirv
                          ? "the coroutine's module has no device-loop launcher"
                      : cfg.aux_protocol == WS_AUX_SINGLE_STAGE
                          ? "the single-stage protocol calls its clients from the host"
                          : NULL;
    if (why) {
      st = ws_sched_fail(s, WS_ECONFIG_LOOP, "loop = WS_LOOP_DEVICE, but %s (%s)", why,
                         dev->ops->name);
      goto fail;
    }
  }

  s->align = ws_calloc(s->K + 1, sizeof *s->align);
  s->node_stats = ws_calloc(3 * ((size_t)s->K + 1), sizeof *s->node_stats);
  if (!s->align || !s->node_stats) {
    st = ws_sched_fail(s, WS_ENOMEM, "out of memory");
    goto fail;
  }
  for (uint32_t i = 0; i < cfg.refill_align_count; ++i) {
    uint32_t j = ws_scheduler_continuation_index(s, cfg.refill_align[i]);
    if (j == 0) {
      st = ws_sched_fail(s, WS_ECONFIG_CONTINUATION,
                         "refill_align[%u] names '%s', which is no continuation", i,
                         cfg.refill_align[i] ? cfg.refill_align[i] : "(null)");
      goto fail;
    }
    s->align[j] = 1;
  }

  st = reserve(s);
  if (st != WS_OK)
    goto fail;
  ws_dev_own(dev, &s->node, WS_OWNED_SCHEDULER, destroy_scheduler, s);
  *out = s;
  return WS_OK;
fail:
  /* The message lives on the scheduler being torn down: hand it to the
   * device's log callback and leave it on the device, where a caller without
   * a log finds it (ws_device_last_error). */
  ws_dev_log(dev, WS_LOG_ERROR, "ws_scheduler_create: %s", s->error);
  ws_dev_fail(dev, st, "ws_scheduler_create: %s", s->error);
  ws_scheduler_destroy(s);
  return st;
}

void ws_scheduler_destroy(ws_scheduler *s) {
  if (!s)
    return;
  ws_dev_disown(s->dev, &s->node);
  ws_buffer *bufs[] = {s->frames,  s->ids,     s->tokens, s->counts,        s->slots,
                       s->offsets, s->scratch, s->counter, s->args,         s->field_offsets,
                       s->verify_counts};
  for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; ++i)
    ws_buffer_destroy(bufs[i]);
  ws_readback_destroy(s->rb);
  ws_readback_destroy(s->verify_rb);
  ws_loop_device_release(s);
  ws_aux_release_all(s);
  ws_free(s->align);
  ws_free(s->node_stats);
  ws_free(s);
}

const char *ws_scheduler_last_error(const ws_scheduler *s) { return s ? s->error : ""; }

bool ws_scheduler_statistics_enabled(const ws_scheduler *s) { return s && s->stats_on; }

void ws_sched_reset_stats(ws_scheduler *s) {
  memset(s->node_stats, 0, 3 * ((size_t)s->K + 1) * sizeof *s->node_stats);
  if (s->aux_stats_count)
    memset(s->aux_stats, 0, 3 * (size_t)s->aux_stats_count * sizeof *s->aux_stats);
  memset(&s->d, 0, sizeof s->d);
  s->elapsed_ms = 0;
  s->device_ms = -1.0;
  s->ran = WS_LOOP_HOST;
  s->host_syncs = 0;
}

void ws_scheduler_dispatch_stats(const ws_scheduler *s, ws_dispatch_stats *out) {
  if (!s || !out)
    return;
  const ws_dstate *d = &s->d;
  memset(out, 0, sizeof *out);
  out->iteration_count = d->iterations;
  out->generated_count = d->generated;
  out->resumed_count = d->resumed;
  out->scanned_slot_count = d->scanned;
  out->max_active_count = d->max_active;
  out->aux_dispatch_count = d->aux_dispatches;
  out->forced_drain_count = d->forced_drains;
  out->blocked_count = d->blocked;
  out->elapsed_ms = s->elapsed_ms;
  out->device_ms = s->device_ms;
  out->loop = s->ran;
  out->host_sync_count = s->host_syncs;
  out->tail_item_count = d->tail_items;
}

uint32_t ws_scheduler_node_count(const ws_scheduler *s) { return s ? s->K + 1 : 0; }

static ws_node_stats stats_at(const uint64_t *v, const char *name) {
  ws_node_stats n = {name, v[0], v[1], v[2]};
  return n;
}

ws_status ws_scheduler_node_stats(const ws_scheduler *s, uint32_t node, ws_node_stats *out) {
  if (!s || !out || node > s->K)
    return WS_EINVAL;
  *out = stats_at(&s->node_stats[3u * node],
                  node ? s->coro.continuation_names[node - 1] : "<entry>");
  return WS_OK;
}

uint32_t ws_scheduler_aux_stats_count(const ws_scheduler *s) { return s ? s->aux_stats_count : 0; }

ws_status ws_scheduler_aux_stats(const ws_scheduler *s, uint32_t index, ws_node_stats *out) {
  if (!s || !out || index >= s->aux_stats_count)
    return WS_EINVAL;
  *out = stats_at(&s->aux_stats[3u * index], s->aux_names[index]);
  return WS_OK;
}

void ws_scheduler_print_stats(const ws_scheduler *s, void *file) {
  if (!s)
    return;
  FILE *f = file ? (FILE *)file : stdout;
  ws_dispatch_stats d;
  ws_scheduler_dispatch_stats(s, &d);
  fprintf(f, "dispatch: %" PRIu64 " iterations, %" PRIu64 " generated, %" PRIu64
             " resumed, %" PRIu64 " slots scanned, max %" PRIu64 " active, %.3f ms",
          d.iteration_count, d.generated_count, d.resumed_count, d.scanned_slot_count,
          d.max_active_count, d.elapsed_ms);
  if (d.device_ms >= 0)
    fprintf(f, " (device %.3f ms)", d.device_ms);
  fprintf(f, "; %s loop, %" PRIu64 " host synchronization%s",
          d.loop == WS_LOOP_DEVICE ? "device" : "host", d.host_sync_count,
          d.host_sync_count == 1 ? "" : "s");
  if (d.tail_item_count)
    fprintf(f, "; %" PRIu64 " items finished in the tail", d.tail_item_count);
  fputc('\n', f);
  if (s->aux_count)
    fprintf(f, "auxiliary: %" PRIu64 " stage dispatches, %" PRIu64 " forced drains, %" PRIu64
               " blocked iterations\n",
            d.aux_dispatch_count, d.forced_drain_count, d.blocked_count);
  fprintf(f, "%-6s %-24s %12s %14s %12s\n", "kind", "name", "dispatches", "executed", "peak");
  for (uint32_t j = 0; j <= s->K; ++j) {
    ws_node_stats n;
    ws_scheduler_node_stats(s, j, &n);
    fprintf(f, "%-6s %-24s %12" PRIu64 " %14" PRIu64 " %12" PRIu64 "\n", "main", n.name,
            n.dispatch_count, n.executed_count, n.peak_queued_count);
  }
  for (uint32_t i = 0; i < s->aux_stats_count; ++i) {
    ws_node_stats n;
    ws_scheduler_aux_stats(s, i, &n);
    fprintf(f, "%-6s %-24s %12" PRIu64 " %14" PRIu64 " %12" PRIu64 "\n", "aux", n.name,
            n.dispatch_count, n.executed_count, n.peak_queued_count);
  }
}
