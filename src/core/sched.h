/* SPDX-License-Identifier: MIT */
/* wavesched — scheduler internals shared by the core's files:
 *   scheduler.c  creation, configuration checks, reservation, statistics
 *   aux.c        auxiliary work: registration, host observation, client calls
 *   aux_legacy.c the single-stage protocol as an adapter applied at registration
 *   loop.c       the host loop of SPEC §2-3 (decisions in decide.h)
 *   loop_device.c the device loop, host side (the backend's loop_create/loop_run)
 *   loop_error.c messages from the decisions' error records
 *   mega.c       the megakernel scheduler
 */
#ifndef WAVESCHED_CORE_SCHED_H
#define WAVESCHED_CORE_SCHED_H

#include "wavesched/detail/decide.h"
#include "device.h"

/* One registered capacity owner (SPEC §3.3). Entry i goes with the
 * decisions' record ws_scheduler.dwork[i]. */
typedef struct ws_aux_entry {
  ws_aux_work w;              /* the client's table (adapted under the single-stage
                                 protocol); NULL optional calls take their default */
  ws_aux_producer *producers; /* owned copy */
  uint32_t *bound;            /* [K + 1]: producer bound per continuation, 0 = none */
  uint32_t *q;                /* [S]: stage counts observed at this boundary */
  uint32_t stage_count;       /* S, constant while registered */
  uint32_t first_stat;        /* index of stage 0 in the auxiliary statistics */
  void *adapter;              /* aux_legacy.c's state, when adapted */
  /* the device description, copied (w.device is NULL in the copy), and its
   * stage kernels with their argument blocks; unused when host_only */
  ws_aux_device device;
  ws_loop_stage *stages;      /* [S] */
  const char *host_only;      /* why the work cannot run in a device loop, NULL if it can */
} ws_aux_entry;

typedef struct ws_dloop ws_dloop; /* loop_device.c */

struct ws_scheduler {
  ws_device *dev;
  ws_owned node; /* in the device's live objects (ws_device_destroy) */
  ws_coroutine_desc coro;
  ws_scheduler_config cfg;
  const ws_module_entry *entry; /* coroutine kernels for this backend */
  uint32_t K;                   /* continuations */
  uint32_t R;                   /* resident frames */
  uint32_t block;
  bool stats_on;
  bool verify_on;
  /* WS_SCAN_SHARE=off: fused launches gather their frames (measurement) */
  bool no_scan;
  /* WS_SCAN_SHARE=P: the least share of the scanned range, in percent, that a
   * queue needs to be resumed in scan mode (decide.h WS_DEC_SCAN_SHARE) */
  uint32_t scan_share;
  bool closed;      /* registration closed by the first dispatch */
  bool dispatching; /* inside ws_scheduler_dispatch (re-entrancy guard) */
  ws_dloop *dloop;  /* the device loop, built by the first device dispatch */
  bool dloop_refused; /* the backend's loop_create refused this configuration
                         (WS_ECONFIG_LOOP) under WS_LOOP_AUTO: the host loop runs */
  ws_loop_kind ran; /* the loop of the last dispatch */
  uint64_t host_syncs;
  /* ws_testing_corrupt_token, armed until it fires */
  bool corrupt_token_armed;
  uint32_t corrupt_slot, corrupt_token;
  /* ws_testing_corrupt_list, armed until it fires */
  bool corrupt_list_armed;
  uint32_t corrupt_entry;
  uint32_t *align;  /* [K + 1]: 1 = continuation is in the refill alignment list */

  /* device state (reserved at creation; the loop allocates nothing) */
  ws_buffer *frames, *ids, *tokens, *counts, *slots, *offsets, *scratch, *counter, *args,
      *field_offsets, *verify_counts;
  ws_readback *rb;        /* [counts K+2][recount K+2][gather count 1] */
  ws_readback *verify_rb; /* verify mode: [slots R words][tokens R words] */
  uint64_t soa_offsets[WS_MAX_FRAME_FIELDS];
  uint32_t field_sizes[WS_MAX_FRAME_FIELDS];

