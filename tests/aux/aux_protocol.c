/* SPDX-License-Identifier: MIT */
/* Protocol tests of the auxiliary-work interface (SPEC §3.2-§3.6, §4):
 * single-stage clients, the §3.6 counterexample, admission arithmetic,
 * registration errors, protocol violations and partial admission.
 * Usage: aux_protocol --backend cpu|cuda|vulkan [--filter PATTERN]
 * (PATTERN: cmocka's test-name filter, e.g. "test_counterexample*"). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aux_common.h"
#include "proto.h"
#include "wavesched/wavesched.h"

extern const ws_module_set proto_kernels_modules;
WS_FRAME_DESC(proto_frame, PT_FIELDS)
WS_CONTINUATION_NAMES(proto_names, PT_CONTINUATIONS)

static ws_device *g_dev;

/* ---- a shared slot pool and client views over some of its stages ---- */
typedef struct proto_fixture {
  ws_kernel stage_k;
  ws_buffer *visits, *done, *items, *tokens, *stack, *state;
  ws_readback *rb; /* state: [free, errors, counts...] */
  proto_args args;
  uint32_t N, C, S;
} proto_fixture;

typedef struct proto_work {
  proto_fixture *fx;
  uint32_t first, count; /* the stages this work covers */
  const char *names[PT_MAX_STAGES];
  bool owner;            /* resets the shared storage */
  /* misbehaviour switches (0 = behave) */
  int lie_sum, over_capacity, change_stages, bad_drain, fail_readback;
  uint32_t readbacks;
  uint32_t admission_calls; /* admission_stage() calls since the reset */
  ws_aux_work w;
} proto_work;

static const uint32_t *obs(const proto_work *pw) { return ws_readback_data(pw->fx->rb); }

static ws_status pw_reset(void *u) {
  proto_work *pw = u;
  proto_fixture *fx = pw->fx;
  pw->readbacks = 0;
  pw->admission_calls = 0;
  if (!pw->owner)
    return WS_OK;
  uint32_t stack[256];
  for (uint32_t i = 0; i < fx->C; ++i)
    stack[i] = fx->C - 1 - i;
  ws_status st;
  if ((st = ws_buffer_fill_u32(fx->tokens, 0, 0, fx->C)) ||
      (st = ws_buffer_fill_u32(fx->state, 0, 0, 2 + PT_MAX_STAGES)) ||
      (st = ws_buffer_fill_u32(fx->state, 0, fx->C, 1)) ||
      (st = ws_buffer_write(fx->stack, 0, stack, fx->C * 4)))
    return st;
  return WS_OK;
}

static ws_status pw_enqueue(void *u) {
  proto_work *pw = u;
  pw->readbacks += 1;
  if (pw->fail_readback && pw->readbacks == 3)
    return WS_EBACKEND;
  return ws_readback_enqueue(pw->fx->rb, 0, pw->fx->state, 0, (2 + PT_MAX_STAGES) * 4);
}

static ws_status pw_host_count(void *u, uint32_t *count) {
  proto_work *pw = u;
  const uint32_t *h = obs(pw);
  uint32_t n = 0;
  if (pw->count == pw->fx->S) {
    n = pw->fx->C - h[0]; /* the allocator's view of the whole work */
  } else {
    for (uint32_t s = 0; s < pw->count; ++s)
      n += h[2 + pw->first + s];
  }
  if (pw->over_capacity && pw->readbacks >= 3)
    n = pw->w.capacity + 1;
  *count = n;
  return WS_OK;
}

static uint32_t pw_stage_count(void *u) {
  proto_work *pw = u;
  return pw->count + (pw->change_stages && pw->readbacks >= 3 ? 1u : 0u);
}

static const char *pw_stage_name(void *u, uint32_t s) {
  proto_work *pw = u;
  return s < pw->count ? pw->names[s] : "extra";
}

static ws_status pw_stage_host_count(void *u, uint32_t s, uint32_t *count) {
  proto_work *pw = u;
  *count = obs(pw)[2 + pw->first + s] + (pw->lie_sum && s == 0 && pw->readbacks >= 3);
  return WS_OK;
}

