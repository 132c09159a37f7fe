/* SPDX-License-Identifier: MIT */
/* The loop's decisions (include/wavesched/detail/decide.h) on hand-built
 * states, at the boundaries SPEC §2.2, §3.4 and docs/loop.md draw. Pure host
 * code, no device.
 *
 * Both loops decide with this one source, so the host/device differential
 * tests cannot see a wrong decision that both make; the scenario tests and
 * the fuzzer's reference loop see it only where a dispatch happens to reach
 * the boundary. A mutation campaign (tools/mutate, docs/reliability.md
 * "Mutation testing") found the boundaries none of them reached; each case
 * here pins one, with the expected values taken from the specification:
 *
 *   tail_last_iteration  the tail starts below the limit's last iteration,
 *                        not on it, and gives each item the iterations left;
 *   drain_stage_range    a forced drain's stage equal to the stage count is
 *                        out of range (never read), an empty one is refused,
 *                        a non-empty one passes;
 *   append_storage       the device loops' append-pool rule: reset when
 *                        nothing is live, compact at extent >= 32 and >= 2 L
 *                        (both bounds inclusive), nothing when admission is
 *                        not evaluated or the queue does not produce into the
 *                        work, an extent outside [L, C] reported;
 *   no_admission_when_over  the pass that finds the dispatch done, and the
 *                        one the limit stops, evaluate no admission (the
 *                        host loop would call prepare_for_admission);
 *   forced_ties          of several blocked works the most occupied is
 *                        forced, and of equally occupied ones the earliest;
 *                        its first non-empty stage drains;
 *   allowances           SPEC §4: what each action allows every work's next
 *                        live count (a stage: no rise in any work; a refill
 *                        or a non-producer: none; a producer: m * b), and the
 *                        culprit a rise of one more names (the stage and its
 *                        work, the producer, or neither); a plan that does
 *                        not gather leaves the recorded gather empty;
 *   verify_gathers       SPEC §5: under verification every gather a plan
 *                        makes (a refill's free slots, a resume's queue) is
 *                        checked at the next boundary against what it had to
 *                        return, and only then;
 *   scan_share           under fused accounting a whole-queue resume scans
 *                        [0, high) when its queue holds at least the share
 *                        (inclusive) of the range, and gathers a sparser one
 *                        or a partial resume; either reads its slot list
 *                        from the start;
 *   observe_works        the device loops' reading of a work's device words:
 *                        a live count or a free count (below zero: the pool
 *                        overflowed, it is full), the stage counts, the
 *                        error word (nonzero: WS_EPROTO_CLIENT), the peak
 *                        append extent;
 *   branch               the CUDA loop's branch numbers (0 nothing, 1 the
 *                        refill, 2 every queue, 2 + j continuation j,
 *                        3 + K + s auxiliary stage s in statistics order,
 *                        3 + K + stages the tail);
 *   rebase               moving the state's own arrays to another address
 *                        (the decide kernel's shared copy) moves exactly the
 *                        addresses inside [from, from + size) and back;
 *   persist              the CUDA persistent loop carries out a scan-mode
 *                        resume of at most max_frames (inclusive) itself and
 *                        leaves every other decision, with its branch and
 *                        whether the loop goes on, to the graph.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "wavesched/detail/decide.h"

#define KMAX 6u
#define SMAX 4u

/* A loop state and every array it points at. Each work's stage counts have
 * room for one word after its stages, where fx_work puts a value that no
 * expected result contains: a read past the stage count shows. */
typedef struct fx {
  ws_dstate d;
  uint32_t counts[WS_COUNTS_WORDS(KMAX)];
  uint32_t recount[KMAX + 2];
  uint32_t gather_count;
  uint32_t align[KMAX + 1];
  uint64_t node_stats[3 * (KMAX + 1)];
  uint64_t aux_stats[3 * 2 * SMAX];
  ws_dec_work works[2];
  uint32_t bound[2][KMAX + 1];
  uint32_t q[2][SMAX + 1];
  uint32_t extent[2];
  uint64_t storage[2][3];
} fx;

static uint64_t at(const void *p) { return (uint64_t)(uintptr_t)p; }

