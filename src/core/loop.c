/* SPDX-License-Identifier: MIT */
/* wavesched — the host loop (SPEC §2-3, docs/loop.md).
 *
 * One iteration: observe (enqueue the readbacks, synchronize once, ask the
 * auxiliary clients), decide (decide.h: the same code as the device loop),
 * run the plan. State at every iteration boundary, after the one
 * synchronization (checked in verification mode by check_boundary):
 *   I1  every live frame sits in exactly one queue: tokens[slot] = j >= 1;
 *       free slots hold token 0;
 *   I2  counts[j] = |{slot < scan : tokens[slot] == j}| (materialized: by
 *       construction; incremental/fused: maintained, checked by verification);
 *   I3  live = Σ counts[j] <= A, and admitted - live items have terminated;
 *   I4  compaction on: every live frame has slot < high (high <= A), and
 *       after a refill the live frames fill [0, high) densely;
 *   I5  every auxiliary work holds L <= C (decide.h, ws_dec_observe).
 * Each iteration does exactly one of: one auxiliary stage, one refill, one
 * continuation launch (all-queues policy: every non-empty queue once), or
 * the tail (every live frame to its end: no frame is live after it).
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

static uint32_t count_words(const ws_scheduler *s) { return WS_COUNTS_WORDS(s->K); }

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

/* ---- observation ---- */

/* SPEC §2.2 step 1: enqueue the readbacks, synchronize once, then ask the
 * auxiliary clients for their counts. */
static ws_status observe(ws_scheduler *s) {
  ws_device *dev = s->dev;
  ws_dstate *d = &s->d;
  const uint32_t words = count_words(s);
  ws_status st = ws_aux_enqueue_readbacks(s, d->pass);
  if (st != WS_OK)
    return st;
  ws_queue_args q = queue_args(s, d->high);
  if (d->flags & WS_DEC_MATERIALIZED) {
    if ((st = dev->ops->queue_count(dev, &q)) != WS_OK ||
        (st = dev->ops->queue_gather_all(dev, &q)) != WS_OK)
      return dev_fail(s, st, d->pass, "materialized count and gather");
  }
  if (s->verify_on) {
    q.counts = ws_buffer_address(s->verify_counts);
    if ((st = dev->ops->queue_count(dev, &q)) != WS_OK)
      return dev_fail(s, st, d->pass, "verification recount");
    if ((st = ws_readback_enqueue(s->rb, words * 4, s->verify_counts, 0, words * 4)) != WS_OK ||
        (st = ws_readback_enqueue(s->rb, 2 * words * 4, s->counter, 0, 4)) != WS_OK)
      return dev_fail(s, st, d->pass, "verification readback");
  }
  if ((st = ws_readback_enqueue(s->rb, 0, s->counts, 0, words * 4)) != WS_OK)
    return dev_fail(s, st, d->pass, "count readback");
  if ((st = dev->ops->synchronize(dev)) != WS_OK)
    return dev_fail(s, st, d->pass, "synchronize");
  s->host_syncs += 1;
  ws_aux_observe_host(s);
  return WS_OK;
}

/* Verification mode (SPEC §5), what the decisions cannot see from the
 * counts alone: I1 and I4 from the tokens, and (materialized) that the
 * sorted slot lists are a permutation of the live slots grouped by queue.
 * Runs after ws_dec_observe, which compared every count with the recount. */
/* ws_testing_corrupt_token: at the first token check after a launch (pass
 * 1 in either loop), the token is written as a broken kernel would leave it. */
static ws_status corrupt_token_now(ws_scheduler *s, uint64_t pass) {
  if (!s->corrupt_token_armed || pass == 0)
    return WS_OK;
  s->corrupt_token_armed = false;
  return ws_buffer_write(s->tokens, 4u * (size_t)s->corrupt_slot, &s->corrupt_token, 4);
}

/* The token array read back at a boundary: I1 no token outside 0..K; I4
 * with compaction nothing lives at or above `high` (the recount over
 * [0, high) already matched the counts). The host loop's check_boundary and
 * the device loop's observations in verification mode. */
