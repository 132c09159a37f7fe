/* SPDX-License-Identifier: MIT */
/* Errors, never hangs (SPEC §4; issue 2):
 *   status_table       ws_status_name / ws_strerror cover every code of
 *                      WS_STATUS_MAP, values unique, unknown values named;
 *   bad_config         every bad configuration is rejected at creation with
 *                      its documented code, *out stays NULL, and the message
 *                      (printed on stderr: the scheduler is gone) names the
 *                      offending value;
 *   null_args          NULL arguments give WS_EINVAL, destroy(NULL) is a no-op;
 *   dispatch_args      wrong args_size / NULL args at dispatch: WS_EINVAL with
 *                      a message naming both sizes; the scheduler stays usable;
 *   bad_transition     a continuation returning an index outside 1..K ends
 *                      the dispatch with an error (wavefront and megakernel);
 *   iteration_limit    a non-draining dispatch ends with WS_EITERATION_LIMIT
 *                      and a message containing the limit; a dispatch that
 *                      drains within the limit succeeds;
 *   iteration_limit_exact  ... also one that needs
 *                      exactly `limit` iterations;
 *   continuation_index name -> index lookup;
 *   module_description a description of a name and modules only takes the
 *                      frame, argument size and continuations the kernels
 *                      recorded (on Vulkan from the CPU module) and runs
 *                      exactly like the full one; a name no module records,
 *                      or a half description, is refused with a message
 *                      that the device keeps (ws_device_last_error);
 *   loop_choice        loop = WS_LOOP_DEVICE with the single-stage protocol
 *                      is refused (WS_ECONFIG_LOOP, naming the reason and the
 *                      backend); WS_LOOP=host|device overrides the
 *                      configuration's loop, anything else leaves it;
 *   device_loop_faults the device loop's construction and runs with every
 *                      host allocation, then every backend call, failed in
 *                      turn: the status fits the fault, the message says
 *                      which part of the device loop failed, nothing leaks
 *                      and the next dispatch on the same scheduler succeeds.
 */
#include "t_basic_host.h"
#include "t_sched_host.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------ status table */

static void test_status_table(void **state) {
  (void)state;
  static const struct {
    ws_status code;
    const char *name;
    const char *msg;
  } table[] = {
#define ROW_(name, value, msg) {WS_##name, "WS_" #name, msg},
      WS_STATUS_MAP(ROW_)
#undef ROW_
  };
  const size_t n = sizeof table / sizeof table[0];
  WT_CHECK(n >= 2 && table[0].code == WS_OK && (int)table[0].code == 0, "WS_OK must be 0");
  for (size_t i = 0; i < n; ++i) {
    const char *name = ws_status_name(table[i].code);
    const char *msg = ws_strerror(table[i].code);
    WT_CHECK(name && strcmp(name, table[i].name) == 0, "ws_status_name(%d) = '%s', expected '%s'",
             (int)table[i].code, name ? name : "(null)", table[i].name);
    WT_CHECK(msg && strcmp(msg, table[i].msg) == 0 && msg[0],
             "ws_strerror(%s) = '%s', expected '%s'", table[i].name, msg ? msg : "(null)",
             table[i].msg);
    WT_CHECK(i == 0 || (int)table[i].code < 0, "%s is %d: failures must be negative", table[i].name,
             (int)table[i].code);
    for (size_t j = 0; j < i; ++j) {
      WT_CHECK(table[i].code != table[j].code, "%s and %s share the value %d", table[i].name,
               table[j].name, (int)table[i].code);
      WT_CHECK(strcmp(table[i].msg, table[j].msg) != 0, "%s and %s share the message '%s'",
               table[i].name, table[j].name, table[i].msg);
    }
  }
  /* values that are not in the table */
  static const int unknown[] = {1, -8, -19, -999, 12345};
  for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; ++i) {
    int known = 0;
    for (size_t j = 0; j < n; ++j)
      known |= (int)table[j].code == unknown[i];
    if (known)
      continue;
    const char *name = ws_status_name((ws_status)unknown[i]);
    const char *msg = ws_strerror((ws_status)unknown[i]);
    WT_CHECK(name && strcmp(name, "WS_UNKNOWN") == 0,
             "ws_status_name(%d) = '%s', expected WS_UNKNOWN", unknown[i], name ? name : "(null)");
    WT_CHECK(msg && msg[0], "ws_strerror(%d) returned nothing", unknown[i]);
  }
}

/* ------------------------------------------------------------ bad configuration */

#define expect_rejected(co, cfg, expect, what, mention)                                            \
  expect_rejected_((co), (cfg), (expect), (what), (mention), __FILE__, __LINE__)
