/* SPDX-License-Identifier: MIT */
/* decide.h on the host against the device's decisions on the same random
 * loop states: on Vulkan the device runs decide.glsl, the GLSL twin of
 * decide.h (docs/decisions.md: why a twin), so any drift between the two
 * sources shows up here; on CUDA it runs decide.h compiled by nvcc, on the
 * CPU the same C as the host.
 *
 * Each case is one iteration of the device loops' decisions
 * (ws_dec_observe_works, ws_dec_decide, ws_dec_loop_next: t_twin.h) on a
 * random state with its own works, stage counts, bounds, counts, recount,
 * statistics and alignment list, all in one image whose addresses are
 * relocated to the device buffer or to a host copy. Every byte of the two
 * images must agree afterwards: the state (plan, error record, statistics,
 * progress), the works' records, the statistics arrays and the clients'
 * counters; and so must ws_dec_loop_next's answer (whether the loop goes
 * on). The random states reach every action and most error kinds (the
 * test checks that they did, so that it cannot pass by deciding nothing).
 */
#include "t_twin.h"
#include "ws_test.h"

#include "wavesched/detail/decide.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const ws_module_set t_twin_modules;

#define CASES 3000u
#define PER_CASE 4096u /* bytes of arrays one case may use at most */

typedef struct image {
  unsigned char *p;
  size_t size, used;
  size_t *ptrs; /* offsets of the address fields */
  size_t nptr, capptr;
} image;

static uint64_t rng_state;
static uint32_t rnd(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return (uint32_t)(rng_state >> 11);
}
static uint32_t below(uint32_t n) { return n ? rnd() % n : 0u; }
static bool chance(uint32_t percent) { return below(100) < percent; }

/* 8-aligned, zeroed bytes of the image: their offset */
static size_t take(image *m, size_t bytes) {
  const size_t off = m->used;
  m->used += (bytes + 7u) & ~(size_t)7u;
  WT_CHECK(m->used <= m->size, "test: image overflow");
  return off;
}

/* The address field at `field` points at offset `target`. */
static void point(image *m, size_t field, size_t target) {
  if (m->nptr == m->capptr) {
    m->capptr = m->capptr ? 2 * m->capptr : 1024;
    m->ptrs = realloc(m->ptrs, m->capptr * sizeof *m->ptrs);
    WT_CHECK(m->ptrs != NULL, "test: out of memory");
  }
  m->ptrs[m->nptr++] = field;
  memcpy(m->p + field, &(uint64_t){target}, 8);
}

static void relocate(image *m, unsigned char *bytes, uint64_t base, bool back) {
  for (size_t i = 0; i < m->nptr; ++i) {
    uint64_t v;
    memcpy(&v, bytes + m->ptrs[i], 8);
    v = back ? v - base : v + base;
    memcpy(bytes + m->ptrs[i], &v, 8);
  }
}

static uint32_t *u32_at(image *m, size_t off) { return (uint32_t *)(void *)(m->p + off); }
static uint64_t *u64_at(image *m, size_t off) { return (uint64_t *)(void *)(m->p + off); }

#define FIELD(type, member) (offsetof(type, member))

