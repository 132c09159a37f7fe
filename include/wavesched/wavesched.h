/* wavesched — host API.
 *
 * A wavefront scheduler for divergent per-item GPU work: each logical item is
 * a coroutine whose continuations run as small kernels over queues of
 * suspended frames, the largest queue first, with side work co-scheduled
 * through bounded shared-capacity auxiliary pipelines (docs/protocol.md).
 *
 * Conventions: opaque handles, create/destroy pairs (destroy accepts NULL),
 * every fallible call returns a ws_status (status.h) and leaves a message on
 * the object: ws_device_last_error(), ws_scheduler_last_error().
 */
#ifndef WAVESCHED_WAVESCHED_H
#define WAVESCHED_WAVESCHED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wavesched/launch.h"
#include "wavesched/module.h"
#include "wavesched/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ======================================================================
 * Devices
 * ====================================================================== */
typedef struct ws_device ws_device;

typedef enum ws_log_level { WS_LOG_ERROR = 0, WS_LOG_WARNING = 1, WS_LOG_INFO = 2 } ws_log_level;

/* Receives the library's messages that no object can hold: the reason a
 * device or a scheduler could not be created (the object is gone). The
 * library never writes to stdout or stderr itself. `message` is valid during
 * the call only. */
typedef void (*ws_log_fn)(void *user, ws_log_level level, const char *message);

/* Most threads a CPU device may have (ws_device_config.cpu_threads). */
#define WS_CPU_MAX_THREADS 1024

typedef struct ws_device_config {
  ws_backend_kind backend; /* WS_BACKEND_CPU (default 0) */
  int device_index;        /* CUDA device / Vulkan physical device; -1 = default
                              (WS_VULKAN_DEVICE overrides for Vulkan) */
  int cpu_threads;         /* CPU backend: threads its kernels run on, the caller's
                              included: 0 = one per CPU the process may use; at most
                              WS_CPU_MAX_THREADS (WS_EINVAL otherwise). They belong
                              to the device: nothing else in the process changes */
  ws_log_fn log;           /* (optional) messages of this device and its schedulers */
  void *log_user;
} ws_device_config;

/* Backend names as the CLI spells them: "cpu", "cuda", "vulkan". */
const char *ws_backend_name(ws_backend_kind backend);
/* Parses a backend name; WS_EINVAL for an unknown one. */
ws_status ws_backend_parse(const char *name, ws_backend_kind *out);
/* Whether this build of the library contains the backend (not whether a
 * device exists: ws_device_create answers that with WS_ENODEV). */
bool ws_backend_compiled(ws_backend_kind backend);

ws_status ws_device_create(const ws_device_config *config, ws_device **out);
void ws_device_destroy(ws_device *dev);
ws_backend_kind ws_device_backend(const ws_device *dev);
/* Human-readable device name ("NVIDIA H200", "llvmpipe", "cpu (16 threads)"). */
const char *ws_device_name(const ws_device *dev);
/* Last error message on this device or on any buffer of it ("" if none). */
const char *ws_device_last_error(const ws_device *dev);
/* Waits until every operation enqueued on the device's stream completed. */
ws_status ws_device_synchronize(ws_device *dev);
/* What the device says about its memory, in bytes: what buffers can still
 * use (*available) and the largest single buffer (*largest, may be NULL);
 * UINT64_MAX for a figure the backend does not know. CPU: the host memory
 * this process can still commit (MemAvailable, RLIMIT_AS, RLIMIT_DATA);
 * CUDA: cudaMemGetInfo; Vulkan: VK_EXT_memory_budget, else the device-local
 * heap size. A snapshot, for checks before allocating: ws_buffer_create,
 * ws_scheduler_create and ws_pool_create make the same check themselves. */
ws_status ws_device_memory_available(ws_device *dev, uint64_t *available, uint64_t *largest);

/* ======================================================================
 * Buffers: device memory addressed by 64-bit device addresses
 * ====================================================================== */
typedef struct ws_buffer ws_buffer;