static void expect_rejected_(const ws_coroutine_desc *co, const ws_scheduler_config *cfg,
                             ws_status expect, const char *what, const char *mention,
                             const char *file, int line) {
  char text[2048];
  wt_scheduler_expect_(co, cfg, expect, text, sizeof text, what, file, line);
  if (text[0] == '\0')
    wt_fail_(file, line, "%s: rejected with %s but no message", what, ws_status_name(expect));
  if (mention && !strstr(text, mention))
    wt_fail_(file, line, "%s: the message does not mention '%s': %s", what, mention, text);
}

static void test_bad_config(void **state) {
  (void)state;
  ws_scheduler_config base = wt_config(NULL, 64);
  ws_scheduler_config cfg;

  /* the good configurations around the bad ones are accepted */
  cfg = base;
  wt_scheduler_expect(&t_basic_coroutine, &cfg, WS_OK, NULL, 0, "the base configuration");
  wt_scheduler_expect(&t_basic_coroutine, NULL, WS_OK, NULL, 0, "NULL config (defaults)");

  cfg = base;
  cfg.resident_frames = 0;
  expect_rejected(&t_basic_coroutine, &cfg, WS_ECONFIG_POOL, "zero pool", NULL);

  cfg = base;
  cfg.largest_first = false;
  cfg.accounting = WS_ACCOUNTING_INCREMENTAL;
  expect_rejected(&t_basic_coroutine, &cfg, WS_ECONFIG_ACCOUNTING, "incremental without greedy",
                  NULL);

  cfg = base;
  cfg.largest_first = false;
  cfg.accounting = WS_ACCOUNTING_FUSED;
  expect_rejected(&t_basic_coroutine, &cfg, WS_ECONFIG_ACCOUNTING, "fused without greedy", NULL);

  cfg = base;
  cfg.accounting = (ws_accounting)4; /* 3 is WS_ACCOUNTING_AUTO */
  expect_rejected(&t_basic_coroutine, &cfg, WS_ECONFIG_ENUM, "accounting out of range", NULL);

  /* continuation names */
  {
    static const char *const empty[] = {"loop", "", "finish"};
    static const char *const null_name[] = {"loop", "alt", NULL};
    static const char *const dup[] = {"loop", "alt", "loop"};
    static const char *const entry_name[] = {"loop", "<entry>", "finish"};
    ws_coroutine_desc co = t_basic_coroutine;
    co.continuation_names = empty;
    expect_rejected(&co, &base, WS_ECONFIG_NAME, "empty continuation name", NULL);
    co.continuation_names = null_name;
    expect_rejected(&co, &base, WS_ECONFIG_NAME, "NULL continuation name", NULL);
    co.continuation_names = dup;
    expect_rejected(&co, &base, WS_ECONFIG_NAME, "duplicate continuation name", "loop");
    co.continuation_names = entry_name;
    expect_rejected(&co, &base, WS_ECONFIG_NAME, "continuation named <entry>", NULL);
  }

  /* refill alignment list */
  {
    static const char *const unknown[] = {"loop", "nosuch"};
    static const char *const empty[] = {""};
    static const char *const null_entry[] = {NULL};
    static const char *const good[] = {"finish", "loop"};
    cfg = base;
    cfg.refill_align = unknown;
    cfg.refill_align_count = 2;
    expect_rejected(&t_basic_coroutine, &cfg, WS_ECONFIG_CONTINUATION, "unknown refill-align name",
                    "nosuch");
    cfg.refill_align = empty;
    cfg.refill_align_count = 1;
    expect_rejected(&t_basic_coroutine, &cfg, WS_ECONFIG_CONTINUATION, "empty refill-align name",
                    NULL);
    cfg.refill_align = null_entry;
    expect_rejected(&t_basic_coroutine, &cfg, WS_ECONFIG_CONTINUATION, "NULL refill-align name",
                    NULL);
    cfg.refill_align = NULL;
    cfg.refill_align_count = 3;
    expect_rejected(&t_basic_coroutine, &cfg, WS_ECONFIG_CONTINUATION, "NULL refill-align list",
                    NULL);
    cfg.refill_align = good;
    cfg.refill_align_count = 2;
    wt_scheduler_expect(&t_basic_coroutine, &cfg, WS_OK, NULL, 0, "refill_align {finish, loop}");
  }

  /* block size: 0 (default) or a multiple of 32 in 32..1024 */
  {
    static const uint32_t bad[] = {1, 16, 31, 33, 48, 100, 1056, 2048, UINT32_MAX};
    static const uint32_t good[] = {0, 32, 64, 992, 1024};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
      char what[64], num[16];
      cfg = base;
      cfg.block_size = bad[i];
      snprintf(what, sizeof what, "block size %u", bad[i]);
      snprintf(num, sizeof num, "%u", bad[i]);
      expect_rejected(&t_basic_coroutine, &cfg, WS_ECONFIG_BLOCK, what, num);
    }
    for (size_t i = 0; i < sizeof good / sizeof good[0]; ++i) {
      cfg = base;
      cfg.block_size = good[i];
      char what[64];
      snprintf(what, sizeof what, "block size %u", good[i]);
      wt_scheduler_expect(&t_basic_coroutine, &cfg, WS_OK, NULL, 0, what);
    }
  }

  /* enumerations out of range */
  cfg = base;
  cfg.layout = 3; /* 2 is WS_LAYOUT_AUTO */
  expect_rejected(&t_basic_coroutine, &cfg, WS_ECONFIG_ENUM, "layout 3", NULL);
  cfg.layout = UINT32_MAX;
  expect_rejected(&t_basic_coroutine, &cfg, WS_ECONFIG_ENUM, "layout UINT32_MAX", NULL);
  cfg = base;
  cfg.kind = (ws_scheduler_kind)2;
  expect_rejected(&t_basic_coroutine, &cfg, WS_ECONFIG_ENUM, "scheduler kind 2", NULL);
  cfg.kind = (ws_scheduler_kind)-1;
  expect_rejected(&t_basic_coroutine, &cfg, WS_ECONFIG_ENUM, "scheduler kind -1", NULL);
  cfg = base;
  cfg.aux_protocol = (ws_aux_protocol)7;
  expect_rejected(&t_basic_coroutine, &cfg, WS_ECONFIG_ENUM, "aux protocol 7", NULL);
  {
    ws_device_config dc;
    memset(&dc, 0, sizeof dc);
    dc.backend = (ws_backend_kind)9;
    ws_device *d = (ws_device *)(uintptr_t)1;
    ws_status st = ws_device_create(&dc, &d);
    WT_CHECK(st == WS_ECONFIG_ENUM || st == WS_EINVAL, "device backend 9: got %s",
             ws_status_name(st));
    WT_CHECK(d == NULL, "device backend 9: *out not NULL");
    ws_backend_kind k;
    WT_EXPECT_STATUS(ws_backend_parse("nosuch", &k), WS_EINVAL, NULL, "ws_backend_parse(nosuch)");
    WT_EXPECT_STATUS(ws_backend_parse(NULL, &k), WS_EINVAL, NULL, "ws_backend_parse(NULL)");
    WT_OK(ws_backend_parse("cuda", &k), NULL, "ws_backend_parse(cuda)");
    WT_CHECK(k == WS_BACKEND_CUDA, "ws_backend_parse(cuda) gave %d", (int)k);
    WT_CHECK(ws_backend_compiled(WS_BACKEND_CPU), "the CPU backend is always compiled");
    WT_CHECK(!ws_backend_compiled((ws_backend_kind)9), "backend 9 compiled?");
  }

  /* malformed coroutine descriptions */
  {
    ws_coroutine_desc co = t_basic_coroutine;
    co.name = NULL;
    expect_rejected(&co, &base, WS_ECONFIG_COROUTINE, "coroutine without a name", NULL);
    co = t_basic_coroutine;
    co.modules = NULL;
    expect_rejected(&co, &base, WS_ECONFIG_COROUTINE, "coroutine without modules", NULL);
    co = t_basic_coroutine;
    co.frame = NULL;
    expect_rejected(&co, &base, WS_ECONFIG_COROUTINE, "coroutine without a frame", NULL);
    co = t_basic_coroutine;
    co.continuation_count = 0;
    expect_rejected(&co, &base, WS_ECONFIG_COROUTINE, "coroutine without continuations", NULL);
    co = t_basic_coroutine;
    co.continuation_names = NULL;
    expect_rejected(&co, &base, WS_ECONFIG_COROUTINE, "continuation names NULL", NULL);
    ws_frame_desc big = *t_basic_coroutine.frame;
    big.field_count = WS_MAX_FRAME_FIELDS + 1;
    co = t_basic_coroutine;
    co.frame = &big;
    expect_rejected(&co, &base, WS_ECONFIG_COROUTINE, "frame with too many fields", "33");
    co = t_basic_coroutine;
    co.name = "no_such_coroutine";
    expect_rejected(&co, &base, WS_ENOKERNEL, "coroutine not in the module", "no_such_coroutine");
  }
}

