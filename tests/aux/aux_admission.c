/* SPDX-License-Identifier: MIT */
/* Issue 18: admission against materializable storage.
 *
 * A 4-slot single-stage client with append allocation (append.h): its free
 * slots below the extent are holes, so C - L overstates what a producer can
 * write. With prepare_for_admission (reset the extent when nothing is live)
 * and available_slots (C - extent), a producer blocked by storage forces a
 * drain like one blocked by capacity, and each dispatch drains the observed
 * counts 4, 2, 2, reclaims the empty extent exactly once and never asks
 * prepare_for_producer for more than is available. With the two calls left
 * at their defaults (today's protocol, the red baseline) the client must
 * compact inside prepare_for_producer, at a moment the scheduler did not
 * choose, and the drains are 4, 4, 2. Every layout and accounting mode, two
 * dispatches on one scheduler; then the two new protocol errors, the two
 * storage calls failing (WS_EPROTO_CLIENT naming the call and its status),
 * and the registration of a device description (ws_aux_work.device): a
 * malformed one refused (WS_EINVAL), and each host call that keeps a work
 * off the device loop named when the scheduler asks for it (WS_ECONFIG_LOOP).
 * Usage: aux_admission --backend cpu|cuda|vulkan */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "append.h"
#include "aux_common.h"
#include "wavesched/testing.h"
#include "wavesched/wavesched.h"

extern const ws_module_set ap_kernels_modules;
WS_FRAME_DESC(ap_frame, AP_FIELDS)
WS_CONTINUATION_NAMES(ap_names, AP_CONTINUATIONS)

#define AP_C 4u
#define AP_N 2u
#define AP_R 2u

static ws_device *g_dev;

/* What the client saw; the test asserts on it. */
typedef struct ap_client {
  ap_args args;
  ws_kernel stage_k;
  ws_buffer *tokens, *ids, *state, *done, *visits;
  ws_readback *rb; /* state words at the last boundary */
  bool storage_calls; /* green: prepare_for_admission and available_slots */
  int lie;            /* 1: available_slots > C - L; 2: an empty work not fully available */
  int fail;           /* 1: prepare_for_admission fails; 2: available_slots fails */
  uint32_t extent;    /* the extent as the host knows it (observed, then prepared) */
  uint32_t drains[16], ndrains;
  uint32_t reclaims;       /* extent reset with nothing live */
  uint32_t compactions;    /* compactions inside prepare_for_producer (red) */
  uint32_t beyond;         /* prepare_for_producer(required) with required > available */
  ws_aux_work w;
} ap_client;

static const uint32_t *observed(const ap_client *c) { return ws_readback_data(c->rb); }

static ws_status c_reset(void *u) {
  ap_client *c = u;
  c->extent = 0;
  c->ndrains = 0;
  c->reclaims = c->compactions = c->beyond = 0;
  ws_status st;
  if ((st = ws_buffer_fill_u32(c->tokens, 0, 0, AP_C)) != WS_OK ||
      (st = ws_buffer_fill_u32(c->state, 0, 0, AP_STATE_WORDS)) != WS_OK)
    return st;
  return WS_OK;
}

static ws_status c_readback(void *u) {
  ap_client *c = u;
  return ws_readback_enqueue(c->rb, 0, c->state, 0, AP_STATE_WORDS * 4);
}

static ws_status c_host_count(void *u, uint32_t *n) {
  ap_client *c = u;
  const uint32_t *h = observed(c);
  if (h[AP_ERRORS])
    return WS_EPROTO_CLIENT; /* a publication found the extent full */
  c->extent = h[AP_EXTENT];
  *n = h[AP_LIVE];
  return WS_OK;
}

static ws_status c_dispatch(void *u) {
  ap_client *c = u;
  if (c->ndrains < 16)
    c->drains[c->ndrains] = observed(c)[AP_LIVE];
  c->ndrains += 1;
  ws_status st = ws_buffer_fill_u32(c->state, AP_RELEASED * 4, 0, 1);
  if (st != WS_OK)
    return st;
  return ws_kernel_launch(&c->stage_k, AP_C, &c->args, sizeof c->args);
}

/* Cycles' rule, reduced to what a 4-slot pool can need: reset the extent
 * when nothing is live (compaction needs an extent of 32 or more). */