/* One random state at offset `so` (the states come first, 384 bytes apart). */
static void make_case(image *m, size_t so) {
  ws_dstate *d = (ws_dstate *)(void *)(m->p + so);
  const uint32_t K = 1u + below(8);
  const uint32_t R = 1u + below(200);
  d->K = K;
  d->N = below(300);
  d->A = d->N < R ? d->N : R;
  d->flags = (chance(75) ? WS_DEC_GREEDY : 0u) | (chance(40) ? WS_DEC_COMPACTION : 0u) |
             (chance(30) ? WS_DEC_PARTIAL : 0u) | (chance(30) ? WS_DEC_MATERIALIZED : 0u) |
             (chance(30) ? WS_DEC_PUBLISH : 0u) | (chance(25) ? WS_DEC_VERIFY : 0u) |
             (chance(25) ? WS_DEC_ALIGN : 0u) | (chance(25) ? WS_DEC_SCAN : 0u);
  if ((d->flags & WS_DEC_SCAN) && chance(50)) /* a scan share, 0..100 % */
    d->flags |= below(101) << WS_DEC_SCAN_SHARE_SHIFT;
  const uint32_t W = (d->flags & WS_DEC_GREEDY) && chance(60) ? 1u + below(3) : 0u;
  d->aux_count = W;
  d->iteration_limit = chance(30) ? 0u : 1u + below(50);
  d->iterations = below(60);
  d->refill_threshold = below(d->A + 1u);
  d->status = chance(95) ? WS_DEC_RUNNING : 1u + below(2);
  d->admitted = chance(30) ? d->N : below(d->N + 1u);
  d->high = below(d->A + 1u);
  d->gathered = below(2);
  d->expect_gather = below(20);
  d->interval = below(5);
  d->run_left = d->interval ? 1u + below(d->interval) : 0u;
  d->scan_total = below(1000);
  d->scan_queue = 1u + below(K);
  d->scan_count = below(d->scan_total + 1u);
  d->tail_frames = chance(30) ? 1u + below(d->A + 1u) : 0u;
  d->tail_limit = below(10);
  d->pass = below(100000);
  d->max_active = below(100);
  d->generated = below(1000);
  d->resumed = below(1000);
  d->scanned = below(1000);
  d->tail_items = below(100);
  d->best_count = below(30); /* an output of observe: garbage in, same garbage out */
  /* so are the other fields a phase writes before it reads them, and the
   * statistics a plan adds to: the two sources must reset, keep or add to
   * the same ones (a mutation campaign of decide.glsl, docs/reliability.md,
   * found resets that zeroed inputs could not tell apart) */
  d->best_work = below(4);
  d->best_stage = below(4);
  d->evaluate = below(2);
  d->sel = below(K + 1u);
  d->n = below(50);
  d->admit = below(50);
  d->aux_live = below(100);
  d->aux_dispatches = below(100);
  d->forced_drains = below(100);
  d->blocked = below(100);
  /* the plan: 16 words, each written by the phase that plans before it is
   * read (select resets the action first) */
  uint32_t *plan = (uint32_t *)(void *)&d->plan;
  for (size_t k = 0; k < sizeof d->plan / 4u; ++k)
    plan[k] = below(50);

  /* counts: queues holding at most A frames, now and then more */
  const size_t oc = take(m, 4u * WS_COUNTS_WORDS(K));
  uint32_t *h = u32_at(m, oc);
  uint32_t left = chance(5) ? d->A + 1u + below(5) : below(d->A + 1u);
  for (uint32_t j = 1; j <= K; ++j) {
    const uint32_t c = j == K ? left : below(left + 1u);
    h[j] = chance(15) ? 0u : c;
    left -= c;
  }
  h[0] = below(10);
  h[K + 1] = chance(4) ? 1u + below(3) : 0u;
  h[WS_COUNTS_LIMIT(K)] = chance(4) ? 1u + below(3) : 0u;
  h[WS_COUNTS_SCANNED(K)] = chance(90) ? d->scan_total : below(1000);
  /* now and then a scan share that the largest queue meets exactly (the
   * share test is inclusive: m * 100 >= share * high), which random
   * shares and ranges almost never give */
  uint32_t largest = 0;
  for (uint32_t j = 1; j <= K; ++j)
    largest = h[j] > largest ? h[j] : largest;
  if ((d->flags & WS_DEC_SCAN) && largest && 2u * largest <= d->A && chance(30)) {
    d->high = 2u * largest;
    d->flags = (d->flags & ((1u << WS_DEC_SCAN_SHARE_SHIFT) - 1u)) |
               (chance(50) ? 50u : 51u) << WS_DEC_SCAN_SHARE_SHIFT;
  }
  point(m, so + FIELD(ws_dstate, counts), oc);
  const size_t orc = take(m, 4u * (K + 2u));
  memcpy(u32_at(m, orc), h, 4u * (K + 2u));
  if (chance(8))
    u32_at(m, orc)[1u + below(K)] += 1u;
  point(m, so + FIELD(ws_dstate, recount), orc);
  const size_t og = take(m, 4);
  *u32_at(m, og) = chance(90) ? d->expect_gather : below(20);
  point(m, so + FIELD(ws_dstate, gather_count), og);
  const size_t oa = take(m, 4u * (K + 1u));
  for (uint32_t j = 0; j <= K; ++j)
    u32_at(m, oa)[j] = below(2);
  point(m, so + FIELD(ws_dstate, align), oa);
  const size_t on = take(m, 8u * 3u * (K + 1u));
  for (uint32_t k = 0; k < 3u * (K + 1u); ++k)
    u64_at(m, on)[k] = below(50);
  point(m, so + FIELD(ws_dstate, node_stats), on);

  /* the works and their arrays */
  const size_t ow = take(m, W * sizeof(ws_dec_work));
  point(m, so + FIELD(ws_dstate, works), ow);
  uint32_t stats = 0;
  for (uint32_t i = 0; i < W; ++i) {
    const size_t wo = ow + i * sizeof(ws_dec_work);
    ws_dec_work *w = (ws_dec_work *)(void *)(m->p + wo);
    const uint32_t S = 1u + below(4);
    w->capacity = 1u + below(128);
    w->stage_count = S;
    w->first_stat = stats;
    stats += S;
    const uint32_t live = chance(5) ? w->capacity + 1u + below(3) : below(w->capacity + 1u);
    w->live_is_free = below(2);
    w->last = below(4);
    w->last_stage = below(S);
    w->last_work = below(W);
    w->allowance = chance(85) ? live + below(3) : (live ? live - 1u : 0u);
    w->has_avail = chance(20);
    w->avail = below(w->capacity + 2u);
    w->live = below(50);      /* overwritten by the observation */
    w->obs_status = -1 - (int32_t)below(3); /* likewise */
    w->obs_late = below(2);
    w->client_err = below(5);
    w->compact_live = below(50);
    w->compact_scan = below(50);
    const size_t ob = take(m, 4u * (K + 1u));
    for (uint32_t j = 0; j <= K; ++j)
      u32_at(m, ob)[j] = below(4);
    point(m, wo + FIELD(ws_dec_work, bound), ob);
    point(m, wo + FIELD(ws_dec_work, q), take(m, 4u * S));
    const size_t ol = take(m, 4);
    *u32_at(m, ol) = w->live_is_free
                         ? (chance(5) ? (uint32_t)-(int32_t)(1u + below(3)) : w->capacity - live)
                         : live;
    point(m, wo + FIELD(ws_dec_work, src_live), ol);
    const size_t os = take(m, 4u * S);
    uint32_t rest = live;
    for (uint32_t s = 0; s < S; ++s) {
      const uint32_t c = s + 1u == S ? rest : below(rest + 1u);
      u32_at(m, os)[s] = c;
      rest -= c;
    }
    if (chance(5))
      u32_at(m, os)[below(S)] += 1u;
    point(m, wo + FIELD(ws_dec_work, src_stages), os);
    if (chance(50)) {
      const size_t oe = take(m, 4);
      *u32_at(m, oe) = chance(10) ? 1u + below(5) : 0u;
      point(m, wo + FIELD(ws_dec_work, src_error), oe);
    }
    if (chance(50)) {
      const size_t ocn = take(m, 8u * 2u * S);
      for (uint32_t k = 0; k < 2u * S; ++k)
        u64_at(m, ocn)[k] = below(100);
      point(m, wo + FIELD(ws_dec_work, counters), ocn);
    }
    if (chance(40)) {
      /* append storage (issue 18): an extent from L to C mostly, large
       * enough now and then to be compacted, outside [L, C] rarely */
      const size_t ox = take(m, 4);
      const uint32_t c = w->capacity;
      *u32_at(m, ox) = chance(5)    ? (chance(50) ? c + 1u + below(3) : (live ? live - 1u : 0u))
                       : chance(40) ? (live <= c ? c : live)
                                    : live + below(c >= live ? c - live + 1u : 1u);
      point(m, wo + FIELD(ws_dec_work, src_extent), ox);
      if (chance(60)) {
        const size_t osc = take(m, 8u * 3u);
        for (uint32_t k = 0; k < 3; ++k)
          u64_at(m, osc)[k] = below(40);
        point(m, wo + FIELD(ws_dec_work, storage_counters), osc);
      }
      w->compact_live = below(9); /* outputs: garbage in, same garbage out */
      w->compact_scan = below(9);
    }
  }
  const size_t ost = take(m, 8u * 3u * (stats ? stats : 1u));
  for (uint32_t k = 0; k < 3u * stats; ++k)
    u64_at(m, ost)[k] = below(50);
  point(m, so + FIELD(ws_dstate, aux_stats), ost);
}