/* Points the state's and the works' addresses at f's own arrays (after
 * fx_init, or after copying a fixture). */
static void fx_point(fx *f) {
  ws_dstate *d = &f->d;
  d->counts = at(f->counts);
  d->recount = at(f->recount);
  d->gather_count = at(&f->gather_count);
  d->align = at(f->align);
  d->node_stats = at(f->node_stats);
  d->aux_stats = at(f->aux_stats);
  d->works = at(f->works);
  for (uint32_t i = 0; i < 2; ++i) {
    f->works[i].bound = at(f->bound[i]);
    f->works[i].q = at(f->q[i]);
  }
}

/* K continuations, N items over A slots, WS_DEC_* flags; threshold A/2. */
static void fx_init(fx *f, uint32_t K, uint32_t N, uint32_t A, uint32_t flags) {
  memset(f, 0, sizeof *f);
  ws_dstate *d = &f->d;
  d->K = K;
  d->N = N;
  d->A = A;
  d->flags = flags;
  d->refill_threshold = A / 2u;
  d->high = (flags & WS_DEC_COMPACTION) ? 0u : A;
  fx_point(f);
  d->status = WS_DEC_RUNNING;
  d->best_work = WS_DEC_NONE;
}

/* Work i with capacity C and S stages (statistics after the earlier works'). */
static ws_dec_work *fx_work(fx *f, uint32_t i, uint32_t C, uint32_t S) {
  ws_dec_work *w = &f->works[i];
  w->capacity = C;
  w->stage_count = S;
  w->first_stat = i ? f->works[i - 1].first_stat + f->works[i - 1].stage_count : 0u;
  f->q[i][S] = 0x5a5au; /* the word after the stages */
  f->d.aux_count = i + 1u;
  return w;
}

/* ---- the tail and the iteration limit ---- */

static void test_tail_last_iteration(void **state) {
  (void)state;
  for (uint64_t before = 17; before <= 19; ++before) {
    fx f;
    fx_init(&f, 2, 10, 10, WS_DEC_GREEDY | WS_DEC_TAIL);
    f.d.tail_frames = 8;
    f.d.iteration_limit = 20;
    f.d.iterations = before; /* this pass is iteration before + 1 */
    f.d.admitted = 10;
    f.d.scanned = 5;
    f.d.plan.queue = 2; /* stale */
    f.counts[1] = 3;
    ws_dec_decide(&f.d);
    assert_int_equal(f.d.status, WS_DEC_RUNNING);
    assert_int_equal(f.d.iterations, before + 1);
    if (before + 1 < 20) {
      /* the tail over [0, high) = all 10 slots, with the iterations the
       * limit leaves to each item */
      assert_int_equal(f.d.plan.action, WS_ACT_TAIL);
      assert_int_equal(f.d.plan.queue, 0);
      assert_int_equal(f.d.plan.count, 3);
      assert_int_equal(f.d.plan.slot_base, 10);
      assert_int_equal(f.d.plan.first_id, 20 - (before + 1));
      assert_int_equal(f.d.tail_limit, 20 - (before + 1));
      assert_int_equal(f.d.tail_items, 3);
      assert_int_equal(f.d.scanned, 5 + 10);
    } else {
      /* the last iteration the limit allows resumes: a tail here would
       * have no continuation left to give */
      assert_int_equal(f.d.plan.action, WS_ACT_RESUME);
      assert_int_equal(f.d.plan.queue, 1);
      assert_int_equal(f.d.plan.count, 3);
      assert_int_equal(f.d.tail_items, 0);
    }
  }
}

/* ---- SPEC §3.4 C: the forced drain's stage ---- */

