/* SPDX-License-Identifier: MIT */
/* Scheduling decisions (issue 2), each on every legal combination:
 *   greedy_order   N = R = 65, item 0 -> "small", the rest -> "large": under
 *                  the greedy policy all 64 "large" finish before "small"
 *                  (completion ranks from an atomic counter); under the
 *                  all-queues policy queues run in ascending index order, so
 *                  "small" finishes first;
 *   forkjoin_stats N = R = 64, even -> "even", odd -> "odd", both -> "join":
 *                  generated 64, resumed 128, each continuation dispatched
 *                  once, peaks 32/32/64, exact results;
 *   refill_align   with an alignment list, new items are admitted only when
 *                  the selected (largest) queue is in the list or the pool is
 *                  empty; admissions are observed from inside the kernels (an
 *                  event log with an atomic ticket) and the queue sizes at each
 *                  admission are replayed on the host. Also: items are admitted
 *                  in ascending id order, each refill generates
 *                  min(unadmitted, free slots), and only below the threshold;
 *                  under the greedy policy each launch (where the log shows a
 *                  change of continuation) resumes the largest queue, ties to
 *                  the lowest index; every item follows its own path.
 *   stats_env      WS_STATS=1 turns statistics on.
 */
#include "t_sched_host.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ greedy order */

static void test_greedy_order(void **state) {
  const wt_combo *c = wt_state_combo(state);
  const uint32_t N = 65;
  ws_scheduler_config cfg = wt_config(c, 65);
  ws_scheduler *s = wt_scheduler(&t_order_coroutine, &cfg);
  ws_buffer *rank = wt_buffer(N * 4), *kind = wt_buffer(N * 4), *runs = wt_buffer(N * 4),
            *counter = wt_buffer(4);
  t_order_args a = {ws_buffer_address(rank), ws_buffer_address(kind), ws_buffer_address(runs),
                    ws_buffer_address(counter)};
  WT_OK(ws_scheduler_dispatch(s, N, &a, sizeof a), s, c->name);
  uint32_t h_rank[65], h_kind[65], h_runs[65], h_counter;
  wt_read(rank, h_rank, sizeof h_rank);
  wt_read(kind, h_kind, sizeof h_kind);
  wt_read(runs, h_runs, sizeof h_runs);
  wt_read(counter, &h_counter, 4);
  WT_CHECK(h_counter == N, "%s: %u completions, expected %u", c->name, h_counter, N);
  for (uint32_t i = 0; i < N; ++i) {
    WT_CHECK(h_runs[i] == 1, "%s: item %u ran %u times", c->name, i, h_runs[i]);
    WT_CHECK(h_kind[i] == (i == 0 ? (uint32_t)T_ORDER_SMALL : (uint32_t)T_ORDER_LARGE),
             "%s: item %u finished in continuation %u", c->name, i, h_kind[i]);
  }
  if (c->greedy) {
    /* the queue of 64 "large" frames beats the queue of one "small" frame */
    WT_CHECK(h_rank[0] == N, "%s: greedy: \"small\" finished at rank %u, expected last (%u)",
             c->name, h_rank[0], N);
    for (uint32_t i = 1; i < N; ++i)
      WT_CHECK(h_rank[i] >= 1 && h_rank[i] <= 64,
               "%s: greedy: \"large\" item %u finished at rank %u, after \"small\"", c->name, i,
               h_rank[i]);
  } else {
    /* all-queues: every non-empty queue in ascending index order */
    WT_CHECK(h_rank[0] == 1, "%s: all-queues: \"small\" (queue 1) finished at rank %u, expected 1",
             c->name, h_rank[0]);
  }
  /* ranks are a permutation of 1..N */
  uint8_t seen[66] = {0};
  for (uint32_t i = 0; i < N; ++i) {
    WT_CHECK(h_rank[i] >= 1 && h_rank[i] <= N && !seen[h_rank[i]], "%s: rank %u repeated", c->name,
             h_rank[i]);
    seen[h_rank[i]] = 1;
  }
  ws_node_stats small, large;
  WT_OK(ws_scheduler_node_stats(s, T_ORDER_SMALL, &small), s, "node stats");
  WT_OK(ws_scheduler_node_stats(s, T_ORDER_LARGE, &large), s, "node stats");
  WT_CHECK(small.dispatch_count == 1 && large.dispatch_count == 1 && small.executed_count == 1 &&
               large.executed_count == 64 && small.peak_queued_count == 1 &&
               large.peak_queued_count == 64,
           "%s: small %" PRIu64 "/%" PRIu64 "/%" PRIu64 ", large %" PRIu64 "/%" PRIu64 "/%" PRIu64
           " (dispatches/executed/peak), expected 1/1/1 and 1/64/64",
           c->name, small.dispatch_count, small.executed_count, small.peak_queued_count,
           large.dispatch_count, large.executed_count, large.peak_queued_count);
}