/* What the host's results covered. */
typedef struct coverage {
  uint32_t action[6], done, kinds[20], compactions;
  uint32_t share_scans, share_gathers; /* whole-queue resumes under a scan share */
  uint32_t share_wrong;                /* ... that broke the share rule */
} coverage;

/* The scan-share rule (decide.h WS_DEC_SCAN_SHARE): a resume of a whole
 * queue in scan mode scans iff the queue holds at least the share of the
 * scanned range [0, high); otherwise it gathers. */
static void tally_share(coverage *c, const unsigned char *img, const ws_dstate *d) {
  const uint32_t share = WS_DEC_SCAN_SHARE(d->flags);
  if (d->status != WS_DEC_RUNNING || d->plan.action != WS_ACT_RESUME ||
      !(d->flags & WS_DEC_SCAN) || (d->flags & WS_DEC_MATERIALIZED) || share == 0)
    return;
  const uint32_t *h = (const uint32_t *)(const void *)(img + d->counts);
  const uint32_t m = d->plan.count;
  if (m != h[d->plan.queue])
    return;
  const bool dense = (uint64_t)m * 100u >= (uint64_t)share * d->high;
  const bool scans = d->plan.use_slots == 2u && !d->plan.gather;
  c->share_scans += scans;
  c->share_gathers += !scans;
  c->share_wrong += scans != dense || (!scans && !(d->plan.gather && d->plan.gather_scan == d->high));
}