static void test_drain_stage_range(void **state) {
  (void)state;
  static const struct {
    uint32_t stage;
    bool ok;
    uint64_t its_count; /* err.b */
  } cases[] = {{1, true, 0}, {0, false, 0}, {3, false, 0}, {4, false, 0}};
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
    fx f;
    fx_init(&f, 2, 10, 10, WS_DEC_GREEDY);
    fx_work(&f, 0, 8, 3);
    f.q[0][1] = 2;
    f.q[0][2] = 1;
    f.d.plan.action = WS_ACT_STAGE;
    f.d.plan.forced = 1;
    f.d.plan.work = 0;
    f.d.plan.stage = cases[k].stage;
    ws_dec_check_drain(&f.d);
    if (cases[k].ok) {
      assert_int_equal(f.d.status, WS_DEC_RUNNING);
      continue;
    }
    assert_int_equal(f.d.status, WS_DEC_ERROR);
    assert_int_equal(f.d.err.kind, WS_DERR_DRAIN_STAGE);
    assert_int_equal(f.d.err.status, WS_DEC_S_EPROTO_DRAIN_STAGE);
    assert_int_equal(f.d.err.stage, cases[k].stage);
    assert_int_equal(f.d.err.a, 3);
    assert_int_equal(f.d.err.b, cases[k].its_count);
  }
}

/* ---- issue 18: append storage in the device loops ---- */

typedef struct storage_case {
  uint32_t extent, live, evaluate, bound;
  /* expected */
  uint32_t extent_after, compact_live, compact_scan, has_avail, reclaims, compactions;
} storage_case;

static void test_append_storage(void **state) {
  (void)state;
  static const storage_case cases[] = {
      /* compaction: extent >= 32 and >= 2 L, both inclusive */
      {64, 32, 1, 1, 32, 32, 64, 1, 0, 1},
      {63, 32, 1, 1, 63, 0, 0, 1, 0, 0},
      {32, 16, 1, 1, 16, 16, 32, 1, 0, 1},
      {31, 15, 1, 1, 31, 0, 0, 1, 0, 0},
      {100, 1, 1, 1, 1, 1, 100, 1, 0, 1},
      /* nothing live: the extent goes back to 0 (a reclaim when it moved) */
      {5, 0, 1, 1, 0, 0, 0, 1, 1, 0},
      {0, 0, 1, 1, 0, 0, 0, 1, 0, 0},
      /* admission not evaluated, or the queue produces nothing into it */
      {64, 32, 0, 1, 64, 0, 0, 0, 0, 0},
      {5, 0, 0, 1, 5, 0, 0, 0, 0, 0},
      {64, 32, 1, 0, 64, 0, 0, 0, 0, 0},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
    const storage_case *c = &cases[k];
    fx f;
    fx_init(&f, 2, 10, 10, WS_DEC_GREEDY);
    ws_dec_work *w = fx_work(&f, 0, 100, 2);
    w->src_extent = at(&f.extent[0]);
    w->storage_counters = at(f.storage[0]);
    w->live = c->live;
    w->has_avail = 1; /* stale from an earlier iteration: cleared unless set again */
    w->compact_live = w->compact_scan = 7;
    f.bound[0][1] = c->bound;
    f.extent[0] = c->extent;
    f.d.sel = 1;
    f.d.evaluate = c->evaluate;
    ws_dec_prepare_storage(&f.d);
    assert_int_equal(f.d.status, WS_DEC_RUNNING);
    assert_int_equal(f.extent[0], c->extent_after);
    assert_int_equal(w->compact_live, c->compact_live);
    assert_int_equal(w->compact_scan, c->compact_scan);
    assert_int_equal(w->has_avail, c->has_avail);
    if (c->has_avail)
      assert_int_equal(w->avail, 100 - c->extent_after);
    assert_int_equal(f.storage[0][0], c->reclaims);
    assert_int_equal(f.storage[0][1], c->compactions);
  }
  /* an extent outside [L, C]: the decisions report it, naming the numbers */
  static const uint32_t bad[][2] = {{101, 3}, {2, 3}}; /* extent, live */
  for (size_t k = 0; k < 2; ++k) {
    fx f;
    fx_init(&f, 2, 10, 10, WS_DEC_GREEDY);
    ws_dec_work *w = fx_work(&f, 0, 100, 2);
    w->src_extent = at(&f.extent[0]);
    w->live = bad[k][1];
    f.bound[0][1] = 1;
    f.extent[0] = bad[k][0];
    f.d.sel = 1;
    f.d.evaluate = 1;
    ws_dec_prepare_storage(&f.d);
    assert_int_equal(f.d.status, WS_DEC_ERROR);
    assert_int_equal(f.d.err.kind, WS_DERR_EXTENT);
    assert_int_equal(f.d.err.a, bad[k][0]);
    assert_int_equal(f.d.err.b, bad[k][1]);
    assert_int_equal(f.d.err.c, 100);
    assert_int_equal(f.d.err.queue, 1);
  }
}

