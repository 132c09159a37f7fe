/* wavesched — the dispatch loop (SPEC §2, docs/loop.md).
 *
 * State at every iteration boundary (after the one synchronization):
 *   I1  every live frame sits in exactly one queue: tokens[slot] = j >= 1;
 *       free slots hold token 0;
 *   I2  counts[j] = |{slot < scan : tokens[slot] == j}| (materialized: by
 *       construction; incremental/fused: maintained, checked by verify mode);
 *   I3  live = Σ counts[j] <= A, admitted - live items have terminated;
 *   I4  compaction on: every live frame has slot < high (high <= A), and after
 *       a refill the live frames fill [0, high) densely;
 *   I5  every auxiliary work holds L <= C (aux.c).
 * Each iteration does exactly one of: one auxiliary stage, one refill, one
 * continuation launch (all-queues policy: every non-empty queue once).
 */
/* clock_gettime is POSIX, not C11 */
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <string.h>
#include <time.h>

#include "sched.h"

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static ws_status dev_fail(ws_scheduler *s, ws_status st, uint64_t it, const char *what) {
  return ws_sched_fail(s, st, "iteration %" PRIu64 ": %s failed: %s", it, what,
                       ws_device_last_error(s->dev));
}

/* Everything the queue operations need, with the per-call fields zeroed. */
static ws_queue_args queue_args(const ws_scheduler *s, uint32_t scan) {
  ws_queue_args q;
  memset(&q, 0, sizeof q);
  q.tokens = ws_buffer_address(s->tokens);
  q.ids = ws_buffer_address(s->ids);
  q.counts = ws_buffer_address(s->counts);
  q.slots = ws_buffer_address(s->slots);
  q.offsets = ws_buffer_address(s->offsets);
  q.scratch = ws_buffer_address(s->scratch);
  q.counter = ws_buffer_address(s->counter);
  q.scan = scan;
  q.queue_count = s->K;
  q.frames = ws_buffer_address(s->frames);
  q.field_offsets = ws_buffer_address(s->field_offsets);
  q.host_field_offsets = s->soa_offsets;
  q.field_sizes = s->field_sizes;
  q.field_count = s->coro.frame->field_count;
  q.frame_size = s->coro.frame->size;
  q.layout = s->cfg.layout;
  q.capacity = s->R;
  /* the gather count is read back only to verify it */
  q.flags = s->verify_on ? 0u : WS_QUEUE_COUNTER_UNUSED;
  return q;
}

static ws_launch launch_record(const ws_scheduler *s) {
  ws_launch l;
  memset(&l, 0, sizeof l);
  l.args = ws_buffer_address(s->args);
  l.frames = ws_buffer_address(s->frames);
  l.field_offsets = ws_buffer_address(s->field_offsets);
  l.ids = ws_buffer_address(s->ids);
  l.tokens = ws_buffer_address(s->tokens);
  l.counts = ws_buffer_address(s->counts);
  l.capacity = s->R;
  l.layout = s->cfg.layout;
  l.flags = s->cfg.fused ? WS_LAUNCH_FUSED : 0u;
  l.continuation_count = s->K;
  return l;
}

/* Launches `n` frames of continuation `src` (0: the entry for new items
 * first_id..), from the slot list or the dense range at slot_base, then
 * publishes the counts when accounting is incremental but not fused. */
static ws_status launch_frames(ws_scheduler *s, uint64_t it, uint32_t src, uint32_t n,
                               uint64_t slots, uint32_t slot_base, uint32_t first_id) {
  ws_launch l = launch_record(s);
  l.src = src;
  l.count = n;
  l.slots = slots;
  l.slot_base = slot_base;
  l.first_id = first_id;
  ws_status st = s->dev->ops->launch(s->dev, s->entry, false, n, &l, sizeof l, s->block);
  if (st != WS_OK)
    return dev_fail(s, st, it, src ? "continuation launch" : "entry launch");
  if (s->cfg.incremental && !s->cfg.fused) {
    ws_queue_args q = queue_args(s, 0);
    q.slots = slots;
    q.slot_base = slot_base;
    q.n = n;
    q.src = src;
    st = s->dev->ops->queue_publish(s->dev, &q);
    if (st != WS_OK)
      return dev_fail(s, st, it, "publish");
  }
  ws_node_stats *ns = &s->node_stats[src];
  ns->dispatch_count += 1;
  ns->executed_count += n;
  return WS_OK;
}

