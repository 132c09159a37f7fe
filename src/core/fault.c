/* SPDX-License-Identifier: MIT */
/* wavesched — backend fault injection for the library's tests (testing.h).
 *
 * ws_testing_fail_backend_after(dev, n) swaps dev->ops for a wrapping table
 * (allocated once per device, freed by the wrapped `destroy`) whose every
 * fallible call counts down and fails the Nth one, with the status a real
 * backend returns for that failure: WS_EDEVMEM for device memory, WS_ENOMEM
 * for host memory the stream copies into, WS_EBACKEND for everything else.
 * The void calls (destroy, buffer_free, host_free) are never failed, so
 * cleanup paths stay exercisable. No other code knows the wrapper exists:
 * the core only ever calls dev->ops. */
#include <stdatomic.h>
#include <stddef.h>

#include "alloc.h"
#include "fault.h"
#include "sched.h"
#include "wavesched/testing.h"

typedef struct fault_ops {
  ws_backend_ops ops;          /* must stay first: dev->ops points here */
  const ws_backend_ops *inner; /* the real backend */
  unsigned long countdown;     /* 0 = never fail */
  unsigned long calls;         /* fallible calls since wrapping */
  unsigned long faults;        /* injected failures */
  /* ws_testing_corrupt_count: the next fill that covers `corrupt_addr`
   * (the dispatch prologue's count reset) is followed by a write of
   * `corrupt_value` there, as a broken publish kernel would leave it */
  uint64_t corrupt_addr; /* 0 = none pending */
  uint32_t corrupt_value;
  bool for_corruption; /* made for the corruption alone: unwrapped once it fired */
} fault_ops;

static fault_ops *fault_of(ws_device *dev) { return (fault_ops *)(void *)dev->ops; }

/* Counts the call; returns non-zero when this one must fail. */
static int fault_hit(ws_device *dev, const char *call, ws_status st, ws_status *out) {
  fault_ops *f = fault_of(dev);
  f->calls += 1;
  if (f->countdown == 0 || --f->countdown != 0)
    return 0;
  f->faults += 1;
  *out = ws_dev_fail(dev, st, "%s backend: injected fault in %s (call %lu)", f->inner->name, call,
                     f->calls);
  return 1;
}

#define INNER(dev) (fault_of(dev)->inner)

static void f_destroy(ws_device *dev) {
  fault_ops *f = fault_of(dev);
  dev->ops = f->inner;
  if (dev->ops->destroy)
    dev->ops->destroy(dev);
  ws_free(f);
}

static ws_status f_buffer_alloc(ws_device *dev, size_t size, uint64_t *addr, void **handle) {
  ws_status st;
  if (fault_hit(dev, "buffer_alloc", WS_EDEVMEM, &st))
    return st;
  return INNER(dev)->buffer_alloc(dev, size, addr, handle);
}

static void f_buffer_free(ws_device *dev, void *handle) { INNER(dev)->buffer_free(dev, handle); }

static ws_status f_host_alloc(ws_device *dev, size_t size, void **ptr, void **handle) {
  ws_status st;
  if (fault_hit(dev, "host_alloc", WS_ENOMEM, &st))
    return st;
  return INNER(dev)->host_alloc(dev, size, ptr, handle);
}

static void f_host_free(ws_device *dev, void *handle) { INNER(dev)->host_free(dev, handle); }

static ws_status f_write(ws_device *dev, uint64_t dst, const void *src, size_t size) {
  ws_status st;
  if (fault_hit(dev, "write", WS_EBACKEND, &st))
    return st;
  return INNER(dev)->write(dev, dst, src, size);
}

static ws_status f_enqueue_read(ws_device *dev, void *host_handle, size_t host_offset,
                                uint64_t src, size_t size) {
  ws_status st;
  if (fault_hit(dev, "enqueue_read", WS_EBACKEND, &st))
    return st;
  return INNER(dev)->enqueue_read(dev, host_handle, host_offset, src, size);
}

static ws_status f_enqueue_fill_u32(ws_device *dev, uint64_t dst, uint32_t value, size_t count) {
  ws_status st;
  if (fault_hit(dev, "enqueue_fill_u32", WS_EBACKEND, &st))
    return st;
  fault_ops *f = fault_of(dev);
  st = INNER(dev)->enqueue_fill_u32(dev, dst, value, count);
  if (st == WS_OK && f->corrupt_addr >= dst && f->corrupt_addr < dst + 4u * (uint64_t)count) {
    const uint64_t addr = f->corrupt_addr;
    f->corrupt_addr = 0;
    st = INNER(dev)->write(dev, addr, &f->corrupt_value, 4);
    if (f->for_corruption) {
      /* the hook fires once: leave the device as it was found */
      dev->ops = f->inner;
      ws_free(f);
    }
  }
  return st;
}

