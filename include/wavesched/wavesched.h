/* SPDX-License-Identifier: MIT */
/** @file
 * wavesched — host API.
 *
 * A wavefront scheduler for divergent per-item GPU work: each logical item is
 * a coroutine whose continuations run as small kernels over queues of
 * suspended frames, the largest queue first, with side work co-scheduled
 * through bounded shared-capacity auxiliary pipelines (docs/protocol.md).
 *
 * Conventions: opaque handles, create/destroy pairs (destroy accepts NULL),
 * every fallible call returns a ws_status (status.h) and leaves a message on
 * the object: ws_device_last_error(), ws_scheduler_last_error().
 *
 * Ownership: a device owns what is created on it. Schedulers, pools,
 * buffers and readbacks may be destroyed one by one, in any order that
 * destroys a scheduler before the pools registered with it, and
 * ws_device_destroy destroys those still alive (schedulers first, then
 * pools, then buffers and readbacks); every handle of the device is invalid
 * afterwards. A program that keeps its objects as long as the device may
 * destroy the device only.
 *
 * Threads (docs/architecture.md, "Threads"): a device and everything created
 * on it are used by one thread at a time, any thread, the program ordering
 * them; different devices may be used on different threads at once, on every
 * backend. Callbacks run on the calling thread. A call into a CUDA device
 * leaves that device current on the calling thread (cudaSetDevice). The
 * environment is read at creation and when a scheduler builds its device loop.
 */
#ifndef WAVESCHED_WAVESCHED_H
#define WAVESCHED_WAVESCHED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wavesched/launch.h"
#include "wavesched/module.h"
#include "wavesched/status.h"
#include "wavesched/version.h"