/* Allocates `size` bytes of device memory (contents undefined). */
ws_status ws_buffer_create(ws_device *dev, size_t size, ws_buffer **out);
void ws_buffer_destroy(ws_buffer *buf);
/* The address kernels use (kernel.h WS_PTR). Stable for the buffer's life. */
uint64_t ws_buffer_address(const ws_buffer *buf);
size_t ws_buffer_size(const ws_buffer *buf);
/* Blocking copies: complete every enqueued operation, then copy. */
ws_status ws_buffer_write(ws_buffer *buf, size_t offset, const void *src, size_t size);
ws_status ws_buffer_read(ws_buffer *buf, size_t offset, void *dst, size_t size);
/* Enqueued in stream order: fill `count` 32-bit words with `value`. */
ws_status ws_buffer_fill_u32(ws_buffer *buf, size_t offset, uint32_t value, size_t count);

/* Host memory the device can copy into in stream order (pinned on CUDA,
 * host-visible on Vulkan). Its contents are valid once the stream was
 * synchronized after ws_readback_enqueue. */
typedef struct ws_readback ws_readback;
ws_status ws_readback_create(ws_device *dev, size_t size, ws_readback **out);
void ws_readback_destroy(ws_readback *rb);
/* Enqueues a copy of buf[src_offset, +size) into rb[dst_offset, +size). */
ws_status ws_readback_enqueue(ws_readback *rb, size_t dst_offset, ws_buffer *buf,
                              size_t src_offset, size_t size);
const void *ws_readback_data(const ws_readback *rb);

/* ======================================================================
 * Kernels (see kernel.h for writing them)
 * ====================================================================== */
typedef struct ws_kernel {
  ws_device *dev;
  const ws_module_entry *entry;
} ws_kernel;

/* Finds entry `name` in the module built for the device's backend. */
ws_status ws_kernel_find(ws_device *dev, const ws_module_set *modules, const char *name,
                         ws_kernel *out);
/* Enqueues the kernel over indices 0..n-1 with an argument block passed by
 * value (args_size must equal the kernel's argument struct, at most
 * WS_MAX_KERNEL_ARGS bytes). */
ws_status ws_kernel_launch(const ws_kernel *k, uint32_t n, const void *args, size_t args_size);

/* ======================================================================
 * Coroutines
 * ====================================================================== */
typedef struct ws_frame_field {
  const char *name;
  uint32_t size;
  uint32_t align;
} ws_frame_field;

typedef struct ws_frame_desc {
  uint32_t size;  /* sizeof(frame struct) = AoS record size */
  uint32_t align; /* alignof(frame struct) */
  uint32_t field_count;
  const ws_frame_field *fields; /* declaration order, as WS_FRAME lists them */
} ws_frame_desc;