ws_status ws_loop_check_tokens(ws_scheduler *s, uint64_t pass, uint32_t high, uint32_t *tokens) {
  const ws_dstate *d = &s->d;
  for (uint32_t slot = 0; slot < d->A; ++slot) {
    const bool above = (d->flags & WS_DEC_COMPACTION) && slot >= high;
    if (tokens[slot] > s->K || (above && tokens[slot] != 0))
      return ws_sched_fail(s, WS_EVERIFY,
                           "iteration %" PRIu64 ": slot %u holds token %u (%s)", pass, slot,
                           tokens[slot],
                           tokens[slot] > s->K ? "no continuation has that index"
                                               : "a live frame above the compacted prefix");
  }
  return WS_OK;
}

/* Reads the tokens back into the verification readback (after `slots`
 * words there, which the host loop fills with the sorted lists). */
ws_status ws_loop_read_tokens(ws_scheduler *s, uint64_t pass, uint32_t live_lists,
                              uint32_t **tokens) {
  ws_status st;
  if ((st = corrupt_token_now(s, pass)) != WS_OK ||
      (st = ws_readback_enqueue(s->verify_rb, (size_t)s->R * 4, s->tokens, 0,
                                (size_t)s->d.A * 4)) != WS_OK ||
      (live_lists &&
       (st = ws_readback_enqueue(s->verify_rb, 0, s->slots, 0, (size_t)live_lists * 4)) !=
           WS_OK) ||
      (st = s->dev->ops->synchronize(s->dev)) != WS_OK)
    return dev_fail(s, st, pass, "verification read");
  *tokens = (uint32_t *)s->verify_rb->ptr + s->R;
  return WS_OK;
}

static ws_status check_boundary(ws_scheduler *s) {
  ws_dstate *d = &s->d;
  const uint32_t *h = ws_dec_u32(d->counts);
  const bool lists = (d->flags & WS_DEC_MATERIALIZED) && d->live;
  uint32_t *tokens;
  ws_status st;
  if ((st = ws_loop_read_tokens(s, d->pass, lists ? d->live : 0u, &tokens)) != WS_OK ||
      (st = ws_loop_check_tokens(s, d->pass, d->high, tokens)) != WS_OK)
    return st;
  uint32_t *slots = s->verify_rb->ptr;
  if (!lists)
    return WS_OK;
  if (s->corrupt_list_armed && s->corrupt_entry < d->live) {
    s->corrupt_list_armed = false;
    slots[s->corrupt_entry] = slots[0];
  }
  uint32_t pos = 0;
  for (uint32_t j = 1; j <= s->K; ++j) {
    for (uint32_t k = 0; k < h[j]; ++k, ++pos) {
      const uint32_t slot = slots[pos];
      if (slot >= d->high || tokens[slot] != j)
        return ws_sched_fail(s, WS_EVERIFY,
                             "iteration %" PRIu64 ": gathered entry %u of queue %u is slot %u "
                             "with token %u",
                             d->pass, k, j, slot, slot < d->high ? tokens[slot] : 0u);
      /* mark seen: a repeated slot then fails the token test */
      tokens[slot] = UINT32_MAX;
    }
  }
  return WS_OK;
}

/* ---- running the plan ---- */

/* The launch record's fields every launch of this dispatch shares. */
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
  l.flags = s->cfg.accounting == WS_ACCOUNTING_FUSED ? WS_LAUNCH_FUSED : 0u;
  l.continuation_count = s->K;
  return l;
}

/* Launches continuation `src` (0: the entry) over the plan's frames, then
 * publishes the counts when accounting is incremental but not fused. With
 * `scan` the launch selects the frames of [0, slot_base) itself. */
