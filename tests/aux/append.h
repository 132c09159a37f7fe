/* SPDX-License-Identifier: MIT */
/* Issue 18's test pipeline: a 4-slot single-stage auxiliary client with
 * append allocation. Publications take the slot at the extent and raise the
 * live count; a stage dispatch terminates at most AP_RELEASE_MAX of the
 * items it observes and keeps the rest; terminations leave holes below the
 * extent, which only a reclaim (extent back to 0 when nothing is live) or a
 * compaction makes writable again. The main coroutine suspends at its
 * producer continuation AP_PUBLISHES times and publishes one item after
 * each resume. One source for CPU and CUDA; glsl/ap_kernels is the twin. */
#ifndef WS_TEST_APPEND_H
#define WS_TEST_APPEND_H

#include "wavesched/kernel.h"

#define AP_PUBLISHES 3u
#define AP_RELEASE_MAX 2u

/* state words */
enum { AP_LIVE = 0, AP_EXTENT = 1, AP_ERRORS = 2, AP_RELEASED = 3, AP_STATE_WORDS = 4 };

#define AP_FIELDS(X) X(uint32_t, runs)
WS_FRAME(ap_frame, AP_FIELDS)

typedef struct ap_args {
  uint64_t tokens; /* uint32_t[C]: 1 = in the stage, 0 = free or a hole */
  uint64_t ids;    /* uint32_t[C]: the payload, the publishing item */
  uint64_t state;  /* uint32_t[AP_STATE_WORDS] */
  uint64_t done;   /* uint32_t[N]: main paths completed */
  uint64_t visits; /* uint32_t[N]: stage visits of each item's publications */
  uint32_t capacity;
  uint32_t reserved;
} ap_args; /* 48 bytes */

enum { AP_PRODUCE = 1 };
#define AP_CONTINUATIONS(X) X(AP_PRODUCE, ap_produce, "produce")

#endif