/* ------------------------------------------------------------ fork / join */

static void test_forkjoin_stats(void **state) {
  const wt_combo *c = wt_state_combo(state);
  const uint32_t N = 64;
  ws_scheduler_config cfg = wt_config(c, 64);
  ws_scheduler *s = wt_scheduler(&t_forkjoin_coroutine, &cfg);
  WT_CHECK(ws_scheduler_statistics_enabled(s), "%s: statistics were requested", c->name);
  ws_buffer *out = wt_buffer(N * 4);
  t_forkjoin_args a = {ws_buffer_address(out)};
  for (int round = 0; round < 2; ++round) { /* twice: stats describe the last dispatch */
    wt_zero(out);
    WT_OK(ws_scheduler_dispatch(s, N, &a, sizeof a), s, c->name);
    uint32_t h[64];
    wt_read(out, h, sizeof h);
    for (uint32_t i = 0; i < N; ++i)
      WT_CHECK(h[i] == t_forkjoin_result(i), "%s: item %u: %u, expected %u", c->name, i, h[i],
               t_forkjoin_result(i));
    ws_dispatch_stats d;
    ws_scheduler_dispatch_stats(s, &d);
    WT_CHECK(d.generated_count == 64 && d.resumed_count == 128 && d.max_active_count == 64,
             "%s (dispatch %d): generated %" PRIu64 ", resumed %" PRIu64 ", max active %" PRIu64
             "; expected 64, 128, 64",
             c->name, round + 1, d.generated_count, d.resumed_count, d.max_active_count);
    /* greedy: refill, even (tie 32/32 -> lowest index), odd (tie with join
     * 32/32 -> lowest index), join, done. all-queues: refill, even+odd,
     * join, done. The pass that finds the dispatch done is an iteration too
     * (SPEC §2.2). */
    const uint64_t iters = c->greedy ? 5 : 4;
    WT_CHECK(d.iteration_count == iters, "%s: %" PRIu64 " iterations, expected %" PRIu64, c->name,
             d.iteration_count, iters);
    WT_CHECK(d.elapsed_ms >= 0.0, "%s: negative elapsed time", c->name);
    static const struct {
      const char *name;
      uint64_t dispatches, executed, peak;
    } want[4] = {
        {"<entry>", 1, 64, 0}, {"even", 1, 32, 32}, {"odd", 1, 32, 32}, {"join", 1, 64, 64}};
    WT_CHECK(ws_scheduler_node_count(s) == 4, "%s: %u nodes", c->name, ws_scheduler_node_count(s));
    for (uint32_t j = 0; j < 4; ++j) {
      ws_node_stats ns;
      WT_OK(ws_scheduler_node_stats(s, j, &ns), s, "node stats");
      WT_CHECK(strcmp(ns.name, want[j].name) == 0, "%s: node %u is named '%s', expected '%s'",
               c->name, j, ns.name, want[j].name);
      WT_CHECK(ns.dispatch_count == want[j].dispatches && ns.executed_count == want[j].executed &&
                   (j == 0 || ns.peak_queued_count == want[j].peak),
               "%s: node '%s': dispatched %" PRIu64 ", executed %" PRIu64 ", peak %" PRIu64
               "; expected %" PRIu64 ", %" PRIu64 ", %" PRIu64,
               c->name, ns.name, ns.dispatch_count, ns.executed_count, ns.peak_queued_count,
               want[j].dispatches, want[j].executed, want[j].peak);
    }
    ws_node_stats ns;
    WT_EXPECT_STATUS(ws_scheduler_node_stats(s, 4, &ns), WS_EINVAL, s, "node stats of node K+1");
    WT_CHECK(ws_scheduler_aux_stats_count(s) == 0, "%s: auxiliary stats without auxiliary work",
             c->name);
  }
}