static ws_status pw_dispatch_stage(void *u, uint32_t s) {
  proto_work *pw = u;
  proto_stage_args sa;
  memset(&sa, 0, sizeof sa);
  sa.a = pw->fx->args;
  sa.stage = pw->first + s;
  return ws_kernel_launch(&pw->fx->stage_k, pw->fx->C, &sa, sizeof sa);
}

static ws_status pw_dispatch(void *u) { return pw_dispatch_stage(u, 0); }

static ws_status pw_admission_stage(void *u, uint32_t *stage) {
  proto_work *pw = u;
  pw->admission_calls += 1;
  const uint32_t *h = obs(pw);
  if (pw->bad_drain == 2) {
    *stage = pw->count + 3;
    return WS_OK;
  }
  for (uint32_t s = 0; s < pw->count; ++s) {
    bool empty = h[2 + pw->first + s] == 0;
    if (pw->bad_drain == 1 ? empty : !empty) {
      *stage = s;
      return WS_OK;
    }
  }
  *stage = 0;
  return WS_OK;
}

static void fixture_init(proto_fixture *fx, uint32_t N, uint32_t C, uint32_t S) {
  memset(fx, 0, sizeof *fx);
  fx->N = N;
  fx->C = C;
  fx->S = S;
  assert_true(C <= 256 && S <= PT_MAX_STAGES);
  assert_int_equal(ws_kernel_find(g_dev, &proto_kernels_modules, "proto_stage", &fx->stage_k), WS_OK);
  assert_int_equal(ws_buffer_create(g_dev, (size_t)N * PT_MAX_STAGES * 4, &fx->visits), WS_OK);
  assert_int_equal(ws_buffer_create(g_dev, (size_t)N * 4, &fx->done), WS_OK);
  assert_int_equal(ws_buffer_create(g_dev, (size_t)C * sizeof(proto_item), &fx->items), WS_OK);
  assert_int_equal(ws_buffer_create(g_dev, (size_t)C * 4, &fx->tokens), WS_OK);
  assert_int_equal(ws_buffer_create(g_dev, (size_t)C * 4, &fx->stack), WS_OK);
  assert_int_equal(ws_buffer_create(g_dev, (2 + PT_MAX_STAGES) * 4, &fx->state), WS_OK);
  assert_int_equal(ws_readback_create(g_dev, (2 + PT_MAX_STAGES) * 4, &fx->rb), WS_OK);
  proto_args *a = &fx->args;
  a->visits = ws_buffer_address(fx->visits);
  a->done = ws_buffer_address(fx->done);
  a->items = ws_buffer_address(fx->items);
  a->tokens = ws_buffer_address(fx->tokens);
  a->stack = ws_buffer_address(fx->stack);
  a->state = ws_buffer_address(fx->state);
  a->capacity = C;
  a->stage_count = S;
  a->sparse_stage = PT_NONE;
  a->sparse_mod = 8;
  a->dense_stage = 0;
  a->dense_copies = 1;
  a->loop_stage = PT_NONE;
  a->clone_stage = PT_NONE;
  a->forever_stage = PT_NONE;
  for (uint32_t s = 0; s < PT_MAX_STAGES; ++s)
    a->next[s] = s + 1 < S ? s + 1 : S; /* a chain that terminates after the last */
  assert_int_equal(ws_buffer_fill_u32(fx->visits, 0, 0, (size_t)N * PT_MAX_STAGES), WS_OK);
  assert_int_equal(ws_buffer_fill_u32(fx->done, 0, 0, N), WS_OK);
}

static void fixture_free(proto_fixture *fx) {
  ws_buffer_destroy(fx->visits);
  ws_buffer_destroy(fx->done);
  ws_buffer_destroy(fx->items);
  ws_buffer_destroy(fx->tokens);
  ws_buffer_destroy(fx->stack);
  ws_buffer_destroy(fx->state);
  ws_readback_destroy(fx->rb);
}

