/* SPDX-License-Identifier: MIT */
/* What a device owns, and pools whose stages are the kernels named like
 * them: the API the tutorial is written in, on the tutorial's own kernels
 * (examples/tutorial/collatz.kern.h).
 *   device_owns       ws_device_destroy frees every scheduler, pool, buffer
 *                     and readback still alive on it, after a dispatch too
 *                     (the library's live host allocations return to their
 *                     count before the device); explicit destroys before it,
 *                     in any order that destroys a scheduler before its
 *                     pool, stay valid (a double free would show under ASan,
 *                     a leak in the count);
 *   add_pool          ws_scheduler_add_pool finds the kernel named like the
 *                     stage and runs it over the C slots with the argument
 *                     block given: every result right, in the host and the
 *                     device loop, and the stage's statistics name it;
 *   add_pool_errors   each refusal has its code and a message naming the
 *                     pool, the stage and the numbers that disagree, on the
 *                     scheduler and on the device, and registers nothing: a
 *                     correct registration of a pool of the same name works
 *                     after them;
 *   stage_kernel_errors ws_pool_set_stage_kernels refuses a kernel of another
 *                     device and a coroutine; it and ws_scheduler_add_pool,
 *                     with each host allocation failed in turn, answer
 *                     WS_ENOMEM naming the call, register nothing, and work
 *                     when retried; its backend calls failed in turn leave
 *                     a message naming the pool and the fault, and no leak;
 *                     its stage counters read zero before any dispatch;
 *   errors_on_device  a dispatch's error message is on the device as well
 *                     as on the scheduler;
 *   pool_records      WS_POOL_PUBLISH gives each of C publications its own
 *                     slot's record, and the ones past a full pool the spare
 *                     record past the C slots (never memory the pool does
 *                     not own), counting an error each; WS_POOL_RECORD reads
 *                     back what was written (tests/kernels/t_pool.kern.h),
 *                     and the state words keep free + stage counts = C; in
 *                     both allocations, with a free stack of more than two
 *                     of reset's chunks, and past an append extent with
 *                     free slots below it; a release of a free slot counts
 *                     an error;
 *   append_rule       an append pool's boundary compacts exactly when its
 *                     extent is at least 32 and at least twice the live
 *                     count, moving every live record below the live count,
 *                     and resets an extent with nothing live.
 */
#include "collatz.h"
#include "ws_test.h"

#include <stdio.h>
#include <string.h>

extern const ws_module_set collatz_modules;
extern const ws_module_set t_pool_modules;

/* tests/kernels/t_pool.kern.h */
typedef struct t_pool_args {
  ws_pool_view pool;
  uint64_t where;
  uint64_t out;
} t_pool_args;

static const ws_coroutine_desc collatz_co = {.name = "collatz", .modules = &collatz_modules};
static const ws_aux_producer even = {"even", 1};
static const char *const store_stage[] = {"collatz_store"};

enum { C = 256 }; /* pool capacity = resident frames (bound 1) */

static ws_pool_config pool_config(const char *const *stages) {
  const ws_pool_config pc = {.name = "results",
                             .capacity = C,
                             .stage_count = 1,
                             .stage_names = stages,
                             .payload_stride = sizeof(uint64_t),
                             .producers = &even,
                             .producer_count = 1};
  return pc;
}

static ws_scheduler_config small_config(ws_loop_kind loop) {
  ws_scheduler_config cfg = ws_scheduler_config_default();
  cfg.resident_frames = C;
  cfg.loop = loop;
  cfg.statistics = true;
  return cfg;
}

static uint32_t collatz_steps(uint64_t v) {
  uint32_t n = 0;
  for (; v != 1u; ++n)
    v = v % 2u ? 3u * v + 1u : v / 2u;
  return n;
}

/* Dispatches n items (the pool registered), reads and checks every result. */
static void dispatch_and_check(ws_device *dev, ws_scheduler *s, ws_buffer *out,
                               const collatz_args *args, uint32_t n, const char *what) {
  WT_OK(ws_scheduler_dispatch(s, n, args, sizeof *args), s, what);
  uint32_t *steps = wt_calloc(n, sizeof *steps);
  WT_CHECK(ws_buffer_read(out, 0, steps, (size_t)n * 4u) == WS_OK, "%s: read: %s", what,
           ws_device_last_error(dev));
  for (uint32_t i = 0; i < n; ++i)
    WT_CHECK(steps[i] == collatz_steps(i + 2u), "%s: item %u took %u steps, expected %u", what, i,
             steps[i], collatz_steps(i + 2u));
}

/* A scheduler the test destroys itself (before its pools: not the harness's). */
static ws_scheduler *own_scheduler(const ws_scheduler_config *cfg) {
  ws_scheduler *s = NULL;
  WT_OK(ws_scheduler_create(wt_dev, &collatz_co, cfg, &s), NULL, ws_device_last_error(wt_dev));
  return s;
}