/* ------------------------------------------------------------ refill alignment */

typedef struct align_report {
  uint32_t refills;
  uint32_t refills_live;      /* refills while frames were live */
  uint32_t refills_unaligned; /* ... while the largest queue was not in `list` */
  uint32_t launches_checked;  /* greedy: launches whose queue choice was checked */
} align_report;

/* Dispatches t_align (N items over R) with the given alignment list and
 * threshold, checks exact results, then replays the event log: at each
 * admission (the first entry event after a continuation event) the queue
 * sizes are those implied by all earlier events. */
static void run_align(const wt_combo *c, uint32_t N, uint32_t R, uint32_t threshold,
                      const char *const *list, uint32_t list_count, align_report *rep) {
  char ctx[200];
  snprintf(ctx, sizeof ctx, "%s, N=%u R=%u threshold=%u, alignment list of %u", c->name, N, R,
           threshold, list_count);
  ws_scheduler_config cfg = wt_config(c, R);
  cfg.refill_threshold = threshold;
  cfg.refill_align = list;
  cfg.refill_align_count = list_count;
  ws_scheduler *s = wt_scheduler(&t_align_coroutine, &cfg);
  bool in_list[4] = {false, false, false, false};
  for (uint32_t i = 0; i < list_count; ++i)
    in_list[ws_scheduler_continuation_index(s, list[i])] = true;

  uint32_t capacity = 0;
  for (uint32_t i = 0; i < N; ++i)
    capacity += 1 + t_align_runs(i);
  ws_buffer *log = wt_buffer((size_t)capacity * 12), *ticket = wt_buffer(4),
            *out = wt_buffer((size_t)N * 4);
  t_align_args a;
  memset(&a, 0, sizeof a);
  a.log = ws_buffer_address(log);
  a.ticket = ws_buffer_address(ticket);
  a.out = ws_buffer_address(out);
  a.capacity = capacity;
  WT_OK(ws_scheduler_dispatch(s, N, &a, sizeof a), s, ctx);

  uint32_t *h_out = wt_calloc(N, 4), *h_log = wt_calloc(capacity, 12), h_ticket = 0;
  wt_read(out, h_out, (size_t)N * 4);
  wt_read(log, h_log, (size_t)capacity * 12);
  wt_read(ticket, &h_ticket, 4);
  for (uint32_t i = 0; i < N; ++i)
    WT_CHECK(h_out[i] == t_align_result(i), "%s: item %u: result %u, expected %u", ctx, i, h_out[i],
             t_align_result(i));
  WT_CHECK(h_ticket == capacity, "%s: %u runs logged, expected %u", ctx, h_ticket, capacity);

  const uint32_t A = N < R ? N : R;
  const uint32_t thr = threshold == 0 ? A / 2 : (threshold < A ? threshold : A);
  uint32_t count[4] = {0, 0, 0, 0};
  uint32_t admitted = 0, prev_src = UINT32_MAX;
  uint32_t *state = wt_calloc(N, 4); /* per item: UINT32_MAX not admitted, else its token */
  for (uint32_t i = 0; i < N; ++i)
    state[i] = UINT32_MAX;
  memset(rep, 0, sizeof *rep);
  char err[400] = "";
  for (uint32_t t = 0; t < capacity && !err[0]; ++t) {
    const uint32_t id = h_log[3 * t], src = h_log[3 * t + 1], next = h_log[3 * t + 2];
    if (src > 3 || next > 3 || id >= N) {
      snprintf(err, sizeof err, "event %u is garbage (%u, %u, %u)", t, id, src, next);
      break;
    }
    if (src == 0 && prev_src != 0) {
      /* a refill starts: the state at its iteration boundary */
      const uint32_t live = count[1] + count[2] + count[3];
      uint32_t sel = 0, n = 0;
      for (uint32_t j = 1; j <= 3; ++j)
        if (count[j] > n) {
          n = count[j];
          sel = j;
        }
      /* the refill's items: a run of entry events */
      uint32_t lo = UINT32_MAX, hi = 0, g = 0;
      for (uint32_t u = t; u < capacity && h_log[3 * u + 1] == 0; ++u, ++g) {
        lo = h_log[3 * u] < lo ? h_log[3 * u] : lo;
        hi = h_log[3 * u] > hi ? h_log[3 * u] : hi;
      }
      const uint32_t want_g = (N - admitted) < (A - live) ? N - admitted : A - live;
      rep->refills += 1;
      if (live)
        rep->refills_live += 1;
      if (live && !in_list[sel])
        rep->refills_unaligned += 1;
      if (list_count && live != 0 && !in_list[sel])
        snprintf(err, sizeof err,
                 "refill %u admitted items %u..%u while %u frames were live and the selected "
                 "queue '%s' (%u frames; a=%u b=%u c=%u) is not in the alignment list",
                 rep->refills, lo, hi, live, t_align_names[sel - 1], n, count[1], count[2],
                 count[3]);
      else if (live != 0 && live >= thr)
        snprintf(err, sizeof err,
                 "refill %u admitted items while %u frames were live (threshold %u)", rep->refills,
                 live, thr);
      else if (lo != admitted || hi - lo + 1 != g)
        snprintf(err, sizeof err,
                 "refill %u admitted %u items %u..%u, expected the next ids from %u in order",
                 rep->refills, g, lo, hi, admitted);
      else if (g != want_g)
        snprintf(err, sizeof err,
                 "refill %u generated %u frames with %u live, %u unadmitted and %u active slots; "
                 "expected %u",
                 rep->refills, g, live, N - admitted, A, want_g);
      admitted += g;
    }
    if (src != 0 && src != prev_src && prev_src != UINT32_MAX && c->greedy && !err[0]) {
      /* a new launch of another continuation starts: at this boundary the
       * greedy policy resumes the largest queue, ties to the lowest index */
      uint32_t sel = 0, n = 0;
      for (uint32_t j = 1; j <= 3; ++j)
        if (count[j] > n) {
          n = count[j];
          sel = j;
        }
      if (src != sel)
        snprintf(err, sizeof err, "greedy policy resumed '%s' while the queues were a=%u b=%u c=%u",
                 t_align_names[src - 1], count[1], count[2], count[3]);
      rep->launches_checked += 1;
    }
    /* each item moves along its own path: entry once, then from the queue
     * its last run sent it to */
    const uint32_t expect_src = state[id] == UINT32_MAX ? 0u : state[id];
    if (src != expect_src && !err[0])
      snprintf(err, sizeof err, "event %u: item %u ran continuation %u, but it was %s", t, id, src,
               state[id] == UINT32_MAX ? "not admitted"
               : state[id] == 0        ? "terminated"
                                       : t_align_names[state[id] - 1]);
    state[id] = next;
    if (src != 0)
      count[src] -= 1;
    if (next != 0)
      count[next] += 1;
    prev_src = src;
  }
  if (err[0])
    WT_FAIL("%s: %s", ctx, err);
  WT_CHECK(admitted == N, "%s: %u items admitted, expected %u", ctx, admitted, N);
  for (uint32_t i = 0; i < N; ++i)
    WT_CHECK(state[i] == 0, "%s: item %u never terminated (token %u)", ctx, i, state[i]);
  ws_node_stats e;
  WT_OK(ws_scheduler_node_stats(s, 0, &e), s, "node stats");
  WT_CHECK(e.dispatch_count == rep->refills,
           "%s: statistics count %" PRIu64 " refills, the kernels saw %u", ctx, e.dispatch_count,
           rep->refills);
}