static ws_status f_synchronize(ws_device *dev) {
  ws_status st;
  if (fault_hit(dev, "synchronize", WS_EBACKEND, &st))
    return st;
  return INNER(dev)->synchronize(dev);
}

static ws_status f_launch(ws_device *dev, const ws_module_entry *entry, ws_launch_form form,
                          uint32_t n, const void *args, size_t args_size, uint32_t block) {
  ws_status st;
  if (fault_hit(dev, "launch", WS_EBACKEND, &st))
    return st;
  return INNER(dev)->launch(dev, entry, form, n, args, args_size, block);
}

#define QUEUE_OP(op)                                                                       \
  static ws_status f_##op(ws_device *dev, const ws_queue_args *q) {                        \
    ws_status st;                                                                          \
    if (fault_hit(dev, #op, WS_EBACKEND, &st))                                             \
      return st;                                                                           \
    return INNER(dev)->op(dev, q);                                                         \
  }
QUEUE_OP(queue_count)
QUEUE_OP(queue_gather)
QUEUE_OP(queue_gather_all)
QUEUE_OP(queue_publish)
QUEUE_OP(queue_compact)

static ws_status f_timer_mark(ws_device *dev, bool end) {
  ws_status st;
  if (fault_hit(dev, "timer_mark", WS_EBACKEND, &st))
    return st;
  return INNER(dev)->timer_mark(dev, end);
}

static ws_status f_timer_elapsed(ws_device *dev, double *ms) {
  ws_status st;
  if (fault_hit(dev, "timer_elapsed", WS_EBACKEND, &st))
    return st;
  return INNER(dev)->timer_elapsed(dev, ms);
}

static ws_status f_loop_create(ws_device *dev, const ws_loop_desc *desc, void **loop) {
  ws_status st;
  if (fault_hit(dev, "loop_create", WS_ENOMEM, &st))
    return st;
  return INNER(dev)->loop_create(dev, desc, loop);
}

static ws_status f_loop_run(ws_device *dev, void *loop, uint32_t round) {
  ws_status st;
  if (fault_hit(dev, "loop_run", WS_EBACKEND, &st))
    return st;
  return INNER(dev)->loop_run(dev, loop, round);
}

static void f_loop_destroy(ws_device *dev, void *loop) { INNER(dev)->loop_destroy(dev, loop); }

static bool f_loop_pipelined(ws_device *dev, void *loop) {
  return INNER(dev)->loop_pipelined(dev, loop);
}

static ws_status f_flush(ws_device *dev) {
  ws_status st;
  if (fault_hit(dev, "flush", WS_EBACKEND, &st))
    return st;
  return INNER(dev)->flush(dev);
}

/* A query, not a failure point (backend.h): forwarded, not counted. */
static ws_status f_memory_available(ws_device *dev, uint64_t *available, uint64_t *largest) {
  return INNER(dev)->memory_available(dev, available, largest);
}

static bool wrapped(const ws_device *dev) { return dev->ops && dev->ops->destroy == f_destroy; }

/* Puts the wrapping table in place (once per device). */
static ws_status wrap(ws_device *dev) {
  if (!wrapped(dev)) {
    fault_ops *f = ws_calloc(1, sizeof *f);
    if (!f)
      return WS_ENOMEM;
    f->inner = dev->ops;
    f->ops = (ws_backend_ops){
        .name = dev->ops->name,
        .destroy = f_destroy,
        .buffer_alloc = f_buffer_alloc,
        .buffer_free = f_buffer_free,
        .host_alloc = f_host_alloc,
        .host_free = f_host_free,
        .write = f_write,
        .enqueue_read = f_enqueue_read,
        .enqueue_fill_u32 = f_enqueue_fill_u32,
        .synchronize = f_synchronize,
        .launch = f_launch,
        .queue_count = f_queue_count,
        .queue_gather = f_queue_gather,
        .queue_gather_all = f_queue_gather_all,
        .queue_publish = f_queue_publish,
        .queue_compact = f_queue_compact,
        /* optional: wrapped only where the backend has them */
        .timer_mark = dev->ops->timer_mark ? f_timer_mark : NULL,
        .timer_elapsed = dev->ops->timer_elapsed ? f_timer_elapsed : NULL,
        .loop_create = dev->ops->loop_create ? f_loop_create : NULL,
        .loop_run = dev->ops->loop_run ? f_loop_run : NULL,
        .loop_destroy = dev->ops->loop_destroy ? f_loop_destroy : NULL,
        .memory_available = dev->ops->memory_available ? f_memory_available : NULL,
        .loop_pipelined = dev->ops->loop_pipelined ? f_loop_pipelined : NULL,
        .flush = dev->ops->flush ? f_flush : NULL,
    };
    dev->ops = &f->ops;
  }
  return WS_OK;
}

ws_status ws_testing_fail_backend_after(ws_device *dev, unsigned long n) {
  if (!dev || !dev->ops)
    return WS_EINVAL;
  ws_status st = wrap(dev);
  if (st != WS_OK)
    return st;
  fault_ops *f = fault_of(dev);
  f->for_corruption = false;
  f->countdown = n;
  f->calls = 0;
  f->faults = 0;
  return WS_OK;
}

/* ws_testing_fail_next_device_after: the countdown for the next device to
 * open, and the device opening under it (ws_fault_open_begin/end).
 *
 * Threads (docs/architecture.md, "Threads"): this is process-wide, and every
 * ws_device_create passes through ws_fault_open_begin/end and every backend
 * allocation of an unwrapped device through ws_fault_backend_alloc, on
 * whatever thread uses that device, so that devices can be created and used
 * on several threads at once. Hence:
 *   N1 `armed` is claimed by exactly one ws_device_create (an exchange);
 *      creations that find it clear write nothing here;
 *   N2 `opening` is the one device that claimed the arming, from its begin
 *      to its end; any other device compares it with itself and stops;
 *   N3 countdown, calls and faults are written by the arming (before its
 *      release store of `armed`) and afterwards only by the thread that
 *      opens `opening` (after its claim acquired the arming): no two
 *      threads touch them unordered, so they need no atomics.
 * Arming while another thread's device is opening under an earlier arming
 * breaks N3: the hook itself is for single-threaded tests (testing.h). */
static struct {
  atomic_bool armed;
  _Atomic(ws_device *) opening;
  unsigned long countdown, calls, faults;
} g_next;

void ws_testing_fail_next_device_after(unsigned long n) {
  g_next.countdown = n;
  g_next.calls = 0;
  g_next.faults = 0;
  atomic_store_explicit(&g_next.armed, true, memory_order_release);
}

void ws_fault_open_begin(ws_device *dev) {
  /* N1: the common case (nothing armed) reads and writes nothing else */
  if (atomic_load_explicit(&g_next.armed, memory_order_relaxed) &&
      atomic_exchange_explicit(&g_next.armed, false, memory_order_acquire))
    atomic_store(&g_next.opening, dev);
}

ws_status ws_fault_open_end(ws_device *dev, ws_status open_status) {
  ws_device *mine = dev;
  if (!dev || !atomic_compare_exchange_strong(&g_next.opening, &mine, NULL))
    return WS_OK; /* N2: not the device the arming applies to */
  if (open_status != WS_OK)
    return WS_OK;
  if (wrap(dev) != WS_OK)
    return ws_dev_fail(dev, WS_ENOMEM, "%s backend: no host memory for the fault wrapper",
                       dev->ops->name);
  /* the device keeps counting where its open stopped */
  fault_ops *f = fault_of(dev);
  f->for_corruption = false;
  f->countdown = g_next.countdown;
  f->calls = g_next.calls;
  f->faults = g_next.faults;
  return WS_OK;
}

bool ws_fault_backend_alloc(ws_device *dev, const char *what) {
  if (!dev)
    return false;
  ws_status st;
  if (wrapped(dev))
    return fault_hit(dev, what, WS_EDEVMEM, &st) != 0;
  if (atomic_load(&g_next.opening) != dev)
    return false; /* N2 */
  g_next.calls += 1;
  if (g_next.countdown == 0 || --g_next.countdown != 0)
    return false;
  g_next.faults += 1;
  ws_dev_fail(dev, WS_EDEVMEM, "injected fault in %s while the device opened (call %lu)", what,
              g_next.calls);
  return true;
}

unsigned long ws_testing_backend_calls(const ws_device *dev) {
  return dev && wrapped(dev) ? ((const fault_ops *)(const void *)dev->ops)->calls : 0;
}

unsigned long ws_testing_backend_faults(const ws_device *dev) {
  return dev && wrapped(dev) ? ((const fault_ops *)(const void *)dev->ops)->faults : 0;
}

void ws_testing_corrupt_token(ws_scheduler *s, uint32_t slot, uint32_t token) {
  if (!s || slot >= s->R)
    return;
  s->corrupt_token_armed = true;
  s->corrupt_slot = slot;
  s->corrupt_token = token;
}

void ws_testing_corrupt_list(ws_scheduler *s, uint32_t entry) {
  if (!s || entry == 0 || entry >= s->R)
    return;
  s->corrupt_list_armed = true;
  s->corrupt_entry = entry;
}

void ws_testing_corrupt_count(ws_scheduler *s, uint32_t queue, int32_t delta) {
  if (!s || queue == 0 || queue > s->K)
    return;
  const bool was_wrapped = wrapped(s->dev);
  if (wrap(s->dev) != WS_OK)
    return;
  fault_of(s->dev)->for_corruption = !was_wrapped;
  /* The prologue zeroes the counts: the damaged count is exactly delta,
   * while every token says 0. */
  fault_ops *f = fault_of(s->dev);
  f->corrupt_addr = ws_buffer_address(s->counts) + 4u * queue;
  f->corrupt_value = (uint32_t)delta;
}
