/* wavesched — scheduler internals shared by scheduler.c, loop.c and aux.c. */
#ifndef WAVESCHED_CORE_SCHED_H
#define WAVESCHED_CORE_SCHED_H

#include "device.h"

/* One registered capacity owner (SPEC §3.3). */
typedef struct ws_aux_entry {
  ws_aux_work w;               /* copy of the client's table; NULLs resolved at use */
  ws_aux_producer *producers;  /* owned copy */
  uint32_t *bound;             /* [K + 1]: producer bound per continuation, 0 = none */
  uint32_t stage_count;        /* S at registration (1 under the single-stage protocol) */
  uint32_t first_stat;         /* index of stage 0 in the scheduler's aux_stats */
  uint32_t *q;                 /* [S] stage counts observed at this boundary */
  uint32_t live;               /* L observed at this boundary */
  /* Upper bound on the next observed L (SPEC §4): L after a stage dispatch,
   * refill or non-producer continuation; L + m*b after an admitted producer. */
  uint64_t allowance;
  /* What ran since the last boundary, to name the culprit when L exceeds it. */
  enum { WS_AUX_LAST_NONE, WS_AUX_LAST_STAGE, WS_AUX_LAST_PRODUCER, WS_AUX_LAST_OTHER } last;
  uint32_t last_stage;
} ws_aux_entry;

struct ws_scheduler {
  ws_device *dev;
  ws_coroutine_desc coro;
  ws_scheduler_config cfg;
  const ws_module_entry *entry; /* coroutine kernels for this backend */
  uint32_t K;                   /* continuations */
  uint32_t R;                   /* resident frames */
  uint32_t block;
  bool stats_on;
  bool verify_on;
  bool closed; /* registration closed by the first dispatch */
  bool *align; /* [K + 1]: continuation is in the refill alignment list */

  /* device state (reserved at creation; the loop allocates nothing) */
  ws_buffer *frames, *ids, *tokens, *counts, *slots, *offsets, *scratch, *counter, *args,
      *field_offsets, *verify_counts;
  ws_readback *rb;        /* [counts K+2][verify K+2][counter 1] */
  ws_readback *verify_rb; /* verify mode: [slots R words][tokens R words] */
  uint64_t soa_offsets[WS_MAX_FRAME_FIELDS];
  uint32_t field_sizes[WS_MAX_FRAME_FIELDS];

  ws_aux_entry *aux;
  uint32_t aux_count;

  ws_node_stats *node_stats; /* [K + 1] */
  ws_node_stats *aux_stats;  /* [aux_stats_count] */
  uint32_t aux_stats_count;
  ws_dispatch_stats dstats;

  /* test hook (testing.h) */
  bool corrupt_pending;
  uint32_t corrupt_queue;
  int32_t corrupt_delta;

  char error[1024];
};

/* Formats the scheduler's last-error message and returns `status`. */
ws_status ws_sched_fail(ws_scheduler *s, ws_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* aux.c */
void ws_aux_release_all(ws_scheduler *s);
ws_status ws_aux_reset_all(ws_scheduler *s);
ws_status ws_aux_enqueue_readbacks(ws_scheduler *s, uint64_t iteration);

/* Result of SPEC §3.4 steps A-D for one iteration. */
typedef struct ws_aux_decision {
  uint64_t live_total;   /* Σ L over works */
  bool run_stage;        /* a stage was picked: run it and nothing else */
  bool forced;           /* ... because a producer was blocked */
  uint32_t work, stage;  /* the picked stage */
  uint32_t admit;        /* frames of the selected queue that may run (<= n) */
} ws_aux_decision;

ws_status ws_aux_observe(ws_scheduler *s, uint64_t iteration, uint64_t *live_total,
                         uint32_t *best_work, uint32_t *best_stage, uint32_t *best_count);
ws_status ws_aux_decide(ws_scheduler *s, uint64_t iteration, uint32_t queue, uint32_t n,
                        uint32_t best_work, uint32_t best_stage, uint32_t best_count,
                        ws_aux_decision *d);
ws_status ws_aux_run_stage(ws_scheduler *s, uint64_t iteration, const ws_aux_decision *d);
/* A refill publishes into no work: every allowance becomes the current L. */
void ws_aux_before_refill(ws_scheduler *s);
/* Calls prepare_for_producer(m*b) for every work producing from `queue` and
 * sets every work's allowance for the launch of m frames. */
ws_status ws_aux_before_launch(ws_scheduler *s, uint64_t iteration, uint32_t queue, uint32_t m);

#endif