static ws_status c_prepare_admission(void *u) {
  ap_client *c = u;
  if (c->fail == 1)
    return WS_EBACKEND;
  if (observed(c)[AP_LIVE] == 0 && c->extent > 0) {
    ws_status st = ws_buffer_fill_u32(c->state, AP_EXTENT * 4, 0, 1);
    if (st != WS_OK)
      return st;
    c->extent = 0;
    c->reclaims += 1;
  }
  return WS_OK;
}

static ws_status c_available(void *u, uint32_t *a) {
  ap_client *c = u;
  if (c->fail == 2)
    return WS_EDEVMEM;
  const uint32_t live = observed(c)[AP_LIVE];
  *a = AP_C - c->extent;
  if (c->lie == 1)
    *a = AP_C - live + 1;
  else if (c->lie == 2 && live == 0)
    *a = AP_C - 1;
  return WS_OK;
}

/* Compacts the live items into [0, L) on the host (a test client may block). */
static ws_status compact(ap_client *c) {
  uint32_t tokens[AP_C], ids[AP_C], state[AP_STATE_WORDS];
  ws_status st;
  if ((st = ws_buffer_read(c->tokens, 0, tokens, sizeof tokens)) != WS_OK ||
      (st = ws_buffer_read(c->ids, 0, ids, sizeof ids)) != WS_OK ||
      (st = ws_buffer_read(c->state, 0, state, sizeof state)) != WS_OK)
    return st;
  uint32_t live = 0;
  for (uint32_t s = 0; s < AP_C; ++s) {
    if (tokens[s]) {
      ids[live] = ids[s];
      tokens[live++] = 1;
    }
  }
  for (uint32_t s = live; s < AP_C; ++s)
    tokens[s] = 0;
  state[AP_EXTENT] = live;
  if ((st = ws_buffer_write(c->tokens, 0, tokens, sizeof tokens)) != WS_OK ||
      (st = ws_buffer_write(c->ids, 0, ids, sizeof ids)) != WS_OK ||
      (st = ws_buffer_write(c->state, AP_EXTENT * 4, &state[AP_EXTENT], 4)) != WS_OK)
    return st;
  c->extent = live;
  c->compactions += 1;
  return WS_OK;
}

static ws_status c_prepare_producer(void *u, uint64_t required) {
  ap_client *c = u;
  if (required <= AP_C - c->extent)
    return WS_OK;
  c->beyond += 1;
  /* the protocol admitted more than the storage holds: a client of today's
   * protocol has no choice but to compact now */
  return compact(c);
}

static void client_init(ap_client *c, bool storage_calls) {
  memset(c, 0, sizeof *c);
  c->storage_calls = storage_calls;
  assert_int_equal(ws_kernel_find(g_dev, &ap_kernels_modules, "ap_stage", &c->stage_k), WS_OK);
  assert_int_equal(ws_buffer_create(g_dev, AP_C * 4, &c->tokens), WS_OK);
  assert_int_equal(ws_buffer_create(g_dev, AP_C * 4, &c->ids), WS_OK);
  assert_int_equal(ws_buffer_create(g_dev, AP_STATE_WORDS * 4, &c->state), WS_OK);
  assert_int_equal(ws_buffer_create(g_dev, AP_N * 4, &c->done), WS_OK);
  assert_int_equal(ws_buffer_create(g_dev, AP_N * 4, &c->visits), WS_OK);
  assert_int_equal(ws_readback_create(g_dev, AP_STATE_WORDS * 4, &c->rb), WS_OK);
  c->args.tokens = ws_buffer_address(c->tokens);
  c->args.ids = ws_buffer_address(c->ids);
  c->args.state = ws_buffer_address(c->state);
  c->args.done = ws_buffer_address(c->done);
  c->args.visits = ws_buffer_address(c->visits);
  c->args.capacity = AP_C;
  static const ws_aux_producer producers[] = {{"produce", 1}};
  ws_aux_work *w = &c->w;
  w->name = "append";
  w->capacity = AP_C;
  w->producers = producers;
  w->producer_count = 1;
  w->user = c;
  w->reset = c_reset;
  w->enqueue_count_readback = c_readback;
  w->host_count = c_host_count;
  w->dispatch = c_dispatch;
  w->prepare_for_producer = c_prepare_producer;
  if (storage_calls) {
    w->prepare_for_admission = c_prepare_admission;
    w->available_slots = c_available;
  }
}