/* ------------------------------------------------------------ NULL arguments */

static void test_null_args(void **state) {
  (void)state;
  ws_scheduler_config cfg = wt_config(NULL, 64);
  ws_scheduler *s = (ws_scheduler *)(uintptr_t)1;
  WT_EXPECT_STATUS(ws_scheduler_create(NULL, &t_basic_coroutine, &cfg, &s), WS_EINVAL, NULL,
                   "ws_scheduler_create(dev NULL)");
  WT_CHECK(s == NULL, "ws_scheduler_create(dev NULL) left *out set");
  s = (ws_scheduler *)(uintptr_t)1;
  WT_EXPECT_STATUS(ws_scheduler_create(wt_dev, NULL, &cfg, &s), WS_EINVAL, NULL,
                   "ws_scheduler_create(coroutine NULL)");
  WT_CHECK(s == NULL, "ws_scheduler_create(coroutine NULL) left *out set");
  WT_EXPECT_STATUS(ws_scheduler_create(wt_dev, &t_basic_coroutine, &cfg, NULL), WS_EINVAL, NULL,
                   "ws_scheduler_create(out NULL)");
  WT_EXPECT_STATUS(ws_scheduler_dispatch(NULL, 1, NULL, 0), WS_EINVAL, NULL,
                   "ws_scheduler_dispatch(NULL)");
  WT_EXPECT_STATUS(ws_device_create(NULL, NULL), WS_EINVAL, NULL, "ws_device_create(out NULL)");
  WT_EXPECT_STATUS(ws_scheduler_node_stats(NULL, 0, NULL), WS_EINVAL, NULL,
                   "ws_scheduler_node_stats(NULL)");
  WT_EXPECT_STATUS(ws_buffer_create(NULL, 16, NULL), WS_EINVAL, NULL, "ws_buffer_create(NULL)");
  ws_kernel k;
  WT_EXPECT_STATUS(ws_kernel_find(wt_dev, NULL, "t_basic", &k), WS_EINVAL, NULL,
                   "ws_kernel_find(modules NULL)");
  WT_EXPECT_STATUS(ws_kernel_find(wt_dev, &t_basic_modules, "nosuch", &k), WS_ENOKERNEL, NULL,
                   "ws_kernel_find(nosuch)");
  WT_CHECK(ws_scheduler_node_count(NULL) == 0, "node count of NULL");
  WT_CHECK(ws_scheduler_last_error(NULL) != NULL, "last error of NULL must be a string");
  ws_scheduler_destroy(NULL);
  ws_device_destroy(NULL);
  ws_buffer_destroy(NULL);
  ws_readback_destroy(NULL);
  ws_scheduler *ok = wt_scheduler(&t_basic_coroutine, &cfg);
  ws_node_stats ns;
  WT_EXPECT_STATUS(ws_scheduler_node_stats(ok, 0, NULL), WS_EINVAL, ok, "node stats into NULL");
  WT_EXPECT_STATUS(ws_scheduler_node_stats(ok, 4, &ns), WS_EINVAL, ok, "node stats of node 4");
  WT_EXPECT_STATUS(ws_scheduler_aux_stats(ok, 0, &ns), WS_EINVAL, ok, "aux stats without aux work");
}