static void tally(coverage *c, const unsigned char *img) {
  for (uint32_t i = 0; i < CASES; ++i) {
    const ws_dstate *d = (const ws_dstate *)(const void *)(img + (size_t)i * sizeof(ws_dstate));
    const ws_dec_work *w = (const ws_dec_work *)(const void *)(img + d->works);
    for (uint32_t k = 0; k < d->aux_count; ++k)
      c->compactions += w[k].compact_scan > w[k].compact_live;
    if (d->status == WS_DEC_ERROR && d->err.kind < 20)
      c->kinds[d->err.kind] += 1;
    else if (d->status == WS_DEC_DONE)
      c->done += 1;
    else if (d->plan.action < 6)
      c->action[d->plan.action] += 1;
    tally_share(c, img, d);
  }
}

/* CASES random states, one after another, then their arrays (offsets,
 * relocated to where a copy lives) */
static void make_image(image *m, uint64_t seed) {
  memset(m, 0, sizeof *m);
  m->size = (size_t)CASES * (sizeof(ws_dstate) + PER_CASE);
  m->p = calloc(1, m->size);
  WT_CHECK(m->p != NULL, "test: out of memory");
  m->used = (size_t)CASES * sizeof(ws_dstate);
  rng_state = seed;
  for (uint32_t i = 0; i < CASES; ++i)
    make_case(m, (size_t)i * sizeof(ws_dstate));
}

