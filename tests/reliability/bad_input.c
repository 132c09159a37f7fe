/* SPDX-License-Identifier: MIT */
/* Bad input and misbehaving clients (issue 6, docs/errors.md): every public
 * call given what it must refuse returns its documented status, leaves *out
 * NULL, leaks nothing and leaves a message. Complements tests/aux
 * (aux_protocol.c: registration errors and protocol violations) and
 * tests/core (configuration errors, verification).
 *
 * Usage: bad_input --backend cpu|cuda|vulkan
 * The test_bug_* cases pin library bugs this suite found and that are fixed
 * (docs/errors.md §3); a crash is caught in a child process. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <omp.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rel_rig.h"
#include "wavesched/testing.h"

static ws_backend_kind g_backend = WS_BACKEND_CPU;
static ws_device *g_dev;
static unsigned long g_live0;

/* Every test leaves the live allocation count where it found it. */
static int setup(void **state) {
  (void)state;
  g_live0 = ws_testing_live_allocations();
  return 0;
}
static int teardown(void **state) {
  (void)state;
  assert_int_equal(ws_testing_live_allocations(), g_live0);
  return 0;
}

#define EXPECT(call, want)                                                                 \
  do {                                                                                     \
    ws_status got_ = (call);                                                               \
    if (got_ != (want))                                                                    \
      fail_msg("%s: expected %s, got %s (device: %s)", #call, ws_status_name(want),        \
               ws_status_name(got_), ws_device_last_error(g_dev));                         \
  } while (0)

static ws_scheduler_config small_config(uint32_t R) {
  ws_scheduler_config c = ws_scheduler_config_default();
  c.resident_frames = R;
  c.block_size = 32;
  c.iteration_limit = 100000;
  return c;
}

/* Creation must fail with `want`, leave *out NULL and leak nothing. */
static void expect_create(const ws_coroutine_desc *co, const ws_scheduler_config *c,
                          ws_status want, const char *what) {
  ws_scheduler *const poison = (ws_scheduler *)(uintptr_t)8;
  ws_scheduler *s = poison;
  unsigned long live = ws_testing_live_allocations();
  ws_status st = ws_scheduler_create(g_dev, co, c, &s);
  if (st != want)
    fail_msg("%s: ws_scheduler_create: expected %s, got %s", what, ws_status_name(want),
             ws_status_name(st));
  if (st != WS_OK) {
    assert_null(s);
    assert_int_equal(ws_testing_live_allocations(), live);
  } else {
    ws_scheduler_destroy(s);
  }
}

/* ---- status codes, backend names, device configuration ---- */

static void test_status_table(void **state) {
  (void)state;
  static const ws_status all[] = {
#define WS_ALL_(name, value, msg) WS_##name,
      WS_STATUS_MAP(WS_ALL_)
#undef WS_ALL_
  };
  const size_t n = sizeof all / sizeof all[0];
  for (size_t i = 0; i < n; ++i) {
    assert_true(all[i] <= 0);
    assert_int_equal(strncmp(ws_status_name(all[i]), "WS_", 3), 0);
    assert_string_not_equal(ws_status_name(all[i]), "WS_UNKNOWN");
    assert_true(strlen(ws_strerror(all[i])) > 0);
    for (size_t j = 0; j < i; ++j) {
      assert_int_not_equal(all[i], all[j]);
      assert_string_not_equal(ws_status_name(all[i]), ws_status_name(all[j]));
    }
  }
  assert_string_equal(ws_status_name((ws_status)-999), "WS_UNKNOWN");
  assert_string_equal(ws_status_name((ws_status)1), "WS_UNKNOWN");
  assert_string_equal(ws_strerror((ws_status)-999), "unknown status");
}

static void test_backend_names(void **state) {
  (void)state;
  ws_backend_kind b = WS_BACKEND_CUDA;
  EXPECT(ws_backend_parse("gpu", &b), WS_EINVAL);
  EXPECT(ws_backend_parse("CPU", &b), WS_EINVAL); /* names are lower case */
  EXPECT(ws_backend_parse("", &b), WS_EINVAL);
  EXPECT(ws_backend_parse(NULL, &b), WS_EINVAL);
  EXPECT(ws_backend_parse("cpu", NULL), WS_EINVAL);
  assert_int_equal(b, WS_BACKEND_CUDA); /* untouched on failure */
  EXPECT(ws_backend_parse("vulkan", &b), WS_OK);
  assert_int_equal(b, WS_BACKEND_VULKAN);
  assert_string_equal(ws_backend_name((ws_backend_kind)99), "unknown");
  assert_string_equal(ws_backend_name((ws_backend_kind)-1), "unknown");
  assert_false(ws_backend_compiled((ws_backend_kind)99));
  assert_true(ws_backend_compiled(WS_BACKEND_CPU));
}

static void test_device_config(void **state) {
  (void)state;
  ws_device *const poison = (ws_device *)(uintptr_t)8;
  ws_device *d = poison;
  ws_device_config dc;
  memset(&dc, 0, sizeof dc);
  dc.backend = (ws_backend_kind)7;
  EXPECT(ws_device_create(&dc, &d), WS_ECONFIG_ENUM);
  assert_null(d);
  dc.backend = (ws_backend_kind)-1;
  d = poison;
  EXPECT(ws_device_create(&dc, &d), WS_ECONFIG_ENUM);
  assert_null(d);
  EXPECT(ws_device_create(&dc, NULL), WS_EINVAL);
  /* a backend this build does not contain: WS_ENODEV, never a crash */
  for (int b = 0; b < WS_BACKEND_COUNT; ++b) {
    if (ws_backend_compiled((ws_backend_kind)b))
      continue;
    dc.backend = (ws_backend_kind)b;
    dc.device_index = -1;
    d = poison;
    EXPECT(ws_device_create(&dc, &d), WS_ENODEV);
    assert_null(d);
  }
  /* NULL config: the defaults (CPU) */
  EXPECT(ws_device_create(NULL, &d), WS_OK);
  assert_int_equal(ws_device_backend(d), WS_BACKEND_CPU);
  ws_device_destroy(d);
  ws_device_destroy(NULL);
}

/* ---- NULL arguments to every public call that takes a pointer ---- */

static ws_status noop_stage(void *u, ws_pool *p, uint32_t s) {
  (void)u;
  (void)p;
  (void)s;
  return WS_OK;
}