/* A device of the test's backend of its own, which the test destroys. */
static ws_device *own_device(void) {
  ws_device_config dc = {0};
  dc.backend = wt_backend;
  ws_device *dev = NULL;
  ws_status st = ws_device_create(&dc, &dev);
  WT_CHECK(st == WS_OK, "a second %s device: %s", ws_backend_name(wt_backend), ws_status_name(st));
  return dev;
}

/* How many of a device's objects the caller destroys before the device. */
typedef enum leave { LEAVE_ALL, LEAVE_POOL_AND_BUFFERS, LEAVE_BUFFERS, LEAVE_NOTHING } leave;

static void device_owns_case(leave what, bool dispatch, const char *name) {
  const unsigned long before = ws_testing_live_allocations();
  ws_device *dev = own_device();
  ws_buffer *out = NULL, *extra[8] = {0};
  ws_readback *rb = NULL;
  ws_pool *pool = NULL;
  ws_scheduler *s = NULL;
  const ws_pool_config pc = pool_config(store_stage);
  const ws_scheduler_config cfg = small_config(WS_LOOP_AUTO);
  WT_CHECK(ws_buffer_create(dev, C * 4u, &out) == WS_OK &&
               ws_readback_create(dev, 64, &rb) == WS_OK &&
               ws_pool_create(dev, &pc, &pool) == WS_OK &&
               ws_scheduler_create(dev, &collatz_co, &cfg, &s) == WS_OK,
           "%s: creation failed: %s", name, ws_device_last_error(dev));
  for (int i = 0; i < 8; ++i)
    WT_CHECK(ws_buffer_create(dev, 16u << i, &extra[i]) == WS_OK, "%s: buffer %d: %s", name, i,
             ws_device_last_error(dev));
  const collatz_args args = {ws_pool_get_view(pool), ws_buffer_address(out)};
  WT_OK(ws_scheduler_add_pool(s, pool, &args, sizeof args), s, name);
  if (dispatch)
    dispatch_and_check(dev, s, out, &args, C, name);
  if (what >= LEAVE_POOL_AND_BUFFERS)
    ws_scheduler_destroy(s);
  if (what >= LEAVE_BUFFERS)
    ws_pool_destroy(pool);
  if (what >= LEAVE_NOTHING) {
    ws_readback_destroy(rb);
    ws_buffer_destroy(out);
    for (int i = 7; i >= 0; i -= 2) /* every other one, newest first */
      ws_buffer_destroy(extra[i]);
    for (int i = 0; i < 8; i += 2)
      ws_buffer_destroy(extra[i]);
  } else {
    ws_buffer_destroy(extra[3]); /* one from the middle of the device's list */
  }
  ws_device_destroy(dev);
  const unsigned long after = ws_testing_live_allocations();
  WT_CHECK(after == before,
           "%s: %lu library host allocation(s) live after ws_device_destroy, %lu before the "
           "device: what it owned was not all freed",
           name, after, before);
}

static void test_device_owns(void **state) {
  (void)state;
  device_owns_case(LEAVE_ALL, false, "everything left to the device");
  device_owns_case(LEAVE_ALL, true, "everything left to the device after a dispatch");
  device_owns_case(LEAVE_POOL_AND_BUFFERS, true, "the scheduler destroyed first");
  device_owns_case(LEAVE_BUFFERS, true, "the scheduler and the pool destroyed first");
  device_owns_case(LEAVE_NOTHING, true, "everything destroyed first");
  ws_device_destroy(NULL);
}

static void add_pool_case(ws_loop_kind loop, const char *name) {
  const ws_pool_config pc = pool_config(store_stage);
  const ws_scheduler_config cfg = small_config(loop);
  ws_pool *pool = NULL;
  WT_CHECK(ws_pool_create(wt_dev, &pc, &pool) == WS_OK, "%s: ws_pool_create: %s", name,
           ws_device_last_error(wt_dev));
  ws_scheduler *s = own_scheduler(&cfg);
  ws_buffer *out = wt_buffer(1000 * 4u);
  const collatz_args args = {ws_pool_get_view(pool), ws_buffer_address(out)};
  WT_OK(ws_scheduler_add_pool(s, pool, &args, sizeof args), s, name);
  dispatch_and_check(wt_dev, s, out, &args, 1000, name);
  /* again: the same registration, a second dispatch */
  dispatch_and_check(wt_dev, s, out, &args, 1000, name);
  ws_dispatch_stats ds;
  ws_scheduler_dispatch_stats(s, &ds);
  WT_CHECK(ds.loop == loop, "%s: the dispatch ran in loop %d", name, (int)ds.loop);
  ws_node_stats ns;
  WT_CHECK(ws_scheduler_aux_stats_count(s) == 1 && ws_scheduler_aux_stats(s, 0, &ns) == WS_OK &&
               strcmp(ns.name, "collatz_store") == 0 && ns.dispatch_count > 0 &&
               ns.executed_count == 1000,
           "%s: the stage's statistics are not those of collatz_store over 1000 records (%s, %llu "
           "dispatches, %llu records)",
           name, ns.name ? ns.name : "(null)", (unsigned long long)ns.dispatch_count,
           (unsigned long long)ns.executed_count);
  ws_scheduler_destroy(s);
  ws_pool_destroy(pool);
}