/* Loop state of one dispatch. */
typedef struct loop_state {
  uint32_t N, A;
  uint32_t admitted; /* next logical id */
  uint32_t high;     /* scan bound: A without compaction */
  uint32_t live;
  uint64_t live64; /* Σ counts before the I3 check; may exceed A if corrupted */
  uint64_t it;
  uint32_t expect_gather; /* verify: size the last selected gather must have had */
  bool gathered;
  const uint32_t *h; /* host view of counts[0..K+1] */
} loop_state;

static uint32_t rb_words(const ws_scheduler *s) { return s->K + 2; }

/* Step 1: enqueue the readbacks, synchronize once, read the counts. */
static ws_status observe(ws_scheduler *s, loop_state *ls) {
  ws_device *dev = s->dev;
  const uint32_t words = rb_words(s);
  ws_status st = ws_aux_enqueue_readbacks(s, ls->it);
  if (st != WS_OK)
    return st;
  ws_queue_args q = queue_args(s, ls->high);
  if (!s->cfg.incremental) {
    if ((st = dev->ops->queue_count(dev, &q)) != WS_OK ||
        (st = dev->ops->queue_gather_all(dev, &q)) != WS_OK)
      return dev_fail(s, st, ls->it, "materialized count and gather");
  }
  if (s->verify_on) {
    q.counts = ws_buffer_address(s->verify_counts);
    if ((st = dev->ops->queue_count(dev, &q)) != WS_OK)
      return dev_fail(s, st, ls->it, "verification recount");
    if ((st = ws_readback_enqueue(s->rb, words * 4, s->verify_counts, 0, words * 4)) != WS_OK ||
        (st = ws_readback_enqueue(s->rb, 2 * words * 4, s->counter, 0, 4)) != WS_OK)
      return dev_fail(s, st, ls->it, "verification readback");
  }
  if ((st = ws_readback_enqueue(s->rb, 0, s->counts, 0, words * 4)) != WS_OK)
    return dev_fail(s, st, ls->it, "count readback");
  if ((st = dev->ops->synchronize(dev)) != WS_OK)
    return dev_fail(s, st, ls->it, "synchronize");
  s->dstats.scanned_slot_count += s->cfg.incremental ? 0u : ls->high;

  uint32_t *h = (uint32_t *)ws_readback_data(s->rb);
  if (s->corrupt_pending && s->cfg.incremental) {
    /* Test hook: damage the maintained device count itself, as a broken
     * publish kernel would. */
    s->corrupt_pending = false;
    h[s->corrupt_queue] += (uint32_t)s->corrupt_delta;
    if ((st = dev->ops->write(dev, ws_buffer_address(s->counts) + 4u * s->corrupt_queue,
                              &h[s->corrupt_queue], 4)) != WS_OK)
      return dev_fail(s, st, ls->it, "test corruption");
  }
  ls->h = h;
  if (h[s->K + 1] != 0)
    return ws_sched_fail(s, WS_EPROTO_INTERNAL,
                         "iteration %" PRIu64 ": %u frame(s) returned a continuation index "
                         "outside 1..%u; they were terminated",
                         ls->it, h[s->K + 1], s->K);
  uint64_t live = 0;
  for (uint32_t j = 1; j <= s->K; ++j)
    live += h[j];
  ls->live64 = live;
  ls->live = live > ls->A ? ls->A : (uint32_t)live;
  return WS_OK;
}

/* I3: counts can never claim more frames than are active. Checked after
 * verification, which names the damaged queue when it is on. */
static ws_status check_live(ws_scheduler *s, const loop_state *ls) {
  if (ls->live64 > ls->A)
    return ws_sched_fail(s, WS_EPROTO_INTERNAL,
                         "iteration %" PRIu64 ": queue counts sum to %" PRIu64
                         ", more than the %u active slots",
                         ls->it, ls->live64, ls->A);
  return WS_OK;
}

/* SPEC §5: independent recount, gather size, and (materialized) that the
 * gathered lists are a permutation of the live slots grouped by token. */