static const ws_aux_producer both_producers[] = {{"sparse_publish", 1}, {"dense_publish", 1}};

/* A multi-stage view over stages [first, first + count) of the fixture. */
static void work_init(proto_work *pw, proto_fixture *fx, const char *name, uint32_t first,
                      uint32_t count, const ws_aux_producer *prods, uint32_t nprods, bool owner) {
  static const char *const default_names[PT_MAX_STAGES] = {"s0", "s1", "s2", "s3"};
  memset(pw, 0, sizeof *pw);
  pw->fx = fx;
  pw->first = first;
  pw->count = count;
  pw->owner = owner;
  for (uint32_t s = 0; s < count; ++s)
    pw->names[s] = default_names[first + s];
  ws_aux_work *w = &pw->w;
  w->name = name;
  w->capacity = fx->C;
  w->producers = prods;
  w->producer_count = nprods;
  w->user = pw;
  w->reset = pw_reset;
  w->enqueue_count_readback = pw_enqueue;
  w->host_count = pw_host_count;
  w->stage_count = pw_stage_count;
  w->stage_name = pw_stage_name;
  w->stage_host_count = pw_stage_host_count;
  w->admission_stage = pw_admission_stage;
  w->dispatch_stage = pw_dispatch_stage;
}

static ws_scheduler_config proto_config(uint32_t R) {
  ws_scheduler_config c = ws_scheduler_config_default();
  c.resident_frames = R;
  c.block_size = 32;
  c.iteration_limit = 20000;
  return c;
}

static ws_scheduler *proto_scheduler(const ws_scheduler_config *c) {
  static const ws_coroutine_desc co = {"proto_main", &proto_kernels_modules, &proto_frame_ws_desc,
                                       sizeof(proto_args), 3, proto_names};
  ws_scheduler *s = NULL;
  assert_int_equal(ws_scheduler_create(g_dev, &co, c, &s), WS_OK);
  return s;
}

static ws_status proto_run(ws_scheduler *s, proto_fixture *fx) {
  return ws_scheduler_dispatch(s, fx->N, &fx->args, sizeof fx->args);
}

static uint32_t pool_errors(proto_fixture *fx) {
  uint32_t state[2 + PT_MAX_STAGES];
  assert_int_equal(ws_buffer_read(fx->state, 0, state, sizeof state), WS_OK);
  return state[1];
}

/* ---- admission arithmetic ---- */
static void test_admission_extremes(void **unused) {
  (void)unused;
  const uint32_t M = UINT32_MAX;
  assert_false(ws_aux_can_admit(M, 0, M, M));       /* (2^32-1)^2 must not wrap */
  assert_false(ws_aux_can_admit(100, 0, 65536, 65536)); /* 2^32 wraps to 0 in 32 bits */
  assert_true(ws_aux_can_admit(M, 0, 1, M));
  assert_true(ws_aux_can_admit(M, 0, M, 1));
  assert_false(ws_aux_can_admit(M, 1, M, 1));
  assert_true(ws_aux_can_admit(8, 7, 1, 1));
  assert_false(ws_aux_can_admit(8, 7, 2, 1)); /* the §3.6 numbers, grouped */
  assert_true(ws_aux_can_admit(8, 0, 2, 1));  /* ... and entry-only */
  assert_false(ws_aux_can_admit(8, 9, 0, 1)); /* L > C never admits, not even n = 0 */
  assert_false(ws_aux_can_admit(0, 1, 0, 0));
  assert_true(ws_aux_can_admit(8, 8, 0, 5));
  assert_int_equal(ws_aux_admissible_frames(M, 0, M, M), 1);
  assert_int_equal(ws_aux_admissible_frames(M, 0, M, 1), M);
  assert_int_equal(ws_aux_admissible_frames(8, 5, 10, 2), 1);
  assert_int_equal(ws_aux_admissible_frames(8, 9, 10, 1), 0);
  assert_int_equal(ws_aux_admissible_frames(8, 0, 3, 2), 3);
}

