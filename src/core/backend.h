/* SPDX-License-Identifier: MIT */
/* wavesched — the backend interface (internal).
 *
 * A backend is a table of function pointers over one device and one in-order
 * stream, in the way ggml plugs in its backends. The core validates every
 * argument once; backends may assume valid input and stay thin.
 *
 * Stream contract: every `enqueue_*`, `launch` and queue operation runs after
 * everything enqueued before it and before everything enqueued after it.
 * Host memory written by enqueue_read is valid after `synchronize`. A backend
 * may execute eagerly (the CPU backend does) as long as that order holds.
 *
 * Errors: return a ws_status and describe the failure (with the backend's own
 * code, e.g. the cudaError_t or VkResult name) through ws_dev_error().
 */
#ifndef WAVESCHED_CORE_BACKEND_H
#define WAVESCHED_CORE_BACKEND_H

#include "wavesched/wavesched.h"

/* Arguments of the scheduler's queue operations. Addresses are device
 * addresses of uint32_t arrays unless stated. */
typedef struct ws_queue_args {
  uint64_t tokens;    /* uint32_t[capacity] */
  uint64_t ids;       /* uint32_t[capacity] */
  uint64_t counts;    /* uint32_t[K + 2] */
  uint64_t slots;     /* uint32_t output / input slot list */
  uint64_t offsets;   /* uint32_t[K + 2] scratch for gather_all */
  uint64_t scratch;   /* uint32_t[capacity] scratch (compaction) */
  uint64_t counter;   /* uint32_t[1] output counter */
  uint32_t scan;      /* slots [0, scan) are examined */
  uint32_t token;     /* gather: the token to select */
  uint32_t queue_count; /* K */
  uint32_t n;         /* publish: launch size; compact: live count */
  uint32_t src;       /* publish: resumed continuation (0 = entry) */
  uint32_t slot_base; /* publish: dense range start when slots == 0 */
  /* compaction: frame storage */
  uint64_t frames;
  uint64_t field_offsets;       /* device address of the SoA offsets */
  const uint64_t *host_field_offsets;
  const uint32_t *field_sizes;  /* host array [field_count] */
  uint32_t field_count;
  uint32_t frame_size; /* AoS record size */
  uint32_t layout;
  uint32_t capacity;
  uint32_t flags; /* WS_QUEUE_* hints; 0 = none */
} ws_queue_args;

/* gather: the caller never reads `counter` (the loop reads it only when it
 * verifies). A backend may then leave it unwritten, and CUDA uses that to
 * skip the selection's "last block" that would publish the count. */
#define WS_QUEUE_COUNTER_UNUSED 1u

/* One auxiliary stage kernel of a device loop (ws_aux_stage_kernel with
 * the argument block copied). */
typedef struct ws_loop_stage {
  const ws_module_entry *entry;
  uint32_t count;
  uint32_t args_size;
  unsigned char args[WS_MAX_KERNEL_ARGS];
} ws_loop_stage;

/* One append-allocated auxiliary storage of a device loop (issue 18): after
 * each decision, the loop compacts it over the decision's [*live, *scan)
 * (queue_compact semantics: the items of [live, scan) move into the holes of
 * [0, live) with their token, id and payload; nothing when live == scan).
 * `q` holds the storage's tokens, ids, scratch, payload (AoS, frame_size =
 * the record stride) and capacity; live and scan are the device addresses
 * of the work's ws_dec_work.compact_live / compact_scan in the state. */
typedef struct ws_loop_storage {
  ws_queue_args q;
  uint64_t live, scan;
} ws_loop_storage;

