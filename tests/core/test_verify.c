/* SPDX-License-Identifier: MIT */
/* Verification mode (SPEC §5; issue 2):
 *   clean[combo]       verify_queues on: correct runs report nothing (WS_OK,
 *                      empty last error) on every combination, results exact;
 *   clean_env[combo]   the same with WS_VERIFY_QUEUES=1 instead of the flag;
 *   corrupt[combo]     (incremental and fused accounting, where counts are
 *                      maintained rather than recounted) a count damaged with
 *                      ws_testing_corrupt_count is reported as WS_EVERIFY with
 *                      a message naming the queue and both numbers; the next
 *                      dispatch on the same scheduler is clean again;
 *   corrupt_extreme    the same for counts that wrap
 *                      below zero or exceed the pool: still a verification
 *                      mismatch (WS_EVERIFY);
 *   corrupt_env[combo] the same, verification switched on by the environment;
 *   corrupt_token[combo] a token no continuation has, written after the
 *                      first launch: WS_EVERIFY with the same message in the
 *                      host loop and the device loop;
 *   corrupt_list[combo] (materialized) a sorted slot list with a duplicate:
 *                      WS_EVERIFY, in the host loop and under WS_LOOP_AUTO;
 *   env_off            WS_VERIFY_QUEUES=0 / empty leave verification off;
 *   unverified[combo]  without verification a corrupted count may misbehave but
 *                      must end (no hang, no crash).
 */
#include "t_basic_host.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static ws_scheduler *make(const wt_combo *c, bool verify) {
  ws_scheduler_config cfg = wt_config(c, 64);
  cfg.verify_queues = verify;
  return wt_scheduler(&t_basic_coroutine, &cfg);
}

static void clean_run(const wt_combo *c, bool by_env) {
  char ctx[160];
  snprintf(ctx, sizeof ctx, "%s, verification by %s", c->name,
           by_env ? "WS_VERIFY_QUEUES=1" : "config");
  if (by_env)
    wt_setenv("WS_VERIFY_QUEUES", "1");
  ws_scheduler *s = make(c, !by_env);
  basic_run r;
  basic_init(&r, 257);
  for (uint32_t round = 0; round < 2; ++round) {
    basic_reset(&r);
    WT_OK(basic_dispatch(s, &r, 257), s, ctx);
    WT_CHECK(ws_scheduler_last_error(s)[0] == '\0', "%s: a clean run left the message '%s'", ctx,
             ws_scheduler_last_error(s));
    basic_check(&r, 257, ctx);
  }
  /* a pool of one and an odd pool, too */
  ws_scheduler_config cfg = wt_config(c, 1);
  cfg.verify_queues = !by_env;
  ws_scheduler *one = wt_scheduler(&t_basic_coroutine, &cfg);
  basic_reset(&r);
  WT_OK(basic_dispatch(one, &r, 9), one, ctx);
  basic_check(&r, 9, ctx);
  cfg.resident_frames = 61;
  ws_scheduler *odd = wt_scheduler(&t_basic_coroutine, &cfg);
  basic_reset(&r);
  WT_OK(basic_dispatch(odd, &r, 257), odd, ctx);
  basic_check(&r, 257, ctx);
}

static void test_clean(void **state) {
  clean_run(wt_state_combo(state), false);
}
static void test_clean_env(void **state) {
  clean_run(wt_state_combo(state), true);
}

typedef struct corruption {
  uint32_t queue;
  int32_t delta;
} corruption;

static void corrupt_run(const wt_combo *c, bool by_env, bool extreme) {
  static const corruption plain[] = {{T_BASIC_LOOP, 1}, {T_BASIC_ALT, 3}, {T_BASIC_FINISH, 1}};
  /* a count that wraps below zero, or one above the pool: the verification
   * recount disagrees just the same */
  static const corruption wild[] = {{T_BASIC_LOOP, -1}, {T_BASIC_FINISH, 100}};
  const corruption *cases = extreme ? wild : plain;
  const size_t ncases = extreme ? 2 : 3;
  if (by_env)
    wt_setenv("WS_VERIFY_QUEUES", "1");
  basic_run r;
  basic_init(&r, 257);
  for (size_t k = 0; k < ncases; ++k) {
    char ctx[200];
    snprintf(ctx, sizeof ctx, "%s, verification by %s, count of queue '%s' %+d", c->name,
             by_env ? "WS_VERIFY_QUEUES=1" : "config", t_basic_names[cases[k].queue - 1],
             cases[k].delta);
    ws_scheduler *s = make(c, !by_env);
    ws_testing_corrupt_count(s, cases[k].queue, cases[k].delta);
    basic_reset(&r);
    ws_status st = basic_dispatch(s, &r, 257);
    WT_EXPECT_STATUS(st, WS_EVERIFY, s, ctx);
    const char *msg = ws_scheduler_last_error(s);
    WT_CHECK(strstr(msg, "t_basic") != NULL, "%s: message does not name the scheduler: '%s'", ctx,
             msg);
    WT_CHECK(strstr(msg, t_basic_names[cases[k].queue - 1]) != NULL,
             "%s: message does not name the queue: '%s'", ctx, msg);
    if (!extreme) {
      /* corrupted at the first boundary, where every true count is 0 */
      char num[16];
      snprintf(num, sizeof num, "%d", cases[k].delta);
      WT_CHECK(strstr(msg, num) != NULL && strstr(msg, "0") != NULL,
               "%s: message does not name the numbers %s and 0: '%s'", ctx, num, msg);
    }
    /* the hook fires once: the same scheduler then runs clean */
    basic_reset(&r);
    WT_OK(basic_dispatch(s, &r, 257), s, "dispatch after the corrupted one");
    basic_check(&r, 257, ctx);
  }
}