static void run_round(uint32_t round, coverage *cov) {
  image m;
  make_image(&m, 0x9E3779B97F4A7C15ull ^ ((uint64_t)round << 32));

  /* the device: the image at the buffer's address */
  ws_buffer *buf = wt_buffer(m.used);
  const uint64_t dbase = ws_buffer_address(buf);
  unsigned char *dev_img = malloc(m.used);
  WT_CHECK(dev_img != NULL, "test: out of memory");
  memcpy(dev_img, m.p, m.used);
  relocate(&m, dev_img, dbase, false);
  WT_CHECK(ws_buffer_write(buf, 0, dev_img, m.used) == WS_OK, "upload: %s",
           ws_device_last_error(wt_dev));
  ws_kernel k;
  WT_CHECK(ws_kernel_find(wt_dev, &t_twin_modules, "t_twin", &k) == WS_OK, "t_twin: %s",
           ws_device_last_error(wt_dev));
  ws_buffer *again_buf = wt_buffer(4u * CASES);
  const t_twin_args a = {dbase, ws_buffer_address(again_buf), CASES, 0};
  WT_CHECK(ws_kernel_launch(&k, CASES, &a, sizeof a) == WS_OK, "launch: %s",
           ws_device_last_error(wt_dev));
  wt_read(buf, dev_img, m.used);
  static uint32_t dev_again[CASES];
  wt_read(again_buf, dev_again, sizeof dev_again);
  relocate(&m, dev_img, dbase, true);

  /* the host: decide.h on a copy at its own address */
  unsigned char *host_img = malloc(m.used);
  WT_CHECK(host_img != NULL, "test: out of memory");
  memcpy(host_img, m.p, m.used);
  const uint64_t hbase = (uint64_t)(uintptr_t)host_img;
  relocate(&m, host_img, hbase, false);
  for (uint32_t i = 0; i < CASES; ++i) {
    ws_dstate *d = (ws_dstate *)(void *)(host_img + (size_t)i * sizeof(ws_dstate));
    ws_dec_observe_works(d);
    ws_dec_decide(d);
    const uint32_t again = ws_dec_loop_next(d);
    /* whether the loop goes on: the end of the dispatch, of an error or of
     * the observation interval stops it */
    WT_CHECK(again == dev_again[i], "round %u, state %u: the loop goes on: host %u, device %u",
             round, i, again, dev_again[i]);
  }
  relocate(&m, host_img, hbase, true);

  for (size_t b = 0; b < m.used; ++b) {
    if (host_img[b] == dev_img[b])
      continue;
    const size_t states = (size_t)CASES * sizeof(ws_dstate);
    WT_CHECK(false,
             "round %u: the device's decisions differ from decide.h at byte %zu (%s, byte %zu): "
             "host 0x%02x, device 0x%02x",
             round, b, b < states ? "a state" : "a state's arrays",
             b < states ? b % sizeof(ws_dstate) : b - states, host_img[b], dev_img[b]);
  }
  tally(cov, host_img);
  free(dev_img);
  free(host_img);
  free(m.p);
  free(m.ptrs);
}