static void test_add_pool(void **state) {
  (void)state;
  add_pool_case(WS_LOOP_HOST, "host loop");
  if (wt_backend != WS_BACKEND_VULKAN) /* Vulkan's device loop: docs/loop.md */
    add_pool_case(WS_LOOP_DEVICE, "device loop");
}

/* add_pool must fail with `expect` and a message that contains every
 * non-NULL needle, on the scheduler and on the device. */
static void expect_refused(ws_scheduler *s, ws_pool *pool, const void *args, size_t size,
                           ws_status expect, const char *what, const char *n1, const char *n2) {
  WT_EXPECT_STATUS(ws_scheduler_add_pool(s, pool, args, size), expect, s, what);
  const char *msg = ws_scheduler_last_error(s), *dmsg = ws_device_last_error(wt_dev);
  WT_CHECK(strstr(msg, "ws_scheduler_add_pool") && (!n1 || strstr(msg, n1)) &&
               (!n2 || strstr(msg, n2)),
           "%s: the message does not name the call, '%s' and '%s': %s", what, n1 ? n1 : "",
           n2 ? n2 : "", msg);
  WT_CHECK(strstr(dmsg, msg) != NULL, "%s: the device does not keep the message: '%s'", what, dmsg);
}

static ws_status no_stage(void *user, ws_pool *pool, uint32_t stage) {
  (void)user, (void)pool, (void)stage;
  return WS_OK;
}

static void test_add_pool_errors(void **state) {
  (void)state;
  const ws_scheduler_config cfg = small_config(WS_LOOP_AUTO);
  ws_scheduler *s = own_scheduler(&cfg);
  ws_buffer *out = wt_buffer(500 * 4u);
  static const char *const nosuch[] = {"nosuch"}, *const coroutine[] = {"collatz"};
  const ws_pool_config bad_name = pool_config(nosuch), bad_kind = pool_config(coroutine);
  ws_pool_config with_callback = pool_config(store_stage);
  with_callback.run_stage = no_stage;
  ws_pool *p1 = NULL, *p2 = NULL, *p3 = NULL, *good = NULL;
  const ws_pool_config good_config = pool_config(store_stage);
  WT_CHECK(ws_pool_create(wt_dev, &bad_name, &p1) == WS_OK &&
               ws_pool_create(wt_dev, &bad_kind, &p2) == WS_OK &&
               ws_pool_create(wt_dev, &with_callback, &p3) == WS_OK &&
               ws_pool_create(wt_dev, &good_config, &good) == WS_OK,
           "ws_pool_create: %s", ws_device_last_error(wt_dev));
  const collatz_args args = {ws_pool_get_view(good), ws_buffer_address(out)};
  expect_refused(s, p1, &args, sizeof args, WS_ENOKERNEL, "a stage no kernel is named like",
                 "'results', stage 0", "nosuch");
  expect_refused(s, p2, &args, sizeof args, WS_EINVAL, "a stage named like the coroutine",
                 "'collatz' is a coroutine", NULL);
  char size[32];
  snprintf(size, sizeof size, "takes %zu", sizeof args);
  expect_refused(s, good, &args, sizeof args - 8, WS_EINVAL, "a short argument block", size,
                 "has 48");
  WT_CHECK(!strstr(ws_scheduler_last_error(s), "at NULL"),
           "a short argument block that is not at NULL is said to be: %s",
           ws_scheduler_last_error(s));
  expect_refused(s, good, NULL, sizeof args, WS_EINVAL, "an argument block at NULL", "at NULL",
                 NULL);
  expect_refused(s, p3, &args, sizeof args, WS_EINVAL, "an argument block for run_stage",
                 "run_stage", NULL);
  /* either half of a block is one too much for stages that take none */
  expect_refused(s, p3, &args, 0, WS_EINVAL, "an empty argument block for run_stage",
                 "block of 0 bytes", NULL);
  expect_refused(s, p3, NULL, sizeof args, WS_EINVAL, "a block size without a block for run_stage",
                 "run_stage", NULL);
  expect_refused(s, NULL, &args, sizeof args, WS_EINVAL, "a NULL pool", "NULL", NULL);
  WT_EXPECT_STATUS(ws_scheduler_add_pool(NULL, good, &args, sizeof args), WS_EINVAL, NULL,
                   "a NULL scheduler");
  ws_device *other = own_device();
  ws_pool *elsewhere = NULL;
  WT_CHECK(ws_pool_create(other, &good_config, &elsewhere) == WS_OK, "a pool on a second device");
  expect_refused(s, elsewhere, &args, sizeof args, WS_EINVAL, "a pool on another device",
                 "another device", NULL);
  ws_device_destroy(other); /* and the pool on it */
  /* nothing was registered: a pool of the same name registers, and runs */
  WT_OK(ws_scheduler_add_pool(s, good, &args, sizeof args), s, "the correct registration");
  dispatch_and_check(wt_dev, s, out, &args, 500, "after the refusals");
  /* kernels found by one registration are found again by the next, with
   * its own argument block ... */
  ws_scheduler *s2 = own_scheduler(&cfg), *s3 = own_scheduler(&cfg);
  WT_OK(ws_scheduler_add_pool(s2, good, &args, sizeof args), s2, "a second scheduler");
  dispatch_and_check(wt_dev, s2, out, &args, 500, "the second scheduler");
  /* ... but kernels the caller set are the caller's: no block goes to them */
  ws_aux_stage_kernel sk = {.args = &args, .args_size = sizeof args, .count = C};
  WT_CHECK(ws_kernel_find(wt_dev, &collatz_modules, "collatz_store", &sk.kernel) == WS_OK &&
               ws_pool_set_stage_kernels(good, &sk) == WS_OK,
           "ws_pool_set_stage_kernels: %s", ws_device_last_error(wt_dev));
  expect_refused(s3, good, &args, sizeof args, WS_EINVAL, "a block for kernels the caller set",
                 "with the kernels ws_pool_set_stage_kernels set", NULL);
  WT_OK(ws_scheduler_add_pool(s3, good, NULL, 0), s3, "the caller's kernels");
  dispatch_and_check(wt_dev, s3, out, &args, 500, "the caller's kernels");
  ws_scheduler_destroy(s3);
  ws_scheduler_destroy(s2);
  ws_scheduler_destroy(s);
  ws_pool_destroy(p1);
  ws_pool_destroy(p2);
  ws_pool_destroy(p3);
  ws_pool_destroy(good);
}

