/* SPDX-License-Identifier: MIT */
/* wavesched — the messages of the decisions' error records (decide.h).
 *
 * Both loops end a dispatch the same way: the decisions write an error
 * record (status, kind, iteration, the objects and the numbers) and this
 * file turns it into the scheduler's last-error message, so a violation
 * found on the device reads exactly as one found by the host loop.
 */
#include <inttypes.h>

#include "sched.h"

static const char *work_name(const ws_scheduler *s, uint32_t w) {
  return w < s->aux_count ? s->aux[w].w.name : "?";
}

static const char *stage_name(const ws_scheduler *s, uint32_t w, uint32_t stage) {
  if (w >= s->aux_count || stage >= s->aux[w].stage_count)
    return "?";
  return s->aux_names[s->aux[w].first_stat + stage];
}

static const char *queue_name(const ws_scheduler *s, uint32_t j) {
  return j >= 1 && j <= s->K ? s->coro.continuation_names[j - 1] : "?";
}

ws_status ws_loop_error(ws_scheduler *s, const ws_dec_err *e) {
  const ws_status st = (ws_status)e->status;
  const uint64_t it = e->iteration;
  const char *w = work_name(s, e->work);
  switch (e->kind) {
  case WS_DERR_BAD_TRANSITION:
    return ws_sched_fail(s, st,
                         "iteration %" PRIu64 ": %" PRIu64 " frame(s) returned a continuation "
                         "index outside 1..%" PRIu64 "; they were terminated",
                         it, e->a, e->b);
  case WS_DERR_VERIFY_COUNT:
    return ws_sched_fail(s, st,
                         "iteration %" PRIu64 ": queue '%s' (%u): maintained count %" PRIu64
                         ", tokens say %" PRIu64,
                         it, queue_name(s, e->queue), e->queue, e->a, e->b);
  case WS_DERR_VERIFY_GATHER:
    return ws_sched_fail(s, st,
                         "iteration %" PRIu64 ": the last gather returned %" PRIu64
                         " slots, expected %" PRIu64,
                         it, e->a, e->b);
  case WS_DERR_LIVE:
    return ws_sched_fail(s, st,
                         "iteration %" PRIu64 ": queue counts sum to %" PRIu64
                         ", more than the %" PRIu64 " active slots",
                         it, e->a, e->b);
  case WS_DERR_OVER_CAPACITY:
    return ws_sched_fail(s, st,
                         "iteration %" PRIu64 ": auxiliary work '%s': live count %" PRIu64
                         " exceeds capacity %" PRIu64,
                         it, w, e->a, e->b);
  case WS_DERR_CLONED:
    if (e->work2 != e->work)
      return ws_sched_fail(s, st,
                           "iteration %" PRIu64 ": auxiliary work '%s': after dispatching stage "
                           "'%s' of work '%s' its live count rose from %" PRIu64 " to %" PRIu64
                           ": a stage cloned items into another work",
                           it, w, stage_name(s, e->work2, e->stage), work_name(s, e->work2),
                           e->a, e->b);
    return ws_sched_fail(s, st,
                         "iteration %" PRIu64 ": auxiliary work '%s': after dispatching stage '%s' "
                         "the live count rose from %" PRIu64 " to %" PRIu64 ": a stage cloned items",
                         it, w, stage_name(s, e->work, e->stage), e->a, e->b);
  case WS_DERR_BOUND:
    return ws_sched_fail(s, st,
                         "iteration %" PRIu64 ": auxiliary work '%s': the live count %" PRIu64
                         " exceeds the %" PRIu64 " its admitted producer's bound allows: the "
                         "producer published more than declared",
                         it, w, e->a, e->b);
  case WS_DERR_BOUND_OTHER:
    return ws_sched_fail(s, st,
                         "iteration %" PRIu64 ": auxiliary work '%s': the live count rose to %" PRIu64
                         " (allowed %" PRIu64 ") after a launch that is no declared producer of it",
                         it, w, e->a, e->b);
  case WS_DERR_STAGE_SUM:
    return ws_sched_fail(s, st,
                         "iteration %" PRIu64 ": auxiliary work '%s': stage sum differs from live "
                         "count: stages sum to %" PRIu64 ", host_count() is %" PRIu64,
                         it, w, e->a, e->b);
  case WS_DERR_EMPTY_BLOCKS:
    return ws_sched_fail(s, st,
                         "iteration %" PRIu64 ": auxiliary work '%s' is empty yet blocks %" PRIu64
                         " frames of '%s' with bound %" PRIu64 " (capacity %" PRIu64 ")",
                         it, w, e->a, queue_name(s, e->queue), e->b, e->c);
  case WS_DERR_DRAIN_STAGE:
    return ws_sched_fail(s, st,
                         "iteration %" PRIu64 ": auxiliary work '%s': admission_stage() returned "
                         "stage %u, which is %s (stage count %" PRIu64 ", its count %" PRIu64 ")",
                         it, w, e->stage, e->stage >= e->a ? "out of range" : "empty", e->a, e->b);
  case WS_DERR_LIMIT:
    return ws_sched_fail(s, st,
                         "iteration limit %" PRIu64 " reached: %" PRIu64 " of %u items admitted, %" PRIu64
                         " live frames, %" PRIu64 " live auxiliary items",
                         e->a, e->b, s->d.N, e->c, e->d);
  case WS_DERR_STALL:
    return ws_sched_fail(s, st,
                         "iteration %" PRIu64 ": nothing can run: %" PRIu64 " of %u items admitted, "
                         "%" PRIu64 " live frames, %" PRIu64 " auxiliary items",
                         it, e->b, s->d.N, e->c, e->d);
  case WS_DERR_CLIENT:
    if (s->obs_msg[0])
      return ws_sched_fail(s, st, "%s", s->obs_msg);
    return ws_sched_fail(s, st,
                         "iteration %" PRIu64 ": auxiliary work '%s': its device words report %" PRIu64
                         " error(s): a producer exceeded its bound or published past its append "
                         "extent, or an item was released twice",
                         it, w, e->a);
  case WS_DERR_AVAIL:
    return ws_sched_fail(s, st,
                         "iteration %" PRIu64 ": auxiliary work '%s': available_slots() is %" PRIu64
                         ", more than the %" PRIu64 " free slots (C - L) admitting '%s' allows",
                         it, w, e->a, e->b, queue_name(s, e->queue));
  case WS_DERR_AVAIL_EMPTY:
    return ws_sched_fail(s, st,
                         "iteration %" PRIu64 ": auxiliary work '%s' is empty but only %" PRIu64
                         " of its %" PRIu64 " slots are available after prepare_for_admission(): "
                         "an empty work must reclaim its whole capacity",
                         it, w, e->a, e->b);
  case WS_DERR_EXTENT:
    return ws_sched_fail(s, st,
                         "iteration %" PRIu64 ": auxiliary work '%s': append extent %" PRIu64
                         " is not within [live count %" PRIu64 ", capacity %" PRIu64
                         "]: a publication past the extent or a lost release",
                         it, w, e->a, e->b, e->c);
  case WS_DERR_SCAN:
    return ws_sched_fail(s, st,
                         "iteration %" PRIu64 ": queue '%s' (%u): its count promised %" PRIu64
                         " frames, the launch found %" PRIu64 " with that token (the count no "
                         "longer matches the tokens)",
                         it, queue_name(s, e->queue), e->queue, e->a, e->b);
  case WS_DERR_TAIL_LIMIT:
    return ws_sched_fail(s, st,
                         "iteration %" PRIu64 ": iteration limit %" PRIu64 " reached in the tail: "
                         "%" PRIu64 " of its %" PRIu64 " items ran %" PRIu64
                         " continuations (the iterations left) without terminating and were "
                         "stopped",
                         it, s->d.iteration_limit, e->a, e->c, e->b);
  default:
    return ws_sched_fail(s, WS_EPROTO_INTERNAL, "iteration %" PRIu64 ": unknown error record %u",
                         it, e->kind);
  }
}