/* ---- a single-stage client written against §3.2 only ---- */
static void test_single_stage_client(void **unused) {
  (void)unused;
  proto_fixture fx;
  fixture_init(&fx, 20, 8, 1);
  fx.args.sparse_stage = 0;
  proto_work pw;
  work_init(&pw, &fx, "shadow", 0, 1, both_producers, 2, true);
  /* only the §3.2 calls: every optional one takes its default */
  pw.w.stage_count = NULL;
  pw.w.stage_name = NULL;
  pw.w.stage_host_count = NULL;
  pw.w.admission_stage = NULL;
  pw.w.dispatch_stage = NULL;
  pw.w.dispatch = pw_dispatch;
  ws_scheduler_config c = proto_config(8);
  ws_scheduler *s = proto_scheduler(&c);
  assert_int_equal(ws_scheduler_add_aux(s, &pw.w), WS_OK);
  assert_int_equal(proto_run(s, &fx), WS_OK);
  uint32_t visits[20 * PT_MAX_STAGES], done[20];
  assert_int_equal(ws_buffer_read(fx.visits, 0, visits, sizeof visits), WS_OK);
  assert_int_equal(ws_buffer_read(fx.done, 0, done, sizeof done), WS_OK);
  for (uint32_t i = 0; i < 20; ++i) {
    assert_int_equal(done[i], 1);
    assert_int_equal(visits[i * PT_MAX_STAGES], i % 8 == 0 ? 2 : 1);
  }
  assert_int_equal(pool_errors(&fx), 0);
  assert_int_equal(ws_scheduler_aux_stats_count(s), 1);
  ws_node_stats ns;
  assert_int_equal(ws_scheduler_aux_stats(s, 0, &ns), WS_OK);
  assert_string_equal(ns.name, "shadow");
  assert_int_equal(ns.executed_count, 23);
  ws_scheduler_destroy(s);
  fixture_free(&fx);
}

/* ---- SPEC §3.6 on a device ---- */
/* Two stages share C = 8 slots: "entry" (dense publications, released at
 * once) and "later" (sparse publications of every id, parked for 3 extra
 * visits). Each stage's own producer keeps its own contract. */
static void counterexample_setup(proto_fixture *fx) {
  fixture_init(fx, 64, 8, 2);
  fx->args.sparse_stage = 1;
  fx->args.sparse_mod = 1;
  fx->args.next[0] = 2; /* entry terminates; nothing moves between the works */
  fx->args.loop_stage = 1;
  fx->args.loops = 3;
}

static void test_counterexample_split_overflows(void **unused) {
  (void)unused;
  proto_fixture fx;
  counterexample_setup(&fx);
  /* each stage registered as its own work: the entry work's admission sees
   * only its own count while "later" items still hold slots */
  static const ws_aux_producer dense[] = {{"dense_publish", 1}};
  static const ws_aux_producer sparse[] = {{"sparse_publish", 1}};
  proto_work entry, later;
  work_init(&entry, &fx, "entry", 0, 1, dense, 1, true);
  work_init(&later, &fx, "later", 1, 1, sparse, 1, false);
  ws_scheduler_config c = proto_config(8);
  ws_scheduler *s = proto_scheduler(&c);
  assert_int_equal(ws_scheduler_add_aux(s, &entry.w), WS_OK);
  assert_int_equal(ws_scheduler_add_aux(s, &later.w), WS_OK);
  ws_status st = proto_run(s, &fx);
  uint32_t errors = pool_errors(&fx);
  printf("  split registration: dispatch %s, overflow guard tripped %u times\n",
         ws_status_name(st), errors);
  assert_true(errors > 0);
  ws_scheduler_destroy(s);
  fixture_free(&fx);
}

/* SPEC §4: a stage dispatch never raises any live count. When the entry
 * work's stage moves its items into a separately registered work, the
 * receiver's rise is a clone, reported with both works named (it used to be
 * called a bound violation of the receiver). */