/* ws_pool_set_stage_kernels' counters read zero before any dispatch; it
 * refuses a kernel of another device and a coroutine, each alone; it and
 * ws_scheduler_add_pool with every host allocation failed in turn answer
 * WS_ENOMEM with a message naming the call, register nothing, and work
 * when retried; its backend calls failed in turn name the pool and the
 * fault and leave nothing allocated. */
static void test_stage_kernel_errors(void **state) {
  (void)state;
  const ws_pool_config pc = pool_config(store_stage);
  ws_pool *pool = NULL;
  ws_buffer *out = wt_buffer(500 * 4u);
  WT_CHECK(ws_pool_create(wt_dev, &pc, &pool) == WS_OK, "ws_pool_create: %s",
           ws_device_last_error(wt_dev));
  const collatz_args args = {ws_pool_get_view(pool), ws_buffer_address(out)};
  ws_aux_stage_kernel sk = {.args = &args, .args_size = sizeof args, .count = C};
  /* The device loop's stage counters read zero before any dispatch, even
   * in memory that held something else: buffers of their size, filled with
   * ones and freed, are what the allocator hands out next. */
  ws_buffer *junk[4] = {NULL};
  for (int j = 0; j < 4; ++j)
    WT_CHECK(ws_buffer_create(wt_dev, 40, &junk[j]) == WS_OK &&
                 ws_buffer_fill_u32(junk[j], 0, 0xffffffffu, 10) == WS_OK,
             "a buffer: %s", ws_device_last_error(wt_dev));
  WT_CHECK(ws_device_synchronize(wt_dev) == WS_OK, "synchronize");
  for (int j = 0; j < 4; ++j)
    ws_buffer_destroy(junk[j]);
  WT_CHECK(ws_kernel_find(wt_dev, &collatz_modules, "collatz_store", &sk.kernel) == WS_OK &&
               ws_pool_set_stage_kernels(pool, &sk) == WS_OK,
           "ws_pool_set_stage_kernels: %s", ws_device_last_error(wt_dev));
  ws_pool_counters pcnt;
  WT_CHECK(ws_pool_stage_counters(pool, 0, &pcnt) == WS_OK && pcnt.dispatches == 0 &&
               pcnt.executed == 0,
           "before any dispatch the pool counts %llu dispatches, %llu executed",
           (unsigned long long)pcnt.dispatches, (unsigned long long)pcnt.executed);
  ws_device *other = own_device();
  WT_CHECK(ws_kernel_find(other, &collatz_modules, "collatz_store", &sk.kernel) == WS_OK,
           "collatz_store on a second device: %s", ws_device_last_error(other));
  WT_EXPECT_STATUS(ws_pool_set_stage_kernels(pool, &sk), WS_EINVAL, NULL,
                   "a stage kernel of another device");
  ws_device_destroy(other);
  WT_CHECK(ws_kernel_find(wt_dev, &collatz_modules, "collatz", &sk.kernel) == WS_OK,
           "the coroutine collatz: %s", ws_device_last_error(wt_dev));
  sk.args_size = sk.kernel.entry->args_size; /* its own block: only the kind is wrong */
  WT_EXPECT_STATUS(ws_pool_set_stage_kernels(pool, &sk), WS_EINVAL, NULL,
                   "a coroutine as a stage kernel");
  WT_CHECK(strstr(ws_device_last_error(wt_dev), "pool 'results': stage kernel 0 is no kernel"),
           "the refusal does not name the pool and the stage: %s", ws_device_last_error(wt_dev));
  ws_pool_destroy(pool);
  const ws_scheduler_config cfg = small_config(WS_LOOP_AUTO);
  for (int call = 0; call < 2; ++call) {
    const char *name = call ? "ws_scheduler_add_pool" : "ws_pool_set_stage_kernels";
    ws_status st = WS_ENOMEM;
    unsigned long n = 1;
    for (; st == WS_ENOMEM && n < 50; ++n) {
      ws_scheduler *s = own_scheduler(&cfg);
      WT_CHECK(ws_pool_create(wt_dev, &pc, &pool) == WS_OK, "ws_pool_create: %s",
               ws_device_last_error(wt_dev));
      const collatz_args a = {ws_pool_get_view(pool), ws_buffer_address(out)};
      sk.args = &a;
      sk.args_size = sizeof a;
      WT_CHECK(ws_kernel_find(wt_dev, &collatz_modules, "collatz_store", &sk.kernel) == WS_OK,
               "collatz_store: %s", ws_device_last_error(wt_dev));
      ws_testing_fail_alloc_after(n);
      st = call ? ws_scheduler_add_pool(s, pool, &a, sizeof a)
                : ws_pool_set_stage_kernels(pool, &sk);
      ws_testing_fail_alloc_after(0);
      const char *msg = call ? ws_scheduler_last_error(s) : ws_device_last_error(wt_dev);
      WT_CHECK(st == WS_OK || st == WS_ENOMEM, "%s, allocation %lu failed: %s (%s)", name, n,
               ws_status_name(st), msg);
      if (st == WS_ENOMEM) {
        WT_CHECK(strstr(msg, call ? "ws_scheduler_add_" : "pool 'results': ") &&
                     (strstr(msg, "out of host memory") || strstr(msg, "no host memory")),
                 "%s, allocation %lu failed: the message does not name the call and the "
                 "cause: '%s'",
                 name, n, msg);
        WT_CHECK(ws_scheduler_aux_stats_count(s) == 0, "%s, allocation %lu failed: registered",
                 name, n);
        /* the retry works: the pool kept nothing half-made */
        if (!call)
          WT_CHECK(ws_pool_set_stage_kernels(pool, &sk) == WS_OK,
                   "%s, allocation %lu failed: the retry: %s", name, n,
                   ws_device_last_error(wt_dev));
      }
      if (!call || st == WS_ENOMEM) /* the kernels set, or add_pool's retry */
        WT_OK(ws_scheduler_add_pool(s, pool, call ? &a : NULL, call ? sizeof a : 0), s, name);
      dispatch_and_check(wt_dev, s, out, &a, 500, name);
      ws_scheduler_destroy(s);
      ws_pool_destroy(pool);
    }
    WT_CHECK(st == WS_OK && n > 2, "%s: %lu allocations failed in turn, then %s", name, n - 2,
             ws_status_name(st));
  }
  /* ws_pool_set_stage_kernels' backend calls (its counters' buffer and
   * their fill) failed in turn, on a device of its own (the fault wrapper
   * lives with it): the error names the pool and the fault, and nothing
   * is left allocated once the pool is gone */
  ws_device *dev = own_device();
  WT_CHECK(ws_kernel_find(dev, &collatz_modules, "collatz_store", &sk.kernel) == WS_OK,
           "collatz_store: %s", ws_device_last_error(dev));
  WT_CHECK(ws_testing_fail_backend_after(dev, 0) == WS_OK, "the fault wrapper");
  ws_status st = WS_EBACKEND;
  unsigned long n = 1;
  for (; st != WS_OK && n < 20; ++n) {
    const unsigned long live0 = ws_testing_live_allocations();
    WT_CHECK(ws_pool_create(dev, &pc, &pool) == WS_OK, "ws_pool_create: %s",
             ws_device_last_error(dev));
    const collatz_args a = {ws_pool_get_view(pool), 0}; /* never dispatched */
    sk.args = &a;
    WT_CHECK(ws_testing_fail_backend_after(dev, n) == WS_OK, "the fault wrapper");
    st = ws_pool_set_stage_kernels(pool, &sk);
    WT_CHECK(ws_testing_fail_backend_after(dev, 0) == WS_OK, "the fault wrapper");
    const char *msg = ws_device_last_error(dev);
    WT_CHECK(st == WS_OK || ((st == WS_EDEVMEM || st == WS_EBACKEND) &&
                             strstr(msg, "pool 'results': cannot allocate its stage counters: ") &&
                             strstr(msg, "injected fault")),
             "ws_pool_set_stage_kernels, backend call %lu failed: %s (%s)", n, ws_status_name(st),
             msg);
    ws_pool_destroy(pool);
    /* the device would free a lost buffer only when it goes */
    WT_CHECK(ws_testing_live_allocations() == live0,
             "ws_pool_set_stage_kernels, backend call %lu failed: %lu allocations left", n,
             ws_testing_live_allocations() - live0);
  }
  WT_CHECK(st == WS_OK && n > 2,
           "ws_pool_set_stage_kernels: %lu backend calls failed in turn, then %s", n - 2,
           ws_status_name(st));
  ws_device_destroy(dev);
}