static void test_twin(void **state) {
  (void)state;
  coverage cov;
  memset(&cov, 0, sizeof cov);
  for (uint32_t round = 0; round < 4; ++round)
    run_round(round, &cov);
  /* the random states must reach what the decisions can do */
  static const char *const names[6] = {"none", "refill", "resume", "resume_all", "stage", "tail"};
  for (uint32_t a = 1; a < 6; ++a)
    WT_CHECK(cov.action[a] > 0, "no random state planned %s", names[a]);
  WT_CHECK(cov.done > 0, "no random state was done");
  uint32_t kinds = 0;
  for (uint32_t e = 1; e < 20; ++e)
    kinds += cov.kinds[e] > 0;
  printf("decide twin: %u states; actions refill %u resume %u resume_all %u stage %u tail %u; "
         "done %u; %u error kinds; %u append compactions\n",
         4 * CASES, cov.action[1], cov.action[2], cov.action[3], cov.action[4], cov.action[5],
         cov.done, kinds, cov.compactions);
  WT_CHECK(kinds >= 15, "the random states reached only %u of the 19 error kinds", kinds);
  printf("decide twin: whole-queue resumes under a scan share: %u scanned, %u gathered\n",
         cov.share_scans, cov.share_gathers);
  WT_CHECK(cov.share_scans > 0 && cov.share_gathers > 0 && cov.share_wrong == 0,
           "scan share: %u scanned, %u gathered, %u against the rule (want both kinds, none against)",
           cov.share_scans, cov.share_gathers, cov.share_wrong);
  WT_CHECK(cov.kinds[WS_DERR_EXTENT] > 0 && cov.compactions > 0,
           "the random states reached no append-storage error (%u) or compaction (%u)",
           cov.kinds[WS_DERR_EXTENT], cov.compactions);
}

/* ---- the persistent loop's form of the same decisions (host only) ----
 * The CUDA persistent kernel (kernel.h co_ws_persist_gpu) decides on a copy
 * of the state moved elsewhere (ws_dec_rebase) through
 * ws_dec_persist_decide, and either carries the plan out or leaves the
 * branch and ws_dec_loop_next's answer for the graph (decide.h). On the
 * same random states: the moved copy's decisions, moved back, must equal
 * decide.h's in place byte for byte, nothing may be written through the
 * original's addresses while the copy decides, and the words must say go
 * exactly for a resume in scan mode of at most max_frames frames when the
 * loop goes on, else hold the branch and the answer. */