static void test_clone_into_other_work(void **unused) {
  (void)unused;
  proto_fixture fx;
  fixture_init(&fx, 32, 64, 2);
  fx.args.sparse_stage = 1;
  fx.args.sparse_mod = 1;
  fx.args.next[0] = 1; /* entry -> later: items cross from one work to the other */
  static const ws_aux_producer dense[] = {{"dense_publish", 1}};
  static const ws_aux_producer sparse[] = {{"sparse_publish", 1}};
  proto_work entry, later;
  work_init(&entry, &fx, "entry", 0, 1, dense, 1, true);
  work_init(&later, &fx, "later", 1, 1, sparse, 1, false);
  ws_scheduler_config c = proto_config(8);
  ws_scheduler *s = proto_scheduler(&c);
  assert_int_equal(ws_scheduler_add_aux(s, &entry.w), WS_OK);
  assert_int_equal(ws_scheduler_add_aux(s, &later.w), WS_OK);
  const ws_status st = proto_run(s, &fx);
  const char *msg = ws_scheduler_last_error(s);
  printf("  items moved across works: %s: %s\n", ws_status_name(st), msg);
  assert_int_equal(st, WS_EPROTO_CLONED);
  assert_non_null(strstr(msg, "'later'"));
  assert_non_null(strstr(msg, "of work 'entry'"));
  ws_scheduler_destroy(s);
  fixture_free(&fx);
}

static void test_counterexample_grouped_never_overflows(void **unused) {
  (void)unused;
  proto_fixture fx;
  counterexample_setup(&fx);
  proto_work grouped;
  work_init(&grouped, &fx, "grouped", 0, 2, both_producers, 2, true);
  ws_scheduler_config c = proto_config(8);
  c.verify_queues = true;
  ws_scheduler *s = proto_scheduler(&c);
  assert_int_equal(ws_scheduler_add_aux(s, &grouped.w), WS_OK);
  assert_int_equal(proto_run(s, &fx), WS_OK);
  assert_int_equal(pool_errors(&fx), 0);
  ws_dispatch_stats ds;
  ws_scheduler_dispatch_stats(s, &ds);
  assert_true(ds.forced_drain_count > 0);
  /* SPEC §3.4 C: the client names the stage of a forced drain, and only
   * then; a stage that wins the competition is the largest (D) */
  assert_true(ds.aux_dispatch_count > ds.forced_drain_count);
  assert_int_equal(grouped.admission_calls, ds.forced_drain_count);
  uint32_t visits[64 * PT_MAX_STAGES];
  assert_int_equal(ws_buffer_read(fx.visits, 0, visits, sizeof visits), WS_OK);
  for (uint32_t i = 0; i < 64; ++i) {
    assert_int_equal(visits[i * PT_MAX_STAGES + 0], 1); /* entry */
    assert_int_equal(visits[i * PT_MAX_STAGES + 1], 4); /* later: 3 loops + release */
  }
  ws_scheduler_destroy(s);
  fixture_free(&fx);
}

/* ---- registration errors: each a distinct code, nothing registered ---- */
static void expect_reject(ws_scheduler *s, const ws_aux_work *w, ws_status want) {
  uint32_t before = ws_scheduler_aux_stats_count(s);
  ws_status got = ws_scheduler_add_aux(s, w);
  if (got != want)
    fail_msg("expected %s, got %s: %s", ws_status_name(want), ws_status_name(got),
             ws_scheduler_last_error(s));
  assert_int_equal(ws_scheduler_aux_stats_count(s), before);
}