/* ------------------------------------------------------------ dispatch arguments */

static void test_dispatch_args(void **state) {
  const wt_combo *c = wt_state_combo(state);
  ws_scheduler_config cfg = wt_config(c, 64);
  ws_scheduler *s = wt_scheduler(&t_basic_coroutine, &cfg);
  basic_run r;
  basic_init(&r, 100);
  char want_size[32];
  snprintf(want_size, sizeof want_size, "%zu", sizeof(t_basic_args));
  static const size_t wrong[] = {0, 8, sizeof(t_basic_args) - 8, sizeof(t_basic_args) + 8};
  for (size_t i = 0; i < sizeof wrong / sizeof wrong[0]; ++i) {
    char ctx[96], got[32];
    snprintf(ctx, sizeof ctx, "%s: dispatch with args_size %zu", c->name, wrong[i]);
    snprintf(got, sizeof got, "%zu", wrong[i]);
    WT_EXPECT_STATUS(ws_scheduler_dispatch(s, 100, &r.args, wrong[i]), WS_EINVAL, s, ctx);
    const char *msg = ws_scheduler_last_error(s);
    WT_CHECK(strstr(msg, got) && strstr(msg, want_size) && strstr(msg, "t_basic"),
             "%s: the message should name the scheduler and both sizes (%s, %s): '%s'", ctx, got,
             want_size, msg);
  }
  WT_EXPECT_STATUS(ws_scheduler_dispatch(s, 100, NULL, sizeof(t_basic_args)), WS_EINVAL, s,
                   "dispatch with NULL args");
  basic_read(&r);
  for (uint32_t i = 0; i < 100; ++i)
    WT_CHECK(r.h_entry[i] == 0, "%s: a rejected dispatch ran item %u", c->name, i);
  WT_OK(basic_dispatch(s, &r, 100), s, "dispatch after rejected ones");
  WT_CHECK(ws_scheduler_last_error(s)[0] == '\0',
           "%s: a successful dispatch keeps the old message '%s'", c->name,
           ws_scheduler_last_error(s));
  basic_check(&r, 100, c->name);
}

/* ------------------------------------------------------------ invalid transitions */