static void test_null_arguments(void **state) {
  (void)state;
  ws_buffer *b = NULL;
  ws_readback *rb = NULL;
  EXPECT(ws_device_synchronize(NULL), WS_EINVAL);
  assert_string_equal(ws_device_last_error(NULL), "");
  EXPECT(ws_buffer_create(NULL, 16, &b), WS_EINVAL);
  EXPECT(ws_buffer_create(g_dev, 16, NULL), WS_EINVAL);
  assert_int_equal(ws_buffer_address(NULL), 0);
  assert_int_equal(ws_buffer_size(NULL), 0);
  ws_buffer_destroy(NULL);
  uint32_t v[4] = {1, 2, 3, 4};
  EXPECT(ws_buffer_write(NULL, 0, v, 4), WS_EINVAL);
  EXPECT(ws_buffer_read(NULL, 0, v, 4), WS_EINVAL);
  EXPECT(ws_buffer_fill_u32(NULL, 0, 0, 1), WS_EINVAL);
  EXPECT(ws_readback_create(NULL, 16, &rb), WS_EINVAL);
  EXPECT(ws_readback_create(g_dev, 16, NULL), WS_EINVAL);
  ws_readback_destroy(NULL);
  assert_null(ws_readback_data(NULL));
  EXPECT(ws_buffer_create(g_dev, 16, &b), WS_OK);
  EXPECT(ws_readback_create(g_dev, 16, &rb), WS_OK);
  EXPECT(ws_buffer_write(b, 0, NULL, 4), WS_EINVAL);
  EXPECT(ws_buffer_write(b, 0, NULL, 0), WS_OK); /* nothing to copy */
  EXPECT(ws_buffer_read(b, 0, NULL, 4), WS_EINVAL);
  EXPECT(ws_readback_enqueue(NULL, 0, b, 0, 4), WS_EINVAL);
  EXPECT(ws_readback_enqueue(rb, 0, NULL, 0, 4), WS_EINVAL);

  ws_kernel k;
  memset(&k, 0, sizeof k);
  EXPECT(ws_kernel_find(NULL, &fz_kernels_modules, "fz_stage", &k), WS_EINVAL);
  EXPECT(ws_kernel_find(g_dev, NULL, "fz_stage", &k), WS_EINVAL);
  EXPECT(ws_kernel_find(g_dev, &fz_kernels_modules, NULL, &k), WS_EINVAL);
  EXPECT(ws_kernel_find(g_dev, &fz_kernels_modules, "fz_stage", NULL), WS_EINVAL);
  EXPECT(ws_kernel_launch(NULL, 1, NULL, 0), WS_EINVAL);
  EXPECT(ws_kernel_launch(&k, 1, NULL, 0), WS_EINVAL); /* dev and entry NULL */
  EXPECT(ws_kernel_find(g_dev, &fz_kernels_modules, "fz_stage", &k), WS_OK);
  EXPECT(ws_kernel_launch(&k, 1, NULL, sizeof(fz_stage_args)), WS_EINVAL);

  ws_scheduler *const poison = (ws_scheduler *)(uintptr_t)8;
  ws_scheduler *s = poison;
  ws_scheduler_config c = small_config(8);
  EXPECT(ws_scheduler_create(g_dev, &rig_coroutine, &c, NULL), WS_EINVAL);
  EXPECT(ws_scheduler_create(NULL, &rig_coroutine, &c, &s), WS_EINVAL);
  assert_null(s);
  s = poison;
  EXPECT(ws_scheduler_create(g_dev, NULL, &c, &s), WS_EINVAL);
  assert_null(s);
  ws_scheduler_destroy(NULL);
  assert_string_equal(ws_scheduler_last_error(NULL), "");
  EXPECT(ws_scheduler_add_aux(NULL, NULL), WS_EINVAL);
  EXPECT(ws_scheduler_dispatch(NULL, 1, NULL, 0), WS_EINVAL);
  assert_false(ws_scheduler_statistics_enabled(NULL));
  ws_dispatch_stats ds;
  memset(&ds, 0xAB, sizeof ds);
  ws_scheduler_dispatch_stats(NULL, &ds); /* no-op */
  assert_int_equal(ds.iteration_count, 0xABABABABABABABABull);
  assert_int_equal(ws_scheduler_node_count(NULL), 0);
  ws_node_stats ns;
  EXPECT(ws_scheduler_node_stats(NULL, 0, &ns), WS_EINVAL);
  assert_int_equal(ws_scheduler_aux_stats_count(NULL), 0);
  EXPECT(ws_scheduler_aux_stats(NULL, 0, &ns), WS_EINVAL);
  assert_int_equal(ws_scheduler_continuation_index(NULL, "c1"), 0);

  /* with a real scheduler: NULL in each remaining pointer */
  EXPECT(ws_scheduler_create(g_dev, &rig_coroutine, &c, &s), WS_OK);
  EXPECT(ws_scheduler_add_aux(s, NULL), WS_EAUX_NULL);
  assert_true(strlen(ws_scheduler_last_error(s)) > 0);
  EXPECT(ws_scheduler_dispatch(s, 4, NULL, sizeof(fz_args)), WS_EINVAL);
  ws_scheduler_dispatch_stats(s, NULL); /* no-op */
  EXPECT(ws_scheduler_node_stats(s, 0, NULL), WS_EINVAL);
  EXPECT(ws_scheduler_aux_stats(s, 0, NULL), WS_EINVAL);
  assert_int_equal(ws_scheduler_continuation_index(s, NULL), 0);
  assert_int_equal(ws_scheduler_continuation_index(s, "c2"), 2);
  ws_testing_corrupt_count(NULL, 1, 1); /* no-op */
  ws_testing_corrupt_count(s, 0, 1);    /* queue 0 is no queue: no-op */
  ws_testing_corrupt_count(s, 99, 1);   /* out of range: no-op */
  ws_scheduler_destroy(s);
  /* NULL configuration = the defaults */
  s = NULL;
  EXPECT(ws_scheduler_create(g_dev, &rig_coroutine, NULL, &s), WS_OK);
  ws_scheduler_destroy(s);

  /* the pool */
  ws_pool *const ppoison = (ws_pool *)(uintptr_t)8;
  ws_pool *p = ppoison;
  static const char *const one[] = {"only"};
  static const ws_aux_producer prod[] = {{"c1", 1}};
  ws_pool_config pc = {"p", 8, 1, one, 16, prod, 1, noop_stage, NULL};
  EXPECT(ws_pool_create(NULL, &pc, &p), WS_EINVAL);
  assert_null(p);
  EXPECT(ws_pool_create(g_dev, NULL, &p), WS_EINVAL);
  EXPECT(ws_pool_create(g_dev, &pc, NULL), WS_EINVAL);
  pc.name = NULL;
  EXPECT(ws_pool_create(g_dev, &pc, &p), WS_EINVAL);
  pc.name = "p";
  pc.run_stage = NULL; /* legal: the stages may be set as kernels afterwards */
  EXPECT(ws_pool_create(g_dev, &pc, &p), WS_OK);
  EXPECT(ws_pool_set_stage_kernels(p, NULL), WS_EINVAL);
  /* a stage kernel that is none, or with another argument block: refused,
   * naming the pool, the stage and the block's size */
  ws_aux_stage_kernel sk;
  memset(&sk, 0, sizeof sk);
  EXPECT(ws_pool_set_stage_kernels(p, &sk), WS_EINVAL);
  assert_non_null(strstr(ws_device_last_error(g_dev),
                         "pool 'p': stage kernel 0 is no kernel of this device, or its argument "
                         "block (0 bytes) is not the kernel's"));
  fz_stage_args ska;
  memset(&ska, 0, sizeof ska);
  EXPECT(ws_kernel_find(g_dev, &fz_kernels_modules, "fz_stage", &sk.kernel), WS_OK);
  sk.args = &ska;
  sk.args_size = sizeof ska - 4;
  sk.count = 8;
  EXPECT(ws_pool_set_stage_kernels(p, &sk), WS_EINVAL);
  char skmsg[160];
  snprintf(skmsg, sizeof skmsg, "stage kernel 0 is no kernel of this device, or its argument "
                                "block (%u bytes)", (unsigned)(sizeof ska - 4));
  assert_non_null(strstr(ws_device_last_error(g_dev), skmsg));
  sk.args_size = sizeof ska;
  sk.args = NULL;
  EXPECT(ws_pool_set_stage_kernels(p, &sk), WS_EINVAL);
  sk.args = &ska; /* a good one, before the allocation is chosen */
  EXPECT(ws_pool_set_stage_kernels(p, &sk), WS_OK);
  /* issue 18: the allocation is one of the two, and fixed once the view or
   * the work was handed out (both carry it) */
  EXPECT(ws_pool_set_allocation(NULL, WS_POOL_APPEND), WS_EINVAL);
  EXPECT(ws_pool_set_allocation(p, 2), WS_EINVAL);
  assert_non_null(strstr(ws_pool_last_error(p), "neither WS_POOL_STACK (0) nor WS_POOL_APPEND"));
  EXPECT(ws_pool_set_allocation(p, WS_POOL_APPEND), WS_OK);
  EXPECT(ws_pool_set_allocation(p, WS_POOL_STACK), WS_OK); /* not handed out: free to change */
  EXPECT(ws_pool_set_allocation(p, WS_POOL_APPEND), WS_OK);
  /* the device loop's description follows the allocation chosen after the
   * kernels: its append storage is described */
  const ws_aux_work *pw = ws_pool_work(p);
  assert_true(pw->device && pw->device->extent != 0 && pw->device->scratch != 0 &&
              pw->device->storage_counters != 0);
  const ws_pool_view pv = ws_pool_get_view(p);
  assert_int_equal(pv.mode, WS_POOL_APPEND);
  EXPECT(ws_pool_set_allocation(p, WS_POOL_APPEND), WS_OK); /* the same: nothing changes */
  EXPECT(ws_pool_set_allocation(p, WS_POOL_STACK), WS_EINVAL);
  assert_non_null(strstr(ws_pool_last_error(p), "already handed out"));
  ws_pool_storage ps;
  EXPECT(ws_pool_storage_stats(NULL, &ps), WS_EINVAL);
  EXPECT(ws_pool_storage_stats(p, NULL), WS_EINVAL);
  EXPECT(ws_pool_storage_stats(p, &ps), WS_OK);
  assert_true(ps.extent == 0 && ps.reclaims == 0 && ps.compactions == 0);
  /* each stage's counters exist, and none past the last; nowhere to write */
  ws_pool_counters pcnt;
  EXPECT(ws_pool_stage_counters(p, 0, &pcnt), WS_OK);
  EXPECT(ws_pool_stage_counters(p, 1, &pcnt), WS_EINVAL);
  EXPECT(ws_pool_stage_counters(p, 0, NULL), WS_EINVAL);
  assert_int_equal(ws_pool_live(NULL), 0);
  assert_int_equal(ws_pool_errors(NULL), 0);
  ws_pool_destroy(p);
  p = ppoison;
  pc.run_stage = noop_stage;
  pc.stage_names = NULL;
  EXPECT(ws_pool_create(g_dev, &pc, &p), WS_EINVAL);
  assert_null(p);
  ws_pool_destroy(NULL);
  ws_pool_counters cnt;
  EXPECT(ws_pool_stage_counters(NULL, 0, &cnt), WS_EINVAL);
  assert_string_equal(ws_pool_last_error(NULL), "");
  EXPECT(ws_testing_fail_backend_after(NULL, 1), WS_EINVAL);

  ws_readback_destroy(rb);
  ws_buffer_destroy(b);
}

/* ---- buffers: every range and alignment error ---- */

static void test_buffer_ranges(void **state) {
  (void)state;
  ws_buffer *b = NULL, *small = NULL;
  ws_readback *rb = NULL;
  uint32_t v[8] = {0};
  EXPECT(ws_buffer_create(g_dev, 32, &b), WS_OK);
  EXPECT(ws_buffer_create(g_dev, 8, &small), WS_OK);
  EXPECT(ws_readback_create(g_dev, 16, &rb), WS_OK);
  EXPECT(ws_buffer_write(b, 0, v, 33), WS_EINVAL);
  assert_non_null(strstr(ws_device_last_error(g_dev), "exceeds buffer size 32"));
  EXPECT(ws_buffer_write(b, 30, v, 4), WS_EINVAL);
  EXPECT(ws_buffer_write(b, 33, v, 0), WS_EINVAL); /* offset past the end */
  EXPECT(ws_buffer_write(b, 32, v, 0), WS_OK);     /* empty range at the end */
  EXPECT(ws_buffer_write(b, SIZE_MAX, v, 1), WS_EINVAL);
  EXPECT(ws_buffer_write(b, 8, v, SIZE_MAX), WS_EINVAL); /* offset + size wraps */
  EXPECT(ws_buffer_read(b, 0, v, 33), WS_EINVAL);
  EXPECT(ws_buffer_read(b, 16, v, SIZE_MAX - 8), WS_EINVAL);
  EXPECT(ws_buffer_fill_u32(b, 0, 0, 9), WS_EINVAL);
  EXPECT(ws_buffer_fill_u32(b, 2, 0, 1), WS_EINVAL); /* not 4-byte aligned */
  assert_non_null(strstr(ws_device_last_error(g_dev), "not 4-byte aligned"));
  EXPECT(ws_buffer_fill_u32(b, 4, 0, SIZE_MAX / 4 + 1), WS_EINVAL); /* count * 4 wraps */
  EXPECT(ws_buffer_fill_u32(b, 32, 0, 0), WS_OK);
  ws_readback *rb0 = NULL;
  EXPECT(ws_readback_create(g_dev, 0, &rb0), WS_EINVAL); /* size 0 */
  assert_null(rb0);
  EXPECT(ws_readback_enqueue(rb, 0, b, 0, 17), WS_EINVAL); /* beyond the readback */
  assert_non_null(strstr(ws_device_last_error(g_dev), "exceeds readback size 16"));
  EXPECT(ws_readback_enqueue(rb, 12, b, 0, 8), WS_EINVAL);
  EXPECT(ws_readback_enqueue(rb, SIZE_MAX, b, 0, 1), WS_EINVAL);
  EXPECT(ws_readback_enqueue(rb, 0, small, 4, 8), WS_EINVAL); /* beyond the buffer */
  EXPECT(ws_readback_enqueue(rb, 0, small, 0, 8), WS_OK);
  EXPECT(ws_readback_enqueue(rb, 16, small, 8, 0), WS_OK);
  /* a readback and a buffer of different devices */
  ws_device *other = NULL;
  ws_device_config dc;
  memset(&dc, 0, sizeof dc);
  dc.backend = g_backend;
  dc.device_index = -1;
  EXPECT(ws_device_create(&dc, &other), WS_OK);
  ws_buffer *ob = NULL;
  EXPECT(ws_buffer_create(other, 16, &ob), WS_OK);
  EXPECT(ws_readback_enqueue(rb, 0, ob, 0, 4), WS_EINVAL);
  ws_buffer_destroy(ob);
  ws_device_destroy(other);
  ws_readback_destroy(rb);
  ws_buffer_destroy(small);
  ws_buffer_destroy(b);
}

/* ---- kernels ---- */