static ws_status launch(ws_scheduler *s, uint32_t src, uint32_t n, uint64_t slots,
                        uint32_t slot_base, uint32_t first_id, bool scan) {
  ws_dstate *d = &s->d;
  ws_launch l = launch_record(s);
  l.flags |= scan ? WS_LAUNCH_SCAN : 0u;
  l.src = src;
  l.count = n;
  l.slots = slots;
  l.slot_base = slot_base;
  l.first_id = first_id;
  ws_status st = s->dev->ops->launch(s->dev, s->entry, WS_FORM_STEP, n, &l, sizeof l, s->block);
  if (st != WS_OK)
    return dev_fail(s, st, d->pass, src ? "continuation launch" : "entry launch");
  if (d->flags & WS_DEC_PUBLISH) {
    ws_queue_args q = queue_args(s, 0);
    q.slots = slots;
    q.slot_base = slot_base;
    q.n = n;
    q.src = src;
    if ((st = s->dev->ops->queue_publish(s->dev, &q)) != WS_OK)
      return dev_fail(s, st, d->pass, "publish");
  }
  return WS_OK;
}

/* The tail: every live frame below the plan's scan bound to its end, each
 * at most the plan's per-item limit (its first_id) of continuations. Its
 * kernel keeps the counts itself, whatever the accounting. */
static ws_status launch_tail(ws_scheduler *s, const ws_dec_plan *p) {
  ws_launch l = launch_record(s);
  l.slot_base = p->slot_base;
  l.limit = p->first_id;
  const ws_status st =
      s->dev->ops->launch(s->dev, s->entry, WS_FORM_TAIL, p->slot_base, &l, sizeof l, s->block);
  return st == WS_OK ? WS_OK : dev_fail(s, st, s->d.pass, "tail launch");
}

static ws_status run_plan(ws_scheduler *s) {
  ws_device *dev = s->dev;
  ws_dstate *d = &s->d;
  const ws_dec_plan *p = &d->plan;
  const uint64_t slots = ws_buffer_address(s->slots);
  ws_status st;
  if (p->action == WS_ACT_STAGE)
    return ws_aux_dispatch_stage(s, d->pass, p->work, p->stage);
  if (p->action == WS_ACT_TAIL)
    return launch_tail(s, p);
  if (p->action == WS_ACT_RESUME_ALL) {
    const uint32_t *h = ws_dec_u32(d->counts);
    uint32_t off = 0;
    for (uint32_t j = 1; j <= s->K; ++j) {
      if (h[j] && (st = launch(s, j, h[j], slots + 4u * off, 0, 0, false)) != WS_OK)
        return st;
      off += h[j];
    }
    return WS_OK;
  }
  if (p->action == WS_ACT_RESUME &&
      (st = ws_aux_prepare_producers(s, d->pass, p->queue, p->count)) != WS_OK)
    return st;
  if (p->compact) {
    ws_queue_args q = queue_args(s, p->compact_scan);
    q.n = p->compact_live;
    if ((st = dev->ops->queue_compact(dev, &q)) != WS_OK)
      return dev_fail(s, st, d->pass, "compaction");
  }
  if (p->gather) {
    ws_queue_args q = queue_args(s, p->gather_scan);
    q.token = p->gather_token;
    if ((st = dev->ops->queue_gather(dev, &q)) != WS_OK)
      return dev_fail(s, st, d->pass, p->gather_token ? "queue gather" : "free-slot gather");
  }
  /* scan mode passes the slot list too: a stepped continuation's launch
   * keeps the frames it finds there (kernel.h) */
  return launch(s, p->queue, p->count, p->use_slots ? slots + 4u * p->slot_offset : 0,
                p->slot_base, p->first_id, p->use_slots == 2);
}

/* ---- one dispatch ---- */

static ws_status one_iteration(ws_scheduler *s) {
  ws_dstate *d = &s->d;
  ws_status st = observe(s);
  if (st != WS_OK)
    return st;
  ws_dec_observe(d);
  if (d->status == WS_DEC_RUNNING && s->verify_on && (st = check_boundary(s)) != WS_OK)
    return st;
  ws_dec_select(d);
  if (d->evaluate && (st = ws_aux_prepare_admission(s, d->pass, d->sel)) != WS_OK)
    return st;
  ws_dec_admit(d);
  if (d->status == WS_DEC_RUNNING && d->plan.action == WS_ACT_STAGE && d->plan.forced) {
    if ((st = ws_aux_admission_stage(s, d->pass)) != WS_OK)
      return st;
    ws_dec_check_drain(d);
  }
  ws_dec_commit(d);
  if (d->status == WS_DEC_ERROR)
    return ws_loop_error(s, &d->err);
  if (d->status == WS_DEC_DONE)
    return WS_OK;
  return run_plan(s);
}