static void bad_transition(const wt_combo *c, bool mega) {
  char ctx[160];
  snprintf(ctx, sizeof ctx, "%s%s: continuation returns index %d of 2", c->name,
           mega ? " megakernel" : "", T_BAD_OUT_OF_RANGE);
  ws_scheduler_config cfg = wt_config(c, 16);
  if (mega)
    cfg.kind = WS_SCHEDULER_MEGAKERNEL;
  ws_scheduler *s = wt_scheduler(&t_bad_coroutine, &cfg);
  ws_buffer *runs = wt_buffer(4);
  t_bad_args a;
  memset(&a, 0, sizeof a);
  a.mode = 0;
  a.bad_id = 37;
  a.runs = ws_buffer_address(runs);
  ws_status st = ws_scheduler_dispatch(s, 100, &a, sizeof a);
  WT_CHECK(st != WS_OK, "%s: the dispatch succeeded", ctx);
  WT_CHECK(st == WS_EPROTO_INTERNAL, "%s: %s (%s), expected WS_EPROTO_INTERNAL", ctx,
           ws_status_name(st), ws_scheduler_last_error(s));
  const char *msg = ws_scheduler_last_error(s);
  /* one item (bad_id) made the bad transition: the count is exact */
  WT_CHECK(strstr(msg, "t_bad") &&
               strstr(msg, " 1 frame(s) returned a continuation index outside 1..2"),
           "%s: the message should name the scheduler, the one frame and the range 1..2: '%s'",
           ctx, msg);
  /* usable afterwards */
  a.bad_id = UINT32_MAX;
  wt_zero(runs);
  WT_OK(ws_scheduler_dispatch(s, 100, &a, sizeof a), s, "dispatch after the invalid transition");
  uint32_t h = 0;
  wt_read(runs, &h, 4);
  WT_CHECK(h == 100, "%s: %u runs of \"x\" after recovery, expected 100", ctx, h);
}

static void test_bad_transition(void **state) {
  bad_transition(wt_state_combo(state), false);
  bad_transition(wt_state_combo(state), true);
}

/* ------------------------------------------------------------ iteration limit */

static void test_iteration_limit(void **state) {
  const wt_combo *c = wt_state_combo(state);
  char ctx[160];
  /* a coroutine that never terminates */
  {
    ws_scheduler_config cfg = wt_config(c, 16);
    cfg.iteration_limit = 57;
    ws_scheduler *s = wt_scheduler(&t_bad_coroutine, &cfg);
    ws_buffer *runs = wt_buffer(4);
    t_bad_args a;
    memset(&a, 0, sizeof a);
    a.mode = 1;
    a.runs = ws_buffer_address(runs);
    snprintf(ctx, sizeof ctx, "%s: endless self-loop, limit 57", c->name);
    WT_EXPECT_STATUS(ws_scheduler_dispatch(s, 40, &a, sizeof a), WS_EITERATION_LIMIT, s, ctx);
    const char *msg = ws_scheduler_last_error(s);
    WT_CHECK(strstr(msg, "57") && strstr(msg, "t_bad"),
             "%s: the message should name the scheduler and the limit: '%s'", ctx, msg);
    ws_dispatch_stats d;
    ws_scheduler_dispatch_stats(s, &d);
    WT_CHECK(d.iteration_count <= 57, "%s: %" PRIu64 " iterations ran", ctx, d.iteration_count);
  }
  /* a finite workload over a limit too small, then one within it */
  {
    ws_scheduler_config cfg = wt_config(c, 64);
    cfg.iteration_limit = 3;
    ws_scheduler *s = wt_scheduler(&t_basic_coroutine, &cfg);
    basic_run r;
    basic_init(&r, 257);
    snprintf(ctx, sizeof ctx, "%s: t_basic N=257, limit 3", c->name);
    WT_EXPECT_STATUS(basic_dispatch(s, &r, 257), WS_EITERATION_LIMIT, s, ctx);
    WT_CHECK(strstr(ws_scheduler_last_error(s), "3") != NULL, "%s: message '%s'", ctx,
             ws_scheduler_last_error(s));
    /* item 0 has no steps: refill, finish. The aborted dispatch left frames
     * behind; the prologue must clear them. */
    basic_reset(&r);
    snprintf(ctx, sizeof ctx, "%s: t_basic N=1 after an aborted dispatch, limit 3", c->name);
    WT_OK(basic_dispatch(s, &r, 1), s, ctx);
    basic_check(&r, 1, ctx);
  }
}

/* The limit is inclusive: a dispatch needing exactly `limit` iterations
 * (iteration_count of a run without limit) succeeds, one fewer fails.
 * Fork/join: greedy 5 (refill, even, odd, join, done), all-queues 4; the
 * pass that only finds the dispatch done counts (SPEC §2.2). */