static void client_free(ap_client *c) {
  ws_buffer_destroy(c->tokens);
  ws_buffer_destroy(c->ids);
  ws_buffer_destroy(c->state);
  ws_buffer_destroy(c->done);
  ws_buffer_destroy(c->visits);
  ws_readback_destroy(c->rb);
}

static ws_scheduler *make_scheduler_protocol(uint32_t layout, ws_accounting acc, ws_loop_kind loop,
                                            ws_aux_protocol protocol) {
  const ws_coroutine_desc co = {"ap_main", &ap_kernels_modules, &ap_frame_ws_desc,
                                sizeof(ap_args), 1, ap_names};
  ws_scheduler_config cfg = ws_scheduler_config_default();
  cfg.resident_frames = AP_R;
  cfg.layout = layout;
  cfg.accounting = acc;
  cfg.statistics = true;
  cfg.loop = loop;
  cfg.aux_protocol = protocol;
  ws_scheduler *s = NULL;
  assert_int_equal(ws_scheduler_create(g_dev, &co, &cfg, &s), WS_OK);
  return s;
}

static ws_scheduler *make_scheduler_loop(uint32_t layout, ws_accounting acc, ws_loop_kind loop) {
  return make_scheduler_protocol(layout, acc, loop, WS_AUX_MULTI_STAGE);
}

static ws_scheduler *make_scheduler(uint32_t layout, ws_accounting acc) {
  return make_scheduler_loop(layout, acc, WS_LOOP_AUTO);
}

static ws_status run(ws_scheduler *s, ap_client *c) {
  assert_int_equal(ws_buffer_fill_u32(c->done, 0, 0, AP_N), WS_OK);
  assert_int_equal(ws_buffer_fill_u32(c->visits, 0, 0, AP_N), WS_OK);
  return ws_scheduler_dispatch(s, AP_N, &c->args, sizeof c->args);
}

/* Every layout and accounting mode, two dispatches each on one scheduler. */
static void schedule_in_every_mode(bool storage_calls, const uint32_t *want, uint32_t nwant,
                                   uint32_t reclaims, uint32_t compactions) {
  static const char *const acc_names[] = {"materialized", "incremental", "fused"};
  for (uint32_t layout = WS_LAYOUT_AOS; layout <= WS_LAYOUT_SOA; ++layout) {
    for (int acc = WS_ACCOUNTING_MATERIALIZED; acc <= WS_ACCOUNTING_FUSED; ++acc) {
      ap_client c;
      client_init(&c, storage_calls);
      ws_scheduler *s = make_scheduler(layout, (ws_accounting)acc);
      assert_int_equal(ws_scheduler_add_aux(s, &c.w), WS_OK);
      for (int d = 0; d < 2; ++d) {
        const ws_status st = run(s, &c);
        printf("  %s %s dispatch %d: %s, drains", layout ? "soa" : "aos", acc_names[acc], d + 1,
               ws_status_name(st));
        for (uint32_t k = 0; k < c.ndrains && k < 16; ++k)
          printf(" %u", c.drains[k]);
        printf(", reclaims %u, compactions %u, prepare_for_producer beyond availability %u\n",
               c.reclaims, c.compactions, c.beyond);
        if (st != WS_OK)
          fail_msg("%s", ws_scheduler_last_error(s));
        assert_int_equal(c.ndrains, nwant);
        for (uint32_t k = 0; k < nwant; ++k)
          assert_int_equal(c.drains[k], want[k]);
        assert_int_equal(c.reclaims, reclaims);
        assert_int_equal(c.compactions, compactions);
        assert_int_equal(c.beyond, compactions);
        uint32_t done[AP_N], visits[AP_N];
        assert_int_equal(ws_buffer_read(c.done, 0, done, sizeof done), WS_OK);
        assert_int_equal(ws_buffer_read(c.visits, 0, visits, sizeof visits), WS_OK);
        for (uint32_t i = 0; i < AP_N; ++i)
          assert_int_equal(done[i], 1);
        /* every publication is observed by some drain: at least 3 visits each */
        assert_true(visits[0] + visits[1] >= AP_N * AP_PUBLISHES);
        uint32_t live = 0;
        assert_int_equal(c.w.host_count(c.w.user, &live), WS_OK);
        assert_int_equal(live, 0);
      }
      ws_scheduler_destroy(s);
      client_free(&c);
    }
  }
}