/* ---- SPEC §2.2 steps 3-4: a pass that ends the dispatch admits nothing ---- */

static void test_no_admission_when_over(void **state) {
  (void)state;
  for (int limit = 0; limit < 2; ++limit) {
    fx f;
    fx_init(&f, 2, 10, 10, WS_DEC_GREEDY);
    fx_work(&f, 0, 8, 2);
    f.bound[0][1] = 1;
    f.d.evaluate = 1; /* the last pass evaluated admission */
    f.d.sel = 1;
    if (limit) {
      /* work left, but the limit is reached */
      f.d.iteration_limit = 5;
      f.d.iterations = 5;
      f.d.admitted = 4;
      f.counts[1] = 3;
    } else {
      f.d.admitted = 10; /* nothing left anywhere: done */
    }
    ws_dec_observe(&f.d);
    ws_dec_select(&f.d);
    assert_int_equal(f.d.status, limit ? WS_DEC_ERROR : WS_DEC_DONE);
    assert_int_equal(f.d.evaluate, 0);
    assert_int_equal(f.d.plan.action, WS_ACT_NONE);
    if (limit) {
      assert_int_equal(f.d.err.kind, WS_DERR_LIMIT);
      assert_int_equal(f.d.err.a, 5);
      assert_int_equal(f.d.err.b, 4);
      assert_int_equal(f.d.err.c, 3);
    }
  }
}

/* ---- SPEC §3.4 C: which blocked work is forced ---- */

static void test_forced_ties(void **state) {
  (void)state;
  static const struct {
    uint32_t live0, live1, forced;
  } cases[] = {{5, 5, 0}, {4, 5, 1}, {5, 4, 0}};
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
    fx f;
    fx_init(&f, 2, 10, 10, WS_DEC_GREEDY);
    f.d.admitted = 10;
    f.counts[1] = 4; /* n = 4 frames of c1, which produce into both works */
    for (uint32_t i = 0; i < 2; ++i) {
      ws_dec_work *w = fx_work(&f, i, 6, 3);
      w->live = i ? cases[k].live1 : cases[k].live0;
      f.q[i][0] = 0;
      f.q[i][1] = w->live - 1u;
      f.q[i][2] = 1;
      f.bound[i][1] = 1; /* 4 * 1 > 6 - L for L >= 3: both block */
    }
    ws_dec_decide(&f.d);
    assert_int_equal(f.d.status, WS_DEC_RUNNING);
    assert_int_equal(f.d.plan.action, WS_ACT_STAGE);
    assert_int_equal(f.d.plan.forced, 1);
    assert_int_equal(f.d.plan.work, cases[k].forced);
    assert_int_equal(f.d.plan.stage, 1);
    assert_int_equal(f.d.forced_drains, 1);
    assert_int_equal(f.d.blocked, 1);
  }
}

/* ---- SPEC §4: allowances and the culprit of a rise ---- */

enum { ACT_STAGE, ACT_REFILL, ACT_PRODUCER, ACT_OTHER };

/* Two works (C = 50, 3 stages; 5 and 7 items live, in stage 0), c1 produces
 * into work 1 with bound 2, c2 into neither; each work's allowance and
 * `last` are stale (99, PRODUCER) before the action. 8 frames wait in c1 or
 * c2 (more than any stage, fewer than the refill threshold 10). */
