/* SPDX-License-Identifier: MIT */
/* wavesched — the single-stage protocol (SPEC §3.2) as an adapter.
 *
 * Under WS_AUX_SINGLE_STAGE every work is one queue consumed by its legacy
 * dispatch(): the scheduler sees a work of one stage, named after the work,
 * whose count is host_count(), whose drain stage is that stage, which has no
 * producer preparation, and whose dispatch_stage(0) is the client's
 * dispatch() (or, for a client that has only dispatch_stage, its stage 0).
 * Applied once at registration, so the loop and the decisions know nothing
 * of the old protocol. It exists for the §6 red baseline: a multi-stage
 * client run this way loses its stage structure and must fail exactly the
 * protocol assertions.
 */
#include "alloc.h"
#include "sched.h"

typedef struct legacy {
  ws_aux_work client;
} legacy;

static ws_status l_reset(void *user) {
  const legacy *l = user;
  return l->client.reset(l->client.user);
}

static ws_status l_enqueue(void *user) {
  const legacy *l = user;
  return l->client.enqueue_count_readback(l->client.user);
}

static ws_status l_host_count(void *user, uint32_t *count) {
  const legacy *l = user;
  return l->client.host_count(l->client.user, count);
}

/* The adapted work consumes through the callback the client has, under its
 * name: a client with dispatch() gets dispatch, one with only
 * dispatch_stage() gets dispatch_stage (always its stage 0), so that an
 * error names the call the client wrote (ws_aux_dispatch_stage names the
 * adapted work's callback). */
static ws_status l_dispatch(void *user) {
  const legacy *l = user;
  return l->client.dispatch(l->client.user);
}

static ws_status l_dispatch_stage0(void *user, uint32_t stage) {
  const legacy *l = user;
  (void)stage; /* the adapted work has one stage */
  return l->client.dispatch_stage(l->client.user, 0);
}

ws_status ws_aux_legacy_adapt(const ws_aux_work *client, ws_aux_work *adapted, void **state) {
  legacy *l = ws_calloc(1, sizeof *l);
  if (!l)
    return WS_ENOMEM;
  l->client = *client;
  ws_aux_work a = {0};
  a.name = client->name;
  a.capacity = client->capacity;
  a.producers = client->producers;
  a.producer_count = client->producer_count;
  a.user = l;
  a.reset = l_reset;
  a.enqueue_count_readback = l_enqueue;
  a.host_count = l_host_count;
  if (client->dispatch)
    a.dispatch = l_dispatch;
  else
    a.dispatch_stage = l_dispatch_stage0;
  /* every optional call at its single-stage default */
  *adapted = a;
  *state = l;
  return WS_OK;
}

void ws_aux_legacy_free(void *state) { ws_free(state); }
