/* SPDX-License-Identifier: MIT */
/* wavesched — CPU backend: the reference implementation of the backend
 * interface. Device addresses are host pointers; the stream is the calling
 * thread, so every enqueued operation runs eagerly and in order, and
 * synchronize has nothing to wait for. Kernels run on the device's own
 * threads (cpu_pool.c, through kernel.h's launchers); queue operations below
 * are sequential where order would otherwise depend on threads, so CPU
 * results are reproducible. */
/* clock_gettime is POSIX, not C11 */
#define _POSIX_C_SOURCE 200809L

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "../../core/alloc.h"
#include "../../core/device.h"
#include "../../core/memory.h"
#include "../registry.h"
#include "cpu_internal.h"
#include "cpu_pool.h"

#define U32(addr) ((uint32_t *)(uintptr_t)(addr))

/* dev->impl */
typedef struct cpu_state {
  double marks[2]; /* device timer: start and end, host milliseconds */
  ws_cpu_pool *pool; /* the kernels' threads: the launchers' `stream` */
} cpu_state;

static cpu_state *cpu_of(ws_device *dev) { return (cpu_state *)dev->impl; }

ws_cpu_pool *ws_cpu_pool_of(ws_device *dev) { return cpu_of(dev)->pool; }

static void cpu_destroy(ws_device *dev) {
  cpu_state *c = cpu_of(dev);
  if (c)
    ws_cpu_pool_destroy(c->pool);
  ws_free(c);
  dev->impl = NULL;
}

static ws_status cpu_buffer_alloc(ws_device *dev, size_t size, uint64_t *addr, void **handle) {
  /* 64-byte alignment: any field type, and no false sharing between
   * buffers. */
  if (size > SIZE_MAX - 63u)
    return ws_dev_fail(dev, WS_EDEVMEM, "cpu: cannot allocate %zu bytes", size);
  size_t rounded = (size + 63u) & ~(size_t)63u;
  void *p = aligned_alloc(64, rounded ? rounded : 64);
  if (!p)
    return ws_dev_fail(dev, WS_EDEVMEM, "cpu: cannot allocate %zu bytes", size);
  *addr = (uint64_t)(uintptr_t)p;
  *handle = p;
  return WS_OK;
}

static void cpu_buffer_free(ws_device *dev, void *handle) {
  (void)dev;
  free(handle);
}

static ws_status cpu_host_alloc(ws_device *dev, size_t size, void **ptr, void **handle) {
  void *p = ws_calloc(1, size);
  if (!p)
    return ws_dev_fail(dev, WS_ENOMEM, "cpu: cannot allocate %zu bytes of readback memory", size);
  *ptr = p;
  *handle = p;
  return WS_OK;
}

static void cpu_host_free(ws_device *dev, void *handle) {
  (void)dev;
  ws_free(handle);
}

static ws_status cpu_write(ws_device *dev, uint64_t dst, const void *src, size_t size) {
  (void)dev;
  memcpy((void *)(uintptr_t)dst, src, size);
  return WS_OK;
}

static ws_status cpu_enqueue_read(ws_device *dev, void *host_handle, size_t host_offset,
                                  uint64_t src, size_t size) {
  (void)dev;
  memcpy((char *)host_handle + host_offset, (const void *)(uintptr_t)src, size);
  return WS_OK;
}

static ws_status cpu_fill_u32(ws_device *dev, uint64_t dst, uint32_t value, size_t count) {
  (void)dev;
  uint32_t *p = U32(dst);
  for (size_t i = 0; i < count; ++i)
    p[i] = value;
  return WS_OK;
}

static ws_status cpu_synchronize(ws_device *dev) {
  (void)dev;
  return WS_OK;
}

static ws_status cpu_launch(ws_device *dev, const ws_module_entry *entry, ws_launch_form form,
                            uint32_t n, const void *args, size_t args_size, uint32_t block) {
  (void)args_size;
  const ws_launch_fn fn = ws_entry_launcher(entry, form);
  if (!fn)
    return ws_dev_fail(dev, WS_ENOKERNEL, "cpu: '%s' has no %s launcher", entry->name,
                       ws_form_name(form));
  int rc = fn(n, args, block, cpu_of(dev)->pool);
  if (rc != 0)
    return ws_dev_fail(dev, WS_EBACKEND, "cpu: kernel '%s' failed with %d", entry->name, rc);
  return WS_OK;
}