/* The decisions' view of this scheduler's configuration (both loops) and,
 * for the host loop, of its memory: the device loop replaces the addresses
 * with device ones (loop_device.c). */
void ws_loop_init_state(ws_scheduler *s, ws_dstate *d, uint32_t N) {
  memset(d, 0, sizeof *d);
  d->N = N;
  d->A = N < s->R ? N : s->R;
  d->K = s->K;
  d->aux_count = s->aux_count;
  const uint64_t limit = s->cfg.iteration_limit;
  d->iteration_limit = limit == 0                         ? WS_ITERATION_LIMIT_DEFAULT
                       : limit == WS_ITERATION_UNLIMITED ? 0
                                                         : limit;
  const uint32_t thr = s->cfg.refill_threshold;
  d->refill_threshold = thr == 0 ? d->A / 2 : thr < d->A ? thr : d->A;
  d->flags = (s->cfg.largest_first ? WS_DEC_GREEDY : 0u) |
             (s->cfg.compaction ? WS_DEC_COMPACTION : 0u) |
             (s->cfg.partial_admission ? WS_DEC_PARTIAL : 0u) |
             (s->cfg.accounting == WS_ACCOUNTING_MATERIALIZED ? WS_DEC_MATERIALIZED : 0u) |
             (s->cfg.accounting == WS_ACCOUNTING_INCREMENTAL ? WS_DEC_PUBLISH : 0u) |
             (s->verify_on ? WS_DEC_VERIFY : 0u) |
             (s->cfg.refill_align_count ? WS_DEC_ALIGN : 0u);
  /* Launches that select their own frames (kernel.h's CPU and CUDA steps,
   * kernel.glsl's): fused accounting keeps the counts, whole queues run (no
   * partial admission), and verification keeps its gather to count. */
  if (s->cfg.accounting == WS_ACCOUNTING_FUSED && !s->verify_on && !s->cfg.partial_admission &&
      !s->no_scan && (s->entry->launch_dev || s->entry->spirv))
    d->flags |= WS_DEC_SCAN | s->scan_share << WS_DEC_SCAN_SHARE_SHIFT;
  d->high = s->cfg.compaction ? 0 : d->A;
  uint32_t *rb = (uint32_t *)ws_readback_data(s->rb);
  d->counts = (uint64_t)(uintptr_t)rb;
  d->recount = (uint64_t)(uintptr_t)(rb + count_words(s));
  d->gather_count = (uint64_t)(uintptr_t)(rb + 2 * count_words(s));
  d->align = (uint64_t)(uintptr_t)s->align;
  d->works = (uint64_t)(uintptr_t)s->dwork;
  d->node_stats = (uint64_t)(uintptr_t)s->node_stats;
  d->aux_stats = (uint64_t)(uintptr_t)s->aux_stats;
  /* verification reads the tokens at every boundary: a device loop
   * observes every iteration on the host (docs/loop.md) */
  d->interval = s->verify_on ? 1u : s->cfg.observe_interval;
  /* the tail needs the module's tail launcher (kernel.h: CPU and CUDA) */
  d->tail_frames = s->entry->launch_tail ? s->cfg.tail_frames : 0u;
  if (d->tail_frames)
    d->flags |= WS_DEC_TAIL;
  d->run_left = d->interval;
}

/* Statistics only: ends the device timer with one more synchronization after
 * the last boundary, never inside the loop. */