static void allowance_state(fx *f, int action) {
  fx_init(f, 2, 40, 20, WS_DEC_GREEDY);
  f->d.admitted = action == ACT_REFILL ? 8 : 40;
  f->counts[1] = action == ACT_PRODUCER ? 8 : 0;
  f->counts[2] = action == ACT_PRODUCER || action == ACT_STAGE ? 0 : 8;
  for (uint32_t i = 0; i < 2; ++i) {
    ws_dec_work *w = fx_work(f, i, 50, 3);
    w->live = i ? 7 : 5;
    w->allowance = 99;
    w->last = WS_LAST_PRODUCER;
    f->q[i][0] = w->live;
  }
  f->bound[1][1] = 2;
  f->d.plan.gather_scan = 77; /* the last plan's gather */
  if (action == ACT_STAGE) {
    /* work 1's stage 2 is the largest queue of all */
    f->q[1][0] = 0;
    f->q[1][2] = 7;
  }
}

static void test_allowances(void **state) {
  (void)state;
  static const char *const names[] = {"stage", "refill", "producer", "other"};
  for (int action = 0; action < 4; ++action) {
    fx f;
    allowance_state(&f, action);
    ws_dec_decide(&f.d);
    assert_int_equal(f.d.status, WS_DEC_RUNNING);
    static const uint32_t want_action[] = {WS_ACT_STAGE, WS_ACT_REFILL, WS_ACT_RESUME,
                                           WS_ACT_RESUME};
    if (f.d.plan.action != want_action[action])
      fail_msg("%s: action %u", names[action], f.d.plan.action);
    if (!f.d.plan.gather)
      assert_int_equal(f.d.plan.gather_scan, 0);
    for (uint32_t i = 0; i < 2; ++i) {
      const ws_dec_work *w = &f.works[i];
      const uint64_t live = i ? 7u : 5u;
      /* c1 resumes 8 frames with bound 2 into work 1 */
      const uint64_t want = action == ACT_PRODUCER && i == 1 ? live + 8u * 2u : live;
      if (w->allowance != want)
        fail_msg("%s: work %u allowance %llu, want %llu", names[action], i,
                 (unsigned long long)w->allowance, (unsigned long long)want);
      const uint32_t last = action == ACT_STAGE                ? WS_LAST_STAGE
                            : action == ACT_PRODUCER && i == 1 ? WS_LAST_PRODUCER
                                                               : WS_LAST_OTHER;
      assert_int_equal(w->last, last);
      if (action == ACT_STAGE) {
        assert_int_equal(w->last_stage, 2);
        assert_int_equal(w->last_work, 1);
      }
    }
    /* the next boundary: work 0 rises to its allowance (allowed), then one
     * more (the culprit named) */
    for (uint32_t rise = 0; rise < 2; ++rise) {
      fx g = f;
      fx_point(&g);
      const uint32_t to = (uint32_t)g.works[0].allowance + rise;
      g.works[0].live = to;
      g.q[0][0] = to;
      g.q[0][1] = g.q[0][2] = 0;
      ws_dec_observe(&g.d);
      if (!rise) {
        assert_int_equal(g.d.status, WS_DEC_RUNNING);
        continue;
      }
      assert_int_equal(g.d.status, WS_DEC_ERROR);
      assert_int_equal(g.d.err.work, 0);
      if (action == ACT_STAGE) {
        assert_int_equal(g.d.err.kind, WS_DERR_CLONED);
        assert_int_equal(g.d.err.status, WS_DEC_S_EPROTO_CLONED);
        assert_int_equal(g.d.err.stage, 2);
        assert_int_equal(g.d.err.work2, 1);
        assert_int_equal(g.d.err.a, 5); /* allowance, then live */
        assert_int_equal(g.d.err.b, 6);
      } else {
        assert_int_equal(g.d.err.kind, WS_DERR_BOUND_OTHER); /* c1 produces only into work 1 */
        assert_int_equal(g.d.err.status, WS_DEC_S_EPROTO_BOUND);
        assert_int_equal(g.d.err.a, 6); /* live, then allowance */
        assert_int_equal(g.d.err.b, 5);
      }
    }
  }
  /* the producer's own work: a rise past m * b names the producer */
  fx f;
  allowance_state(&f, ACT_PRODUCER);
  ws_dec_decide(&f.d);
  f.works[1].live = 7 + 16 + 1;
  f.q[1][0] = 24;
  ws_dec_observe(&f.d);
  assert_int_equal(f.d.status, WS_DEC_ERROR);
  assert_int_equal(f.d.err.kind, WS_DERR_BOUND);
  assert_int_equal(f.d.err.work, 1);
  assert_int_equal(f.d.err.a, 24);
  assert_int_equal(f.d.err.b, 23);
}