static void test_iteration_limit_exact(void **state) {
  const wt_combo *c = wt_state_combo(state);
  char ctx[160];
  {
    const uint64_t need = c->greedy ? 5 : 4;
    ws_buffer *out = wt_buffer(64 * 4);
    t_forkjoin_args a = {ws_buffer_address(out)};
    ws_scheduler_config cfg = wt_config(c, 64);
    cfg.iteration_limit = need - 1;
    ws_scheduler *s = wt_scheduler(&t_forkjoin_coroutine, &cfg);
    snprintf(ctx, sizeof ctx, "%s: fork/join needs %" PRIu64 " iterations, limit %" PRIu64, c->name,
             need, need - 1);
    WT_EXPECT_STATUS(ws_scheduler_dispatch(s, 64, &a, sizeof a), WS_EITERATION_LIMIT, s, ctx);
    cfg.iteration_limit = need;
    s = wt_scheduler(&t_forkjoin_coroutine, &cfg);
    snprintf(ctx, sizeof ctx, "%s: fork/join needs %" PRIu64 " iterations, limit %" PRIu64, c->name,
             need, need);
    WT_OK(ws_scheduler_dispatch(s, 64, &a, sizeof a), s, ctx);
    ws_dispatch_stats d;
    ws_scheduler_dispatch_stats(s, &d);
    WT_CHECK(d.iteration_count == need, "%s: %" PRIu64 " iterations", ctx, d.iteration_count);
  }
}

/* ------------------------------------------------------------ names */

static void test_continuation_index(void **state) {
  (void)state;
  ws_scheduler_config cfg = wt_config(NULL, 8);
  ws_scheduler *s = wt_scheduler(&t_basic_coroutine, &cfg);
  WT_CHECK(ws_scheduler_continuation_index(s, "loop") == T_BASIC_LOOP &&
               ws_scheduler_continuation_index(s, "alt") == T_BASIC_ALT &&
               ws_scheduler_continuation_index(s, "finish") == T_BASIC_FINISH,
           "continuation indices wrong");
  WT_CHECK(ws_scheduler_continuation_index(s, "nosuch") == 0 &&
               ws_scheduler_continuation_index(s, "<entry>") == 0 &&
               ws_scheduler_continuation_index(s, "") == 0 &&
               ws_scheduler_continuation_index(s, NULL) == 0 &&
               ws_scheduler_continuation_index(NULL, "loop") == 0,
           "unknown continuation names must give 0");
}

/* ------------------------------------------------------------ described by the module */

static void test_module_description(void **state) {
  const wt_combo *c = wt_state_combo(state);
  const ws_coroutine_desc co = {.name = "t_basic", .modules = &t_basic_modules};
  ws_scheduler_config cfg = wt_config(c, 64);
  ws_scheduler *s = wt_scheduler(&co, &cfg);
  WT_CHECK(ws_scheduler_node_count(s) == 4 &&
               ws_scheduler_continuation_index(s, "loop") == T_BASIC_LOOP &&
               ws_scheduler_continuation_index(s, "alt") == T_BASIC_ALT &&
               ws_scheduler_continuation_index(s, "finish") == T_BASIC_FINISH,
           "%s: the continuations taken from the module are not t_basic's (%u nodes)", c->name,
           ws_scheduler_node_count(s));
  basic_run r;
  basic_init(&r, 700);
  basic_reset(&r);
  WT_OK(basic_dispatch(s, &r, 700), s, "dispatch of the module-described coroutine");
  basic_check(&r, 700, c->name);
  /* the argument size came from the kernels too: the dispatch checks it */
  unsigned char longer[sizeof r.args + 4] = {0};
  WT_EXPECT_STATUS(ws_scheduler_dispatch(s, 1, longer, sizeof longer), WS_EINVAL, s,
                   "dispatch with the wrong argument size");

  char text[2048];
  const ws_coroutine_desc nosuch = {.name = "nosuch", .modules = &t_basic_modules};
  wt_scheduler_expect(&nosuch, &cfg, WS_ECONFIG_COROUTINE, text, sizeof text,
                      "a name no module records");
  WT_CHECK(strstr(text, "nosuch") != NULL, "the message does not name 'nosuch': %s", text);
  WT_CHECK(strstr(ws_device_last_error(wt_dev), "nosuch") != NULL,
           "the device does not keep the failed creation's message: '%s'",
           ws_device_last_error(wt_dev));
  ws_coroutine_desc half = co;
  half.continuation_count = 3; /* continuations without their names or a frame */
  expect_rejected(&half, &cfg, WS_ECONFIG_COROUTINE, "a half description", "frame description");
  WT_CHECK(strstr(ws_device_last_error(wt_dev), "ws_scheduler_create") != NULL,
           "the device does not keep the failed creation's message: '%s'",
           ws_device_last_error(wt_dev));
}

/* ------------------------------------------------------------ which loop runs */