#define WS_FRAME_FIELD_DESC_(type, name) {#name, (uint32_t)sizeof(type), (uint32_t)_Alignof(type)},
/* Host-side description of a frame declared with WS_FRAME(tname, FIELDS). */
#define WS_FRAME_DESC(tname, FIELDS)                                                    \
  static const ws_frame_field tname##_ws_fields_[] = {FIELDS(WS_FRAME_FIELD_DESC_)};    \
  static const ws_frame_desc tname##_ws_desc = {                                        \
      (uint32_t)sizeof(tname), (uint32_t)_Alignof(tname),                               \
      (uint32_t)(sizeof tname##_ws_fields_ / sizeof tname##_ws_fields_[0]), tname##_ws_fields_};

typedef struct ws_coroutine_desc {
  const char *name;                        /* module entry name (WS_MODULE_COROUTINE) */
  const ws_module_set *modules;            /* where its kernels are */
  const ws_frame_desc *frame;
  uint32_t args_size;                      /* bytes of the user argument struct */
  uint32_t continuation_count;             /* K */
  const char *const *continuation_names;   /* [K]: continuation j is names[j-1] */
} ws_coroutine_desc;

#define WS_CONT_NAME_(idx, fn, name) name,
/* Host-side names array in index order, from the same CONTS list. */
#define WS_CONTINUATION_NAMES(var, CONTS) static const char *const var[] = {CONTS(WS_CONT_NAME_)};

/* ======================================================================
 * Auxiliary work (docs/protocol.md; SPEC §3)
 * ====================================================================== */
typedef struct ws_aux_producer {
  const char *continuation; /* name of a non-entry continuation */
  uint32_t bound;           /* b: most items one run for one frame publishes */
} ws_aux_producer;

/* One capacity owner. Required: name, capacity, producers, reset,
 * enqueue_count_readback, host_count, and dispatch or dispatch_stage.
 * NULL optional calls take the default in the comment (SPEC §3.3), which
 * reproduces the single-stage protocol. Every call gets `user` first. */
typedef struct ws_aux_work {
  const char *name;
  uint32_t capacity;
  const ws_aux_producer *producers;
  uint32_t producer_count;
  void *user;

  /* Make device and host counts zero before any producer runs. */
  ws_status (*reset)(void *user);
  /* Append a device->host copy of the count(s) to the stream. */
  ws_status (*enqueue_count_readback)(void *user);
  /* Total live items L, read only after the readback was synchronized. */
  ws_status (*host_count)(void *user, uint32_t *count);
  /* Single stage: consume exactly host_count() items. Default: dispatch_stage(0). */
  ws_status (*dispatch)(void *user);

  /* (optional) default 1; constant while registered. */
  uint32_t (*stage_count)(void *user);
  /* (optional) default: the work's name; non-empty, unique in the work. */
  const char *(*stage_name)(void *user, uint32_t stage);
  /* (optional) default: host_count() (single stage). */
  ws_status (*stage_host_count)(void *user, uint32_t stage, uint32_t *count);
  /* (optional) default: first stage with a non-zero count. */
  ws_status (*admission_stage)(void *user, uint32_t *stage);
  /* (optional) default: nothing. Storage-only; no count changes. */
  ws_status (*prepare_for_producer)(void *user, uint64_t required);
  /* (optional) default: dispatch() (single stage). Consumes exactly the
   * stage's observed count; moves items between stages or terminates them,
   * never clones. */
  ws_status (*dispatch_stage)(void *user, uint32_t stage);
} ws_aux_work;

/* The admission rule, in 64-bit: admit a producer of n frames with bound b
 * iff L <= C and n*b <= C - L. */
static inline bool ws_aux_can_admit(uint32_t capacity, uint32_t live, uint32_t n, uint32_t bound) {
  return live <= capacity && (uint64_t)n * (uint64_t)bound <= (uint64_t)(capacity - live);
}
/* Partial admission: how many of n frames fit, min(n, (C - L) / b). */
static inline uint32_t ws_aux_admissible_frames(uint32_t capacity, uint32_t live, uint32_t n,
                                                uint32_t bound) {
  if (live > capacity || bound == 0)
    return 0;
  uint64_t fit = (uint64_t)(capacity - live) / bound;
  return fit < n ? (uint32_t)fit : n;
}

/* ======================================================================
 * Scheduler
 * ====================================================================== */
typedef struct ws_scheduler ws_scheduler;

typedef enum ws_scheduler_kind {
  WS_SCHEDULER_WAVEFRONT = 0,
  WS_SCHEDULER_MEGAKERNEL = 1
} ws_scheduler_kind;

/* How the host knows the queue sizes at each iteration boundary (SPEC §1.3). */
typedef enum ws_accounting {
  WS_ACCOUNTING_MATERIALIZED = 0, /* count the tokens and sort the slots every iteration */
  WS_ACCOUNTING_INCREMENTAL = 1,  /* device counts kept by publish kernels (greedy only) */
  WS_ACCOUNTING_FUSED = 2         /* count updates inside the kernels (greedy only) */
} ws_accounting;

typedef enum ws_aux_protocol {
  WS_AUX_MULTI_STAGE = 0, /* SPEC §3.3-3.4 */
  WS_AUX_SINGLE_STAGE = 1 /* legacy: each work is one queue consumed by dispatch();
                             exists for the red-baseline regression only */
} ws_aux_protocol;

typedef struct ws_scheduler_config {
  ws_scheduler_kind kind;
  uint32_t resident_frames;      /* R, > 0 (wavefront) */
  uint32_t layout;               /* WS_LAYOUT_AOS or WS_LAYOUT_SOA */
  bool largest_first;            /* greedy policy; false = all-queues */
  ws_accounting accounting;      /* incremental and fused need largest_first */
  bool compaction;               /* keep live frames in a dense prefix */
  uint32_t refill_threshold;     /* 0 = A/2, else min(value, A) */
  const char *const *refill_align; /* continuation names; NULL = no list */
  uint32_t refill_align_count;
  uint32_t block_size;           /* GPU threads per block; 0 = 128 */
  bool statistics;               /* also on with WS_STATS=1 */
  bool verify_queues;            /* also on with WS_VERIFY_QUEUES=1 */
  uint64_t iteration_limit;      /* passes through the loop (SPEC §2.2), and for the
                                    megakernel continuation runs per item, before the
                                    dispatch fails with WS_EITERATION_LIMIT: 0 =
                                    WS_ITERATION_LIMIT_DEFAULT; WS_ITERATION_UNLIMITED
                                    lifts it */
  ws_aux_protocol aux_protocol;
  bool partial_admission;        /* admit min(n, (C-L)/b) frames instead of draining */
} ws_scheduler_config;

/* The iteration limit when the configuration says 0: no dispatch loops
 * forever by default. 2^24 passes take minutes at the slowest host loop
 * measured (~25 us per iteration); real dispatches need far fewer (the path
 * tracer's 1080p render: about 1,700). */
#define WS_ITERATION_LIMIT_DEFAULT (UINT64_C(1) << 24)
#define WS_ITERATION_UNLIMITED UINT64_MAX

/* Defaults: wavefront, R = 4096, AoS, greedy, incremental, compaction on. */
ws_scheduler_config ws_scheduler_config_default(void);

ws_status ws_scheduler_create(ws_device *dev, const ws_coroutine_desc *coroutine,
                              const ws_scheduler_config *config, ws_scheduler **out);
void ws_scheduler_destroy(ws_scheduler *s);
const char *ws_scheduler_last_error(const ws_scheduler *s);

/* Registers auxiliary work (copied; `user`, names and producer strings must
 * outlive the scheduler). Checks of SPEC §3.5; nothing is registered on error. */
ws_status ws_scheduler_add_aux(ws_scheduler *s, const ws_aux_work *work);

/* Runs `item_count` logical items to completion. `args` (args_size bytes, as
 * the coroutine description says) is copied to the device for this dispatch. */
ws_status ws_scheduler_dispatch(ws_scheduler *s, uint32_t item_count, const void *args,
                                size_t args_size);

/* ---- statistics of the last dispatch (SPEC §3.7) ---- */
typedef struct ws_node_stats {
  const char *name;        /* "<entry>" for node 0, else the continuation / stage name */
  uint64_t dispatch_count; /* launches (entry: refills) */
  uint64_t executed_count; /* frames run (entry: generated; stage: observed counts) */
  uint64_t peak_queued_count;
} ws_node_stats;

typedef struct ws_dispatch_stats {
  uint64_t iteration_count;
  uint64_t generated_count;
  uint64_t resumed_count;
  uint64_t scanned_slot_count; /* slots the queue kernels scanned, summed */
  uint64_t max_active_count;   /* most live frames at a boundary */
  uint64_t aux_dispatch_count; /* auxiliary stage dispatches */
  uint64_t forced_drain_count; /* of which forced by blocked producers */
  uint64_t blocked_count;      /* iterations a producer was not admitted */
  double elapsed_ms; /* host wall time of the whole dispatch */
  /* Device time from the prologue's first operation to the last one
   * (CUDA events, Vulkan timestamp queries; host clock on the eager CPU
   * stream); -1 when statistics are off or the device cannot time (a Vulkan
   * queue family without timestamps). */
  double device_ms;
} ws_dispatch_stats;

/* Whether statistics are collected (config or WS_STATS=1). */
bool ws_scheduler_statistics_enabled(const ws_scheduler *s);
void ws_scheduler_dispatch_stats(const ws_scheduler *s, ws_dispatch_stats *out);
/* Main nodes: 0 = entry, j = continuation j. */
uint32_t ws_scheduler_node_count(const ws_scheduler *s);
ws_status ws_scheduler_node_stats(const ws_scheduler *s, uint32_t node, ws_node_stats *out);
/* Auxiliary entries: one per stage of multi-stage works, one per single-stage
 * work, in registration order. */
uint32_t ws_scheduler_aux_stats_count(const ws_scheduler *s);
ws_status ws_scheduler_aux_stats(const ws_scheduler *s, uint32_t index, ws_node_stats *out);
/* Prints the statistics table (main nodes, then auxiliary stages). */
void ws_scheduler_print_stats(const ws_scheduler *s, void *file /* FILE* */);

/* Index of continuation `name` (1..K), 0 if there is none. */
uint32_t ws_scheduler_continuation_index(const ws_scheduler *s, const char *name);

#ifdef __cplusplus
}
#endif
#endif