static void test_kernel_errors(void **state) {
  (void)state;
  ws_kernel k;
  memset(&k, 0, sizeof k);
  EXPECT(ws_kernel_find(g_dev, &fz_kernels_modules, "no_such_kernel", &k), WS_ENOKERNEL);
  assert_non_null(strstr(ws_device_last_error(g_dev), "'no_such_kernel' not found"));
  static const ws_module_set empty = {{NULL, NULL, NULL}};
  EXPECT(ws_kernel_find(g_dev, &empty, "fz_stage", &k), WS_ENOKERNEL);
  assert_non_null(strstr(ws_device_last_error(g_dev), "not built for backend"));
  EXPECT(ws_kernel_find(g_dev, &fz_kernels_modules, "fz_stage", &k), WS_OK);
  unsigned char args[WS_MAX_KERNEL_ARGS + 8];
  memset(args, 0, sizeof args);
  EXPECT(ws_kernel_launch(&k, 1, args, sizeof(fz_stage_args) - 1), WS_EARGS);
  assert_non_null(strstr(ws_device_last_error(g_dev), "argument bytes"));
  EXPECT(ws_kernel_launch(&k, 1, args, sizeof(fz_stage_args) + 1), WS_EARGS);
  EXPECT(ws_kernel_launch(&k, 1, args, WS_MAX_KERNEL_ARGS + 1), WS_EARGS);
  EXPECT(ws_kernel_launch(&k, 1, args, 0), WS_EARGS);
  EXPECT(ws_kernel_launch(&k, 0, args, sizeof(fz_stage_args)), WS_OK); /* n = 0: nothing */
  /* a coroutine is not a plain kernel */
  ws_kernel co;
  EXPECT(ws_kernel_find(g_dev, &fz_kernels_modules, "fz_main", &co), WS_OK);
  EXPECT(ws_kernel_launch(&co, 1, args, 88), WS_EINVAL);
  assert_non_null(strstr(ws_device_last_error(g_dev), "is a coroutine"));
}

/* ---- scheduler configuration and coroutine descriptions ---- */

static void test_config_errors(void **state) {
  (void)state;
  const ws_coroutine_desc *co = &rig_coroutine;
  ws_scheduler_config c = small_config(0);
  expect_create(co, &c, WS_ECONFIG_POOL, "R = 0");
  c = small_config(8);
  c.largest_first = false;
  c.accounting = WS_ACCOUNTING_INCREMENTAL;
  expect_create(co, &c, WS_ECONFIG_ACCOUNTING, "incremental without greedy");
  c.accounting = WS_ACCOUNTING_AUTO; /* the default: materialized under all-queues */
  expect_create(co, &c, WS_OK, "the default accounting without greedy");
  c = small_config(8);
  c.largest_first = false;
  c.accounting = WS_ACCOUNTING_FUSED;
  expect_create(co, &c, WS_ECONFIG_ACCOUNTING, "fused without greedy");
  c = small_config(8);
  c.accounting = (ws_accounting)-1;
  expect_create(co, &c, WS_ECONFIG_ENUM, "accounting out of range");
  const uint32_t bad_blocks[] = {16, 33, 1056, 2048, 31};
  for (size_t i = 0; i < sizeof bad_blocks / sizeof bad_blocks[0]; ++i) {
    c = small_config(8);
    c.block_size = bad_blocks[i];
    expect_create(co, &c, WS_ECONFIG_BLOCK, "block size");
  }
  c = small_config(8);
  c.block_size = 0; /* = 128 */
  expect_create(co, &c, WS_OK, "block size 0");
  c = small_config(8);
  c.layout = 3; /* 2 is WS_LAYOUT_AUTO */
  expect_create(co, &c, WS_ECONFIG_ENUM, "layout 3");
  c = small_config(8);
  c.kind = (ws_scheduler_kind)2;
  expect_create(co, &c, WS_ECONFIG_ENUM, "kind 2");
  c = small_config(8);
  c.aux_protocol = (ws_aux_protocol)5;
  expect_create(co, &c, WS_ECONFIG_ENUM, "aux_protocol 5");
  static const char *const unknown[] = {"c1", "nope"};
  c = small_config(8);
  c.refill_align = unknown;
  c.refill_align_count = 2;
  expect_create(co, &c, WS_ECONFIG_CONTINUATION, "refill_align names no continuation");
  static const char *const null_name[] = {NULL};
  c.refill_align = null_name;
  c.refill_align_count = 1;
  expect_create(co, &c, WS_ECONFIG_CONTINUATION, "refill_align with a NULL name");
  c.refill_align = NULL;
  c.refill_align_count = 3;
  expect_create(co, &c, WS_ECONFIG_CONTINUATION, "refill_align NULL with a count");
  /* the megakernel needs no pool: R = 0 is fine there */
  c = small_config(0);
  c.kind = WS_SCHEDULER_MEGAKERNEL;
  expect_create(co, &c, WS_OK, "megakernel with R = 0");
}

static void test_coroutine_errors(void **state) {
  (void)state;
  ws_scheduler_config c = small_config(8);
  ws_coroutine_desc co = rig_coroutine;
  static const char *const dup[] = {"c1", "c2", "c1", "c4", "c5", "c6"};
  static const char *const empty[] = {"c1", "", "c3", "c4", "c5", "c6"};
  static const char *const nul[] = {"c1", "c2", NULL, "c4", "c5", "c6"};
  static const char *const entry[] = {"c1", "<entry>", "c3", "c4", "c5", "c6"};
  co.continuation_names = dup;
  expect_create(&co, &c, WS_ECONFIG_NAME, "duplicate continuation name");
  co.continuation_names = empty;
  expect_create(&co, &c, WS_ECONFIG_NAME, "empty continuation name");
  co.continuation_names = nul;
  expect_create(&co, &c, WS_ECONFIG_NAME, "NULL continuation name");
  co.continuation_names = entry;
  expect_create(&co, &c, WS_ECONFIG_NAME, "continuation named <entry>");
  co = rig_coroutine;
  co.continuation_count = 0;
  expect_create(&co, &c, WS_ECONFIG_COROUTINE, "no continuations");
  co = rig_coroutine;
  co.continuation_names = NULL;
  expect_create(&co, &c, WS_ECONFIG_COROUTINE, "names NULL");
  co = rig_coroutine;
  co.frame = NULL;
  expect_create(&co, &c, WS_ECONFIG_COROUTINE, "no frame description");
  co = rig_coroutine;
  co.modules = NULL;
  expect_create(&co, &c, WS_ECONFIG_COROUTINE, "no modules");
  co = rig_coroutine;
  co.name = NULL;
  expect_create(&co, &c, WS_ECONFIG_COROUTINE, "no name");
  ws_frame_desc fd = fz_frame_ws_desc;
  co = rig_coroutine;
  co.frame = &fd;
  fd.field_count = WS_MAX_FRAME_FIELDS + 1;
  expect_create(&co, &c, WS_ECONFIG_COROUTINE, "too many frame fields");
  fd = fz_frame_ws_desc;
  fd.size = 0;
  expect_create(&co, &c, WS_ECONFIG_COROUTINE, "frame size 0");
  fd = fz_frame_ws_desc;
  fd.fields = NULL;
  expect_create(&co, &c, WS_ECONFIG_COROUTINE, "fields NULL");
  co = rig_coroutine;
  co.name = "no_such_coroutine";
  expect_create(&co, &c, WS_ENOKERNEL, "coroutine not in the module");
  co.name = "fz_stage"; /* a plain kernel */
  expect_create(&co, &c, WS_ECONFIG_COROUTINE, "a plain kernel as coroutine");
  static const ws_module_set empty_set = {{NULL, NULL, NULL}};
  co = rig_coroutine;
  co.modules = &empty_set;
  expect_create(&co, &c, WS_ENOKERNEL, "module not built for the backend");
}

/* ---- dispatch arguments, N = 0, iteration limit ---- */

static void test_dispatch_arguments(void **state) {
  (void)state;
  rig r;
  rig_init(&r, g_dev, 16, 1, 8, false);
  EXPECT(rig_create(&r), WS_OK);
  r.args.work_count = 0; /* the pool exists (to register late) but is never published to */
  ws_scheduler_config c = small_config(8);
  ws_scheduler *s = NULL;
  EXPECT(ws_scheduler_create(g_dev, &rig_coroutine, &c, &s), WS_OK);
  EXPECT(ws_scheduler_dispatch(s, 16, &r.args, sizeof r.args - 1), WS_EINVAL);
  assert_non_null(strstr(ws_scheduler_last_error(s), "argument block"));
  EXPECT(ws_scheduler_dispatch(s, 16, &r.args, sizeof r.args + 8), WS_EINVAL);
  EXPECT(ws_scheduler_dispatch(s, 16, &r.args, 0), WS_EINVAL);
  /* N = 0: success, nothing runs, statistics zero, registration closed */
  EXPECT(ws_scheduler_dispatch(s, 0, &r.args, sizeof r.args), WS_OK);
  ws_dispatch_stats d;
  ws_scheduler_dispatch_stats(s, &d);
  assert_int_equal(d.iteration_count, 0);
  assert_int_equal(d.generated_count, 0);
  assert_int_equal(d.resumed_count, 0);
  EXPECT(ws_scheduler_add_aux(s, ws_pool_work(r.pool[0])), WS_EAUX_CLOSED);
  assert_non_null(strstr(ws_scheduler_last_error(s), "closed"));
  /* ... and N > 0 still works afterwards */
  EXPECT(rig_zero(&r), WS_OK);
  EXPECT(rig_dispatch(&r, s), WS_OK);
  ws_scheduler_dispatch_stats(s, &d);
  assert_int_equal(d.generated_count, 16);
  ws_scheduler_destroy(s);
  /* the megakernel: N = 0 too */
  c.kind = WS_SCHEDULER_MEGAKERNEL;
  EXPECT(ws_scheduler_create(g_dev, &rig_coroutine, &c, &s), WS_OK);
  EXPECT(ws_scheduler_dispatch(s, 0, &r.args, sizeof r.args), WS_OK);
  ws_scheduler_destroy(s);
  /* an iteration limit below what the work needs: WS_EITERATION_LIMIT */
  c = small_config(4);
  c.iteration_limit = 3;
  EXPECT(ws_scheduler_create(g_dev, &rig_coroutine, &c, &s), WS_OK);
  EXPECT(rig_dispatch(&r, s), WS_EITERATION_LIMIT);
  assert_non_null(strstr(ws_scheduler_last_error(s), "iteration limit 3"));
  ws_scheduler_destroy(s);
  rig_destroy(&r);
}

/* A continuation that returns an index outside 1..K: the wrapper terminates
 * the frame and counts it; the host reports WS_EPROTO_INTERNAL at the next
 * boundary, in every accounting mode and in the megakernel. */