static void test_errors_on_device(void **state) {
  (void)state;
  ws_scheduler *s = wt_scheduler(&collatz_co, NULL);
  const collatz_args args = {{0}, 0};
  WT_EXPECT_STATUS(ws_scheduler_dispatch(s, 1, &args, sizeof args - 8), WS_EINVAL, s,
                   "a dispatch with a short argument block");
  WT_CHECK(strstr(ws_scheduler_last_error(s), "argument block") &&
               strcmp(ws_device_last_error(wt_dev), ws_scheduler_last_error(s)) == 0,
           "the device's message '%s' is not the scheduler's '%s'", ws_device_last_error(wt_dev),
           ws_scheduler_last_error(s));
}

/* A pool of `cap` slots allocating by `mode`, reset as a dispatch would
 * (the free stack or the extent, the counts); `*w` its work. */
static ws_pool *fresh_pool(uint32_t cap, uint32_t mode, const ws_aux_work **w) {
  ws_pool_config pc = pool_config(store_stage);
  pc.capacity = cap;
  ws_pool *pool = NULL;
  WT_CHECK(ws_pool_create(wt_dev, &pc, &pool) == WS_OK &&
               ws_pool_set_allocation(pool, mode) == WS_OK,
           "ws_pool_create: %s", ws_device_last_error(wt_dev));
  *w = ws_pool_work(pool);
  WT_CHECK((*w)->reset((*w)->user) == WS_OK, "pool reset: %s", ws_device_last_error(wt_dev));
  return pool;
}