static ws_status cpu_queue_count(ws_device *dev, const ws_queue_args *q) {
  (void)dev;
  const uint32_t *tokens = U32(q->tokens);
  uint32_t *counts = U32(q->counts);
  /* Tokens outside 0..K cannot be produced by the wrappers (they clamp); a
   * damaged one is skipped rather than trusted as an index, and the
   * verification's recount then disagrees with the maintained counts. */
  for (uint32_t t = 0; t <= q->queue_count; ++t)
    counts[t] = 0;
  for (uint32_t s = 0; s < q->scan; ++s) {
    uint32_t t = tokens[s];
    if (t <= q->queue_count)
      counts[t] += 1;
  }
  return WS_OK;
}

static ws_status cpu_queue_gather(ws_device *dev, const ws_queue_args *q) {
  (void)dev;
  const uint32_t *tokens = U32(q->tokens);
  uint32_t *slots = U32(q->slots);
  uint32_t m = 0;
  for (uint32_t s = 0; s < q->scan; ++s)
    if (tokens[s] == q->token)
      slots[m++] = s;
  U32(q->counter)[0] = m;
  return WS_OK;
}

static ws_status cpu_queue_gather_all(ws_device *dev, const ws_queue_args *q) {
  (void)dev;
  const uint32_t *tokens = U32(q->tokens);
  const uint32_t *counts = U32(q->counts);
  uint32_t *offsets = U32(q->offsets);
  uint32_t *slots = U32(q->slots);
  uint32_t run = 0;
  for (uint32_t t = 1; t <= q->queue_count; ++t) {
    offsets[t] = run;
    run += counts[t];
  }
  for (uint32_t s = 0; s < q->scan; ++s) {
    uint32_t t = tokens[s];
    if (t != 0 && t <= q->queue_count)
      slots[offsets[t]++] = s;
  }
  return WS_OK;
}

static ws_status cpu_queue_publish(ws_device *dev, const ws_queue_args *q) {
  (void)dev;
  const uint32_t *tokens = U32(q->tokens);
  const uint32_t *slots = q->slots ? U32(q->slots) : NULL;
  uint32_t *counts = U32(q->counts);
  if (q->src != 0)
    counts[q->src] -= q->n;
  for (uint32_t i = 0; i < q->n; ++i) {
    uint32_t t = tokens[slots ? slots[i] : q->slot_base + i];
    if (t != 0 && t <= q->queue_count)
      counts[t] += 1;
  }
  return WS_OK;
}

static ws_status cpu_queue_compact(ws_device *dev, const ws_queue_args *q) {
  (void)dev;
  uint32_t *tokens = U32(q->tokens);
  uint32_t *ids = U32(q->ids);
  unsigned char *frames = (unsigned char *)(uintptr_t)q->frames;
  uint32_t hole = 0;
  for (uint32_t s = q->n; s < q->scan; ++s) {
    if (tokens[s] == 0)
      continue;
    while (hole < q->n && tokens[hole] != 0)
      ++hole;
    if (hole >= q->n)
      return ws_dev_fail(dev, WS_EPROTO_INTERNAL,
                         "cpu: compaction found more live frames than the live count %u", q->n);
    if (q->layout == WS_LAYOUT_AOS) {
      memcpy(frames + (size_t)hole * q->frame_size, frames + (size_t)s * q->frame_size,
             q->frame_size);
    } else {
      for (uint32_t f = 0; f < q->field_count; ++f) {
        size_t sz = q->field_sizes[f];
        unsigned char *base = frames + q->host_field_offsets[f];
        memcpy(base + (size_t)hole * sz, base + (size_t)s * sz, sz);
      }
    }
    ids[hole] = ids[s];
    tokens[hole] = tokens[s];
    tokens[s] = 0;
    ++hole;
  }
  return WS_OK;
}

/* ---- memory: the CPU device's memory is the process's host memory ---- */

/* MemAvailable of /proc/meminfo (the kernel's estimate of what can be
 * allocated without swapping), else free pages; WS_MEM_UNKNOWN if neither. */
static uint64_t system_available(void) {
  FILE *f = fopen("/proc/meminfo", "r");
  if (f) {
    char line[128];
    unsigned long long kib;
    while (fgets(line, sizeof line, f)) {
      if (sscanf(line, "MemAvailable: %llu kB", &kib) == 1) {
        fclose(f);
        return (uint64_t)kib * 1024u;
      }
    }
    fclose(f);
  }
  const long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0)
    return (uint64_t)pages * (uint64_t)page;
  return WS_MEM_UNKNOWN;
}