/* ---- SPEC §5: verification of the gathers ---- */

static void test_verify_gathers(void **state) {
  (void)state;
  for (int refill = 0; refill < 2; ++refill) {
    for (uint32_t off = 0; off < 3; ++off) { /* the gather returned expected + off - 1 */
      fx f;
      fx_init(&f, 2, 40, 20, WS_DEC_GREEDY | WS_DEC_VERIFY | WS_DEC_PUBLISH);
      f.d.admitted = refill ? 8 : 40;
      f.counts[1] = 3;
      f.counts[2] = 5;
      memcpy(f.recount, f.counts, sizeof f.recount);
      ws_dec_decide(&f.d);
      assert_int_equal(f.d.status, WS_DEC_RUNNING);
      assert_int_equal(f.d.plan.action, refill ? WS_ACT_REFILL : WS_ACT_RESUME);
      assert_int_equal(f.d.plan.gather, 1);
      /* a refill gathers the 12 free slots, a resume the largest queue, c2 */
      const uint32_t expect = refill ? 20u - 8u : 5u;
      assert_int_equal(f.d.gathered, 1);
      assert_int_equal(f.d.expect_gather, expect);
      f.gather_count = expect + off - 1u;
      ws_dec_observe(&f.d);
      if (off == 1) {
        assert_int_equal(f.d.status, WS_DEC_RUNNING);
        assert_int_equal(f.d.gathered, 0);
        /* the next boundary checks no gather that did not run */
        f.gather_count = 12345;
        ws_dec_observe(&f.d);
        assert_int_equal(f.d.status, WS_DEC_RUNNING);
        continue;
      }
      assert_int_equal(f.d.status, WS_DEC_ERROR);
      assert_int_equal(f.d.err.kind, WS_DERR_VERIFY_GATHER);
      assert_int_equal(f.d.err.status, WS_DEC_S_EVERIFY);
      assert_int_equal(f.d.err.a, expect + off - 1u);
      assert_int_equal(f.d.err.b, expect);
    }
  }
}

/* ---- docs/loop.md: scan mode and its share ---- */

static void test_scan_share(void **state) {
  (void)state;
  static const struct {
    uint32_t share, m, admit; /* share in %, frames in c1, frames admitted */
    bool scan;
  } cases[] = {
      {50, 10, 10, true},  /* 10 of high 20: exactly 50 % */
      {50, 9, 9, false},   /* 45 % */
      {0, 1, 1, true},     /* no share: every whole-queue resume scans */
      {100, 20, 20, true}, /* the whole range */
      {0, 10, 6, false},   /* partial admission: the first 6 frames are gathered */
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
    fx f;
    const uint32_t partial = cases[k].admit < cases[k].m ? WS_DEC_PARTIAL : 0u;
    fx_init(&f, 2, 20, 20,
            WS_DEC_GREEDY | WS_DEC_SCAN | partial | cases[k].share << WS_DEC_SCAN_SHARE_SHIFT);
    f.d.admitted = 20;
    f.counts[1] = cases[k].m;
    f.d.plan.slot_offset = 9; /* stale */
    if (partial) {
      /* a work whose room admits 6 frames of bound 1 */
      ws_dec_work *w = fx_work(&f, 0, 8, 1);
      w->live = 2;
      f.q[0][0] = 2;
      f.bound[0][1] = 1;
    }
    ws_dec_decide(&f.d);
    assert_int_equal(f.d.status, WS_DEC_RUNNING);
    assert_int_equal(f.d.plan.action, WS_ACT_RESUME);
    assert_int_equal(f.d.plan.count, cases[k].admit);
    assert_int_equal(f.d.plan.slot_offset, 0);
    assert_int_equal(f.d.scanned, 20);
    if (cases[k].scan) {
      assert_int_equal(f.d.plan.use_slots, 2);
      assert_int_equal(f.d.plan.gather, 0);
      assert_int_equal(f.d.plan.slot_base, 20);
      assert_int_equal(f.d.scan_total, cases[k].m);
      assert_int_equal(f.d.scan_queue, 1);
      assert_int_equal(f.d.scan_count, cases[k].m);
    } else {
      assert_int_equal(f.d.plan.use_slots, 1);
      assert_int_equal(f.d.plan.gather, 1);
      assert_int_equal(f.d.plan.gather_token, 1);
      assert_int_equal(f.d.plan.gather_scan, 20);
      assert_int_equal(f.d.scan_total, 0);
    }
  }
}