/* Everything a backend needs to build the device loop of one scheduler
 * (docs/loop.md, "The device loop"). Built once, when the first dispatch
 * closes registration; what changes between dispatches lives in the loop
 * state in device memory. One iteration, in this order:
 *   materialized: queue_count + queue_gather_all over [0, state.high);
 *   verification: queue_count into `recount` over [0, state.high);
 *   the decision (decide.h: ws_dec_observe_works, ws_dec_decide,
 *     ws_dec_loop_next) on the state;
 *   every append storage's compaction (ws_loop_storage), in order;
 *   the plan: REFILL = [compaction of plan.compact_live/compact_scan]
 *     [gather of plan.gather_token over plan.gather_scan] entry launch
 *     [publish]; RESUME j = [gather] continuation j [publish];
 *     RESUME_ALL = continuations 1..K from the sorted lists; STAGE (w, s) =
 *     the stage kernel at index first_stat(w) + s; NONE = nothing.
 * Every launch reads its sizes from the state when it runs. */
typedef struct ws_loop_desc {
  uint64_t state;               /* device address of the ws_dstate (decide.h), the first of
                                   state_bytes bytes that also hold the works' records, their
                                   arrays and the statistics (loop_device.c) */
  uint32_t state_bytes;         /* a multiple of 8 */
  const ws_module_entry *entry; /* the coroutine */
  ws_launch launch;             /* template of its launches (plan = &state->plan) */
  ws_queue_args queue;          /* the scheduler's buffers (per-call fields unused) */
  uint64_t recount;             /* verification: where the recount goes */
  uint32_t flags;               /* WS_DEC_* of this scheduler */
  uint32_t K, R, block;
  const ws_loop_stage *stages;  /* [stage_count], in statistics order */
  uint32_t stage_count;
  const ws_loop_storage *storage; /* [storage_count]: the append storages; a backend
                                     whose loop cannot compact them must refuse a
                                     storage_count > 0 in loop_create */
  uint32_t storage_count;
  uint32_t interval;            /* observe_interval: iterations per loop_run, 0 = until done
                                   (what state.interval holds; backends that record a fixed
                                   number of iterations size their recording by it) */
} ws_loop_desc;

/* Which of a module entry's launchers a launch runs: a kernel or a
 * coroutine's step, the coroutine's megakernel (every item from its entry
 * to its end), or its tail (every suspended frame below a scan bound from
 * its continuation to its end; kernel.h). */
typedef enum ws_launch_form { WS_FORM_STEP = 0, WS_FORM_MEGA = 1, WS_FORM_TAIL = 2 } ws_launch_form;

/* The entry's launcher of `form` (CPU and CUDA modules), NULL where it has none. */
static inline ws_launch_fn ws_entry_launcher(const ws_module_entry *e, ws_launch_form form) {
  return form == WS_FORM_MEGA ? e->launch_mega : form == WS_FORM_TAIL ? e->launch_tail : e->launch;
}
static inline const char *ws_form_name(ws_launch_form form) {
  return form == WS_FORM_MEGA ? "megakernel" : form == WS_FORM_TAIL ? "tail" : "kernel";
}