static void test_corrupt(void **state) {
  corrupt_run(wt_state_combo(state), false, false);
}
static void test_corrupt_env(void **state) {
  corrupt_run(wt_state_combo(state), true, false);
}
static void test_corrupt_extreme(void **state) {
  corrupt_run(wt_state_combo(state), false, true);
}

static void test_env_off(void **state) {
  (void)state;
  static const char *const values[] = {"0", ""};
  const wt_combo *c = wt_combo_at(0);
  for (int i = 0; i < 2; ++i) {
    wt_setenv("WS_VERIFY_QUEUES", values[i]);
    ws_scheduler_config cfg = wt_config(NULL, 64);
    cfg.verify_queues = false;
    cfg.iteration_limit = 100000; /* whatever happens, it ends */
    ws_scheduler *s = wt_scheduler(&t_basic_coroutine, &cfg);
    ws_testing_corrupt_count(s, T_BASIC_LOOP, 1);
    basic_run r;
    basic_init(&r, 257);
    ws_status st = basic_dispatch(s, &r, 257);
    WT_CHECK(st != WS_EVERIFY, "%s: WS_VERIFY_QUEUES='%s' turned verification on (%s)", c->name,
             values[i], ws_scheduler_last_error(s));
  }
}

static void test_unverified(void **state) {
  const wt_combo *c = wt_state_combo(state);
  wt_setenv("WS_VERIFY_QUEUES", NULL);
  static const int32_t deltas[] = {1, 5, -1};
  for (size_t k = 0; k < 3; ++k) {
    for (uint32_t q = 1; q <= 3; ++q) {
      ws_scheduler *s = make(c, false);
      ws_testing_corrupt_count(s, q, deltas[k]);
      basic_run r;
      basic_init(&r, 257);
      /* no iteration limit: the loop itself must end */
      ws_status st = basic_dispatch(s, &r, 257);
      if (st != WS_OK) /* allowed: an error, as long as it ends */
        print_message("    %s: queue %u %+d without verification -> %s: %s\n", c->name, q,
                      deltas[k], ws_status_name(st), ws_scheduler_last_error(s));
      /* and the scheduler still works afterwards */
      basic_reset(&r);
      WT_OK(basic_dispatch(s, &r, 257), s, "dispatch after a corrupted one");
      basic_check(&r, 257, c->name);
    }
  }
}

/* Verification's token check (I1) in both loops: a token no continuation
 * has, written as a broken kernel would leave it just before the boundary
 * after the first launch, is reported as WS_EVERIFY with the same message by
 * the host loop and the device loop (which observes every iteration on the
 * host in verification mode). I4 (nothing live above the compacted prefix)
 * runs through the same function with the state's `high`. */
static void test_corrupt_token(void **state) {
  const wt_combo *c = wt_state_combo(state);
  wt_setenv("WS_VERIFY_QUEUES", NULL);
  enum { R = 64, N = 100 };
  static const uint32_t slots[] = {0, R - 1};
  basic_run r;
  basic_init(&r, N);
  for (size_t k = 0; k < 2; ++k) {
    char msg[2][512];
    for (int loop = 0; loop < 2; ++loop) {
      ws_scheduler_config cfg = wt_config(c, R);
      cfg.verify_queues = true;
      cfg.loop = loop ? WS_LOOP_DEVICE : WS_LOOP_HOST;
      char ctx[200];
      snprintf(ctx, sizeof ctx, "%s, %s loop, slot %u", c->name, loop ? "device" : "host",
               slots[k]);
      ws_scheduler *s = wt_scheduler(&t_basic_coroutine, &cfg);
      ws_testing_corrupt_token(s, slots[k], T_BASIC_FINISH + 1u);
      basic_reset(&r);
      WT_EXPECT_STATUS(basic_dispatch(s, &r, N), WS_EVERIFY, s, ctx);
      snprintf(msg[loop], sizeof msg[loop], "%s", ws_scheduler_last_error(s));
      char want[160];
      snprintf(want, sizeof want,
               "iteration 1: slot %u holds token %u (no continuation has that index)", slots[k],
               T_BASIC_FINISH + 1u);
      WT_CHECK(strstr(msg[loop], want) != NULL, "%s: message '%s' does not say '%s'", ctx,
               msg[loop], want);
      /* the hook fires once: the same scheduler then runs clean */
      basic_reset(&r);
      WT_OK(basic_dispatch(s, &r, N), s, ctx);
      basic_check(&r, N, ctx);
    }
    WT_CHECK(strcmp(msg[0], msg[1]) == 0, "%s: the loops disagree: host '%s', device '%s'",
             c->name, msg[0], msg[1]);
  }
}