ws_status ws_loop_read_timer(ws_scheduler *s, uint64_t it) {
  ws_status st;
  if ((st = s->dev->ops->timer_mark(s->dev, true)) != WS_OK ||
      (st = s->dev->ops->synchronize(s->dev)) != WS_OK ||
      (st = s->dev->ops->timer_elapsed(s->dev, &s->device_ms)) != WS_OK)
    return dev_fail(s, st, it, "device timer");
  return WS_OK;
}

/* SPEC §2.1: tokens of the active slots and the device counts zeroed, every
 * auxiliary work's reset, in registration order. */
ws_status ws_loop_prologue(ws_scheduler *s) {
  ws_status st;
  if ((st = ws_buffer_fill_u32(s->tokens, 0, 0, s->d.A)) != WS_OK ||
      (st = ws_buffer_fill_u32(s->counts, 0, 0, count_words(s))) != WS_OK)
    return dev_fail(s, st, 0, "prologue");
  return ws_aux_reset_all(s);
}

static ws_status dispatch(ws_scheduler *s, uint32_t N, bool timed) {
  ws_dstate *d = &s->d;
  ws_status st;
  s->ran = WS_LOOP_HOST;
  if (s->cfg.kind == WS_SCHEDULER_MEGAKERNEL) {
    if (N == 0)
      return WS_OK;
    if (timed && (st = s->dev->ops->timer_mark(s->dev, false)) != WS_OK)
      return dev_fail(s, st, 0, "device timer");
    s->host_syncs = 1;
    st = ws_mega_dispatch(s, N);
    return st == WS_OK && timed ? ws_loop_read_timer(s, 1) : st;
  }
  if (d->A == 0)
    return WS_OK;
  if (ws_loop_device_wanted(s)) {
    st = ws_loop_device_dispatch(s, N, timed);
    /* under WS_LOOP_AUTO a backend loop that refused the configuration
     * leaves the dispatch to the host loop (dloop_refused) */
    if (!(st == WS_ECONFIG_LOOP && s->dloop_refused))
      return st;
  }
  if ((st = ws_loop_prologue(s)) != WS_OK)
    return st;
  if (timed && (st = s->dev->ops->timer_mark(s->dev, false)) != WS_OK)
    return dev_fail(s, st, 0, "device timer");
  while ((st = one_iteration(s)) == WS_OK && d->status == WS_DEC_RUNNING)
    ++d->pass;
  if (st != WS_OK)
    return st;
  return timed ? ws_loop_read_timer(s, d->pass) : WS_OK;
}

ws_status ws_scheduler_dispatch(ws_scheduler *s, uint32_t N, const void *args, size_t args_size) {
  if (!s)
    return WS_EINVAL;
  /* A client callback that dispatches its own scheduler would run items
   * twice over state the outer loop still owns. */
  if (s->dispatching)
    return ws_sched_fail(s, WS_EBUSY,
                         "ws_scheduler_dispatch: called while scheduler '%s' is dispatching "
                         "(from an auxiliary callback?)",
                         s->coro.name);
  /* SPEC §2.1: registration closes with the first dispatch, even a refused one */
  if (s->cfg.kind == WS_SCHEDULER_WAVEFRONT)
    s->closed = true;
  if (args_size != s->coro.args_size || (args_size && !args))
    return ws_sched_fail(s, WS_EINVAL,
                         "ws_scheduler_dispatch: argument block of %zu bytes, coroutine '%s' "
                         "takes %u",
                         args_size, s->coro.name, s->coro.args_size);
  s->dispatching = true;
  const double t0 = now_ms();
  s->error[0] = '\0';
  s->dev->error[0] = '\0';
  ws_sched_reset_stats(s);
  ws_loop_init_state(s, &s->d, N);
  ws_status st = WS_OK;
  if (args_size && (st = ws_buffer_write(s->args, 0, args, args_size)) != WS_OK)
    st = dev_fail(s, st, 0, "argument upload");
  const bool timed = s->stats_on && s->dev->ops->timer_mark && s->dev->ops->timer_elapsed;
  if (st == WS_OK)
    st = dispatch(s, N, timed);
  s->elapsed_ms = now_ms() - t0;
  s->dispatching = false;
  return st;
}