static void test_refill_align(void **state) {
  const wt_combo *c = wt_state_combo(state);
  static const char *const list_b[] = {"b"};
  static const char *const list_ac[] = {"c", "a"};
  align_report none, with;
  /* without a list: admissions happen while the largest queue is not "b" */
  run_align(c, 200, 16, 0, NULL, 0, &none);
  run_align(c, 200, 16, 0, list_b, 1, &with);
  print_message("    %s: no list: %u refills (%u with live frames, %u unaligned); list {b}: %u "
                "(%u); greedy choices checked: %u, %u\n",
                c->name, none.refills, none.refills_live, none.refills_unaligned, with.refills,
                with.refills_live, none.launches_checked, with.launches_checked);
  if (c->greedy) {
    /* the workload must make the list matter, both ways */
    WT_CHECK(none.refills_unaligned > 0,
             "%s: test workload too weak: without a list no refill happened while the largest "
             "queue was not \"b\"",
             c->name);
    WT_CHECK(with.refills_live > 0,
             "%s: with the list {\"b\"} no refill happened while frames were live (%u refills)",
             c->name, with.refills);
    WT_CHECK(none.launches_checked > 20 && with.launches_checked > 20,
             "%s: only %u / %u greedy decisions could be checked", c->name, none.launches_checked,
             with.launches_checked);
  }
  run_align(c, 200, 16, 12, list_ac, 2, &with);
  if (c->greedy)
    WT_CHECK(with.refills_live > 0,
             "%s: with the list {\"c\",\"a\"} no refill happened while frames were live", c->name);
  /* a list naming every continuation behaves like no list */
  static const char *const list_all[] = {"a", "b", "c"};
  align_report all;
  run_align(c, 200, 16, 0, list_all, 3, &all);
  WT_CHECK(all.refills == none.refills || !c->greedy,
           "%s: a list of every continuation gave %u refills, no list %u", c->name, all.refills,
           none.refills);
}