/* corrupt_list[combo] (materialized accounting): a sorted list with a slot
 * gathered twice and another lost, at the first boundary with lists, is
 * reported as WS_EVERIFY naming the entry, the queue and the slot; under
 * WS_LOOP_AUTO too, which runs the host loop for this check (a device
 * loop's observation comes after the launches that changed the tokens). */
static void test_corrupt_list(void **state) {
  const wt_combo *c = wt_state_combo(state);
  wt_setenv("WS_VERIFY_QUEUES", NULL);
  enum { R = 64, N = 257 };
  basic_run r;
  basic_init(&r, N);
  for (int k = 0; k < 2; ++k) {
    ws_scheduler_config cfg = wt_config(c, R);
    cfg.verify_queues = true;
    cfg.loop = k ? WS_LOOP_AUTO : WS_LOOP_HOST;
    char ctx[200];
    snprintf(ctx, sizeof ctx, "%s, %s", c->name, k ? "WS_LOOP_AUTO" : "host loop");
    ws_scheduler *s = wt_scheduler(&t_basic_coroutine, &cfg);
    ws_testing_corrupt_list(s, 5);
    basic_reset(&r);
    WT_EXPECT_STATUS(basic_dispatch(s, &r, N), WS_EVERIFY, s, ctx);
    const char *msg = ws_scheduler_last_error(s);
    WT_CHECK(strstr(msg, "gathered entry ") != NULL && strstr(msg, " of queue ") != NULL,
             "%s: message '%s' does not name the entry and the queue", ctx, msg);
    ws_dispatch_stats ds;
    ws_scheduler_dispatch_stats(s, &ds);
    WT_CHECK(ds.loop == WS_LOOP_HOST, "%s: ran loop %d, not the host loop", ctx, (int)ds.loop);
    /* the hook fires once: the same scheduler then runs clean */
    basic_reset(&r);
    WT_OK(basic_dispatch(s, &r, N), s, ctx);
    basic_check(&r, N, ctx);
  }
}

int main(int argc, char **argv) {
  const wt_need needs[] = {{&t_basic_modules, "t_basic"}};
  wt_init(argc, argv, needs, 1);
  wt_add_per_combo("clean", test_clean);
  wt_add_per_combo("clean_env", test_clean_env);
  for (uint32_t i = 0; i < wt_combo_count(); ++i) {
    const wt_combo *c = wt_combo_at(i);
    if (c->accounting == WT_MATERIALIZED)
      continue; /* counts are recounted every iteration: nothing to corrupt */
    char name[128];
    snprintf(name, sizeof name, "corrupt[%s]", c->name);
    wt_add(name, test_corrupt, (void *)c);
    snprintf(name, sizeof name, "corrupt_env[%s]", c->name);
    wt_add(name, test_corrupt_env, (void *)c);
  }
  wt_add_per_combo("corrupt_token", test_corrupt_token);
  for (uint32_t i = 0; i < wt_combo_count(); ++i) {
    const wt_combo *c = wt_combo_at(i);
    if (c->accounting != WT_MATERIALIZED)
      continue; /* no sorted lists */
    char name[128];
    snprintf(name, sizeof name, "corrupt_list[%s]", c->name);
    wt_add(name, test_corrupt_list, (void *)c);
  }
  wt_add("env_off", test_env_off, NULL);
  wt_add_per_combo("unverified", test_unverified);
  /* a count wrapped below zero or above the pool is still reported as
   * WS_EVERIFY naming the queue: verification runs before the I3 check */
  for (uint32_t i = 0; i < wt_combo_count(); ++i) {
    const wt_combo *c = wt_combo_at(i);
    if (c->accounting == WT_MATERIALIZED)
      continue;
    char name[128];
    snprintf(name, sizeof name, "corrupt_extreme[%s]", c->name);
    wt_add(name, test_corrupt_extreme, (void *)c);
  }
  return wt_run("core_verify");
}