static ws_loop_kind loop_ran(const ws_scheduler_config *cfg, const char *ctx) {
  ws_scheduler *s = wt_scheduler(&t_basic_coroutine, cfg);
  basic_run r;
  basic_init(&r, 300);
  WT_OK(basic_dispatch(s, &r, 300), s, ctx);
  basic_check(&r, 300, ctx);
  ws_dispatch_stats d;
  ws_scheduler_dispatch_stats(s, &d);
  return d.loop;
}

static void test_loop_choice(void **state) {
  (void)state;
  char text[2048], want[256];
  ws_scheduler_config cfg = wt_config(NULL, 64);
  cfg.loop = WS_LOOP_DEVICE;
  cfg.aux_protocol = WS_AUX_SINGLE_STAGE;
  wt_setenv("WS_LOOP", NULL);
  wt_scheduler_expect(&t_basic_coroutine, &cfg, WS_ECONFIG_LOOP, text, sizeof text,
                      "device loop with the single-stage protocol");
  snprintf(want, sizeof want,
           "loop = WS_LOOP_DEVICE, but the single-stage protocol calls its clients from the host "
           "(%s)",
           ws_backend_name(wt_backend));
  WT_CHECK(strstr(text, want) && strstr(text, "t_basic"),
           "device loop with the single-stage protocol: the message should name the scheduler "
           "and say '%s': '%s'",
           want, text);

  cfg.aux_protocol = WS_AUX_MULTI_STAGE;
  WT_CHECK(loop_ran(&cfg, "loop = device") == WS_LOOP_DEVICE, "loop = device ran the host loop");
  /* WS_LOOP=host overrides the configuration, before its checks */
  wt_setenv("WS_LOOP", "host");
  WT_CHECK(loop_ran(&cfg, "loop = device, WS_LOOP=host") == WS_LOOP_HOST,
           "WS_LOOP=host: the device loop ran");
  cfg.aux_protocol = WS_AUX_SINGLE_STAGE;
  WT_CHECK(loop_ran(&cfg, "loop = device, single-stage, WS_LOOP=host") == WS_LOOP_HOST,
           "WS_LOOP=host with the single-stage protocol: the device loop ran");
  cfg.aux_protocol = WS_AUX_MULTI_STAGE;
  cfg.loop = WS_LOOP_HOST;
  wt_setenv("WS_LOOP", "device");
  WT_CHECK(loop_ran(&cfg, "loop = host, WS_LOOP=device") == WS_LOOP_DEVICE,
           "WS_LOOP=device: the host loop ran");
  wt_setenv("WS_LOOP", "Host"); /* not a loop name: the configuration decides */
  WT_CHECK(loop_ran(&cfg, "loop = host, WS_LOOP=Host") == WS_LOOP_HOST,
           "WS_LOOP=Host (no loop name): the device loop ran");
}

/* ------------------------------------------------------------ device loop faults */

typedef struct fault_sweep {
  ws_device *dev; /* its own device: the fault wrapper stays until it is destroyed */
  basic_run r;
  unsigned long live; /* host allocations with the device and the run's buffers */
  bool seen[4];
  unsigned build_oom; /* failures reported as "device loop: out of host memory" */
} fault_sweep;

/* One dispatch on a fresh device-loop scheduler with the Nth host
 * allocation or backend call failed; returns true when it ran cleanly (the
 * sweep is over). */
static bool device_loop_fault(fault_sweep *fs, unsigned long n, bool backend) {
  static const char *const parts[4] = {
      "device loop: out of host memory", "device loop: cannot allocate its state (",
      "device loop: the backend could not build it: ", ": device loop failed: "};
  char ctx[128];
  snprintf(ctx, sizeof ctx, "device loop, %s fault at N = %lu", backend ? "backend" : "allocation",
           n);
  ws_scheduler_config cfg = wt_config(NULL, 64);
  cfg.loop = WS_LOOP_DEVICE;
  ws_scheduler *s = NULL;
  WT_OK(ws_scheduler_create(fs->dev, &t_basic_coroutine, &cfg, &s), NULL, ctx);
  basic_reset(&fs->r);
  if (backend)
    WT_OK(ws_testing_fail_backend_after(fs->dev, n), NULL, ctx);
  else
    ws_testing_fail_alloc_after(n);
  const ws_status st = basic_dispatch(s, &fs->r, 200);
  ws_testing_fail_alloc_after(0);
  WT_OK(ws_testing_fail_backend_after(fs->dev, 0), NULL, ctx);
  const bool clean = st == WS_OK;
  if (!clean) {
    const char *msg = ws_scheduler_last_error(s);
    WT_CHECK(backend ? (st == WS_ENOMEM || st == WS_EDEVMEM || st == WS_EBACKEND) : st == WS_ENOMEM,
             "%s: %s (%s)", ctx, ws_status_name(st), msg);
    WT_CHECK(strstr(msg, "scheduler 't_basic': ") != NULL,
             "%s: the message names no scheduler: '%s'", ctx, msg);
    for (int i = 0; i < 4; ++i)
      if (strstr(msg, parts[i]))
        fs->seen[i] = true;
    fs->build_oom += strcmp(msg, "scheduler 't_basic': device loop: out of host memory") == 0;
    /* the same scheduler runs the next dispatch cleanly */
    basic_reset(&fs->r);
    WT_OK(basic_dispatch(s, &fs->r, 200), s, ctx);
  }
  basic_check(&fs->r, 200, ctx);
  ws_dispatch_stats d;
  ws_scheduler_dispatch_stats(s, &d);
  WT_CHECK(d.loop == WS_LOOP_DEVICE, "%s: the host loop ran", ctx);
  ws_scheduler_destroy(s);
  WT_CHECK(ws_testing_live_allocations() == fs->live, "%s: %lu host allocations leaked", ctx,
           ws_testing_live_allocations() - fs->live);
  return clean;
}