static void test_bad_continuation_index(void **state) {
  (void)state;
  for (int mode = 0; mode < 4; ++mode) {
    rig r;
    rig_init(&r, g_dev, 20, 0, 8, false);
    EXPECT(rig_create(&r), WS_OK);
    r.args.bad_next = FZ_MAX_K + 1 + (uint32_t)mode * 1000u;
    ws_scheduler_config c = small_config(8);
    c.accounting = mode == 1   ? WS_ACCOUNTING_INCREMENTAL
                   : mode == 2 ? WS_ACCOUNTING_FUSED
                               : WS_ACCOUNTING_MATERIALIZED;
    c.kind = mode == 3 ? WS_SCHEDULER_MEGAKERNEL : WS_SCHEDULER_WAVEFRONT;
    ws_scheduler *s = NULL;
    EXPECT(ws_scheduler_create(g_dev, &rig_coroutine, &c, &s), WS_OK);
    EXPECT(rig_zero(&r), WS_OK);
    EXPECT(rig_dispatch(&r, s), WS_EPROTO_INTERNAL);
    assert_non_null(strstr(ws_scheduler_last_error(s), "outside 1..6"));
    /* the same scheduler runs correct work afterwards */
    r.args.bad_next = 0;
    EXPECT(rig_zero(&r), WS_OK);
    EXPECT(rig_dispatch(&r, s), WS_OK);
    uint32_t done[20];
    EXPECT(ws_buffer_read(r.done, 0, done, sizeof done), WS_OK);
    for (int i = 0; i < 20; ++i)
      assert_int_equal(done[i], 1);
    ws_scheduler_destroy(s);
    rig_destroy(&r);
  }
}

/* Queue verification (SPEC §5) reports a corrupted count; without it the
 * loop may misbehave but must return (no hang, no out-of-bounds access,
 * which ASan checks) and the scheduler must work again afterwards. Under
 * fused accounting a resume scans for its frames (scan mode), and a count
 * raised by 3 is caught by the scan's own tally, with exact numbers. */
static void test_corrupted_count(void **state) {
  (void)state;
  const int32_t deltas[] = {3, -1, 1000};
  for (int verify = 1; verify >= -1; --verify) {
    for (size_t i = 0; i < sizeof deltas / sizeof deltas[0]; ++i) {
      rig r;
      rig_init(&r, g_dev, 40, 1, 8, false);
      EXPECT(rig_create(&r), WS_OK);
      ws_scheduler_config c = small_config(8);
      c.verify_queues = verify > 0;
      if (verify < 0)
        c.accounting = WS_ACCOUNTING_FUSED;
      c.iteration_limit = 5000;
      ws_scheduler *s = NULL;
      EXPECT(ws_scheduler_create(g_dev, &rig_coroutine, &c, &s), WS_OK);
      EXPECT(ws_scheduler_add_aux(s, ws_pool_work(r.pool[0])), WS_OK);
      ws_testing_corrupt_count(s, 2, deltas[i]);
      EXPECT(rig_zero(&r), WS_OK);
      ws_status st = rig_dispatch(&r, s);
      const char *msg = ws_scheduler_last_error(s);
      printf("  corrupt count %+d, %s: %s: %s\n", deltas[i],
             verify > 0 ? "verify on" : verify == 0 ? "verify off" : "fused, scan mode",
             ws_status_name(st), msg);
      if (verify > 0)
        assert_true(st == WS_EVERIFY || st == WS_EPROTO_INTERNAL);
      if (verify < 0 && deltas[i] > 0 && deltas[i] < 8) {
        /* a scanning launch finds fewer frames than the count promised; the
         * decisions depend on counts only, so the numbers are every
         * backend's */
        EXPECT(st, WS_EPROTO_INTERNAL);
        assert_non_null(strstr(msg, "iteration 2: queue 'c2' (2): its count promised 6 frames, "
                                    "the launch found 3 with that token"));
        /* one frame too many in c4 shows only at c4's first resume, after
         * 40 iterations of other scans, whose frames the tally must not
         * count against it */
        ws_testing_corrupt_count(s, 4, 1);
        EXPECT(rig_zero(&r), WS_OK);
        EXPECT(rig_dispatch(&r, s), WS_EPROTO_INTERNAL);
        msg = ws_scheduler_last_error(s);
        printf("  corrupt count c4 +1, fused, scan mode: %s\n", msg);
        assert_non_null(strstr(msg, "iteration 41: queue 'c4' (4): its count promised 1 frames, "
                                    "the launch found 0 with that token"));
      }
      EXPECT(rig_zero(&r), WS_OK);
      EXPECT(rig_dispatch(&r, s), WS_OK);
      uint32_t done[40];
      EXPECT(ws_buffer_read(r.done, 0, done, sizeof done), WS_OK);
      for (int k = 0; k < 40; ++k)
        assert_int_equal(done[k], 1);
      ws_scheduler_destroy(s);
      rig_destroy(&r);
    }
  }
}

/* ---- issue 12: descriptions, re-entrancy, limits, refused dispatches ---- */

/* A description that disagrees with the compiled kernels is rejected at
 * creation (it used to corrupt memory: a short argument block, SoA arrays
 * sized for no fields, AoS records shorter than the frame). */
static void test_description_mismatch(void **state) {
  (void)state;
  ws_scheduler_config c = small_config(8);
  ws_coroutine_desc co = rig_coroutine;
  co.args_size = sizeof(fz_args) - 8;
  expect_create(&co, &c, WS_ECONFIG_COROUTINE, "argument struct 8 bytes short");
  ws_frame_desc fd = fz_frame_ws_desc;
  co = rig_coroutine;
  co.frame = &fd;
  fd.field_count = 0;
  c.layout = WS_LAYOUT_SOA;
  expect_create(&co, &c, WS_ECONFIG_COROUTINE, "SoA frame with no fields");
  fd = fz_frame_ws_desc;
  fd.size -= 8;
  c.layout = WS_LAYOUT_AOS;
  expect_create(&co, &c, WS_ECONFIG_COROUTINE, "AoS frame 8 bytes short");
  ws_frame_field fields[WS_MAX_FRAME_FIELDS];
  fd = fz_frame_ws_desc;
  memcpy(fields, fd.fields, fd.field_count * sizeof fields[0]);
  fields[0].size = 3;
  fd.fields = fields;
  expect_create(&co, &c, WS_ECONFIG_COROUTINE, "a field of 3 bytes");
  fields[0] = fz_frame_ws_desc.fields[0];
  fields[1].size += 4; /* same count and frame size, other field bytes */
  expect_create(&co, &c, WS_ECONFIG_COROUTINE, "field sizes that disagree with the kernels");
}

/* A client callback that dispatches its own scheduler gets WS_EBUSY; the
 * outer dispatch runs every item exactly once. */
typedef struct reentrant {
  ws_scheduler *s;
  rig *r;
  ws_status inner;
  uint32_t calls;
} reentrant;
static ws_status re_reset(void *u) {
  reentrant *re = u;
  re->calls += 1;
  re->inner = ws_scheduler_dispatch(re->s, re->r->N, &re->r->args, sizeof re->r->args);
  return WS_OK;
}
static ws_status re_count(void *u, uint32_t *n) {
  (void)u;
  *n = 0;
  return WS_OK;
}
static ws_status re_ok(void *u) {
  (void)u;
  return WS_OK;
}

static void test_reentrant_dispatch(void **state) {
  (void)state;
  rig r;
  rig_init(&r, g_dev, 24, 0, 8, false);
  EXPECT(rig_create(&r), WS_OK);
  ws_scheduler_config c = small_config(8);
  ws_scheduler *s = NULL;
  EXPECT(ws_scheduler_create(g_dev, &rig_coroutine, &c, &s), WS_OK);
  reentrant re = {s, &r, WS_OK, 0};
  static const ws_aux_producer p[] = {{"c1", 1}};
  ws_aux_work w;
  memset(&w, 0, sizeof w);
  w.name = "reentrant";
  w.capacity = 8;
  w.producers = p;
  w.producer_count = 1;
  w.user = &re;
  w.reset = re_reset;
  w.enqueue_count_readback = re_ok;
  w.host_count = re_count;
  w.dispatch = re_ok;
  EXPECT(ws_scheduler_add_aux(s, &w), WS_OK);
  EXPECT(rig_zero(&r), WS_OK);
  EXPECT(rig_dispatch(&r, s), WS_OK);
  assert_int_equal(re.calls, 1);
  assert_int_equal(re.inner, WS_EBUSY);
  uint32_t done[24];
  EXPECT(ws_buffer_read(r.done, 0, done, sizeof done), WS_OK);
  for (int i = 0; i < 24; ++i)
    assert_int_equal(done[i], 1);
  ws_scheduler_destroy(s);
  rig_destroy(&r);
}

/* SPEC §2.1: registration closes with the first dispatch, a refused one too. */
static void test_refused_dispatch_closes(void **state) {
  (void)state;
  rig r;
  rig_init(&r, g_dev, 8, 1, 8, false);
  EXPECT(rig_create(&r), WS_OK);
  ws_scheduler_config c = small_config(8);
  ws_scheduler *s = NULL;
  EXPECT(ws_scheduler_create(g_dev, &rig_coroutine, &c, &s), WS_OK);
  EXPECT(ws_scheduler_dispatch(s, 8, &r.args, sizeof r.args - 4), WS_EINVAL);
  EXPECT(ws_scheduler_add_aux(s, ws_pool_work(r.pool[0])), WS_EAUX_CLOSED);
  ws_scheduler_destroy(s);
  rig_destroy(&r);
}

/* An item that resumes itself forever ends every scheduler: the megakernel
 * stops it at the limit (also at the default one), the wavefront's loop
 * fails at its limit; both with WS_EITERATION_LIMIT, and the scheduler runs
 * correct work afterwards. */
static void test_endless_item(void **state) {
  (void)state;
  /* the tail (CPU, CUDA) stops the item at the iterations left */
  const char *tail_needle = ws_device_backend(g_dev) == WS_BACKEND_VULKAN
                                ? "iteration limit 1000 reached:"
                                : "iteration limit 1000 reached in the tail: 1 of its 2 items";
  const struct {
    ws_scheduler_kind kind;
    uint64_t limit;
    uint32_t tail;
    const char *needle;
  } cases[] = {{WS_SCHEDULER_MEGAKERNEL, 1000, 0, "iteration limit 1000"},
               {WS_SCHEDULER_MEGAKERNEL, 0, 0, "iteration limit 16777216"},
               {WS_SCHEDULER_WAVEFRONT, 1000, 0, "iteration limit 1000"},
               {WS_SCHEDULER_WAVEFRONT, 1000, 8, tail_needle}};
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
    /* Vulkan drivers bound a shader invocation's time: lavapipe ends its
     * loops after about 65,535 iterations (docs/vulkan.md), NVIDIA's driver
     * loses the device (VK_ERROR_DEVICE_LOST, measured on the H200) long
     * before one invocation has run 2^24 continuations */
    if (cases[k].limit == 0 && ws_device_backend(g_dev) == WS_BACKEND_VULKAN) {
      printf("  megakernel, limit 0: skipped on %s (a shader invocation cannot run 2^24 "
             "continuations)\n",
             ws_device_name(g_dev));
      continue;
    }
    rig r;
    rig_init(&r, g_dev, 2, 0, 8, false);
    EXPECT(rig_create(&r), WS_OK);
    r.args.bad_next = 1; /* c1 resumes c1 forever */
    ws_scheduler_config c = small_config(8);
    c.kind = cases[k].kind;
    c.iteration_limit = cases[k].limit;
    c.tail_frames = cases[k].tail;
    ws_scheduler *s = NULL;
    EXPECT(ws_scheduler_create(g_dev, &rig_coroutine, &c, &s), WS_OK);
    EXPECT(rig_zero(&r), WS_OK);
    EXPECT(rig_dispatch(&r, s), WS_EITERATION_LIMIT);
    printf("  %s, limit %" PRIu64 ": %s\n", c.kind == WS_SCHEDULER_MEGAKERNEL ? "megakernel" : "wavefront", cases[k].limit,
           ws_scheduler_last_error(s));
    assert_non_null(strstr(ws_scheduler_last_error(s), cases[k].needle));
    r.args.bad_next = 0;
    EXPECT(rig_zero(&r), WS_OK);
    EXPECT(rig_dispatch(&r, s), WS_OK);
    ws_scheduler_destroy(s);
    rig_destroy(&r);
  }
}