static void test_registration_errors(void **unused) {
  (void)unused;
  proto_fixture fx;
  fixture_init(&fx, 8, 8, 2);
  ws_scheduler_config c = proto_config(8);
  ws_scheduler *s = proto_scheduler(&c);
  proto_work pw;
  ws_aux_work w;

  expect_reject(s, NULL, WS_EAUX_NULL);
  work_init(&pw, &fx, "a", 0, 2, both_producers, 2, true);
  w = pw.w;
  w.host_count = NULL;
  expect_reject(s, &w, WS_EAUX_NULL);
  w = pw.w;
  w.dispatch_stage = NULL;
  w.dispatch = NULL;
  expect_reject(s, &w, WS_EAUX_NULL);
  w = pw.w;
  w.capacity = 0;
  expect_reject(s, &w, WS_EAUX_CAPACITY);
  w = pw.w;
  w.name = "";
  expect_reject(s, &w, WS_EAUX_NAME);
  w = pw.w;
  w.producer_count = 0;
  expect_reject(s, &w, WS_EAUX_NO_PRODUCER);
  static const ws_aux_producer unknown[] = {{"no_such_continuation", 1}};
  w = pw.w;
  w.producers = unknown;
  w.producer_count = 1;
  expect_reject(s, &w, WS_EAUX_PRODUCER);
  static const ws_aux_producer entry[] = {{"<entry>", 1}};
  w.producers = entry;
  expect_reject(s, &w, WS_EAUX_PRODUCER);
  static const ws_aux_producer twice[] = {{"dense_publish", 1}, {"dense_publish", 1}};
  w.producers = twice;
  w.producer_count = 2;
  expect_reject(s, &w, WS_EAUX_PRODUCER);
  static const ws_aux_producer zero[] = {{"dense_publish", 0}};
  w.producers = zero;
  w.producer_count = 1;
  expect_reject(s, &w, WS_EAUX_BOUND);
  static const ws_aux_producer big[] = {{"dense_publish", 2}}; /* R*b = 16 > C = 8 */
  w.producers = big;
  expect_reject(s, &w, WS_EAUX_POOL_BOUND);
  proto_work bad;
  work_init(&bad, &fx, "b", 0, 2, both_producers, 2, true);
  bad.count = 0;
  expect_reject(s, &bad.w, WS_EAUX_STAGES);
  work_init(&bad, &fx, "b", 0, 2, both_producers, 2, true);
  bad.names[1] = "s0";
  expect_reject(s, &bad.w, WS_EAUX_STAGES);
  bad.names[1] = "";
  expect_reject(s, &bad.w, WS_EAUX_STAGES);

  /* the good one, then duplicates and late registration */
  assert_int_equal(ws_scheduler_add_aux(s, &pw.w), WS_OK);
  assert_int_equal(ws_scheduler_aux_stats_count(s), 2);
  expect_reject(s, &pw.w, WS_EAUX_NAME);
  /* several works may share a producer continuation */
  proto_work other;
  work_init(&other, &fx, "other", 0, 2, both_producers, 2, false);
  other.w.capacity = 64;
  assert_int_equal(ws_scheduler_add_aux(s, &other.w), WS_OK);
  assert_int_equal(proto_run(s, &fx), WS_OK);
  proto_work late;
  work_init(&late, &fx, "late", 0, 2, both_producers, 2, false);
  expect_reject(s, &late.w, WS_EAUX_CLOSED);
  ws_scheduler_destroy(s);

  /* all-queues policy and the megakernel take no auxiliary work */
  c.largest_first = false;
  c.accounting = WS_ACCOUNTING_MATERIALIZED;
  s = proto_scheduler(&c);
  expect_reject(s, &late.w, WS_EAUX_POLICY);
  ws_scheduler_destroy(s);
  c = proto_config(8);
  c.kind = WS_SCHEDULER_MEGAKERNEL;
  s = proto_scheduler(&c);
  expect_reject(s, &late.w, WS_EAUX_POLICY);
  ws_scheduler_destroy(s);
  fixture_free(&fx);
}

/* ---- protocol violations end the dispatch with a named error ---- */
typedef struct violation {
  const char *label;
  ws_status want;
  const char *needle; /* must appear in the message */
} violation;

static void expect_violation(ws_scheduler *s, proto_fixture *fx, const violation *v) {
  ws_status got = proto_run(s, fx);
  const char *msg = ws_scheduler_last_error(s);
  printf("  %s: %s: %s\n", v->label, ws_status_name(got), msg);
  if (got != v->want)
    fail_msg("%s: expected %s, got %s", v->label, ws_status_name(v->want), ws_status_name(got));
  assert_non_null(strstr(msg, "iteration"));
  assert_non_null(strstr(msg, v->needle));
}