/* A kernel of tests/kernels/t_pool.kern.h. */
static ws_kernel t_pool_kernel(const char *name) {
  ws_kernel k;
  WT_CHECK(ws_kernel_find(wt_dev, &t_pool_modules, name, &k) == WS_OK, "%s: %s", name,
           ws_device_last_error(wt_dev));
  return k;
}

/* cap publications and extra past them into a fresh pool of cap slots
 * allocating by `mode` (WS_POOL_STACK or WS_POOL_APPEND). */
static void pool_records_case(uint32_t cap, uint32_t extra, uint32_t mode) {
  const uint32_t n = cap + extra;
  const ws_aux_work *w = NULL;
  ws_pool *pool = fresh_pool(cap, mode, &w);
  ws_buffer *where = wt_buffer((size_t)n * 4u), *out = wt_buffer((size_t)cap * 8u);
  const t_pool_args args = {ws_pool_get_view(pool), ws_buffer_address(where),
                            ws_buffer_address(out)};
  const ws_kernel publish = t_pool_kernel("t_publish"), read = t_pool_kernel("t_read");
  WT_CHECK(ws_kernel_launch(&publish, n, &args, sizeof args) == WS_OK &&
               ws_kernel_launch(&read, cap, &args, sizeof args) == WS_OK,
           "launch: %s", ws_device_last_error(wt_dev));
  uint32_t *slot = wt_calloc(n, sizeof *slot), *seen = wt_calloc(cap + 1u, sizeof *seen);
  uint64_t *rec = wt_calloc(cap, sizeof *rec);
  wt_read(where, slot, (size_t)n * sizeof *slot);
  wt_read(out, rec, (size_t)cap * sizeof *rec);
  for (uint32_t i = 0; i < n; ++i) {
    WT_CHECK(slot[i] <= cap, "publication %u got record %u, outside the %u slots and the spare", i,
             slot[i], cap);
    seen[slot[i]] += 1;
    WT_CHECK(slot[i] == cap || rec[slot[i]] == i + 1u,
             "slot %u holds %llu, publication %u wrote %u", slot[i],
             (unsigned long long)rec[slot[i]], i, i + 1u);
  }
  for (uint32_t s = 0; s < cap; ++s)
    WT_CHECK(seen[s] == 1, "slot %u got %u publications, expected 1", s, seen[s]);
  WT_CHECK(seen[cap] == extra, "%u publications went to the spare record, expected %u", seen[cap],
           extra);
  /* the state words keep the invariant free + stage counts = C: a refused
   * publication gives its slot back and counts an error */
  const ws_kernel state = t_pool_kernel("t_state");
  WT_CHECK(ws_kernel_launch(&state, 4, &args, sizeof args) == WS_OK, "t_state: %s",
           ws_device_last_error(wt_dev));
  uint64_t words[4];
  wt_read(out, words, sizeof words);
  /* the free count refuses first: the extent stops at C */
  const uint64_t extent = mode == WS_POOL_APPEND ? cap : 0u;
  WT_CHECK(words[0] == 0 && words[1] == extra && words[2] == cap && words[3] == extent,
           "%s pool: free count %llu, errors %llu, stage count %llu, extent %llu; expected 0, "
           "%u, %u, %llu",
           mode == WS_POOL_APPEND ? "append" : "free-stack", (unsigned long long)words[0],
           (unsigned long long)words[1], (unsigned long long)words[2], (unsigned long long)words[3],
           extra, cap, (unsigned long long)extent);
  /* the errors the kernels counted, as a dispatch's boundary observes them */
  uint32_t live = 0;
  WT_CHECK(w->enqueue_count_readback(w->user) == WS_OK && ws_device_synchronize(wt_dev) == WS_OK,
           "count readback: %s", ws_device_last_error(wt_dev));
  WT_CHECK(w->host_count(w->user, &live) == WS_EPROTO_CLIENT && ws_pool_errors(pool) == extra,
           "the pool observed %u errors, expected %u", ws_pool_errors(pool), extra);
  ws_pool_destroy(pool);
}