/* ---- auxiliary registration: pool configuration, N*b overflow ---- */

/* A client with no storage: its counts are always 0. */
typedef struct fake_client {
  uint64_t prepared[4];
  uint32_t prepares;
} fake_client;
static ws_status fk_ok(void *u) {
  (void)u;
  return WS_OK;
}
static ws_status fk_count(void *u, uint32_t *n) {
  (void)u;
  *n = 0;
  return WS_OK;
}
static ws_status fk_prepare(void *u, uint64_t required) {
  fake_client *f = u;
  if (f->prepares < 4)
    f->prepared[f->prepares] = required;
  f->prepares += 1;
  return WS_OK;
}
static ws_aux_work fake_work(fake_client *f, const char *name, uint32_t C,
                             const ws_aux_producer *p, uint32_t np) {
  ws_aux_work w;
  memset(&w, 0, sizeof w);
  w.name = name;
  w.capacity = C;
  w.producers = p;
  w.producer_count = np;
  w.user = f;
  w.reset = fk_ok;
  w.enqueue_count_readback = fk_ok;
  w.host_count = fk_count;
  w.dispatch = fk_ok;
  w.prepare_for_producer = fk_prepare;
  return w;
}

static void test_pool_config_errors(void **state) {
  (void)state;
  static const char *const names[] = {"a", "b"};
  static const char *const dupn[] = {"a", "a"};
  static const char *const nulln[] = {"a", NULL};
  static const ws_aux_producer prod[] = {{"c1", 1}};
  ws_pool *p = NULL;
  ws_pool_config pc = {"p", 0, 2, names, 16, prod, 1, noop_stage, NULL};
  EXPECT(ws_pool_create(g_dev, &pc, &p), WS_EAUX_CAPACITY);
  assert_null(p);
  pc.capacity = 8;
  pc.stage_count = 0;
  EXPECT(ws_pool_create(g_dev, &pc, &p), WS_EAUX_STAGES);
  assert_null(p);
  /* stage names are checked at registration */
  ws_scheduler_config c = small_config(8);
  ws_scheduler *s = NULL;
  EXPECT(ws_scheduler_create(g_dev, &rig_coroutine, &c, &s), WS_OK);
  pc.stage_count = 2;
  pc.stage_names = dupn;
  EXPECT(ws_pool_create(g_dev, &pc, &p), WS_OK);
  EXPECT(ws_scheduler_add_aux(s, ws_pool_work(p)), WS_EAUX_STAGES);
  assert_non_null(strstr(ws_scheduler_last_error(s), "both named 'a'"));
  ws_pool_destroy(p);
  pc.stage_names = nulln;
  EXPECT(ws_pool_create(g_dev, &pc, &p), WS_OK);
  EXPECT(ws_scheduler_add_aux(s, ws_pool_work(p)), WS_EAUX_STAGES);
  ws_pool_destroy(p);
  assert_int_equal(ws_scheduler_aux_stats_count(s), 0);
  ws_scheduler_destroy(s);
}

static void test_registration_misc(void **state) {
  (void)state;
  fake_client f;
  memset(&f, 0, sizeof f);
  ws_scheduler_config c = small_config(8);
  ws_scheduler *s = NULL;
  EXPECT(ws_scheduler_create(g_dev, &rig_coroutine, &c, &s), WS_OK);
  static const ws_aux_producer p1[] = {{"c1", 1}};
  static const ws_aux_producer pnull[] = {{NULL, 1}};
  ws_aux_work w = fake_work(&f, "w", 8, p1, 1);
  w.name = NULL;
  EXPECT(ws_scheduler_add_aux(s, &w), WS_EAUX_NULL);
  w = fake_work(&f, "w", 8, p1, 1);
  w.reset = NULL;
  EXPECT(ws_scheduler_add_aux(s, &w), WS_EAUX_NULL);
  w = fake_work(&f, "w", 8, p1, 1);
  w.enqueue_count_readback = NULL;
  EXPECT(ws_scheduler_add_aux(s, &w), WS_EAUX_NULL);
  w = fake_work(&f, "w", 8, NULL, 1); /* a count but no array */
  EXPECT(ws_scheduler_add_aux(s, &w), WS_EAUX_NO_PRODUCER);
  w = fake_work(&f, "w", 8, pnull, 1);
  EXPECT(ws_scheduler_add_aux(s, &w), WS_EAUX_PRODUCER);
  assert_non_null(strstr(ws_scheduler_last_error(s), "(null)"));
  assert_int_equal(ws_scheduler_aux_stats_count(s), 0);
  w = fake_work(&f, "w", 8, p1, 1);
  EXPECT(ws_scheduler_add_aux(s, &w), WS_OK);
  EXPECT(ws_scheduler_add_aux(s, &w), WS_EAUX_NAME); /* the same name twice */
  assert_int_equal(ws_scheduler_aux_stats_count(s), 1);
  ws_scheduler_destroy(s);
}

/* R * b > C is computed in 64 bits: with R and b near 2^16 (and b near
 * 2^32) a 32-bit product would wrap and admit an impossible registration. */
static void test_registration_overflow(void **state) {
  (void)state;
  typedef struct {
    uint32_t R, b, C;
    bool partial;
    ws_status want;
  } row;
  const row rows[] = {
      {65536, 65536, 100, false, WS_EAUX_POOL_BOUND},        /* 2^32 wraps to 0 */
      {65536, 65536, UINT32_MAX, false, WS_EAUX_POOL_BOUND}, /* 2^32 > 2^32 - 1 */
      {65537, 65535, UINT32_MAX, false, WS_OK},              /* exactly 2^32 - 1 */
      {65537, 65536, UINT32_MAX, false, WS_EAUX_POOL_BOUND}, /* wraps to 65536 */
      {1, UINT32_MAX, UINT32_MAX, false, WS_OK},
      {2, UINT32_MAX, UINT32_MAX, false, WS_EAUX_POOL_BOUND}, /* wraps to 2^32 - 2 */
      {2, 2147483648u, 0, false, WS_EAUX_CAPACITY},
      {3, 5, 14, false, WS_EAUX_POOL_BOUND},
      {3, 5, 15, false, WS_OK},
      /* partial admission only needs b <= C */
      {65536, 65536, UINT32_MAX, true, WS_OK},
      {65536, UINT32_MAX, UINT32_MAX, true, WS_OK},
      {8, 9, 8, true, WS_EAUX_POOL_BOUND},
  };
  fake_client f;
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; ++i) {
    const row *x = &rows[i];
    ws_scheduler_config c = small_config(x->R);
    c.partial_admission = x->partial;
    ws_scheduler *s = NULL;
    EXPECT(ws_scheduler_create(g_dev, &rig_coroutine, &c, &s), WS_OK);
    const ws_aux_producer p[] = {{"c1", x->b}};
    ws_aux_work w = fake_work(&f, "big", x->C, p, 1);
    ws_status st = ws_scheduler_add_aux(s, &w);
    if (st != x->want)
      fail_msg("R = %u, b = %u, C = %u%s: expected %s, got %s: %s", x->R, x->b, x->C,
               x->partial ? " (partial)" : "", ws_status_name(x->want), ws_status_name(st),
               ws_scheduler_last_error(s));
    assert_int_equal(ws_scheduler_aux_stats_count(s), st == WS_OK ? 1 : 0);
    ws_scheduler_destroy(s);
  }
}

/* The admission rule at run time: n * b beyond 2^32. R = N = 65536 frames
 * queue for c1, a producer with b = 65536 of a work with C = 2^32 - 1
 * (partial admission, so the registration is legal). 32-bit arithmetic
 * would compute 65536 * 65536 = 0 and admit all of them; the scheduler must
 * admit (C - 0) / b = 65535 frames, then the last one. */
static void test_admission_overflow(void **state) {
  (void)state;
  const uint32_t N = 65536;
  rig r;
  rig_init(&r, g_dev, N, 0, N, false);
  r.args.maxlen = 1; /* entry -> c1 -> terminate */
  r.args.entry_next[0] = r.args.entry_next[1] = 1;
  EXPECT(rig_create(&r), WS_OK);
  ws_scheduler_config c = small_config(N);
  c.partial_admission = true;
  ws_scheduler *s = NULL;
  EXPECT(ws_scheduler_create(g_dev, &rig_coroutine, &c, &s), WS_OK);
  fake_client f;
  memset(&f, 0, sizeof f);
  static const ws_aux_producer p[] = {{"c1", 65536}};
  ws_aux_work w = fake_work(&f, "huge", UINT32_MAX, p, 1);
  EXPECT(ws_scheduler_add_aux(s, &w), WS_OK);
  EXPECT(rig_zero(&r), WS_OK);
  EXPECT(rig_dispatch(&r, s), WS_OK);
  ws_node_stats ns;
  EXPECT(ws_scheduler_node_stats(s, 1, &ns), WS_OK);
  printf("  c1: %" PRIu64 " launches, %" PRIu64 " frames; prepare_for_producer(%" PRIu64
         "), (%" PRIu64 ")\n",
         ns.dispatch_count, ns.executed_count, f.prepared[0], f.prepared[1]);
  assert_int_equal(ns.executed_count, N);
  assert_int_equal(ns.dispatch_count, 2);
  assert_int_equal(f.prepares, 2);
  assert_int_equal(f.prepared[0], (uint64_t)65535 * 65536);
  assert_int_equal(f.prepared[1], 65536);
  ws_dispatch_stats d;
  ws_scheduler_dispatch_stats(s, &d);
  assert_int_equal(d.blocked_count, 1);
  ws_scheduler_destroy(s);
  rig_destroy(&r);
}

/* A client call that fails once ends that dispatch with WS_EPROTO_CLIENT
 * naming the call and the client's status; the next dispatch is clean. */