static void run_violation(int which) {
  proto_fixture fx;
  fixture_init(&fx, 32, 64, 3);
  fx.args.sparse_stage = 2;
  proto_work pw;
  work_init(&pw, &fx, "victim", 0, 3, both_producers, 2, true);
  ws_scheduler_config c = proto_config(8);
  violation v = {"", WS_OK, "victim"};
  switch (which) {
  case 0:
    pw.lie_sum = 1;
    v = (violation){"stage sum", WS_EPROTO_STAGE_SUM, "stage sum differs from live count"};
    break;
  case 1:
    pw.over_capacity = 1;
    v = (violation){"over capacity", WS_EPROTO_OVER_CAPACITY, "exceeds capacity 64"};
    break;
  case 2:
    pw.change_stages = 1;
    v = (violation){"stage count change", WS_EPROTO_STAGE_COUNT, "was 3 at registration"};
    break;
  case 3: /* a small pool so that producers block and drains are forced */
    fixture_free(&fx);
    fixture_init(&fx, 32, 8, 3);
    fx.args.sparse_stage = 2;
    fx.args.sparse_mod = 1;
    work_init(&pw, &fx, "victim", 0, 3, both_producers, 2, true);
    pw.bad_drain = 1;
    v = (violation){"empty drain stage", WS_EPROTO_DRAIN_STAGE, "empty"};
    break;
  case 4:
    fixture_free(&fx);
    fixture_init(&fx, 32, 8, 3);
    fx.args.sparse_stage = 2;
    fx.args.sparse_mod = 1;
    work_init(&pw, &fx, "victim", 0, 3, both_producers, 2, true);
    pw.bad_drain = 2;
    v = (violation){"out-of-range drain stage", WS_EPROTO_DRAIN_STAGE, "out of range"};
    break;
  case 5:
    fx.args.clone_stage = 0;
    v = (violation){"cloning stage", WS_EPROTO_CLONED, "cloned"};
    break;
  case 6:
    fx.args.dense_copies = 2; /* declared bound 1 */
    v = (violation){"bound exceeded", WS_EPROTO_BOUND, "more than declared"};
    break;
  case 7:
    fx.args.forever_stage = 1;
    c.iteration_limit = 500;
    /* every number of the message: the decisions depend on counts only, so
     * every backend stops in the same state */
    v = (violation){"non-draining stage", WS_EITERATION_LIMIT,
                    "iteration limit 500 reached: 8 of 32 items admitted, 0 live frames, 9 live "
                    "auxiliary items"};
    break;
  case 9:
    /* a late failure (the stage count changed) at the boundary where the
     * live count is over capacity: SPEC §3.4 A checks the capacity first */
    pw.over_capacity = 1;
    pw.change_stages = 1;
    v = (violation){"over capacity, stage count changed", WS_EPROTO_OVER_CAPACITY,
                    "exceeds capacity 64"};
    break;
  case 8:
    pw.fail_readback = 1;
    v = (violation){"client call fails", WS_EPROTO_CLIENT, "enqueue_count_readback"};
    break;
  default:
    fail();
  }
  ws_scheduler *s = proto_scheduler(&c);
  assert_int_equal(ws_scheduler_add_aux(s, &pw.w), WS_OK);
  expect_violation(s, &fx, &v);
  ws_scheduler_destroy(s);
  fixture_free(&fx);
}

static void test_violation_stage_sum(void **u) { (void)u; run_violation(0); }
static void test_violation_over_capacity(void **u) { (void)u; run_violation(1); }
static void test_violation_stage_count(void **u) { (void)u; run_violation(2); }
static void test_violation_empty_drain(void **u) { (void)u; run_violation(3); }
static void test_violation_drain_range(void **u) { (void)u; run_violation(4); }
static void test_violation_clone(void **u) { (void)u; run_violation(5); }
static void test_violation_bound(void **u) { (void)u; run_violation(6); }
static void test_violation_non_draining(void **u) { (void)u; run_violation(7); }
static void test_violation_client_error(void **u) { (void)u; run_violation(8); }
static void test_violation_late_failure_order(void **u) { (void)u; run_violation(9); }