static void test_admission_against_storage(void **unused) {
  (void)unused;
  static const uint32_t want[] = {4, 2, 2};
  schedule_in_every_mode(true, want, 3, 1, 0);
}

/* The red baseline: the same client with the two calls at their defaults. */
static void test_red_baseline(void **unused) {
  (void)unused;
  static const uint32_t want[] = {4, 4, 2};
  schedule_in_every_mode(false, want, 3, 0, 1);
}

/* Every item of the last run finished exactly once. */
static void expect_all_done(const ap_client *c) {
  uint32_t done[AP_N];
  assert_int_equal(ws_buffer_read(c->done, 0, done, sizeof done), WS_OK);
  for (uint32_t i = 0; i < AP_N; ++i)
    assert_int_equal(done[i], 1);
}

/* One dispatch with the client lying (`lie`) or failing (`fail`) must end
 * with `want` and a message naming the iteration, the work and `needle`.
 * With `rerun`, the message must end with `needle` and the same scheduler
 * then runs the honest client's dispatch and every item. */
static void expect_run_error(int lie, int fail, ws_status want, const char *needle, bool rerun) {
  ap_client c;
  client_init(&c, true);
  c.lie = lie;
  c.fail = fail;
  ws_scheduler *s = make_scheduler(WS_LAYOUT_AOS, WS_ACCOUNTING_INCREMENTAL);
  assert_int_equal(ws_scheduler_add_aux(s, &c.w), WS_OK);
  const ws_status st = run(s, &c);
  const char *msg = ws_scheduler_last_error(s);
  printf("  %s: %s\n", ws_status_name(st), msg);
  assert_int_equal(st, want);
  assert_non_null(strstr(msg, "'append'"));
  assert_non_null(strstr(msg, "iteration"));
  assert_non_null(strstr(msg, needle));
  if (rerun) {
    /* a client that set no device message adds no empty "()" */
    const size_t ml = strlen(msg), nl = strlen(needle);
    if (ml < nl || strcmp(msg + ml - nl, needle) != 0)
      fail_msg("the message should end with '%s': '%s'", needle, msg);
    c.lie = 0;
    c.fail = 0;
    assert_int_equal(run(s, &c), WS_OK);
    expect_all_done(&c);
  }
  ws_scheduler_destroy(s);
  client_free(&c);
}

static void expect_error(int lie, const char *needle) {
  expect_run_error(lie, 0, WS_EPROTO_AVAILABILITY, needle, false);
}

static void test_availability_above_free(void **unused) {
  (void)unused;
  expect_error(1, "available_slots() is 5, more than the 4 free slots");
}

static void test_empty_not_available(void **unused) {
  (void)unused;
  expect_error(2, "only 3 of its 4 slots are available");
}

/* A storage call that fails ends the dispatch with WS_EPROTO_CLIENT naming
 * the work, the call and the client's status (aux.c
 * ws_aux_prepare_admission); the scheduler stays usable. The first
 * producer's admission is evaluated at the iteration after the entry's
 * refill. */
static void storage_call_fails(int fail, const char *needle) {
  char want[160];
  snprintf(want, sizeof want, "iteration 1: auxiliary work 'append': %s", needle);
  expect_run_error(0, fail, WS_EPROTO_CLIENT, want, true);
}

static void test_prepare_admission_fails(void **unused) {
  (void)unused;
  storage_call_fails(1, "prepare_for_admission() failed with WS_EBACKEND");
}

static void test_available_slots_fails(void **unused) {
  (void)unused;
  storage_call_fails(2, "available_slots() failed with WS_EDEVMEM");
}

/* Registration of `w` must fail with `want` and a message naming the work
 * and holding `needle`; nothing is registered. */
static void expect_add_aux(ws_scheduler *s, const ws_aux_work *w, ws_status want,
                           const char *needle) {
  const ws_status st = ws_scheduler_add_aux(s, w);
  const char *msg = ws_scheduler_last_error(s);
  if (st != want)
    fail_msg("expected %s, got %s: %s", ws_status_name(want), ws_status_name(st), msg);
  if (want == WS_OK)
    return;
  if (!strstr(msg, "ws_scheduler_add_aux: auxiliary work 'append': ") || !strstr(msg, needle))
    fail_msg("the message should name the work and say '%s': '%s'", needle, msg);
  assert_int_equal(ws_scheduler_aux_stats_count(s), 0);
}