/* What `resource` still allows beyond `used` bytes. */
static uint64_t rlimit_headroom(int resource, uint64_t used) {
  struct rlimit r;
  if (getrlimit(resource, &r) != 0 || r.rlim_cur == RLIM_INFINITY)
    return WS_MEM_UNKNOWN;
  return (uint64_t)r.rlim_cur > used ? (uint64_t)r.rlim_cur - used : 0;
}

uint64_t ws_host_memory_available(void) {
  uint64_t avail = system_available();
  /* /proc/self/statm: size resident shared text lib data dt, in pages; the
   * address space counts against RLIMIT_AS, data + stack (and, since Linux
   * 4.7, private mappings: large mallocs) against RLIMIT_DATA */
  unsigned long long size = 0, resident, shared, text, lib, data = 0;
  FILE *f = fopen("/proc/self/statm", "r");
  if (f) {
    if (fscanf(f, "%llu %llu %llu %llu %llu %llu", &size, &resident, &shared, &text, &lib,
               &data) != 6)
      size = data = 0;
    fclose(f);
  }
  const long page = sysconf(_SC_PAGESIZE);
  const uint64_t p = page > 0 ? (uint64_t)page : 4096u;
  const uint64_t as = rlimit_headroom(RLIMIT_AS, (uint64_t)size * p);
  const uint64_t ds = rlimit_headroom(RLIMIT_DATA, (uint64_t)data * p);
  if (as < avail)
    avail = as;
  if (ds < avail)
    avail = ds;
  return avail;
}

static ws_status cpu_memory_available(ws_device *dev, uint64_t *available, uint64_t *largest) {
  (void)dev;
  *available = ws_host_memory_available();
  /* one buffer is one aligned_alloc: its size must fit the rounding */
  *largest = (uint64_t)(SIZE_MAX - 63u);
  return WS_OK;
}

/* The stream runs eagerly on the calling thread: its time is host time.
 * dev->impl holds the two marks. */
static ws_status cpu_timer_mark(ws_device *dev, bool end) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  cpu_of(dev)->marks[end] = (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
  return WS_OK;
}

static ws_status cpu_timer_elapsed(ws_device *dev, double *ms) {
  const double *marks = cpu_of(dev)->marks;
  *ms = marks[1] - marks[0];
  return WS_OK;
}

static const ws_backend_ops cpu_ops = {
    .name = "cpu",
    .destroy = cpu_destroy,
    .buffer_alloc = cpu_buffer_alloc,
    .buffer_free = cpu_buffer_free,
    .host_alloc = cpu_host_alloc,
    .host_free = cpu_host_free,
    .write = cpu_write,
    .enqueue_read = cpu_enqueue_read,
    .enqueue_fill_u32 = cpu_fill_u32,
    .synchronize = cpu_synchronize,
    .launch = cpu_launch,
    .queue_count = cpu_queue_count,
    .queue_gather = cpu_queue_gather,
    .queue_gather_all = cpu_queue_gather_all,
    .queue_publish = cpu_queue_publish,
    .queue_compact = cpu_queue_compact,
    .timer_mark = cpu_timer_mark,
    .timer_elapsed = cpu_timer_elapsed,
    .loop_create = ws_cpu_loop_create,
    .loop_run = ws_cpu_loop_run,
    .loop_destroy = ws_cpu_loop_destroy,
    .memory_available = cpu_memory_available,
};

ws_status ws_backend_cpu_open(ws_device *dev, const ws_device_config *config) {
  if (config->cpu_threads < 0 || config->cpu_threads > WS_CPU_MAX_THREADS)
    return ws_dev_fail(dev, WS_EINVAL,
                       "cpu: cpu_threads %d: expected 0 (one per CPU) or 1..%d threads",
                       config->cpu_threads, WS_CPU_MAX_THREADS);
  const int threads = config->cpu_threads ? config->cpu_threads : ws_cpu_default_threads();
  cpu_state *c = ws_calloc(1, sizeof *c);
  if (!c)
    return ws_dev_fail(dev, WS_ENOMEM, "cpu: no host memory for the device state");
  c->pool = ws_cpu_pool_create(threads);
  if (!c->pool) {
    ws_free(c);
    return ws_dev_fail(dev, WS_ENOMEM, "cpu: no host memory for the thread pool");
  }
  dev->impl = c;
  dev->ops = &cpu_ops;
  snprintf(dev->name, sizeof dev->name, "cpu (%d thread%s)", threads, threads == 1 ? "" : "s");
  return WS_OK;
}