/* ---- the device loops' observation of a work (ws_aux_device) ---- */

static void test_observe_works(void **state) {
  (void)state;
  static const struct {
    uint32_t is_free, word, error;
    uint32_t live, obs_status;
  } cases[] = {
      {0, 7, 0, 7, 0},
      {1, 7, 0, 93, 0},           /* 7 of 100 free */
      {1, 0, 0, 100, 0},          /* none free */
      {1, 0xfffffffeu, 0, 100, 0}, /* free count -2: overflowed, full */
      {0, 3, 2, 3, (uint32_t)WS_DEC_S_EPROTO_CLIENT},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
    fx f;
    fx_init(&f, 2, 10, 10, WS_DEC_GREEDY);
    ws_dec_work *w = fx_work(&f, 0, 100, 3);
    uint32_t word = cases[k].word, err = cases[k].error, stages[3] = {1, 0, 6};
    w->live_is_free = cases[k].is_free;
    w->src_live = at(&word);
    w->src_error = at(&err);
    w->src_stages = at(stages);
    w->client_err = 9; /* stale, as the host loop may leave them */
    w->obs_status = -1;
    w->obs_late = 1;
    f.extent[0] = 40;
    f.storage[0][2] = 39; /* the peak extent so far */
    w->src_extent = at(&f.extent[0]);
    w->storage_counters = at(f.storage[0]);
    ws_dec_observe_works(&f.d);
    assert_int_equal(w->live, cases[k].live);
    assert_int_equal(w->client_err, cases[k].error);
    assert_int_equal((uint32_t)w->obs_status, cases[k].obs_status);
    assert_int_equal(w->obs_late, 0);
    assert_memory_equal(f.q[0], stages, sizeof stages);
    assert_int_equal(f.storage[0][2], 40);
  }
}

/* ---- the CUDA loop's branches ---- */

static void test_branch(void **state) {
  (void)state;
  fx f;
  fx_init(&f, 4, 10, 10, WS_DEC_GREEDY);
  fx_work(&f, 0, 8, 2);
  fx_work(&f, 1, 8, 3); /* its stages are statistics 2, 3, 4 */
  const uint32_t stages = 5;
  static const struct {
    uint32_t action, queue, work, stage, branch;
  } cases[] = {
      {WS_ACT_NONE, 0, 0, 0, 0},     {WS_ACT_REFILL, 0, 0, 0, 1},
      {WS_ACT_RESUME_ALL, 0, 0, 0, 2}, {WS_ACT_RESUME, 1, 0, 0, 3},
      {WS_ACT_RESUME, 4, 0, 0, 6},   {WS_ACT_STAGE, 0, 0, 0, 7},
      {WS_ACT_STAGE, 0, 0, 1, 8},    {WS_ACT_STAGE, 0, 1, 0, 9},
      {WS_ACT_STAGE, 0, 1, 2, 11},   {WS_ACT_TAIL, 0, 0, 0, 12},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
    f.d.plan.action = cases[k].action;
    f.d.plan.queue = cases[k].queue;
    f.d.plan.work = cases[k].work;
    f.d.plan.stage = cases[k].stage;
    assert_int_equal(ws_dec_branch(&f.d, stages), cases[k].branch);
  }
}

/* ---- the state's arrays at another address ---- */