static ws_status c_admission_stage(void *u, uint32_t *stage) {
  (void)u;
  *stage = 0;
  return WS_OK;
}

static void test_device_description(void **unused) {
  (void)unused;
  ap_client c;
  client_init(&c, false);
  const uint64_t state = ws_buffer_address(c.state);
  ws_aux_stage_kernel stage = {c.stage_k, &c.args, sizeof c.args, AP_C};
  ws_aux_device dv;
  memset(&dv, 0, sizeof dv);
  dv.live = state + 4 * AP_LIVE;
  dv.stage_counts = state + 4 * AP_LIVE; /* one stage: its count is the live count */
  dv.stages = &stage;
  ws_aux_work w = c.w;
  w.device = &dv;

  /* malformed descriptions, one defect at a time (each condition of the
   * check refuses alone): refused whichever loop runs */
  ws_scheduler *s = make_scheduler(WS_LAYOUT_AOS, WS_ACCOUNTING_INCREMENTAL);
  static const char *const lacks = "lacks the live word, the stage counts or the stage kernels";
  static const char *const no_kernel =
      "a stage kernel of its device description is no kernel of this device";
  static const char *const no_storage = "has an append extent but lacks the tokens";
  ws_module_entry coro = *c.stage_k.entry, big = *c.stage_k.entry;
  coro.kind = WS_ENTRY_COROUTINE;
  big.args_size = WS_MAX_KERNEL_ARGS + 1u;
  unsigned char big_args[WS_MAX_KERNEL_ARGS + 1u] = {0};
  for (int defect = 0; defect < 14; ++defect) {
    ws_aux_device d2 = dv;
    ws_aux_stage_kernel k2 = stage;
    d2.stages = &k2;
    ws_aux_work w2 = w;
    w2.device = &d2;
    const char *needle = no_storage;
    if (defect >= 9) { /* append storage, all of it there but one array */
      d2.extent = state + 4 * AP_EXTENT;
      d2.tokens = d2.ids = d2.scratch = d2.payload = state;
      d2.payload_stride = 4;
    }
    switch (defect) {
    case 0: d2.live = 0; needle = lacks; break;
    case 1: d2.stage_counts = 0; needle = lacks; break;
    case 2: d2.stages = NULL; needle = lacks; break;
    case 3: k2.kernel.entry = NULL; needle = no_kernel; break;
    case 4: k2.kernel.dev = NULL; needle = no_kernel; break; /* not this device's */
    case 5: k2.kernel.entry = &coro; needle = no_kernel; break;
    case 6: k2.args_size = sizeof c.args - 8; needle = no_kernel; break;
    case 7: /* the entry agrees, but the block is over the limit */
      k2.kernel.entry = &big;
      k2.args = big_args;
      k2.args_size = WS_MAX_KERNEL_ARGS + 1u;
      needle = no_kernel;
      break;
    case 8: k2.args = NULL; needle = no_kernel; break;
    case 9: d2.tokens = 0; break;
    case 10: d2.ids = 0; break;
    case 11: d2.scratch = 0; break;
    case 12: d2.payload = 0; break;
    case 13: d2.payload_stride = 0; break;
    }
    expect_add_aux(s, &w2, WS_EINVAL, needle);
  }
  ws_scheduler_destroy(s);
  /* an argument block of exactly WS_MAX_KERNEL_ARGS bytes is a valid one */
  s = make_scheduler(WS_LAYOUT_AOS, WS_ACCOUNTING_INCREMENTAL);
  big.args_size = WS_MAX_KERNEL_ARGS;
  ws_aux_stage_kernel k3 = stage;
  k3.kernel.entry = &big;
  k3.args = big_args;
  k3.args_size = WS_MAX_KERNEL_ARGS;
  ws_aux_device d3 = dv;
  d3.stages = &k3;
  ws_aux_work w3 = w;
  w3.device = &d3;
  expect_add_aux(s, &w3, WS_OK, NULL);
  ws_scheduler_destroy(s);

  /* every host allocation of registering a described work failed in turn:
   * WS_ENOMEM, nothing registered, nothing leaked (the copies of the stage
   * kernels, and under the single-stage protocol the adapter, included) */
  w.prepare_for_producer = NULL; /* a work the device loop can run */
  for (int legacy = 0; legacy < 2; ++legacy) {
    for (unsigned long n = 1;; ++n) {
      s = make_scheduler_protocol(WS_LAYOUT_AOS, WS_ACCOUNTING_INCREMENTAL, WS_LOOP_AUTO,
                                  legacy ? WS_AUX_SINGLE_STAGE : WS_AUX_MULTI_STAGE);
      const unsigned long live0 = ws_testing_live_allocations();
      ws_testing_fail_alloc_after(n);
      const ws_status st = ws_scheduler_add_aux(s, &w);
      ws_testing_fail_alloc_after(0);
      if (st == WS_OK) {
        assert_true(n > 1); /* registration allocates */
        assert_int_equal(ws_scheduler_aux_stats_count(s), 1);
        ws_scheduler_destroy(s);
        break;
      }
      if (st != WS_ENOMEM)
        fail_msg("allocation %lu failed: %s, expected WS_ENOMEM: %s", n, ws_status_name(st),
                 ws_scheduler_last_error(s));
      assert_int_equal(ws_scheduler_aux_stats_count(s), 0);
      if (ws_testing_live_allocations() != live0)
        fail_msg("allocation %lu failed: %lu allocations left behind", n,
                 ws_testing_live_allocations() - live0);
      ws_scheduler_destroy(s);
    }
  }
  w.prepare_for_producer = c.w.prepare_for_producer;

  /* a well-formed description with a host call: the device loop is refused,
   * naming the call; WS_LOOP_AUTO runs the work in the host loop */
  s = make_scheduler_loop(WS_LAYOUT_AOS, WS_ACCOUNTING_INCREMENTAL, WS_LOOP_DEVICE);
  expect_add_aux(s, &w, WS_ECONFIG_LOOP,
                 "the scheduler asks for the device loop, but this work needs the host: "
                 "prepare_for_producer() is a host call");
  w.prepare_for_producer = NULL;
  w.admission_stage = c_admission_stage;
  expect_add_aux(s, &w, WS_ECONFIG_LOOP, "admission_stage() is a host call");
  w.admission_stage = NULL;
  w.prepare_for_admission = c_prepare_admission;
  expect_add_aux(s, &w, WS_ECONFIG_LOOP,
                 "prepare_for_admission() / available_slots() are host calls");
  w.prepare_for_admission = NULL;
  w.available_slots = c_available;
  expect_add_aux(s, &w, WS_ECONFIG_LOOP,
                 "prepare_for_admission() / available_slots() are host calls");
  w.available_slots = NULL;
  expect_add_aux(s, &w, WS_OK, NULL); /* no host call left: the device loop may run it */
  assert_int_equal(ws_scheduler_aux_stats_count(s), 1);
  ws_scheduler_destroy(s);

  w = c.w; /* prepare_for_producer again */
  w.device = &dv;
  s = make_scheduler(WS_LAYOUT_AOS, WS_ACCOUNTING_INCREMENTAL);
  expect_add_aux(s, &w, WS_OK, NULL);
  assert_int_equal(run(s, &c), WS_OK);
  ws_dispatch_stats ds;
  ws_scheduler_dispatch_stats(s, &ds);
  assert_int_equal(ds.loop, WS_LOOP_HOST);
  expect_all_done(&c);
  ws_scheduler_destroy(s);
  client_free(&c);
}

int main(int argc, char **argv) {
  const int code = aux_cmocka_open(argc, argv, &g_dev);
  if (code >= 0)
    return code;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_admission_against_storage),
      cmocka_unit_test(test_red_baseline),
      cmocka_unit_test(test_availability_above_free),
      cmocka_unit_test(test_empty_not_available),
      cmocka_unit_test(test_prepare_admission_fails),
      cmocka_unit_test(test_available_slots_fails),
      cmocka_unit_test(test_device_description),
  };
  int failed = cmocka_run_group_tests(tests, NULL, NULL);
  ws_device_destroy(g_dev);
  return failed ? 1 : 0;
}