typedef struct flaky {
  const ws_aux_work *inner;
  int fail_call; /* 0 reset, 1 readback, 2 host_count, 3 stage count, 4 dispatch_stage,
                    5 admission_stage, 6 prepare_for_producer */
  int countdown;
} flaky;
static bool flaky_hit(flaky *f, int call) {
  return f->fail_call == call && f->countdown > 0 && --f->countdown == 0;
}
static ws_status fl_reset(void *u) {
  flaky *f = u;
  return flaky_hit(f, 0) ? WS_EBACKEND : f->inner->reset(f->inner->user);
}
static ws_status fl_readback(void *u) {
  flaky *f = u;
  return flaky_hit(f, 1) ? WS_EDEVMEM : f->inner->enqueue_count_readback(f->inner->user);
}
static ws_status fl_host_count(void *u, uint32_t *n) {
  flaky *f = u;
  return flaky_hit(f, 2) ? WS_EINVAL : f->inner->host_count(f->inner->user, n);
}
static uint32_t fl_stage_count(void *u) {
  flaky *f = u;
  return f->inner->stage_count(f->inner->user);
}
static const char *fl_stage_name(void *u, uint32_t st) {
  flaky *f = u;
  return f->inner->stage_name(f->inner->user, st);
}
static ws_status fl_stage_host_count(void *u, uint32_t st, uint32_t *n) {
  flaky *f = u;
  return flaky_hit(f, 3) ? WS_ENOMEM : f->inner->stage_host_count(f->inner->user, st, n);
}
static ws_status fl_dispatch_stage(void *u, uint32_t st) {
  flaky *f = u;
  return flaky_hit(f, 4) ? WS_EBACKEND : f->inner->dispatch_stage(f->inner->user, st);
}
static ws_status fl_admission(void *u, uint32_t *st) {
  flaky *f = u;
  if (flaky_hit(f, 5))
    return WS_EBACKEND;
  *st = 0; /* only reached when blocked: stage 0 = prepare, never empty long */
  uint32_t n = 0;
  for (uint32_t k = 0; k < 3; ++k) {
    f->inner->stage_host_count(f->inner->user, k, &n);
    if (n) {
      *st = k;
      break;
    }
  }
  return WS_OK;
}
static ws_status fl_prepare(void *u, uint64_t req) {
  flaky *f = u;
  (void)req;
  return flaky_hit(f, 6) ? WS_EBACKEND : WS_OK;
}

static void test_client_failures(void **state) {
  (void)state;
  static const char *const calls[] = {"reset",          "enqueue_count_readback",
                                      "host_count",     "stage_host_count",
                                      "dispatch_stage", "admission_stage",
                                      "prepare_for_producer"};
  for (int call = 0; call < 7; ++call) {
    rig r;
    rig_init(&r, g_dev, 40, 1, 8, false);
    EXPECT(rig_create(&r), WS_OK);
    flaky f = {ws_pool_work(r.pool[0]), call, call == 0 || call == 5 ? 1 : 3};
    ws_aux_work w = *f.inner;
    w.user = &f;
    w.reset = fl_reset;
    w.enqueue_count_readback = fl_readback;
    w.host_count = fl_host_count;
    w.stage_count = fl_stage_count;
    w.stage_name = fl_stage_name;
    w.stage_host_count = fl_stage_host_count;
    w.dispatch_stage = fl_dispatch_stage;
    w.admission_stage = fl_admission;
    w.prepare_for_producer = fl_prepare;
    ws_scheduler_config c = small_config(8);
    ws_scheduler *s = NULL;
    EXPECT(ws_scheduler_create(g_dev, &rig_coroutine, &c, &s), WS_OK);
    EXPECT(ws_scheduler_add_aux(s, &w), WS_OK);
    EXPECT(rig_zero(&r), WS_OK);
    ws_status st = rig_dispatch(&r, s);
    printf("  %s fails: %s: %s\n", calls[call], ws_status_name(st), ws_scheduler_last_error(s));
    assert_int_equal(st, WS_EPROTO_CLIENT);
    assert_non_null(strstr(ws_scheduler_last_error(s), calls[call]));
    assert_non_null(strstr(ws_scheduler_last_error(s), "'side'"));
    {
      /* the flaky client sets no device message: none is quoted, not even "()" */
      const char *m = ws_scheduler_last_error(s);
      const size_t ml = strlen(m);
      assert_true(ml > 2 && strcmp(m + ml - 2, "()") != 0);
    }
    EXPECT(rig_zero(&r), WS_OK);
    EXPECT(rig_dispatch(&r, s), WS_OK);
    uint32_t done[40];
    EXPECT(ws_buffer_read(r.done, 0, done, sizeof done), WS_OK);
    for (int k = 0; k < 40; ++k)
      assert_int_equal(done[k], 1);
    assert_int_equal(ws_pool_live(r.pool[0]), 0);
    ws_scheduler_destroy(s);
    rig_destroy(&r);
  }
}

/* ======================================================================
 * Regression tests of fixed library bugs (docs/errors.md §3).
 * ====================================================================== */

/* Runs fn in a child process: returns 0 if it exited normally with 0. */
static int in_child(void (*fn)(void)) {
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid == 0) {
    /* die of the signal: cmocka's handlers would resume the test run here */
    const int sigs[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; ++i)
      signal(sigs[i], SIG_DFL);
    fn();
    _exit(0);
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid)
    return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static void null_device_backend(void) { (void)ws_device_backend(NULL); }
static void null_device_name(void) {
  volatile size_t n = strlen(ws_device_name(NULL)); /* must be a string */
  (void)n;
}
static void null_print_stats(void) { ws_scheduler_print_stats(NULL, stdout); }
static void null_pool_view(void) { (void)ws_pool_get_view(NULL); }
static void null_pool_work(void) {
  if (ws_pool_work(NULL) != NULL) /* a pointer computed from NULL */
    _exit(2);
}
static void null_pool_live(void) { (void)ws_pool_live(NULL); }
static void null_pool_errors(void) { (void)ws_pool_errors(NULL); }

/* Getters without a status dereference NULL (the API's other getters, e.g.
 * ws_buffer_address, ws_device_last_error, answer a neutral value). */
static void test_bug_null_getters_crash(void **state) {
  (void)state;
  static const struct {
    const char *name;
    void (*fn)(void);
  } cases[] = {{"ws_device_backend(NULL)", null_device_backend},
               {"ws_device_name(NULL)", null_device_name},
               {"ws_scheduler_print_stats(NULL, stdout)", null_print_stats},
               {"ws_pool_get_view(NULL)", null_pool_view},
               {"ws_pool_work(NULL)", null_pool_work},
               {"ws_pool_live(NULL)", null_pool_live},
               {"ws_pool_errors(NULL)", null_pool_errors}};
  int crashed = 0;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    int rc = in_child(cases[i].fn);
    printf("  %-40s %s (%d)\n", cases[i].name,
           rc == 0 ? "ok" : rc > 128 ? "CRASHES" : "WRONG ANSWER", rc);
    crashed += rc != 0;
  }
  assert_int_equal(crashed, 0);
}

/* CPU backend: the 64-byte rounding of a buffer size wraps for sizes near
 * SIZE_MAX, so a 64-byte block is returned for an impossible request and
 * every later range check trusts the huge size. */
static void test_bug_huge_buffer(void **state) {
  (void)state;
  ws_buffer *b = NULL;
  ws_status st = ws_buffer_create(g_dev, SIZE_MAX - 8, &b);
  printf("  ws_buffer_create(SIZE_MAX - 8): %s, size %zu\n", ws_status_name(st),
         ws_buffer_size(b));
  ws_buffer_destroy(b);
  assert_int_equal(st, WS_EDEVMEM);
}

/* A coroutine description that declares fewer continuations than its
 * kernels have: a continuation index in (K_desc, K_kernel] passes the
 * wrapper's range check (it uses the compiled K), so the frame's token names
 * no queue: the item is silently lost (materialized / incremental) or the
 * fused count update writes past the counts buffer. Expected: the index is
 * reported like any other invalid transition (WS_EPROTO_INTERNAL). */
static int short_desc_fused(void) {
  rig r;
  rig_init(&r, g_dev, 8, 0, 8, false);
  if (rig_create(&r) != WS_OK)
    return 3;
  r.args.bad_next = 5; /* c1 returns 5; the description below has K = 3 */
  ws_coroutine_desc co = rig_coroutine;
  co.continuation_count = 3;
  ws_scheduler_config c = small_config(8);
  c.accounting = WS_ACCOUNTING_FUSED;
  ws_scheduler *s = NULL;
  if (ws_scheduler_create(g_dev, &co, &c, &s) != WS_OK) {
    rig_destroy(&r);
    return 4;
  }
  rig_zero(&r);
  ws_status st = rig_dispatch(&r, s);
  printf("  K_desc = 3 < K_kernel = 6, fused, c1 returns 5: %s\n", ws_status_name(st));
  fflush(stdout);
  ws_scheduler_destroy(s);
  rig_destroy(&r);
  return st == WS_EPROTO_INTERNAL ? 0 : 1;
}

static void child_short_desc_fused(void) { _exit(short_desc_fused()); }

/* On the CPU the bug wrote past a host buffer, so the case runs in a child
 * that may crash. A GPU backend cannot run there: a child forked after the
 * parent initialized CUDA cannot use the parent's context (the device's
 * writes past a buffer cannot crash the host either), so it runs in-process. */
static void test_bug_short_coroutine_desc(void **state) {
  (void)state;
  const int rc =
      g_backend == WS_BACKEND_CPU ? in_child(child_short_desc_fused) : short_desc_fused();
  printf("  exit %d\n", rc);
  assert_int_equal(rc, 0);
}

/* ======================================================================
 * Issue 12: checks before memory, CPU threads, contract gaps.
 * ====================================================================== */

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define WS_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define WS_TEST_SANITIZED 1
#endif
#endif
#ifndef WS_TEST_SANITIZED
#define WS_TEST_SANITIZED 0
#endif

static bool contains(const char *hay, const char *needle) { return strstr(hay, needle) != NULL; }

/* A device of the test's backend whose backend calls are counted (the
 * fault wrapper, never failing): "before memory" means zero calls. */
static ws_device *counting_device(void) {
  ws_device_config dc;
  memset(&dc, 0, sizeof dc);
  dc.backend = g_backend;
  dc.device_index = -1;
  ws_device *d = NULL;
  EXPECT(ws_device_create(&dc, &d), WS_OK);
  EXPECT(ws_testing_fail_backend_after(d, 0), WS_OK);
  return d;
}

/* Contract gaps: *out is NULL after every failed create that has an out;
 * every ws_pool_create error leaves a message naming what is wrong. */