/* ---- partial admission ---- */
typedef struct pa_result {
  uint32_t visits[67 * PT_MAX_STAGES];
  uint32_t done[67];
  uint64_t forced;
  uint32_t errors;
} pa_result;

static ws_status partial_run(bool partial, uint32_t C, pa_result *r) {
  proto_fixture fx;
  fixture_init(&fx, 67, C, 3);
  fx.args.sparse_stage = 2;
  fx.args.loop_stage = 1;
  fx.args.loops = 1;
  proto_work pw;
  work_init(&pw, &fx, "aux", 0, 3, both_producers, 2, true);
  ws_scheduler_config c = proto_config(8);
  c.partial_admission = partial;
  ws_scheduler *s = proto_scheduler(&c);
  ws_status st = ws_scheduler_add_aux(s, &pw.w);
  if (st == WS_OK)
    st = proto_run(s, &fx);
  if (st == WS_OK) {
    ws_dispatch_stats ds;
    ws_scheduler_dispatch_stats(s, &ds);
    r->forced = ds.forced_drain_count;
    r->errors = pool_errors(&fx);
    assert_int_equal(ws_buffer_read(fx.visits, 0, r->visits, sizeof r->visits), WS_OK);
    assert_int_equal(ws_buffer_read(fx.done, 0, r->done, sizeof r->done), WS_OK);
  }
  ws_scheduler_destroy(s);
  fixture_free(&fx);
  return st;
}

static void test_partial_admission(void **unused) {
  (void)unused;
  static pa_result def, part, small;
  assert_int_equal(partial_run(false, 8, &def), WS_OK);
  assert_int_equal(partial_run(true, 8, &part), WS_OK);
  printf("  forced drains: default %llu, partial %llu\n", (unsigned long long)def.forced,
         (unsigned long long)part.forced);
  assert_int_equal(def.errors, 0);
  assert_int_equal(part.errors, 0);
  assert_memory_equal(def.visits, part.visits, sizeof def.visits);
  assert_memory_equal(def.done, part.done, sizeof def.done);
  assert_true(part.forced < def.forced);
  /* a pool smaller than R*b is legal only with partial admission */
  assert_int_equal(partial_run(false, 4, &small), WS_EAUX_POOL_BOUND);
  assert_int_equal(partial_run(true, 4, &small), WS_OK);
  assert_int_equal(small.errors, 0);
  assert_memory_equal(def.visits, small.visits, sizeof def.visits);
  assert_memory_equal(def.done, small.done, sizeof def.done);
}

int main(int argc, char **argv) {
  const int code = aux_cmocka_open(argc, argv, &g_dev);
  if (code >= 0)
    return code;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_admission_extremes),
      cmocka_unit_test(test_single_stage_client),
      cmocka_unit_test(test_counterexample_split_overflows),
      cmocka_unit_test(test_counterexample_grouped_never_overflows),
      cmocka_unit_test(test_clone_into_other_work),
      cmocka_unit_test(test_registration_errors),
      cmocka_unit_test(test_violation_stage_sum),
      cmocka_unit_test(test_violation_over_capacity),
      cmocka_unit_test(test_violation_stage_count),
      cmocka_unit_test(test_violation_empty_drain),
      cmocka_unit_test(test_violation_drain_range),
      cmocka_unit_test(test_violation_clone),
      cmocka_unit_test(test_violation_bound),
      cmocka_unit_test(test_violation_non_draining),
      cmocka_unit_test(test_violation_client_error),
      cmocka_unit_test(test_violation_late_failure_order),
      cmocka_unit_test(test_partial_admission),
  };
  int failed = cmocka_run_group_tests(tests, NULL, NULL);
  ws_device_destroy(g_dev);
  return failed ? 1 : 0;
}