#ifdef __cplusplus
extern "C" {
#endif
WS_API_BEGIN

/* ======================================================================
 * Devices
 * ====================================================================== */
/** A device: one backend, one GPU (or the host), one in-order stream. */
typedef struct ws_device ws_device;

/** Severity of a message the library hands to a ws_log_fn. */
typedef enum ws_log_level {
  WS_LOG_ERROR = 0,   /**< an operation failed */
  WS_LOG_WARNING = 1, /**< something to look at; the operation went on */
  WS_LOG_INFO = 2     /**< information */
} ws_log_level;

/** Receives the library's messages that no object can hold: the reason a
 * device or a scheduler could not be created (the object is gone). The
 * library never writes to stdout or stderr itself. `message` is valid during
 * the call only. */
typedef void (*ws_log_fn)(void *user, ws_log_level level, const char *message);

/** Embedding on Vulkan: the host application's own objects, which the device
 * uses instead of creating its own and never destroys (docs/install.md,
 * "Embedding"). Dispatchable Vulkan handles are pointers, so they travel as
 * void * and this header needs no Vulkan header. Requirements: the instance
 * was created with apiVersion >= 1.2 through the same Vulkan loader the
 * library links; the device has the bufferDeviceAddress, shaderInt64 and
 * scalarBlockLayout features enabled; the queue is of `queue_family`, which
 * supports compute, and nobody else submits to it while a wavesched call
 * runs (Vulkan's external synchronization of a VkQueue). */
typedef struct ws_vulkan_objects {
  void *instance;        /**< VkInstance */
  void *physical_device; /**< VkPhysicalDevice of instance */
  void *device;          /**< VkDevice created on physical_device; non-NULL selects embedding */
  void *queue;           /**< VkQueue of device */
  uint32_t queue_family; /**< the queue's family index */
  /** (optional) the VkDeviceCreateInfo the device was created with, read
   * during ws_device_create only: its features (pEnabledFeatures and the
   * pNext chain) tell which optional features shaders may use, and the
   * required ones are checked. NULL: the required features are assumed
   * enabled and no optional one (a shader needing one is refused). */
  const void *device_create_info;
} ws_vulkan_objects;

/** Most threads a CPU device may have (ws_device_config.cpu_threads). */
#define WS_CPU_MAX_THREADS 1024

/** What ws_device_create opens; zero-initialize it, then set what differs. */
typedef struct ws_device_config {
  ws_backend_kind backend; /**< WS_BACKEND_CPU (default 0) */
  int device_index;        /**< CUDA device / Vulkan physical device; -1 = default
                              (WS_VULKAN_DEVICE overrides for Vulkan) */
  int cpu_threads;         /**< CPU backend: threads its kernels run on, the caller's
                                included: 0 = one per CPU the process may use; at most
                                WS_CPU_MAX_THREADS (WS_EINVAL otherwise). They belong to
                                the device: nothing else in the process changes */
  ws_log_fn log;           /**< (optional) messages of this device and its schedulers */
  void *log_user;          /**< passed to log */
  /** Embedding on CUDA (docs/install.md, "Embedding"): a cudaStream_t of the
   * host application. The device then enqueues everything on that stream,
   * in order with the application's own work on it, uses the device (and
   * context) current on the calling thread, ignoring device_index, and
   * never destroys the stream. NULL: the device creates its own stream. */
  void *cuda_stream;
  /** Embedding on Vulkan: used when vulkan.device is not NULL (device_index
   * and WS_VULKAN_DEVICE are then ignored). */
  ws_vulkan_objects vulkan;
} ws_device_config;

/** Backend names as the CLI spells them: "cpu", "cuda", "vulkan" ("unknown" otherwise). */
const char *ws_backend_name(ws_backend_kind backend);
/** Parses a backend name into *out; WS_EINVAL for an unknown one. */
ws_status ws_backend_parse(const char *name, ws_backend_kind *out);
/** Whether this build of the library contains the backend (not whether a
 * device exists: ws_device_create answers that with WS_ENODEV). */
bool ws_backend_compiled(ws_backend_kind backend);

/** Opens a device as `config` says (NULL: the CPU) into *out, NULL on
 * failure, with the reason sent to config->log: WS_ENODEV when the backend is not built or has no usable device,
 * WS_ECONFIG_ENUM for an unknown backend, WS_EINVAL for a malformed
 * embedding, WS_ENOMEM, WS_EBACKEND. */
ws_status ws_device_create(const ws_device_config *config, ws_device **out);
/** Waits for the device's work, destroys the schedulers, pools, buffers and
 * readbacks still alive on it (explicit destroys before stay valid), and
 * closes it. NULL is ignored. */
void ws_device_destroy(ws_device *dev);
/** The device's backend (WS_BACKEND_COUNT for NULL). */
ws_backend_kind ws_device_backend(const ws_device *dev);
/** Human-readable device name ("NVIDIA H200", "llvmpipe", "cpu (16 threads)"). */
const char *ws_device_name(const ws_device *dev);
/** Last error message on this device or on anything created on it ("" if
 * none): buffers, pools, and schedulers, whose own message
 * (ws_scheduler_last_error) the device keeps a copy of. A dispatch clears it. */
const char *ws_device_last_error(const ws_device *dev);
/** Waits until every operation enqueued on the device's stream completed. */
ws_status ws_device_synchronize(ws_device *dev);
/** What the device says about its memory, in bytes: what buffers can still
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
/** Device memory of one device, addressed by a 64-bit device address. */
typedef struct ws_buffer ws_buffer;

/** Allocates `size` bytes of device memory (contents undefined), owned by
 * the device until ws_buffer_destroy. */
ws_status ws_buffer_create(ws_device *dev, size_t size, ws_buffer **out);
/** Frees the buffer after the work enqueued before; NULL is ignored. */
void ws_buffer_destroy(ws_buffer *buf);
/** The address kernels use (kernel.h WS_PTR). Stable for the buffer's life. */
uint64_t ws_buffer_address(const ws_buffer *buf);
/** The size the buffer was created with. */
size_t ws_buffer_size(const ws_buffer *buf);
/** Blocking copy from the host into buf[offset, +size): completes every
 * enqueued operation, then copies. */
ws_status ws_buffer_write(ws_buffer *buf, size_t offset, const void *src, size_t size);
/** Blocking copy of buf[offset, +size) to the host: completes every
 * enqueued operation, then copies. */
ws_status ws_buffer_read(ws_buffer *buf, size_t offset, void *dst, size_t size);
/** Enqueued in stream order: fill `count` 32-bit words at byte `offset` with `value`. */
ws_status ws_buffer_fill_u32(ws_buffer *buf, size_t offset, uint32_t value, size_t count);

/** Host memory the device can copy into in stream order (pinned on CUDA,
 * host-visible on Vulkan). Its contents are valid once the stream was
 * synchronized after ws_readback_enqueue. */
typedef struct ws_readback ws_readback;
/** Allocates `size` bytes of readback memory on the device (owned by the
 * device until ws_readback_destroy). */
ws_status ws_readback_create(ws_device *dev, size_t size, ws_readback **out);
/** Frees the readback memory after the work enqueued before; NULL is ignored. */
void ws_readback_destroy(ws_readback *rb);
/** Enqueues a copy of buf[src_offset, +size) into rb[dst_offset, +size). */
ws_status ws_readback_enqueue(ws_readback *rb, size_t dst_offset, ws_buffer *buf,
                              size_t src_offset, size_t size);
/** The readback's host memory (read it after a synchronization). */
const void *ws_readback_data(const ws_readback *rb);

/* ======================================================================
 * Kernels (see kernel.h for writing them)
 * ====================================================================== */
/** A kernel found on a device (ws_kernel_find); a plain value, nothing to free. */
typedef struct ws_kernel {
  ws_device *dev;               /**< the device it runs on */
  const ws_module_entry *entry; /**< the entry of the device backend's module */
} ws_kernel;

/** Finds entry `name` in the module built for the device's backend. */
ws_status ws_kernel_find(ws_device *dev, const ws_module_set *modules, const char *name,
                         ws_kernel *out);
/** Enqueues the kernel over indices 0..n-1 with an argument block passed by
 * value (args_size must equal the kernel's argument struct, at most
 * WS_MAX_KERNEL_ARGS bytes). */
ws_status ws_kernel_launch(const ws_kernel *k, uint32_t n, const void *args, size_t args_size);

/* ======================================================================
 * Coroutines
 * ====================================================================== */
#define WS_FRAME_FIELD_DESC_(type, name) {#name, (uint32_t)sizeof(type), (uint32_t)_Alignof(type)},
/** Host-side description of a frame declared with WS_FRAME(tname, FIELDS):
 * defines `static const ws_frame_desc tname_ws_desc`. */
#define WS_FRAME_DESC(tname, FIELDS)                                                    \
  static const ws_frame_field tname##_ws_fields_[] = {FIELDS(WS_FRAME_FIELD_DESC_)};    \
  static const ws_frame_desc tname##_ws_desc = {                                        \
      (uint32_t)sizeof(tname), (uint32_t)_Alignof(tname),                               \
      (uint32_t)(sizeof tname##_ws_fields_ / sizeof tname##_ws_fields_[0]), tname##_ws_fields_};

#define WS_CONT_NAME_(idx, fn, name) name,
/** Host-side names array `var` in index order, from the same CONTS list
 * that WS_COROUTINE gets. */
#define WS_CONTINUATION_NAMES(var, CONTS) static const char *const var[] = {CONTS(WS_CONT_NAME_)};

/* ======================================================================
 * Auxiliary work (docs/protocol.md; SPEC §3)
 * ====================================================================== */
/** A continuation that publishes into an auxiliary work, and how much. */
typedef struct ws_aux_producer {
  const char *continuation; /**< name of a non-entry continuation */
  uint32_t bound;           /**< b: most items one run for one frame publishes */
} ws_aux_producer;

/** A stage kernel of an auxiliary work described to the device loop: one
 * launch of `kernel` over indices 0..count-1 with a fixed argument block
 * (copied at registration). */
typedef struct ws_aux_stage_kernel {
  ws_kernel kernel;   /**< a WS_KERNEL entry (ws_kernel_find) */
  const void *args;   /**< its argument block */
  uint32_t args_size; /**< the kernel's argument struct, at most WS_MAX_KERNEL_ARGS */
  uint32_t count;     /**< indices of the launch */
} ws_aux_stage_kernel;

/** What the device loop needs to run an auxiliary work without host calls
 * (SPEC §2.2a): where its counts live in device memory and which kernel runs
 * each stage. The drain stage of a blocked producer is the default, the
 * first non-empty stage. ws_pool fills this for its works. */
typedef struct ws_aux_device {
  uint64_t live;         /**< device address of the uint32 live-count word */
  uint32_t live_is_free; /**< non-zero: that word is the free count, L = C - (int32)word */
  uint32_t reserved;     /**< 0 */
  uint64_t stage_counts; /**< device address of uint32[S], the stage counts */
  uint64_t error;        /**< 0, or a uint32 word counting errors the client's kernels
                            detected (non-zero ends the dispatch: WS_EPROTO_CLIENT) */
  uint64_t counters;     /**< 0, or uint64[2 S]: the loop adds each stage's dispatches
                            and executed counts there (the client's own view) */
  const ws_aux_stage_kernel *stages; /**< [S] */
  /** (optional, issue 18) append-allocated storage: 0 = none. With it the
   * device loop does itself what prepare_for_admission / available_slots do
   * in the host loop, by ws_pool's append rule (docs/protocol.md): before
   * admission of a producer of the work, the extent is reset when nothing
   * is live, or the live items below it are compacted into [0, L) (tokens,
   * ids and payload records move; extent = L) when it is at least 32 and at
   * least 2 L; admission then also needs n*b <= C - extent. A work with
   * such a description promises that its host calls follow the same rule
   * (ws_pool's append mode fills these). */
  uint64_t extent;           /**< device address of the uint32 append extent */
  uint64_t storage_counters; /**< 0, or uint64[3]: the loop adds reclaims and
                                compactions and keeps the peak extent there */
  uint64_t tokens;           /**< uint32[C]: 0 = free or a hole, else stage + 1 */
  uint64_t ids;              /**< uint32[C]: scratch moved with the items */
  uint64_t scratch;          /**< uint32[C]: the compaction's lists */
  uint64_t payload;          /**< C records of payload_stride bytes */
  uint32_t payload_stride;   /**< bytes per record, > 0 */
  uint32_t reserved2;        /**< 0 */
} ws_aux_device;

/** Auxiliary work: one capacity owner. Required: name, capacity, producers, reset,
 * enqueue_count_readback, host_count, and dispatch or dispatch_stage.
 * NULL optional calls take the default in the comment (SPEC §3.3), which
 * reproduces the single-stage protocol. Every call gets `user` first. */
typedef struct ws_aux_work {
  const char *name;                 /**< unique among the scheduler's works */
  uint32_t capacity;                /**< C: most live items */
  const ws_aux_producer *producers; /**< the continuations that publish into it */
  uint32_t producer_count;          /**< number of producers */
  void *user;                       /**< passed to every call */

  /** Make device and host counts zero before any producer runs. */
  ws_status (*reset)(void *user);
  /** Append a device->host copy of the count(s) to the stream. */
  ws_status (*enqueue_count_readback)(void *user);
  /** Total live items L, read only after the readback was synchronized. */
  ws_status (*host_count)(void *user, uint32_t *count);
  /** Single stage: consume exactly host_count() items. Default: dispatch_stage(0). */
  ws_status (*dispatch)(void *user);

  /** (optional) default 1; constant while registered. */
  uint32_t (*stage_count)(void *user);
  /** (optional) default: the work's name; non-empty, unique in the work. */
  const char *(*stage_name)(void *user, uint32_t stage);
  /** (optional) default: host_count() (single stage). */
  ws_status (*stage_host_count)(void *user, uint32_t stage, uint32_t *count);
  /** (optional) default: first stage with a non-zero count. */
  ws_status (*admission_stage)(void *user, uint32_t *stage);
  /** (optional) default: nothing. Storage-only; no count changes. */
  ws_status (*prepare_for_producer)(void *user, uint64_t required);
  /** (optional) default: dispatch() (single stage). Consumes exactly the
   * stage's observed count; moves items between stages or terminates them,
   * never clones. */
  ws_status (*dispatch_stage)(void *user, uint32_t stage);

  /** Materializable storage (docs/protocol.md, "Admission against storage"):
   * for clients whose free slots are not all writable now, e.g. append
   * allocation with holes below the extent. Both are asked only when the
   * scheduler evaluates admission of a producer of this work, in this order.
   * (optional) default: nothing. Storage-only work (compaction, reclaiming
   * an empty extent), enqueued in stream order: no count may change. */
  ws_status (*prepare_for_admission)(void *user);
  /** (optional) default: C - L. The slots that can be materialized now,
   * after prepare_for_admission: a <= C - L, and a == C when L == 0 (else
   * WS_EPROTO_AVAILABILITY). Admission then also requires n*b <= a, and a
   * producer blocked by storage forces a drain like one blocked by capacity;
   * prepare_for_producer(required) is never called with required > a. */
  ws_status (*available_slots)(void *user, uint32_t *available);

  /** (optional) default: none, the work runs in the host loop only. With a
   * device description, and none of admission_stage, prepare_for_producer,
   * prepare_for_admission and available_slots (host calls a device loop
   * cannot make) — the last two are allowed when the description has its
   * append storage (ws_aux_device.extent), which the device loop prepares
   * itself — the work can run in the device loop; the host loop still uses
   * the calls above. Copied at registration. */
  const ws_aux_device *device;
} ws_aux_work;

/** The admission rule, in 64-bit: admit a producer of n frames with bound b
 * iff L <= C and n*b <= C - L. */
static inline bool ws_aux_can_admit(uint32_t capacity, uint32_t live, uint32_t n, uint32_t bound) {
  return live <= capacity && (uint64_t)n * (uint64_t)bound <= (uint64_t)(capacity - live);
}
/** Partial admission: how many of n frames fit, min(n, (C - L) / b). */
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
/** A scheduler: one coroutine on one device, its frame pool and queues. */
typedef struct ws_scheduler ws_scheduler;

/** How a scheduler runs the items. */
typedef enum ws_scheduler_kind {
  WS_SCHEDULER_WAVEFRONT = 0, /**< queues of suspended frames, one continuation per launch */
  WS_SCHEDULER_MEGAKERNEL = 1 /**< every item from entry to end in one thread (baseline) */
} ws_scheduler_kind;

/** How the host knows the queue sizes at each iteration boundary (SPEC §1.3). */
typedef enum ws_accounting {
  WS_ACCOUNTING_MATERIALIZED = 0, /**< count the tokens and sort the slots every iteration */
  WS_ACCOUNTING_INCREMENTAL = 1,  /**< device counts kept by publish kernels (greedy only) */
  WS_ACCOUNTING_FUSED = 2,        /**< count updates inside the kernels (greedy only) */
  WS_ACCOUNTING_AUTO = 3          /**< the default: fused on CUDA and Vulkan, incremental
                                     on the CPU, materialized under the all-queues policy;
                                     chosen when the scheduler is created */
} ws_accounting;

/** The auxiliary-work protocol. */
typedef enum ws_aux_protocol {
  WS_AUX_MULTI_STAGE = 0, /**< SPEC §3.3-3.4 */
  WS_AUX_SINGLE_STAGE = 1 /**< legacy: each work is one queue consumed by dispatch();
                             exists for the red-baseline regression only */
} ws_aux_protocol;

/** Which loop makes the decisions (SPEC §2.2a, docs/loop.md). */
typedef enum ws_loop_kind {
  WS_LOOP_AUTO = 0,  /**< the device loop where the backend can run the
                        configuration (CPU, CUDA, Vulkan) and every registered
                        auxiliary work allows it, else the host loop */
  WS_LOOP_HOST = 1,  /**< observe on the host every iteration (client callbacks) */
  WS_LOOP_DEVICE = 2 /**< decisions on the device; creation or registration fails
                        (WS_ECONFIG_LOOP) where that is impossible */
} ws_loop_kind;

/** How a scheduler runs (docs/loop.md); start from ws_scheduler_config_default(). */
typedef struct ws_scheduler_config {
  ws_scheduler_kind kind;          /**< wavefront (default) or megakernel */
  uint32_t resident_frames;        /**< R, > 0 (wavefront) */
  uint32_t layout;                 /**< WS_LAYOUT_AUTO (default), WS_LAYOUT_AOS or WS_LAYOUT_SOA */
  bool largest_first;              /**< greedy policy; false = all-queues */
  ws_accounting accounting;        /**< incremental and fused need largest_first */
  bool compaction;                 /**< keep live frames in a dense prefix */
  uint32_t refill_threshold;       /**< 0 = A/2, else min(value, A) */
  const char *const *refill_align; /**< continuation names; NULL = no list */
  uint32_t refill_align_count;     /**< number of names in refill_align */
  uint32_t block_size;             /**< GPU threads per block; 0 = 128 */
  bool statistics;                 /**< also on with WS_STATS=1 */
  bool verify_queues;              /**< also on with WS_VERIFY_QUEUES=1 */
  uint64_t iteration_limit;        /**< passes through the loop (SPEC §2.2), and for the
                                      megakernel continuation runs per item, before the
                                      dispatch fails with WS_EITERATION_LIMIT: 0 =
                                      WS_ITERATION_LIMIT_DEFAULT; WS_ITERATION_UNLIMITED
                                      lifts it */
  ws_aux_protocol aux_protocol;    /**< multi-stage (default) or the legacy single-stage one */
  bool partial_admission;          /**< admit min(n, (C-L)/b) frames instead of draining */
  ws_loop_kind loop;               /**< default WS_LOOP_AUTO */
  uint32_t observe_interval;       /**< device loop: iterations between host
                                      synchronizations; 0 = one per dispatch */
  /** The tail: once every item is admitted and fewer than tail_frames frames
   * are live, one launch runs each of them from its continuation to its end
   * (the megakernel form of the same coroutine), instead of many iterations
   * over small queues. Same results; 0 = never. It never runs while
   * auxiliary works are registered (a continuation could produce into them),
   * nor where the module has no tail launcher (Vulkan modules):
   * ws_dispatch_stats.tail_item_count says how many items finished there. */
  uint32_t tail_frames;
} ws_scheduler_config;

/** The iteration limit when the configuration says 0: no dispatch loops
 * forever by default. 2^24 passes take minutes at the slowest host loop
 * measured (~25 us per iteration); real dispatches need far fewer (the path
 * tracer's 1080p render: about 1,700). */
#define WS_ITERATION_LIMIT_DEFAULT (UINT64_C(1) << 24)
/** ws_scheduler_config.iteration_limit: no limit. */
#define WS_ITERATION_UNLIMITED UINT64_MAX

/** Defaults: wavefront, R = 4096, layout and accounting chosen per backend
 * (WS_LAYOUT_AUTO, WS_ACCOUNTING_AUTO: SoA and fused on CUDA and Vulkan,
 * AoS and incremental on the CPU; docs/loop.md),
 * greedy, compaction on, the loop chosen per dispatch (WS_LOOP_AUTO). */
ws_scheduler_config ws_scheduler_config_default(void);

/** Creates a scheduler for `coroutine` on `dev` (config NULL: the defaults)
 * into *out, owned by the device until ws_scheduler_destroy; the
 * configuration is checked here (WS_ECONFIG_*), and a failure leaves *out
 * NULL and its message on the device (ws_device_last_error) and its log. */
ws_status ws_scheduler_create(ws_device *dev, const ws_coroutine_desc *coroutine,
                              const ws_scheduler_config *config, ws_scheduler **out);
/** The configuration scheduler `s` runs with, into *out: the one it was
 * created with, the layout and accounting its backend's defaults chose
 * (never WS_LAYOUT_AUTO or WS_ACCOUNTING_AUTO), and WS_LOOP applied.
 * WS_EINVAL for NULL arguments. */
ws_status ws_scheduler_get_config(const ws_scheduler *s, ws_scheduler_config *out);
/** Frees the scheduler and its device memory; NULL is ignored. */
void ws_scheduler_destroy(ws_scheduler *s);
/** The message of the scheduler's last error ("" if none, or for NULL). */
const char *ws_scheduler_last_error(const ws_scheduler *s);

/** Registers auxiliary work (copied; `user`, names and producer strings must
 * outlive the scheduler). Checks of SPEC §3.5; nothing is registered on error. */
ws_status ws_scheduler_add_aux(ws_scheduler *s, const ws_aux_work *work);

/** Runs `item_count` logical items to completion. `args` (args_size bytes, as
 * the coroutine description says) is copied to the device for this dispatch. */
ws_status ws_scheduler_dispatch(ws_scheduler *s, uint32_t item_count, const void *args,
                                size_t args_size);

/* ---- statistics of the last dispatch (SPEC §3.7) ---- */
/** Statistics of one node: the entry, a continuation or an auxiliary stage. */
typedef struct ws_node_stats {
  const char *name;           /**< "<entry>" for node 0, else the continuation / stage name */
  uint64_t dispatch_count;    /**< launches (entry: refills) */
  uint64_t executed_count;    /**< frames run (entry: generated; stage: observed counts) */
  uint64_t peak_queued_count; /**< most frames (items) waiting at a boundary */
} ws_node_stats;

/** Statistics of the last dispatch as a whole. */
typedef struct ws_dispatch_stats {
  uint64_t iteration_count;    /**< working iterations of the loop */
  uint64_t generated_count;    /**< items started (entry runs) */
  uint64_t resumed_count;      /**< continuation runs */
  /** The scanned range `[0, high)` summed: once per boundary under
   * materialized accounting, else once per resume and once for the tail
   * (docs/loop.md, "Statistics"). */
  uint64_t scanned_slot_count;
  uint64_t max_active_count;   /**< most live frames at a boundary */
  uint64_t aux_dispatch_count; /**< auxiliary stage dispatches */
  uint64_t forced_drain_count; /**< of which forced by blocked producers */
  uint64_t blocked_count;      /**< iterations a producer was not admitted */
  double elapsed_ms;           /**< host wall time of the whole dispatch */
  /** Device time from the prologue's first operation to the last one
   * (CUDA events, Vulkan timestamp queries; host clock on the eager CPU
   * stream); -1 when statistics are off or the device cannot time (a Vulkan
   * queue family without timestamps). */
  double device_ms;
  ws_loop_kind loop;        /**< the loop that ran: WS_LOOP_HOST or WS_LOOP_DEVICE */
  uint64_t host_sync_count; /**< synchronizations the loop waited for */
  /** Items finished in the tail (ws_scheduler_config.tail_frames). Their
   * continuation runs there are not in resumed_count nor in the per-node
   * statistics; the tail itself is one iteration. */
  uint64_t tail_item_count;
} ws_dispatch_stats;

/** Whether statistics are collected (config or WS_STATS=1). */
bool ws_scheduler_statistics_enabled(const ws_scheduler *s);
/** The last dispatch's statistics into *out. */
void ws_scheduler_dispatch_stats(const ws_scheduler *s, ws_dispatch_stats *out);
/** Number of main nodes: 0 = entry, j = continuation j (K + 1). */
uint32_t ws_scheduler_node_count(const ws_scheduler *s);
/** Statistics of main node `node` into *out; WS_EINVAL when out of range. */
ws_status ws_scheduler_node_stats(const ws_scheduler *s, uint32_t node, ws_node_stats *out);
/** Number of auxiliary entries: one per stage of multi-stage works, one per
 * single-stage work, in registration order. */
uint32_t ws_scheduler_aux_stats_count(const ws_scheduler *s);
/** Statistics of auxiliary entry `index` into *out; WS_EINVAL when out of range. */
ws_status ws_scheduler_aux_stats(const ws_scheduler *s, uint32_t index, ws_node_stats *out);
/** Prints the statistics table (main nodes, then auxiliary stages) to `file`, a FILE *. */
void ws_scheduler_print_stats(const ws_scheduler *s, void *file /* FILE* */);

/** Index of continuation `name` (1..K), 0 if there is none. */
uint32_t ws_scheduler_continuation_index(const ws_scheduler *s, const char *name);

/* ======================================================================
 * Scale-out: one logical range over several processes (docs/mpi.md)
 *
 * Helpers for a program that spreads its work over R processes (MPI ranks,
 * or anything else: the library itself knows nothing of MPI). Each rank
 * takes a share of a logical range [0, n) (items, pixels, rows), runs it on
 * its own device, and one rank puts the statistics back together.
 * ====================================================================== */
/** How ws_partition_range splits [0, n) over R ranks. Both depend on n, R
 * and the rank only, so every rank computes every share the same way. */
typedef enum ws_partition_kind {
  /** Contiguous blocks in rank order: rank r gets [first, first + count),
   * the first n % R ranks one index more than the others (stride 1). */
  WS_PARTITION_BLOCKS = 0,
  /** Round robin: index i goes to rank i % R (first = rank, stride = R):
   * neighbouring indices, which often cost alike (rows of an image), land
   * on different ranks. */
  WS_PARTITION_INTERLEAVED = 1
} ws_partition_kind;

/** One rank's share of [0, n): the indices first + k * stride for
 * k = 0 .. count - 1, increasing. The shares of ranks 0 .. R - 1 are
 * disjoint and together cover [0, n); their counts differ by at most one. */
typedef struct ws_partition {
  uint64_t first;  /**< the share's first index (meaningless when count is 0) */
  uint64_t count;  /**< indices in the share; 0 for the ranks beyond n when R > n */
  uint64_t stride; /**< distance between consecutive indices: 1 or R */
} ws_partition;

/** Rank `rank`'s share of [0, n) split over `ranks` ranks as `kind` says,
 * into *out. WS_EINVAL (and *out untouched) when out is NULL, ranks is 0,
 * rank >= ranks or kind is not a ws_partition_kind. n may be 0 (every share
 * empty). */
ws_status ws_partition_range(uint64_t n, uint32_t ranks, uint32_t rank, ws_partition_kind kind,
                             ws_partition *out);
/** The index of the share's element `local` (first + local * stride); the
 * caller keeps local < count. */
uint64_t ws_partition_index(const ws_partition *p, uint64_t local);

/** Several ranks' statistics of the same logical dispatch (or the same
 * sequence of dispatches), put together by ws_dispatch_stats_combine. */
typedef struct ws_dispatch_stats_ranks {
  uint32_t ranks; /**< how many were combined */
  /** The whole: counts summed over the ranks (iteration_count too: the
   * ranks' iterations, not a common count). max_active_count, elapsed_ms
   * and device_ms are the largest over the ranks: the ranks run at once, so
   * the combined dispatch lasts as long as its slowest rank, and each peak
   * belongs to one device. device_ms is -1 when any rank's is. loop is the
   * ranks' common loop, WS_LOOP_AUTO when they ran different ones. */
  ws_dispatch_stats total;
  /** Every field's smallest value over the ranks (the spread's low end);
   * device_ms -1 when any rank's is unknown; loop as in total. */
  ws_dispatch_stats min;
  /** Every field's largest value over the ranks, as min. */
  ws_dispatch_stats max;
  uint32_t fastest_rank; /**< the rank with the smallest elapsed_ms (the first of equals) */
  uint32_t slowest_rank; /**< the rank with the largest elapsed_ms (the first of equals) */
} ws_dispatch_stats_ranks;

/** Combines per_rank[0 .. ranks - 1] (rank order) into *out. WS_EINVAL when
 * per_rank or out is NULL or ranks is 0. */
ws_status ws_dispatch_stats_combine(const ws_dispatch_stats *per_rank, uint32_t ranks,
                                    ws_dispatch_stats_ranks *out);

WS_API_END
#ifdef __cplusplus
}
#endif
#endif