/* A fresh pool of `cap` slots with the argument blocks of its
 * publications (where[] receives their records, out[] what t_read and
 * t_state copy) and of its releases (drop[i] != 0: release slot i). */
typedef struct pool_run {
  ws_pool *pool;
  const ws_aux_work *w;
  ws_buffer *where, *drop, *out;
  t_pool_args pub, rel;
} pool_run;

static void pool_run_init(pool_run *r, uint32_t cap, uint32_t mode) {
  r->pool = fresh_pool(cap, mode, &r->w);
  r->where = wt_buffer(cap * 4u);
  r->drop = wt_buffer(cap * 4u);
  r->out = wt_buffer(cap * 8u);
  const t_pool_args a = {ws_pool_get_view(r->pool), ws_buffer_address(r->where),
                         ws_buffer_address(r->out)};
  r->pub = r->rel = a;
  r->rel.where = ws_buffer_address(r->drop);
}

/* The append storage's rule at an admission boundary (pool.c, Cycles'):
 * `extent` publications, all but `live` of them released (every other one
 * first, then from the top); the boundary then compacts when the extent is
 * at least 32 and at least twice the live count (the live records move into
 * [0, live) and the extent becomes live), resets an extent with nothing
 * live, and otherwise leaves it. */
static void append_rule_case(uint32_t extent, uint32_t live) {
  enum { CAP = 64 };
  char what[64];
  snprintf(what, sizeof what, "append extent %u, %u live", extent, live);
  pool_run r;
  pool_run_init(&r, CAP, WS_POOL_APPEND);
  const ws_aux_work *w = r.w;
  const ws_kernel publish = t_pool_kernel("t_publish"), read = t_pool_kernel("t_read"),
                  release = t_pool_kernel("t_release");
  uint32_t drop[CAP] = {0}, kept = extent;
  for (uint32_t i = 1; i < extent && kept > live; i += 2, --kept)
    drop[i] = 1;
  for (uint32_t i = extent; i-- > 0 && kept > live;)
    if (!drop[i])
      drop[i] = 1, --kept;
  WT_CHECK(ws_kernel_launch(&publish, extent, &r.pub, sizeof r.pub) == WS_OK &&
               ws_buffer_write(r.drop, 0, drop, sizeof drop) == WS_OK &&
               ws_kernel_launch(&release, extent, &r.rel, sizeof r.rel) == WS_OK &&
               w->enqueue_count_readback(w->user) == WS_OK &&
               ws_device_synchronize(wt_dev) == WS_OK,
           "%s: launches: %s", what, ws_device_last_error(wt_dev));
  uint32_t seen_live = 0;
  WT_CHECK(w->host_count(w->user, &seen_live) == WS_OK && seen_live == live,
           "%s: the boundary observed %u live: %s", what, seen_live, ws_device_last_error(wt_dev));
  WT_CHECK(w->prepare_for_admission(w->user) == WS_OK &&
               ws_kernel_launch(&read, CAP, &r.pub, sizeof r.pub) == WS_OK,
           "%s: prepare_for_admission: %s", what, ws_device_last_error(wt_dev));
  ws_pool_storage ps;
  WT_CHECK(ws_pool_storage_stats(r.pool, &ps) == WS_OK, "%s: storage statistics", what);
  const bool compact = live > 0 && extent >= 32u && extent >= 2u * live;
  const uint32_t want = live == 0 ? 0u : compact ? live : extent;
  WT_CHECK(ps.extent == want && ps.compactions == (compact ? 1u : 0u) &&
               ps.reclaims == (live == 0 ? 1u : 0u),
           "%s: extent %u, %llu compactions, %llu reclaims; expected extent %u, %u, %u", what,
           ps.extent, (unsigned long long)ps.compactions, (unsigned long long)ps.reclaims, want,
           compact ? 1u : 0u, live == 0 ? 1u : 0u);
  if (compact) {
    /* the kept records (publication i wrote i + 1), each once, below live */
    uint64_t rec[CAP];
    wt_read(r.out, rec, sizeof rec);
    uint32_t found[CAP] = {0};
    for (uint32_t s = 0; s < live; ++s)
      if (rec[s] >= 1u && rec[s] <= extent && !drop[rec[s] - 1u])
        found[rec[s] - 1u] += 1;
    for (uint32_t i = 0; i < extent; ++i)
      WT_CHECK(found[i] == (drop[i] ? 0u : 1u),
               "%s: publication %u's record is in [0, %u) %u times", what, i, live, found[i]);
  }
  ws_pool_destroy(r.pool);
}