  ws_aux_entry *aux;
  ws_dec_work *dwork; /* [aux_count]: the works as the decisions see them */
  uint32_t aux_count;

  /* statistics: [3 per node] dispatch, executed, peak (SPEC §3.7) */
  uint64_t *node_stats;    /* [3 (K + 1)] */
  uint64_t *aux_stats;     /* [3 aux_stats_count] */
  const char **aux_names;  /* [aux_stats_count]: stage (or single-stage work) names */
  uint32_t aux_stats_count;

  /* The host loop's state; after a dispatch, its statistics. */
  ws_dstate d;
  double elapsed_ms, device_ms;

  /* A client call that failed while observing (aux.c), reported through
   * the decisions' error record so that the order of SPEC §3.4 A holds. */
  char obs_msg[512];

  char error[1024];
};

/* Formats the scheduler's last-error message and returns `status`. */
ws_status ws_sched_fail(ws_scheduler *s, ws_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* scheduler.c: statistics reset at the start of a dispatch */
void ws_sched_reset_stats(ws_scheduler *s);

/* aux.c */
void ws_aux_release_all(ws_scheduler *s);
ws_status ws_aux_reset_all(ws_scheduler *s);
ws_status ws_aux_enqueue_readbacks(ws_scheduler *s, uint64_t iteration);
/* Calls each work's host_count, stage_count and stage_host_count into the
 * decisions' records; a failing call is recorded there (obs_status), not
 * returned, and no later work is asked. */
void ws_aux_observe_host(ws_scheduler *s);
/* A forced drain: the client's admission_stage(), when it has one, replaces
 * the default stage of the plan (then checked by ws_dec_check_drain). */
ws_status ws_aux_admission_stage(ws_scheduler *s, uint64_t iteration);
ws_status ws_aux_dispatch_stage(ws_scheduler *s, uint64_t iteration, uint32_t work,
                                uint32_t stage);
/* prepare_for_admission() and available_slots() of every work continuation j
 * produces into (issue 18), into the decisions' records. */
ws_status ws_aux_prepare_admission(ws_scheduler *s, uint64_t iteration, uint32_t j);
/* prepare_for_producer(m*b) for every work producing from continuation j. */
ws_status ws_aux_prepare_producers(ws_scheduler *s, uint64_t iteration, uint32_t j, uint32_t m);
/* Message of an auxiliary client call that failed. */
ws_status ws_aux_client_fail(ws_scheduler *s, uint32_t work, uint64_t iteration, const char *call,
                             ws_status st);

/* aux_legacy.c: the single-stage protocol (SPEC §3.2 red baseline) as a
 * work of one stage whose dispatch_stage(0) is the client's dispatch(). */
ws_status ws_aux_legacy_adapt(const ws_aux_work *client, ws_aux_work *adapted, void **state);
void ws_aux_legacy_free(void *state);

/* loop_error.c: the message of the decisions' error record. */
ws_status ws_loop_error(ws_scheduler *s, const ws_dec_err *e);

/* mega.c */
ws_status ws_mega_dispatch(ws_scheduler *s, uint32_t item_count);

/* loop.c: the prologue both loops share (tokens, counts, auxiliary reset),
 * the decisions' view of the configuration, the device timer's end. */
ws_status ws_loop_prologue(ws_scheduler *s);
/* Verification's token-level checks (loop.c), shared by both loops. */
ws_status ws_loop_read_tokens(ws_scheduler *s, uint64_t pass, uint32_t live_lists,
                              uint32_t **tokens);
ws_status ws_loop_check_tokens(ws_scheduler *s, uint64_t pass, uint32_t high, uint32_t *tokens);
void ws_loop_init_state(ws_scheduler *s, ws_dstate *d, uint32_t N);
ws_status ws_loop_read_timer(ws_scheduler *s, uint64_t iteration);

/* loop_device.c: whether this dispatch runs in the device loop, and the
 * device loop itself. */
bool ws_loop_device_wanted(const ws_scheduler *s);
ws_status ws_loop_device_dispatch(ws_scheduler *s, uint32_t item_count, bool timed);
void ws_loop_device_release(ws_scheduler *s);

#endif