static void test_rebase(void **state) {
  (void)state;
  fx f;
  fx_init(&f, 2, 10, 10, WS_DEC_GREEDY);
  fx_work(&f, 0, 8, 2);
  const uint64_t from = at(&f), size = sizeof f, to = 0x100000000ull;
  const uint64_t works = f.d.works, node = f.d.node_stats;
  const uint64_t aux = f.d.aux_stats, align = f.d.align, bound = f.works[0].bound;
  const uint64_t q = f.works[0].q;
  /* addresses the state does not own stay: one at its end, one before it */
  f.d.counts = from + size;
  f.d.recount = from - 1u;
  ws_dec_rebase(&f.d, from, to, size);
  assert_int_equal(f.d.works, works - from + to);
  assert_int_equal(f.d.node_stats, node - from + to);
  assert_int_equal(f.d.aux_stats, aux - from + to);
  assert_int_equal(f.d.align, align - from + to);
  /* the works' arrays, found through the works array before it moved */
  assert_int_equal(f.works[0].bound, bound - from + to);
  assert_int_equal(f.works[0].q, q - from + to);
  assert_int_equal(f.d.counts, from + size);
  assert_int_equal(f.d.recount, from - 1u);
  /* and back: the works array is found at its new address, which the copy
   * (here the same bytes) now names */
  ws_dec_rebase(&f.d, to, from, size);
  assert_int_equal(f.d.works, works);
  assert_int_equal(f.works[0].bound, bound);
  assert_int_equal(f.works[0].q, q);
  /* only the works that exist: a record past aux_count is not touched */
  f.works[1].bound = from + 8u;
  ws_dec_rebase(&f.d, from, to, size);
  assert_int_equal(f.works[1].bound, from + 8u);
  ws_dec_rebase(&f.d, to, from, size);
  /* the range is half-open: its first byte moves, the byte after it stays */
  f.d.node_stats = from;
  f.d.align = from + size;
  ws_dec_rebase(&f.d, from, to, size);
  assert_int_equal(f.d.node_stats, to);
  assert_int_equal(f.d.align, from + size);
}

/* ---- the CUDA persistent loop's choice ---- */

static void test_persist(void **state) {
  (void)state;
  static const struct {
    uint32_t m, max_frames, interval, scan;
    uint32_t go, more;
  } cases[] = {
      {6, 6, 0, 1, 1, 1}, /* at most max_frames: the kernel resumes */
      {7, 6, 0, 1, 0, 1}, /* larger: the graph's own kernel */
      {6, 6, 1, 1, 0, 0}, /* the observation interval ends here */
      {6, 6, 0, 0, 0, 1}, /* a gathered resume */
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
    fx f;
    fx_init(&f, 2, 20, 20, WS_DEC_GREEDY | (cases[k].scan ? WS_DEC_SCAN : 0u));
    f.d.admitted = 20;
    f.counts[2] = cases[k].m;
    f.d.interval = f.d.run_left = cases[k].interval;
    uint32_t words[WS_PERSIST_WORDS] = {7, 0, 7, 7};
    ws_dec_persist p;
    memset(&p, 0, sizeof p);
    p.words = at(words);
    p.max_frames = cases[k].max_frames;
    assert_int_equal(ws_dec_persist_decide(&p, &f.d), cases[k].go);
    assert_int_equal(f.d.plan.action, WS_ACT_RESUME);
    assert_int_equal(words[WS_PERSIST_GO], cases[k].go);
    if (cases[k].go) {
      assert_int_equal(words[WS_PERSIST_PRE], 0);
      continue;
    }
    assert_int_equal(words[WS_PERSIST_PRE], 1);
    assert_int_equal(words[WS_PERSIST_BRANCH], 2 + 2); /* continuation 2 */
    assert_int_equal(words[WS_PERSIST_MORE], cases[k].more);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_tail_last_iteration),
      cmocka_unit_test(test_drain_stage_range),
      cmocka_unit_test(test_append_storage),
      cmocka_unit_test(test_no_admission_when_over),
      cmocka_unit_test(test_forced_ties),
      cmocka_unit_test(test_allowances),
      cmocka_unit_test(test_verify_gathers),
      cmocka_unit_test(test_scan_share),
      cmocka_unit_test(test_observe_works),
      cmocka_unit_test(test_branch),
      cmocka_unit_test(test_rebase),
      cmocka_unit_test(test_persist),
  };
  return cmocka_run_group_tests_name("decide", tests, NULL, NULL);
}