static void test_contract_gaps(void **state) {
  (void)state;
  ws_buffer *const bpoison = (ws_buffer *)(uintptr_t)8;
  ws_buffer *b = bpoison;
  EXPECT(ws_buffer_create(NULL, 16, &b), WS_EINVAL);
  assert_null(b);
  EXPECT(ws_buffer_create(g_dev, 16, NULL), WS_EINVAL);
  assert_true(contains(ws_device_last_error(g_dev), "ws_buffer_create: out is NULL"));

  static const char *const one[] = {"only"};
  static const ws_aux_producer prod[] = {{"c1", 1}};
  ws_pool *const ppoison = (ws_pool *)(uintptr_t)8;
  ws_pool *p = ppoison;
  const ws_pool_config good = {"gap", 8, 1, one, 16, prod, 1, noop_stage, NULL};
  ws_pool_config pc = good;
  struct {
    const char *what;
    ws_status want;
    const char *message;
  } cases[] = {
      {"config NULL", WS_EINVAL, "pool '(null)': config is NULL"},
      {"out NULL", WS_EINVAL, "pool 'gap': out is NULL"},
      {"name NULL", WS_EINVAL, "pool '(null)': config lacks a name"},
      {"stage_names NULL", WS_EINVAL, "pool 'gap': config lacks stage_names"},
      {"capacity 0", WS_EAUX_CAPACITY, "pool 'gap': capacity is 0"},
      {"stage_count 0", WS_EAUX_STAGES, "pool 'gap': stage_count is 0"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    pc = good;
    const ws_pool_config *cfg = &pc;
    ws_pool **out = &p;
    switch (i) {
    case 0: cfg = NULL; break;
    case 1: out = NULL; break;
    case 2: pc.name = NULL; break;
    case 3: pc.stage_names = NULL; break;
    case 4: pc.capacity = 0; break;
    default: pc.stage_count = 0; break;
    }
    /* a message from an earlier call must not pass for this one */
    EXPECT(ws_buffer_create(g_dev, 16, NULL), WS_EINVAL);
    p = ppoison;
    EXPECT(ws_pool_create(g_dev, cfg, out), cases[i].want);
    if (out)
      assert_null(p);
    const char *msg = ws_device_last_error(g_dev);
    printf("  %-18s %s: %s\n", cases[i].what, ws_status_name(cases[i].want), msg);
    if (!contains(msg, cases[i].message))
      fail_msg("%s: message '%s' lacks '%s'", cases[i].what, msg, cases[i].message);
  }
  /* every device allocation that fails (each in turn) names the buffer and
   * the backend's reason, and leaks nothing */
  ws_device *d = counting_device();
  pc = good;
  unsigned long n = 1;
  for (;; ++n) {
    const unsigned long live = ws_testing_live_allocations();
    EXPECT(ws_testing_fail_backend_after(d, n), WS_OK);
    p = ppoison;
    const ws_status st = ws_pool_create(d, &pc, &p);
    if (st == WS_OK) {
      ws_pool_destroy(p);
      break;
    }
    assert_true(st == WS_EDEVMEM || st == WS_ENOMEM);
    assert_null(p);
    assert_int_equal(ws_testing_live_allocations(), live);
    const char *msg = ws_device_last_error(d);
    if (!contains(msg, "ws_pool_create: pool 'gap': cannot allocate its ") ||
        strlen(msg) < 60)
      fail_msg("backend call %lu failed: message '%s'", n, msg);
    if (n == 1)
      printf("  backend call 1 failed: %s\n", msg);
  }
  printf("  every one of its %lu backend calls failed in turn: a message each\n", n - 1);
  ws_device_destroy(d);
}

/* Sizes derived from the user's numbers are checked against the device
 * before anything is allocated or filled: zero backend calls, nothing
 * leaked, a message naming the parameter and the numbers. The requests are
 * impossible for any machine this runs on (hundreds of GiB). */
static void test_sizes_before_memory(void **state) {
  (void)state;
  ws_device *d = counting_device();
  uint64_t avail = 0, largest = 0;
  EXPECT(ws_device_memory_available(d, &avail, &largest), WS_OK);
  EXPECT(ws_device_memory_available(NULL, &avail, NULL), WS_EINVAL);
  EXPECT(ws_device_memory_available(d, NULL, NULL), WS_EINVAL);
  printf("  %s device: %" PRIu64 " bytes available, largest buffer %" PRIu64 "\n",
         ws_backend_name(g_backend), avail, largest);
  if (g_backend == WS_BACKEND_CPU)
    assert_true(avail > 0 && avail != UINT64_MAX); /* /proc/meminfo is there */

  /* the scheduler: R = 2^32 - 1 frames of fz_frame */
  ws_scheduler_config c = small_config(UINT32_MAX);
  ws_scheduler *s = (ws_scheduler *)(uintptr_t)8;
  const uint64_t frames = (uint64_t)UINT32_MAX * sizeof(fz_frame);
  if (avail != UINT64_MAX && frames <= avail) {
    printf("  skipped: this device has more than %" PRIu64 " bytes\n", frames);
  } else {
    ws_status st = ws_scheduler_create(d, &rig_coroutine, &c, &s);
    printf("  resident_frames 2^32 - 1: %s, %lu backend calls\n", ws_status_name(st),
           ws_testing_backend_calls(d));
    assert_int_equal(st, WS_EDEVMEM);
    assert_null(s);
    assert_int_equal(ws_testing_backend_calls(d), 0);
    assert_true(contains(ws_device_last_error(d), "resident_frames 4294967295"));
    assert_true(contains(ws_device_last_error(d), "bytes of device memory needed") ||
                contains(ws_device_last_error(d), "exceeds the largest"));
  }
  /* the pool: C x stride = (2^32 - 1) x 2^16 bytes of payload */
  static const char *const one[] = {"only"};
  static const ws_aux_producer prod[] = {{"c1", 1}};
  ws_pool_config pc = {"huge", UINT32_MAX, 1, one, 65536, prod, 1, noop_stage, NULL};
  ws_pool *p = (ws_pool *)(uintptr_t)8;
  const unsigned long live = ws_testing_live_allocations();
  ws_status st = ws_pool_create(d, &pc, &p);
  printf("  pool capacity 2^32 - 1 x stride 65536: %s: %s\n", ws_status_name(st),
         ws_device_last_error(d));
  assert_int_equal(st, WS_EDEVMEM);
  assert_null(p);
  assert_int_equal(ws_testing_backend_calls(d), 0);
  assert_int_equal(ws_testing_live_allocations(), live);
  assert_true(contains(ws_device_last_error(d), "capacity 4294967295 x payload_stride 65536"));
  /* sizes whose 64-bit sum would wrap: 32 SoA arrays of 2^32 - 1 frames of
   * 2^32 - 1 bytes, described against a module that records no frame size
   * (as a Vulkan-only module would), so that creation cannot compare it */
  const ws_module *cpu = fz_kernels_modules.by_backend[g_backend];
  ws_module_entry entries[4];
  assert_true(cpu->entry_count <= 4);
  memcpy(entries, cpu->entries, cpu->entry_count * sizeof *entries);
  for (uint32_t i = 0; i < cpu->entry_count; ++i)
    entries[i].frame_size = entries[i].frame_fields = entries[i].frame_field_bytes = 0;
  ws_module bare = *cpu;
  bare.entries = entries;
  ws_module_set set;
  memset(&set, 0, sizeof set);
  set.by_backend[g_backend] = &bare;
  ws_frame_field fields[WS_MAX_FRAME_FIELDS];
  for (uint32_t i = 0; i < WS_MAX_FRAME_FIELDS; ++i)
    fields[i] = (ws_frame_field){"huge", UINT32_MAX, 1};
  const ws_frame_desc huge = {UINT32_MAX, 1, WS_MAX_FRAME_FIELDS, fields};
  ws_coroutine_desc co = rig_coroutine;
  co.modules = &set;
  co.frame = &huge;
  for (uint32_t layout = WS_LAYOUT_AOS; layout <= WS_LAYOUT_SOA; ++layout) {
    c.layout = layout;
    s = (ws_scheduler *)(uintptr_t)8;
    EXPECT(ws_scheduler_create(d, &co, &c, &s), WS_EDEVMEM);
    assert_null(s);
    assert_int_equal(ws_testing_backend_calls(d), 0);
    printf("  %s, 2^32 - 1 frames of 32 x (2^32 - 1) bytes: %s\n",
           layout ? "SoA" : "AoS", ws_device_last_error(d));
    assert_true(contains(ws_device_last_error(d), "resident_frames 4294967295"));
  }
  /* a single buffer */
  ws_buffer *b = (ws_buffer *)(uintptr_t)8;
  EXPECT(ws_buffer_create(d, (size_t)1 << 62, &b), WS_EDEVMEM);
  assert_null(b);
  assert_int_equal(ws_testing_backend_calls(d), 0);
  assert_true(contains(ws_device_last_error(d), "ws_buffer_create"));
  ws_device_destroy(d);
}

/* The same under a limit this test sets (CPU: the device's memory is the
 * process's, and RLIMIT_DATA caps it), in a child process: the figures
 * follow the limit and moderate requests above it fail before memory. */
static void limited_child(void) {
  FILE *f = fopen("/proc/self/statm", "r");
  unsigned long long size, res, shr, text, lib, data = 0;
  if (!f || fscanf(f, "%llu %llu %llu %llu %llu %llu", &size, &res, &shr, &text, &lib, &data) != 6)
    _exit(10);
  fclose(f);
  const uint64_t headroom = (uint64_t)256 << 20;
  struct rlimit rl;
  rl.rlim_cur = rl.rlim_max = (rlim_t)(data * (uint64_t)sysconf(_SC_PAGESIZE) + headroom);
  if (setrlimit(RLIMIT_DATA, &rl) != 0)
    _exit(11);
  ws_device *d = counting_device();
  uint64_t avail = 0;
  if (ws_device_memory_available(d, &avail, NULL) != WS_OK || avail > headroom)
    _exit(12);
  ws_scheduler_config c = small_config(1u << 24); /* 16 Mi frames: 384 MiB of 24-byte frames alone */
  ws_scheduler *s = NULL;
  if (ws_scheduler_create(d, &rig_coroutine, &c, &s) != WS_EDEVMEM || s ||
      ws_testing_backend_calls(d) != 0)
    _exit(13);
  printf("  RLIMIT_DATA + 256 MiB: %" PRIu64 " bytes available; %s\n", avail,
         ws_device_last_error(d));
  ws_buffer *b = NULL;
  if (ws_buffer_create(d, (size_t)384 << 20, &b) != WS_EDEVMEM || b ||
      ws_testing_backend_calls(d) != 0)
    _exit(14);
  /* a pool whose buffers each fit but not together: the message gives its
   * payload and its whole footprint, (C + 1) x stride + 2 x 4C + (3 + S) x 4
   * bytes (pool.c), against what is available */
  uint64_t largest = 0;
  if (ws_device_memory_available(d, &avail, &largest) != WS_OK)
    _exit(16);
  static const char *const stages[] = {"only"};
  static const ws_aux_producer prod[] = {{"c1", 1}};
  const uint32_t cap = (uint32_t)(avail / 8u);
  const ws_pool_config pc = {"limited", cap, 1, stages, 4, prod, 1, noop_stage, NULL};
  const uint64_t payload = ((uint64_t)cap + 1u) * 4u, need = payload + 8u * cap + 16u;
  char want[256];
  snprintf(want, sizeof want,
           "ws_pool_create: pool 'limited': capacity %u x payload_stride 4 + 1 spare record = "
           "%" PRIu64 " payload bytes: %" PRIu64 " bytes of device memory needed, %" PRIu64
           " available on the cpu device",
           cap, payload, need, avail);
  ws_pool *p = NULL;
  if (payload > largest || ws_pool_create(d, &pc, &p) != WS_EDEVMEM || p)
    _exit(17);
  if (strcmp(ws_device_last_error(d), want) != 0) {
    printf("  pool: '%s', expected '%s'\n", ws_device_last_error(d), want);
    _exit(18);
  }
  /* what fits still works */
  c = small_config(1u << 16);
  if (ws_scheduler_create(d, &rig_coroutine, &c, &s) != WS_OK)
    _exit(15);
  ws_scheduler_destroy(s);
  ws_device_destroy(d);
  fflush(stdout);
  _exit(0);
}

static void test_sizes_under_a_limit(void **state) {
  (void)state;
  if (g_backend != WS_BACKEND_CPU || WS_TEST_SANITIZED) {
    printf("  skipped: %s\n", g_backend != WS_BACKEND_CPU
                                  ? "the limit applies to host memory (CPU backend)"
                                  : "a sanitizer's shadow memory counts against the limit");
    return;
  }
  assert_int_equal(in_child(limited_child), 0);
}

/* cpu_threads: validated, and the device's own (nothing process-wide
 * changes); any thread count gives the same results. */
static void thread_log(void *user, ws_log_level level, const char *message) {
  (void)level;
  snprintf((char *)user, 256, "%s", message);
}

static void run_with_threads(int threads, uint32_t N, uint32_t *result, uint32_t *visits) {
  ws_device_config dc;
  memset(&dc, 0, sizeof dc);
  dc.backend = WS_BACKEND_CPU;
  dc.cpu_threads = threads;
  ws_device *d = NULL;
  EXPECT(ws_device_create(&dc, &d), WS_OK);
  char want[32];
  snprintf(want, sizeof want, "(%d thread%s)", threads, threads == 1 ? "" : "s");
  if (threads)
    assert_true(contains(ws_device_name(d), want));
  rig r;
  rig_init(&r, d, N, 2, N, false);
  EXPECT(rig_create(&r), WS_OK);
  ws_scheduler_config c = small_config(N); /* launches of N >= 4096: the threads run */
  ws_scheduler *s = NULL;
  EXPECT(ws_scheduler_create(d, &rig_coroutine, &c, &s), WS_OK);
  for (uint32_t w = 0; w < r.works; ++w)
    EXPECT(ws_scheduler_add_aux(s, ws_pool_work(r.pool[w])), WS_OK);
  EXPECT(rig_zero(&r), WS_OK);
  EXPECT(rig_dispatch(&r, s), WS_OK);
  EXPECT(ws_buffer_read(r.result, 0, result, (size_t)N * 4), WS_OK);
  EXPECT(ws_buffer_read(r.visits, 0, visits, (size_t)N * FZ_MAX_K * 4), WS_OK);
  uint32_t errors[FZ_ERR_COUNT];
  EXPECT(ws_buffer_read(r.errors, 0, errors, sizeof errors), WS_OK);
  for (uint32_t e = 0; e < FZ_ERR_COUNT; ++e)
    assert_int_equal(errors[e], 0);
  ws_scheduler_destroy(s);
  rig_destroy(&r);
  ws_device_destroy(d);
}

static void test_cpu_threads(void **state) {
  (void)state;
  if (g_backend != WS_BACKEND_CPU) {
    printf("  skipped: cpu_threads is the CPU backend's\n");
    return;
  }
  char msg[256] = "";
  const int bad[] = {-1, -1000, WS_CPU_MAX_THREADS + 1, 1 << 30, INT32_MAX};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
    ws_device_config dc;
    memset(&dc, 0, sizeof dc);
    dc.cpu_threads = bad[i];
    dc.log = thread_log;
    dc.log_user = msg;
    ws_device *d = (ws_device *)(uintptr_t)8;
    EXPECT(ws_device_create(&dc, &d), WS_EINVAL);
    assert_null(d);
    char want[64];
    snprintf(want, sizeof want, "cpu_threads %d", bad[i]);
    if (!contains(msg, want) || !contains(msg, "1..1024"))
      fail_msg("cpu_threads %d: log says '%s'", bad[i], msg);
  }
  printf("  %s\n", msg);
  /* nothing process-wide: the OpenMP runtime the user may use is untouched */
  const int omp_before = omp_get_max_threads();
  enum { N = 6000 };
  static uint32_t res[4][N], vis[4][N * FZ_MAX_K];
  const int counts[4] = {1, 2, 3, 7};
  for (int t = 0; t < 4; ++t) {
    run_with_threads(counts[t], N, res[t], vis[t]);
    assert_int_equal(omp_get_max_threads(), omp_before);
  }
  for (int t = 1; t < 4; ++t) {
    assert_memory_equal(res[t], res[0], sizeof res[0]);
    assert_memory_equal(vis[t], vis[0], sizeof vis[0]);
  }
  printf("  1, 2, 3 and 7 threads: identical results for %d items; omp_get_max_threads() "
         "stays %d\n", N, omp_before);
}