static ws_status verify(ws_scheduler *s, loop_state *ls) {
  const uint32_t words = rb_words(s);
  const uint32_t *recount = ls->h + words;
  for (uint32_t j = 1; j <= s->K; ++j)
    if (recount[j] != ls->h[j])
      return ws_sched_fail(s, WS_EVERIFY,
                           "iteration %" PRIu64 ": queue '%s' (%u): maintained count %u, "
                           "tokens say %u",
                           ls->it, s->coro.continuation_names[j - 1], j, ls->h[j], recount[j]);
  if (ls->gathered && ls->h[2 * words] != ls->expect_gather)
    return ws_sched_fail(s, WS_EVERIFY,
                         "iteration %" PRIu64 ": the last gather returned %u slots, expected %u",
                         ls->it, ls->h[2 * words], ls->expect_gather);
  ls->gathered = false;
  if (!s->cfg.incremental && ls->live) {
    /* verification's own synchronization, into memory reserved at creation */
    ws_status st;
    if ((st = ws_readback_enqueue(s->verify_rb, 0, s->slots, 0, (size_t)ls->live * 4)) != WS_OK ||
        (st = ws_readback_enqueue(s->verify_rb, (size_t)s->R * 4, s->tokens, 0,
                                  (size_t)ls->high * 4)) != WS_OK ||
        (st = s->dev->ops->synchronize(s->dev)) != WS_OK)
      return dev_fail(s, st, ls->it, "verification read");
    uint32_t *verify_slots = s->verify_rb->ptr, *verify_tokens = verify_slots + s->R;
    uint32_t pos = 0;
    for (uint32_t j = 1; j <= s->K; ++j) {
      for (uint32_t k = 0; k < ls->h[j]; ++k, ++pos) {
        uint32_t slot = verify_slots[pos];
        if (slot >= ls->high || verify_tokens[slot] != j)
          return ws_sched_fail(s, WS_EVERIFY,
                               "iteration %" PRIu64 ": gathered entry %u of queue %u is slot %u "
                               "with token %u",
                               ls->it, k, j, slot, slot < ls->high ? verify_tokens[slot] : 0u);
        /* mark seen: a repeated slot then fails the token test */
        verify_tokens[slot] = UINT32_MAX;
      }
    }
  }
  return WS_OK;
}

static ws_status refill(ws_scheduler *s, loop_state *ls) {
  ws_device *dev = s->dev;
  ws_status st;
  const uint32_t g0 = ls->N - ls->admitted, free_slots = ls->A - ls->live;
  const uint32_t g = g0 < free_slots ? g0 : free_slots;
  uint64_t slots = 0;
  uint32_t base = 0;
  if (s->cfg.compaction) {
    if (ls->high > ls->live) {
      ws_queue_args q = queue_args(s, ls->high);
      q.n = ls->live;
      if ((st = dev->ops->queue_compact(dev, &q)) != WS_OK)
        return dev_fail(s, st, ls->it, "compaction");
    }
    base = ls->live;
    ls->high = ls->live + g;
  } else {
    ws_queue_args q = queue_args(s, ls->A);
    q.token = 0;
    if ((st = dev->ops->queue_gather(dev, &q)) != WS_OK)
      return dev_fail(s, st, ls->it, "free-slot gather");
    slots = ws_buffer_address(s->slots);
    ls->gathered = true;
    ls->expect_gather = free_slots;
  }
  st = launch_frames(s, ls->it, 0, g, slots, base, ls->admitted);
  if (st != WS_OK)
    return st;
  ls->admitted += g;
  s->dstats.generated_count += g;
  return WS_OK;
}

/* Slot list of queue j: materialized lists are laid out queue by queue. */
static uint64_t queue_slots(ws_scheduler *s, loop_state *ls, uint32_t j, ws_status *st) {
  *st = WS_OK;
  if (!s->cfg.incremental) {
    uint64_t off = 0;
    for (uint32_t t = 1; t < j; ++t)
      off += ls->h[t];
    return ws_buffer_address(s->slots) + off * 4;
  }
  ws_queue_args q = queue_args(s, ls->high);
  q.token = j;
  *st = s->dev->ops->queue_gather(s->dev, &q);
  if (*st != WS_OK)
    *st = dev_fail(s, *st, ls->it, "queue gather");
  s->dstats.scanned_slot_count += ls->high;
  ls->gathered = true;
  ls->expect_gather = ls->h[j];
  return ws_buffer_address(s->slots);
}