static void persist_round(uint32_t round, uint32_t *go, uint32_t *handed) {
  image m;
  make_image(&m, 0xD1B54A32D192ED03ull ^ ((uint64_t)round << 32));
  unsigned char *ref = malloc(m.used), *orig = malloc(m.used), *moved = malloc(m.used);
  WT_CHECK(ref && orig && moved, "test: out of memory");
  const uint64_t rb = (uint64_t)(uintptr_t)ref, ob = (uint64_t)(uintptr_t)orig,
                 mb = (uint64_t)(uintptr_t)moved;
  memcpy(ref, m.p, m.used);
  relocate(&m, ref, rb, false);
  memcpy(orig, m.p, m.used);
  relocate(&m, orig, ob, false);
  memcpy(moved, orig, m.used); /* a byte copy: its addresses still name orig */
  for (uint32_t i = 0; i < CASES; ++i) {
    const size_t at = (size_t)i * sizeof(ws_dstate);
    ws_dstate *d = (ws_dstate *)(void *)(ref + at);
    ws_dec_observe_works(d);
    ws_dec_decide(d);
    const uint32_t b = ws_dec_branch(d, 0);
    const uint32_t again = ws_dec_loop_next(d);

    uint32_t words[WS_PERSIST_WORDS] = {7u, 0u, 7u, 7u};
    ws_dec_persist p;
    memset(&p, 0, sizeof p);
    p.state = ob + at;
    p.words = (uint64_t)(uintptr_t)words;
    p.size = (uint32_t)(m.used - at);
    p.max_frames = below(300);
    /* the buffer as the device loop lays it out: the state first, its
     * arrays after it (here every later byte of the image) */
    ws_dstate *c = (ws_dstate *)(void *)(moved + at);
    ws_dec_rebase(c, ob + at, mb + at, m.used - at);
    const uint32_t g = ws_dec_persist_decide(&p, c);
    ws_dec_rebase(c, mb + at, ob + at, m.used - at);

    const uint32_t want = again && d->plan.action == WS_ACT_RESUME && d->plan.use_slots == 2u &&
                          d->plan.count <= p.max_frames;
    WT_CHECK(g == want && words[WS_PERSIST_GO] == want,
             "round %u case %u: persistent decision go %u (word %u), expected %u (action %u, "
             "use_slots %u, count %u, max_frames %u, again %u)",
             round, i, g, words[WS_PERSIST_GO], want, d->plan.action, d->plan.use_slots,
             d->plan.count, p.max_frames, again);
    if (!want)
      WT_CHECK(words[WS_PERSIST_PRE] == 1u && words[WS_PERSIST_BRANCH] == b &&
                   words[WS_PERSIST_MORE] == again,
               "round %u case %u: handed over pre %u branch %u more %u, expected 1 %u %u", round,
               i, words[WS_PERSIST_PRE], words[WS_PERSIST_BRANCH], words[WS_PERSIST_MORE], b,
               again);
    *go += want;
    *handed += !want;
  }
  relocate(&m, ref, rb, true);
  relocate(&m, moved, ob, true);
  relocate(&m, orig, ob, true);
  /* What the device loop's state buffer holds (so the copy moves it): the
   * states, their alignment lists, statistics and works with the works'
   * bounds and stage counts. The rest (counts, recount, the clients' words)
   * lives in other buffers, which the copy reaches at the original's
   * addresses: writes there land in `orig`. */
  bool *inbuf = calloc(m.used, sizeof *inbuf);
  WT_CHECK(inbuf != NULL, "test: out of memory");
  for (size_t i = 0; i < (size_t)CASES * sizeof(ws_dstate); ++i)
    inbuf[i] = true;
  for (uint32_t i = 0; i < CASES; ++i) {
    const ws_dstate *d = (const ws_dstate *)(const void *)(m.p + (size_t)i * sizeof(ws_dstate));
    const ws_dec_work *w = (const ws_dec_work *)(const void *)(m.p + d->works);
    uint32_t stats = 0;
    for (uint32_t k = 0; k < d->aux_count; ++k) {
      stats += w[k].stage_count;
      memset(inbuf + w[k].bound, 1, 4u * (d->K + 1u) * sizeof *inbuf);
      memset(inbuf + w[k].q, 1, 4u * w[k].stage_count * sizeof *inbuf);
    }
    memset(inbuf + d->works, 1, d->aux_count * sizeof(ws_dec_work) * sizeof *inbuf);
    memset(inbuf + d->align, 1, 4u * (d->K + 1u) * sizeof *inbuf);
    memset(inbuf + d->node_stats, 1, 24u * (d->K + 1u) * sizeof *inbuf);
    memset(inbuf + d->aux_stats, 1, 24u * stats * sizeof *inbuf);
  }
  for (size_t i = 0; i < m.used; ++i) {
    WT_CHECK(!inbuf[i] || orig[i] == m.p[i],
             "round %u: byte %zu of the original's state buffer changed while a moved copy "
             "decided (a field ws_dec_rebase does not move)",
             round, i);
    const unsigned char got = inbuf[i] ? moved[i] : orig[i];
    WT_CHECK(got == ref[i], "round %u: the moved copy's decisions differ at byte %zu (%s)", round,
             i, inbuf[i] ? "the state buffer" : "another buffer");
  }
  free(inbuf);
  free(ref);
  free(orig);
  free(moved);
  free(m.p);
  free(m.ptrs);
}

static void test_persist(void **state) {
  (void)state;
  uint32_t go = 0, handed = 0;
  for (uint32_t round = 0; round < 2; ++round)
    persist_round(round, &go, &handed);
  printf("persistent form: %u states, %u carried out, %u handed to the graph\n", 2 * CASES, go,
         handed);
  WT_CHECK(go > 0 && handed > 0, "the random states reached go %u, handed %u", go, handed);
}

int main(int argc, char **argv) {
  static const wt_need needs[] = {{&t_twin_modules, "t_twin"}};
  wt_init(argc, argv, needs, 1);
  wt_add("twin", test_twin, NULL);
  wt_add("persist", test_persist, NULL);
  return wt_run("decide_twin");
}