/* Threads that cannot be created: the launch runs on the caller (libgomp
 * printed "Thread creation failed" and aborted the process). */
static void no_threads_child(void) {
  ws_device_config dc;
  memset(&dc, 0, sizeof dc);
  dc.cpu_threads = 4;
  ws_device *d = NULL;
  enum { N = 5000 };
  rig r;
  ws_scheduler *s = NULL;
  if (ws_device_create(&dc, &d) != WS_OK)
    _exit(11);
  rig_init(&r, d, N, 0, N, false);
  ws_scheduler_config c = small_config(N);
  if (rig_create(&r) != WS_OK || ws_scheduler_create(d, &rig_coroutine, &c, &s) != WS_OK ||
      rig_zero(&r) != WS_OK)
    _exit(12);
  /* no stack for another thread: RLIMIT_AS 64 KiB above what is mapped
   * (a fresh process: no stack of an earlier thread is cached for reuse) */
  FILE *f = fopen("/proc/self/statm", "r");
  unsigned long long size = 0;
  if (!f || fscanf(f, "%llu", &size) != 1)
    _exit(10);
  fclose(f);
  struct rlimit rl;
  rl.rlim_cur = rl.rlim_max = (rlim_t)(size * (uint64_t)sysconf(_SC_PAGESIZE) + (64u << 10));
  if (setrlimit(RLIMIT_AS, &rl) != 0)
    _exit(13);
  if (rig_dispatch(&r, s) != WS_OK)
    _exit(14);
  static uint32_t done[N];
  if (ws_buffer_read(r.done, 0, done, sizeof done) != WS_OK)
    _exit(15);
  for (uint32_t i = 0; i < N; ++i)
    if (done[i] != 1)
      _exit(16);
  _exit(0);
}

static void test_cpu_threads_unavailable(void **state) {
  (void)state;
  if (g_backend != WS_BACKEND_CPU || WS_TEST_SANITIZED) {
    printf("  skipped: %s\n", g_backend != WS_BACKEND_CPU ? "CPU backend only"
                                                          : "a sanitizer maps memory itself");
    return;
  }
  fflush(stdout);
  const pid_t pid = fork();
  if (pid == 0) {
    execl("/proc/self/exe", "test_bad_input", "--no-threads-child", (char *)NULL);
    _exit(20);
  }
  int status = 0;
  assert_true(pid > 0 && waitpid(pid, &status, 0) == pid);
  const int rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  printf("  4 threads requested, none can be created: exit %d\n", rc);
  assert_int_equal(rc, 0);
}

int main(int argc, char **argv) {
  if (argc == 2 && strcmp(argv[1], "--no-threads-child") == 0)
    no_threads_child();
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--backend") == 0 && i + 1 < argc) {
      if (ws_backend_parse(argv[++i], &g_backend) != WS_OK)
        return 2;
    } else {
      fprintf(stderr, "usage: %s [--backend cpu|cuda|vulkan]\n", argv[0]);
      return 2;
    }
  }
  if (!fz_kernels_modules.by_backend[g_backend]) {
    printf("SKIP: the fuzz kernels were not built for the %s backend\n", ws_backend_name(g_backend));
    return 77;
  }
  ws_device_config dc;
  memset(&dc, 0, sizeof dc);
  dc.backend = g_backend;
  dc.device_index = -1;
  ws_status st = ws_device_create(&dc, &g_dev);
  if (st == WS_ENODEV) {
    printf("SKIP: no %s device\n", ws_backend_name(g_backend));
    return 77;
  }
  if (st != WS_OK)
    return 1;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_status_table, setup, teardown),
      cmocka_unit_test_setup_teardown(test_backend_names, setup, teardown),
      cmocka_unit_test_setup_teardown(test_device_config, setup, teardown),
      cmocka_unit_test_setup_teardown(test_null_arguments, setup, teardown),
      cmocka_unit_test_setup_teardown(test_buffer_ranges, setup, teardown),
      cmocka_unit_test_setup_teardown(test_kernel_errors, setup, teardown),
      cmocka_unit_test_setup_teardown(test_config_errors, setup, teardown),
      cmocka_unit_test_setup_teardown(test_coroutine_errors, setup, teardown),
      cmocka_unit_test_setup_teardown(test_dispatch_arguments, setup, teardown),
      cmocka_unit_test_setup_teardown(test_bad_continuation_index, setup, teardown),
      cmocka_unit_test_setup_teardown(test_corrupted_count, setup, teardown),
      cmocka_unit_test_setup_teardown(test_pool_config_errors, setup, teardown),
      cmocka_unit_test_setup_teardown(test_registration_misc, setup, teardown),
      cmocka_unit_test_setup_teardown(test_registration_overflow, setup, teardown),
      cmocka_unit_test_setup_teardown(test_admission_overflow, setup, teardown),
      cmocka_unit_test_setup_teardown(test_client_failures, setup, teardown),
      cmocka_unit_test_setup_teardown(test_description_mismatch, setup, teardown),
      cmocka_unit_test_setup_teardown(test_reentrant_dispatch, setup, teardown),
      cmocka_unit_test_setup_teardown(test_refused_dispatch_closes, setup, teardown),
      cmocka_unit_test_setup_teardown(test_endless_item, setup, teardown),
      cmocka_unit_test(test_bug_null_getters_crash),
      cmocka_unit_test(test_bug_huge_buffer),
      cmocka_unit_test(test_bug_short_coroutine_desc),
      cmocka_unit_test_setup_teardown(test_contract_gaps, setup, teardown),
      cmocka_unit_test_setup_teardown(test_sizes_before_memory, setup, teardown),
      cmocka_unit_test_setup_teardown(test_sizes_under_a_limit, setup, teardown),
      cmocka_unit_test_setup_teardown(test_cpu_threads, setup, teardown),
      cmocka_unit_test_setup_teardown(test_cpu_threads_unavailable, setup, teardown),
  };
  int failed = cmocka_run_group_tests_name("bad_input", tests, NULL, NULL);
  ws_device_destroy(g_dev);
  return failed ? 1 : 0;
}