static ws_status resume(ws_scheduler *s, loop_state *ls, uint32_t j, uint32_t m) {
  ws_status st = ws_aux_before_launch(s, ls->it, j, m);
  if (st != WS_OK)
    return st;
  uint64_t slots = queue_slots(s, ls, j, &st);
  if (st != WS_OK)
    return st;
  st = launch_frames(s, ls->it, j, m, slots, 0, 0);
  s->dstats.resumed_count += m;
  return st;
}

static bool refill_wanted(const ws_scheduler *s, const loop_state *ls, uint32_t selected) {
  if (ls->admitted >= ls->N)
    return false;
  uint32_t thr = s->cfg.refill_threshold == 0 ? ls->A / 2
                 : s->cfg.refill_threshold < ls->A ? s->cfg.refill_threshold
                                                   : ls->A;
  if (!(ls->live == 0 || ls->live < thr))
    return false;
  return s->cfg.refill_align_count == 0 || ls->live == 0 || s->align[selected];
}

/* Statistics only: ends the device timer with one more synchronization after
 * the last boundary, never inside the loop. */
static ws_status read_timer(ws_scheduler *s, uint64_t it) {
  ws_status st;
  if ((st = s->dev->ops->timer_mark(s->dev, true)) != WS_OK ||
      (st = s->dev->ops->synchronize(s->dev)) != WS_OK ||
      (st = s->dev->ops->timer_elapsed(s->dev, &s->dstats.device_ms)) != WS_OK)
    return dev_fail(s, st, it, "device timer");
  return WS_OK;
}

static ws_status run_megakernel(ws_scheduler *s, uint32_t N) {
  ws_launch l = launch_record(s);
  l.count = N;
  l.flags |= WS_LAUNCH_MEGA;
  ws_status st;
  if ((st = ws_buffer_fill_u32(s->counts, 0, 0, s->K + 2)) != WS_OK)
    return dev_fail(s, st, 0, "count reset");
  if ((st = s->dev->ops->launch(s->dev, s->entry, true, N, &l, sizeof l, s->block)) != WS_OK)
    return dev_fail(s, st, 0, "megakernel launch");
  if ((st = ws_readback_enqueue(s->rb, 0, s->counts, 0, rb_words(s) * 4)) != WS_OK ||
      (st = s->dev->ops->synchronize(s->dev)) != WS_OK)
    return dev_fail(s, st, 0, "megakernel readback");
  const uint32_t *h = ws_readback_data(s->rb);
  if (h[s->K + 1] != 0)
    return ws_sched_fail(s, WS_EPROTO_INTERNAL,
                         "megakernel: %u frame(s) returned a continuation index outside 1..%u",
                         h[s->K + 1], s->K);
  s->dstats.iteration_count = 1;
  s->dstats.generated_count = N;
  s->node_stats[0].dispatch_count = 1;
  s->node_stats[0].executed_count = N;
  return WS_OK;
}

static ws_status one_iteration(ws_scheduler *s, loop_state *ls, bool *done) {
  ws_status st = observe(s, ls);
  if (st != WS_OK)
    return st;
  if (s->verify_on && (st = verify(s, ls)) != WS_OK)
    return st;
  if ((st = check_live(s, ls)) != WS_OK)
    return st;
  const uint32_t *h = ls->h;
  uint64_t aux_live;
  uint32_t bw, bs, bc;
  if ((st = ws_aux_observe(s, ls->it, &aux_live, &bw, &bs, &bc)) != WS_OK)
    return st;
  for (uint32_t j = 1; j <= s->K; ++j)
    if (h[j] > s->node_stats[j].peak_queued_count)
      s->node_stats[j].peak_queued_count = h[j];
  if (ls->live > s->dstats.max_active_count)
    s->dstats.max_active_count = ls->live;

  if (ls->admitted == ls->N && ls->live == 0 && aux_live == 0) {
    *done = true;
    return WS_OK;
  }
  /* The limit counts working iterations: a dispatch that needs exactly
   * `limit` of them succeeds. */
  if (s->cfg.iteration_limit && s->dstats.iteration_count >= s->cfg.iteration_limit)
    return ws_sched_fail(s, WS_EITERATION_LIMIT,
                         "iteration limit %" PRIu64 " reached: %u of %u items admitted, %u live "
                         "frames, %" PRIu64 " live auxiliary items",
                         s->cfg.iteration_limit, ls->admitted, ls->N, ls->live, aux_live);
  s->dstats.iteration_count += 1;

  if (!s->cfg.largest_first) {
    /* all-queues policy (materialized, no auxiliary work) */
    if (refill_wanted(s, ls, 0))
      return refill(s, ls);
    for (uint32_t j = 1; j <= s->K; ++j)
      if (h[j] && (st = resume(s, ls, j, h[j])) != WS_OK)
        return st;
    return WS_OK;
  }

  /* select: the largest queue, ties to the lowest index */
  uint32_t sel = 0, n = 0;
  for (uint32_t j = 1; j <= s->K; ++j) {
    if (h[j] > n) {
      n = h[j];
      sel = j;
    }
  }
  ws_aux_decision d = {0};
  d.admit = n;
  if (s->aux_count) {
    if ((st = ws_aux_decide(s, ls->it, sel, n, bw, bs, bc, &d)) != WS_OK)
      return st;
    if (d.forced || d.admit < n)
      s->dstats.blocked_count += 1;
    if (d.run_stage)
      return ws_aux_run_stage(s, ls->it, &d);
  }
  if (refill_wanted(s, ls, sel)) {
    ws_aux_before_refill(s);
    return refill(s, ls);
  }
  if (n == 0)
    return ws_sched_fail(s, WS_ESTALL,
                         "iteration %" PRIu64 ": nothing can run: %u of %u items admitted, %u "
                         "live frames, %" PRIu64 " auxiliary items",
                         ls->it, ls->admitted, ls->N, ls->live, aux_live);
  return resume(s, ls, sel, d.admit);
}