static void test_append_rule(void **state) {
  (void)state;
  const uint32_t cases[][2] = {{32, 16}, {31, 15}, {33, 17}, {34, 17}, {64, 32},
                               {64, 33}, {40, 1},  {40, 0},  {5, 0},   {20, 3}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i)
    append_rule_case(cases[i][0], cases[i][1]);
}

/* An append pool with holes but no room above its extent: a full extent of
 * 64, 10 of them released, then 3 publications. The free count lets them
 * through, the extent refuses them (the spare record, an error each, the
 * free count given back), and it stays past C by 3. */
static void append_overflow_case(void) {
  enum { CAP = 64, HOLES = 10, MORE = 3 };
  pool_run r;
  pool_run_init(&r, CAP, WS_POOL_APPEND);
  uint32_t mask[CAP] = {0};
  for (uint32_t i = 0; i < HOLES; ++i)
    mask[3u * i + 1u] = 1;
  const ws_kernel publish = t_pool_kernel("t_publish"), release = t_pool_kernel("t_release"),
                  state = t_pool_kernel("t_state");
  WT_CHECK(ws_kernel_launch(&publish, CAP, &r.pub, sizeof r.pub) == WS_OK &&
               ws_buffer_write(r.drop, 0, mask, sizeof mask) == WS_OK &&
               ws_kernel_launch(&release, CAP, &r.rel, sizeof r.rel) == WS_OK &&
               ws_kernel_launch(&publish, MORE, &r.pub, sizeof r.pub) == WS_OK,
           "launches: %s", ws_device_last_error(wt_dev));
  uint32_t slot[MORE];
  wt_read(r.where, slot, sizeof slot);
  for (uint32_t i = 0; i < MORE; ++i)
    WT_CHECK(slot[i] == CAP, "publication %u past the extent got record %u, not the spare %u", i,
             slot[i], CAP);
  WT_CHECK(ws_kernel_launch(&state, 4, &r.pub, sizeof r.pub) == WS_OK, "t_state: %s",
           ws_device_last_error(wt_dev));
  uint64_t words[4];
  wt_read(r.out, words, sizeof words);
  WT_CHECK(words[0] == HOLES && words[1] == MORE && words[2] == CAP - HOLES &&
               words[3] == CAP + MORE,
           "append pool past its extent: free count %llu, errors %llu, stage count %llu, extent "
           "%llu; expected %u, %u, %u, %u",
           (unsigned long long)words[0], (unsigned long long)words[1], (unsigned long long)words[2],
           (unsigned long long)words[3], HOLES, MORE, CAP - HOLES, CAP + MORE);
  ws_pool_destroy(r.pool);
}

/* A release of a slot that is already free (the pool's 8 items published,
 * all released, then the first again) counts an error and writes no free
 * stack entry past C. */
static void double_release_case(void) {
  enum { CAP = 8 };
  pool_run r;
  pool_run_init(&r, CAP, WS_POOL_STACK);
  const ws_kernel publish = t_pool_kernel("t_publish"), release = t_pool_kernel("t_release"),
                  state = t_pool_kernel("t_state");
  WT_CHECK(ws_kernel_launch(&publish, CAP, &r.pub, sizeof r.pub) == WS_OK &&
               ws_buffer_fill_u32(r.drop, 0, 1, CAP) == WS_OK &&
               ws_kernel_launch(&release, CAP, &r.rel, sizeof r.rel) == WS_OK &&
               ws_kernel_launch(&release, 1, &r.rel, sizeof r.rel) == WS_OK &&
               ws_kernel_launch(&state, 2, &r.pub, sizeof r.pub) == WS_OK,
           "launches: %s", ws_device_last_error(wt_dev));
  uint64_t words[2];
  wt_read(r.out, words, sizeof words);
  WT_CHECK(words[1] == 1, "a second release of a free slot: %llu errors counted, expected 1",
           (unsigned long long)words[1]);
  ws_pool_destroy(r.pool);
}

static void test_pool_records(void **state) {
  (void)state;
  pool_records_case(64, 5, WS_POOL_STACK);
  pool_records_case(64, 5, WS_POOL_APPEND);
  append_overflow_case();
  double_release_case();
  /* a free stack of more than two of the chunks reset writes it in (64 Ki
   * words, pool.c): every slot of every chunk is handed out once */
  pool_records_case(2u * 65536u + 37u, 3, WS_POOL_STACK);
}

int main(int argc, char **argv) {
  const wt_need needs[] = {{&collatz_modules, "collatz"},
                           {&collatz_modules, "collatz_store"},
                           {&t_pool_modules, "t_publish"}};
  wt_init(argc, argv, needs, 3);
  wt_add("device_owns", test_device_owns, NULL);
  wt_add("add_pool", test_add_pool, NULL);
  wt_add("stage_kernel_errors", test_stage_kernel_errors, NULL);
  wt_add("add_pool_errors", test_add_pool_errors, NULL);
  wt_add("errors_on_device", test_errors_on_device, NULL);
  wt_add("pool_records", test_pool_records, NULL);
  wt_add("append_rule", test_append_rule, NULL);
  return wt_run("core_owned");
}