typedef struct ws_backend_ops {
  const char *name;
  void (*destroy)(ws_device *dev);

  /* device memory: addresses aligned to at least 16 bytes (frames and
   * argument blocks hold any field type), ranges disjoint */
  ws_status (*buffer_alloc)(ws_device *dev, size_t size, uint64_t *addr, void **handle);
  void (*buffer_free)(ws_device *dev, void *handle);
  /* host memory the stream can copy into */
  ws_status (*host_alloc)(ws_device *dev, size_t size, void **ptr, void **handle);
  void (*host_free)(ws_device *dev, void *handle);

  /* blocking host->device copy after all enqueued work */
  ws_status (*write)(ws_device *dev, uint64_t dst, const void *src, size_t size);
  /* enqueued device->host copy into host memory from host_alloc */
  ws_status (*enqueue_read)(ws_device *dev, void *host_handle, size_t host_offset, uint64_t src,
                            size_t size);
  ws_status (*enqueue_fill_u32)(ws_device *dev, uint64_t dst, uint32_t value, size_t count);
  ws_status (*synchronize)(ws_device *dev);

  /* enqueued kernel launch over n indices, of the entry's launcher `form`
   * (ws_entry_launcher); args_size bytes of args by value */
  ws_status (*launch)(ws_device *dev, const ws_module_entry *entry, ws_launch_form form,
                      uint32_t n, const void *args, size_t args_size, uint32_t block);

  /* ---- scheduler queue operations (enqueued) ---- */
  /* counts[t] = |{s < scan : tokens[s] == t}| for t in 0..K; counts[K+1] kept */
  ws_status (*queue_count)(ws_device *dev, const ws_queue_args *q);
  /* slots[0..m) = the slots s < scan with tokens[s] == token (any order);
   * counter[0] = m (unless flags has WS_QUEUE_COUNTER_UNUSED, when it may
   * be left as it was) */
  ws_status (*queue_gather)(ws_device *dev, const ws_queue_args *q);
  /* counting sort: with counts[1..K] already computed, slots holds queue 1's
   * slots, then queue 2's, ...; order within a queue unspecified */
  ws_status (*queue_gather_all)(ws_device *dev, const ws_queue_args *q);
  /* incremental accounting after a launch of n frames from src:
   * counts[src] -= n (src != 0); counts[tokens[slot]] += 1 for each frame */
  ws_status (*queue_publish)(ws_device *dev, const ws_queue_args *q);
  /* compaction: live frames (token != 0) in [n, scan) move into the free
   * slots (token == 0) of [0, n), frame fields, id and token; afterwards
   * tokens[n, scan) are 0. Precondition: exactly n live frames in [0, scan). */
  ws_status (*queue_compact)(ws_device *dev, const ws_queue_args *q);

  /* (optional) default: no device time in the statistics. Device timestamps
   * for a dispatch's statistics: timer_mark(dev, false) enqueues the start,
   * timer_mark(dev, true) the end; after a synchronize, timer_elapsed gives
   * the device milliseconds between them. */
  ws_status (*timer_mark)(ws_device *dev, bool end);
  ws_status (*timer_elapsed)(ws_device *dev, double *ms);

  /* (optional) default: no device loop, the host loop runs every dispatch.
   * loop_create builds the loop once (it may allocate); loop_run enqueues
   * iterations until the state leaves RUNNING or state.interval iterations
   * ran (stream order: the caller then enqueues a readback of the state and
   * synchronizes; a backend may stop earlier with the state still RUNNING,
   * and the caller runs it again); loop_destroy releases it. loop_create
   * answers WS_ECONFIG_LOOP for a configuration its loop cannot run: the
   * scheduler then runs the host loop, unless the device loop was asked for.
   * `round` counts loop_run's calls within one dispatch, from 0: a backend
   * that stops earlier may run more iterations per call as a dispatch goes
   * on (Vulkan). */
  ws_status (*loop_create)(ws_device *dev, const ws_loop_desc *desc, void **loop);
  ws_status (*loop_run)(ws_device *dev, void *loop, uint32_t round);
  void (*loop_destroy)(ws_device *dev, void *loop);

  /* (optional) default: nothing known, no check. Device memory the next
   * buffer_alloc calls can still use (*available) and the largest single
   * buffer the device allows (*largest), in bytes; UINT64_MAX for a figure
   * the backend does not know. The core checks sizes against them before it
   * allocates or fills anything (ws_buffer_create, ws_scheduler_create,
   * ws_pool_create). A snapshot: an allocation may still fail afterwards.
   * A query, never a failure point: the fault wrapper forwards it without
   * counting, and the core treats an error as "nothing known". */
  ws_status (*memory_available)(ws_device *dev, uint64_t *available, uint64_t *largest);

  /* (optional) both or neither; default: each loop_run is followed by a
   * synchronize. A pipelined device loop (loop_device.c) keeps one run
   * queued behind the one the host waits for, so that the device does not
   * idle while the host reads a state and submits the next run:
   * loop_pipelined says whether this loop allows it (one more run after the
   * one that ends the dispatch must execute no iteration and change
   * nothing); flush submits everything enqueued so far without waiting for
   * it, then waits for the submission before it, if one is pending, after
   * which host memory written by enqueue_read before that earlier
   * submission is valid. At most two submissions are ever pending, and
   * `synchronize` waits for both. */
  bool (*loop_pipelined)(ws_device *dev, void *loop);
  ws_status (*flush)(ws_device *dev);
} ws_backend_ops;

#endif