/* ------------------------------------------------------------ WS_STATS */

static void test_stats_env(void **state) {
  (void)state;
  ws_scheduler_config cfg = wt_config(NULL, 64);
  cfg.statistics = false;
  wt_setenv("WS_STATS", NULL);
  ws_scheduler *off = wt_scheduler(&t_forkjoin_coroutine, &cfg);
  WT_CHECK(!ws_scheduler_statistics_enabled(off), "statistics on without config or WS_STATS");
  wt_setenv("WS_STATS", "0");
  ws_scheduler *zero = wt_scheduler(&t_forkjoin_coroutine, &cfg);
  WT_CHECK(!ws_scheduler_statistics_enabled(zero), "WS_STATS=0 turned statistics on");
  wt_setenv("WS_STATS", "1");
  ws_scheduler *on = wt_scheduler(&t_forkjoin_coroutine, &cfg);
  WT_CHECK(ws_scheduler_statistics_enabled(on), "WS_STATS=1 did not turn statistics on");
  ws_buffer *out = wt_buffer(64 * 4);
  t_forkjoin_args a = {ws_buffer_address(out)};
  WT_OK(ws_scheduler_dispatch(on, 64, &a, sizeof a), on, "dispatch with WS_STATS=1");
  ws_dispatch_stats d;
  ws_scheduler_dispatch_stats(on, &d);
  WT_CHECK(d.generated_count == 64 && d.resumed_count == 128,
           "WS_STATS=1: generated %" PRIu64 ", resumed %" PRIu64, d.generated_count,
           d.resumed_count);
  /* collecting statistics changes no result */
  uint32_t h_on[64], h_off[64];
  wt_read(out, h_on, sizeof h_on);
  wt_zero(out);
  WT_OK(ws_scheduler_dispatch(off, 64, &a, sizeof a), off, "dispatch without statistics");
  wt_read(out, h_off, sizeof h_off);
  WT_CHECK(memcmp(h_on, h_off, sizeof h_on) == 0, "results differ with statistics on and off");
}

int main(int argc, char **argv) {
  const wt_need needs[] = {{&t_sched_modules, "t_order"},
                           {&t_sched_modules, "t_forkjoin"},
                           {&t_sched_modules, "t_align"}};
  wt_init(argc, argv, needs, 3);
  wt_add_per_combo("greedy_order", test_greedy_order);
  wt_add_per_combo("forkjoin_stats", test_forkjoin_stats);
  wt_add_per_combo("refill_align", test_refill_align);
  wt_add("stats_env", test_stats_env, NULL);
  return wt_run("core_order");
}