ws_status ws_scheduler_dispatch(ws_scheduler *s, uint32_t N, const void *args, size_t args_size) {
  if (!s)
    return WS_EINVAL;
  if (args_size != s->coro.args_size || (args_size && !args))
    return ws_sched_fail(s, WS_EINVAL,
                         "ws_scheduler_dispatch: argument block of %zu bytes, coroutine '%s' "
                         "takes %u",
                         args_size, s->coro.name, s->coro.args_size);
  const double t0 = now_ms();
  memset(&s->dstats, 0, sizeof s->dstats);
  for (uint32_t j = 0; j <= s->K; ++j) {
    s->node_stats[j].dispatch_count = 0;
    s->node_stats[j].executed_count = 0;
    s->node_stats[j].peak_queued_count = 0;
  }
  s->error[0] = '\0';
  s->dev->error[0] = '\0';
  s->dstats.device_ms = -1.0;
  ws_status st;
  if (args_size && (st = ws_buffer_write(s->args, 0, args, args_size)) != WS_OK)
    return dev_fail(s, st, 0, "argument upload");

  loop_state ls;
  memset(&ls, 0, sizeof ls);
  ls.N = N;
  ls.A = N < s->R ? N : s->R;
  const bool timed = s->stats_on && s->dev->ops->timer_mark && s->dev->ops->timer_elapsed;
  if (s->cfg.kind == WS_SCHEDULER_MEGAKERNEL) {
    if (N && timed && (st = s->dev->ops->timer_mark(s->dev, false)) != WS_OK)
      return dev_fail(s, st, 0, "device timer");
    st = N ? run_megakernel(s, N) : WS_OK;
    if (st == WS_OK && N && timed)
      st = read_timer(s, 1);
    s->dstats.elapsed_ms = now_ms() - t0;
    return st;
  }
  ls.high = s->cfg.compaction ? 0 : ls.A;
  /* SPEC §2.1: registration closes with the first dispatch, even one of 0 items */
  s->closed = true;
  if (ls.A == 0)
    return WS_OK;
  if ((st = ws_buffer_fill_u32(s->tokens, 0, 0, ls.A)) != WS_OK ||
      (st = ws_buffer_fill_u32(s->counts, 0, 0, s->K + 2)) != WS_OK)
    return dev_fail(s, st, 0, "prologue");
  if ((st = ws_aux_reset_all(s)) != WS_OK)
    return st;
  if (timed && (st = s->dev->ops->timer_mark(s->dev, false)) != WS_OK)
    return dev_fail(s, st, 0, "device timer");

  bool done = false;
  while (!done) {
    if ((st = one_iteration(s, &ls, &done)) != WS_OK)
      return st;
    ++ls.it;
  }
  if (timed && (st = read_timer(s, ls.it)) != WS_OK)
    return st;
  s->dstats.elapsed_ms = now_ms() - t0;
  return WS_OK;
}