static void test_device_loop_faults(void **state) {
  (void)state;
  static fault_sweep fs;
  memset(&fs, 0, sizeof fs);
  ws_device_config dc;
  memset(&dc, 0, sizeof dc);
  dc.backend = wt_backend;
  dc.device_index = -1;
  WT_OK(ws_device_create(&dc, &fs.dev), NULL, "a second device");
  WT_OK(ws_testing_fail_backend_after(fs.dev, 0), NULL, "the fault wrapper");
  /* the run's buffers on this device (basic_init's are on wt_dev), destroyed
   * here before the device */
  ws_buffer *bufs[6] = {NULL};
  for (int i = 0; i < 6; ++i)
    WT_OK(ws_buffer_create(fs.dev, i == 5 ? 4 : 200 * 4, &bufs[i]), NULL, "a run buffer");
  basic_bind(&fs.r, 200, bufs);
  {
    /* one clean dispatch first: a backend's lazy caches (Vulkan's pipelines)
     * live as long as the device, so they must not count as leaks */
    ws_scheduler_config cfg = wt_config(NULL, 64);
    cfg.loop = WS_LOOP_DEVICE;
    ws_scheduler *s = NULL;
    WT_OK(ws_scheduler_create(fs.dev, &t_basic_coroutine, &cfg, &s), NULL, "warm-up");
    WT_OK(basic_dispatch(s, &fs.r, 200), s, "warm-up dispatch");
    ws_scheduler_destroy(s);
  }
  fs.live = ws_testing_live_allocations();

  unsigned long n = 1;
  while (!device_loop_fault(&fs, n, false))
    WT_CHECK(++n < 10000, "host allocations: no clean dispatch after %lu faults", n);
  /* build() makes five host allocations without auxiliary works (the loop,
   * its two offset tables and its stage table, the state's image), each
   * failure reported as such */
  WT_CHECK(fs.build_oom == 5 && fs.seen[1] && fs.seen[2],
           "%lu host allocations failed, %u of them reported as the device loop's own (expected "
           "5); its state %d, building it %d",
           n, fs.build_oom, fs.seen[1], fs.seen[2]);
  memset(fs.seen, 0, sizeof fs.seen);
  n = 1;
  while (!device_loop_fault(&fs, n, true))
    WT_CHECK(++n < 10000, "backend calls: no clean dispatch after %lu faults", n);
  WT_CHECK(fs.seen[1] && fs.seen[2] && fs.seen[3],
           "%lu backend calls failed; failures seen: its state %d, building it %d, a run %d", n,
           fs.seen[1], fs.seen[2], fs.seen[3]);
  for (int i = 0; i < 6; ++i)
    ws_buffer_destroy(bufs[i]);
  ws_device_destroy(fs.dev);
}

int main(int argc, char **argv) {
  const wt_need needs[] = {
      {&t_basic_modules, "t_basic"}, {&t_sched_modules, "t_forkjoin"}, {&t_sched_modules, "t_bad"}};
  wt_init(argc, argv, needs, 3);
  wt_add("status_table", test_status_table, NULL);
  wt_add("bad_config", test_bad_config, NULL);
  wt_add("null_args", test_null_args, NULL);
  wt_add("continuation_index", test_continuation_index, NULL);
  wt_add("loop_choice", test_loop_choice, NULL);
  wt_add("device_loop_faults", test_device_loop_faults, NULL);
  wt_add_per_combo("dispatch_args", test_dispatch_args);
  wt_add_per_combo("bad_transition", test_bad_transition);
  wt_add_per_combo("iteration_limit", test_iteration_limit);
  wt_add_per_combo("module_description", test_module_description);
  /* a dispatch that needs exactly `limit` iterations succeeds */
  wt_add_per_combo("iteration_limit_exact", test_iteration_limit_exact);
  return wt_run("core_errors");
}
