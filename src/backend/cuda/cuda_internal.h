/* SPDX-License-Identifier: MIT */
/* wavesched — CUDA backend internals shared by cuda_backend.cu (device,
 * memory, copies, launches) and cuda_queue.cu (the scheduler's queue
 * kernels). C++ (CUDA or HIP) only.
 */
#ifndef WAVESCHED_CUDA_INTERNAL_H
#define WAVESCHED_CUDA_INTERNAL_H

/* The C headers' own guards keep these from being re-included inside the
 * extern "C" block below. */
#include "gpu_runtime.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

extern "C" {
#include "../../core/alloc.h"
#include "../../core/device.h"
#include "../../core/fault.h"
}

/* Threads per block of every queue kernel, and tokens each thread keeps in
 * registers per tile: a block works on tiles of WS_CUDA_TILE slots, loading
 * them striped (slot tile + j * BLOCK + thread) so that every warp load is
 * one fully used 128-byte line and eight loads are in flight per thread. */
#define WS_CUDA_BLOCK 256u
#define WS_CUDA_ITEMS 8u
#define WS_CUDA_TILE (WS_CUDA_BLOCK * WS_CUDA_ITEMS)
/* Most bins a thread counts in registers (count: K < 8, publish: K <= 8). */
#define WS_CUDA_REG_BINS 8u
/* Most histogram bins a block keeps in shared memory (K + 1 for counting,
 * K for the others). Larger K falls back to warp-aggregated global atomics. */
#define WS_CUDA_SMEM_BINS 4096u

/* Device control block: words the queue kernels keep for themselves.
 * Invariant: between two queue operations every ticket, the selection
 * accumulator, the count accumulators and the gather cursors are zero. The
 * kernels that use them restore zero in their last block ("last block done"
 * pattern), so no operation needs a memset before it. HOLES and MOVERS are
 * plain outputs of the compaction's two selections.
 * SELECT_PAIR is the exception: two accumulators for selections whose count
 * nobody reads (WS_QUEUE_COUNTER_UNUSED), which need no last block. Such a
 * selection reserves from SELECT_PAIR[p], p = ws_cuda.select_parity, and
 * zeroes SELECT_PAIR[1 - p] for the next one, which stream order runs after
 * it: between operations, SELECT_PAIR[select_parity] is zero. */
enum {
  WS_CTL_COUNT_TICKET = 0,
  WS_CTL_GATHER_TICKET = 1,
  WS_CTL_SELECT_ACC = 2,
  WS_CTL_SELECT_TICKET = 3,
  WS_CTL_HOLES = 4,
  WS_CTL_MOVERS = 5,
  WS_CTL_SELECT_PAIR = 6, /* [2] */
  WS_CTL_CUB_SINK = 8,    /* CUB's count output when nobody reads it */
  WS_CTL_DL_ACC = 9,      /* the device loop's count-less selection; zeroed by its
                             decisions before every iteration */
  WS_CTL_DL_SINK = 10,    /* ... and the word that selection zeroes for no one */
  WS_CTL_COMPACT_ACC = 11, /* [2]: the compaction selection's holes and movers */
  WS_CTL_COMPACT_TICKET = 13,
  /* the device loop (cuda_loop.cu): the branch its decisions chose, whether
   * a decision stopped the graph launch (the unrolled decisions after it
   * do nothing), whether the latest decision was one that ran */
  WS_CTL_DL_BRANCH = 14,
  WS_CTL_DL_HALT = 15,
  WS_CTL_DL_RAN = 16,
  /* the persistent loop's words (decide.h WS_PERSIST_*): its decision for
   * the graph; zero between graph launches */
  WS_CTL_DL_PERSIST = 17,                                /* [4] */
  WS_CTL_COUNT_ACC = 21,                                 /* [WS_CUDA_SMEM_BINS] */
  WS_CTL_CURSORS = WS_CTL_COUNT_ACC + WS_CUDA_SMEM_BINS, /* [WS_CUDA_SMEM_BINS] */
  /* the sorted gather's cursors of K <= 7 queues with
   * WS_CUDA_GATHER_CURSORS=padded: queue b's at b * WS_CTL_CURSOR_STRIDE,
   * one 128-byte line each (cuda_queue.cu ws_gather_all) */
  WS_CTL_CURSORS_PADDED = (WS_CTL_CURSORS + WS_CUDA_SMEM_BINS + 31) / 32 * 32,
  WS_CTL_CURSOR_STRIDE = 32,
  WS_CTL_WORDS = WS_CTL_CURSORS_PADDED + 8 * WS_CTL_CURSOR_STRIDE
};

/* Errors the queue kernels find on the device land in mapped pinned host
 * memory (HERR_*), and synchronize() reports them: the backend interface has
 * no other way to fail an enqueued operation. */
enum {
  WS_HERR_KIND = 0, /* 0 = none, else a WS_DEVERR_* value */
  WS_HERR_A = 1,
  WS_HERR_B = 2,
  WS_HERR_WORDS = 4
};
enum {
  WS_DEVERR_NONE = 0,
  WS_DEVERR_COMPACT = 1,   /* A holes in [0, n) but B live frames in [n, scan) */
  WS_DEVERR_GATHER_ALL = 2 /* queue A's slot would land at B, past the slot list */
};

/* Which selection kernels run (WS_CUDA_QUEUES). auto and portable are the
 * same today: the block-aggregated kernels measured faster than CUB at every
 * size on the H200; auto is free to pick per size should that change. */
typedef enum ws_cuda_queue_mode {
  WS_CUDA_QUEUES_AUTO = 0,    /* the backend's choice: block-aggregated */
  WS_CUDA_QUEUES_CUB = 1,     /* CUB DeviceSelect::FlaggedIf for every selection */
  WS_CUDA_QUEUES_PORTABLE = 2 /* never CUB: the HIP build's only path */
} ws_cuda_queue_mode;

typedef struct ws_cuda {
  int device; /* CUDA ordinal */
  cudaStream_t stream;
  bool stream_borrowed; /* the application's stream (embedding): never destroyed here */
  uint32_t grid_limit; /* most blocks per queue kernel (WS_CUDA_GRID_LIMIT) */
  ws_cuda_queue_mode queue_mode;
  bool gather_padded; /* WS_CUDA_GATHER_CURSORS=padded (cuda_queue.cu ws_gather_all) */
  uint32_t *ctl;           /* device control block [WS_CTL_WORDS] */
  volatile uint32_t *herr; /* host view of the device-error words */
  uint32_t *herr_dev;      /* device view of the same pinned words */
  void *herr_alloc;        /* the pinned allocation */
  /* CUB temporary storage (WS_CUDA_QUEUES=cub only), grow-only: sized for
   * the scheduler's capacity at its first selection, so the loop allocates
   * only at warm-up. */
  void *cub_temp;
  size_t cub_temp_bytes;
  /* Device timer (backend.h timer_mark/timer_elapsed): events recorded on
   * the stream; timer_marks has bit 0 once the start is enqueued, bit 1 the
   * end, so an elapsed time is only read over a pair this dispatch made. */
  cudaEvent_t timer[2];
  unsigned timer_marks;
  uint32_t select_parity; /* which SELECT_PAIR word the next selection uses */
  /* cuda_queue.cu, filled at first use (0 = not yet): the SM count and how
   * many blocks of its kernels that use more than 32 registers per thread
   * are resident at once on the whole device (ws_cuda_resident) */
  uint32_t sm_count;
  uint32_t resident[4];
} ws_cuda;

static inline ws_cuda *ws_cuda_of(ws_device *dev) {
  return (ws_cuda *)dev->impl;
}

/* Formats "cuda: <call> failed at file:line: <name> (<string>)" into the
 * device's error, clears the runtime's (non-sticky) last error so that it
 * cannot be reported again by an unrelated later launch, and returns the
 * status: WS_EDEVMEM for allocation failures, WS_ENODEV when there is no
 * device or driver, else WS_EBACKEND. */
ws_status ws_cuda_fail(ws_device *dev, cudaError_t err, const char *call, const char *file,
                       int line);

#define WS_CUDA_TRY(dev, expr)                                                                     \
  do {                                                                                             \
    cudaError_t ws_e_ = (expr);                                                                    \
    if (ws_e_ != cudaSuccess)                                                                      \
      return ws_cuda_fail((dev), ws_e_, #expr, __FILE__, __LINE__);                                \
  } while (0)

/* An allocating runtime call that fault injection (src/core/fault.h) may
 * fail as the driver would, with cudaErrorMemoryAllocation:
 *   WS_CUDA_TRY(dev, WS_CUDA_ALLOC(dev, cudaMalloc(&p, n))); */
#define WS_CUDA_ALLOC(dev, expr)                                                                   \
  (ws_fault_backend_alloc((dev), #expr) ? cudaErrorMemoryAllocation : (expr))

/* After a <<<>>> launch: the launch's own error (bad configuration, no
 * kernel image for this device, ...), reported as the launch of `what`. */
ws_status ws_cuda_check_launch(ws_device *dev, const char *what, const char *file, int line);

/* Makes the backend's device current on this host thread (kernels launch on
 * the current device, and the stream belongs to ours). */
ws_status ws_cuda_bind(ws_device *dev);

/* Grid for a grid-stride kernel over `items` work items of `per_block`
 * each: enough blocks to fill the device, never more than there is work. */
uint32_t ws_cuda_grid(const ws_cuda *c, uint64_t items, uint32_t per_block);

/* Enqueues the fill kernel (also used at open to prove that this binary has
 * code for the device). */
ws_status ws_cuda_fill(ws_device *dev, uint32_t *dst, uint32_t value, size_t count);

/* A kernel size the host knows (value) or, in a device loop, one the loop
 * state holds when the kernel runs (ptr, read by every thread: the loop
 * writes it before the launch in stream order and no one during). */
typedef struct ws_dyn {
  const uint32_t *ptr;
  uint32_t value;
  uint32_t pad;
} ws_dyn;
static inline ws_dyn ws_dyn_value(uint32_t v) {
  ws_dyn d = {NULL, v, 0};
  return d;
}
static inline ws_dyn ws_dyn_at(const uint32_t *p) {
  ws_dyn d = {p, 0, 0};
  return d;
}
/* A device-loop queue kernel's guard: the kernel does nothing at all (no
 * work, no last-block bookkeeping) unless *word == want; word NULL: always
 * run. The loop (cuda_loop.cu) records the resumes' kernels side by side,
 * guarded by the branch word its decisions write, and the storage
 * compactions guarded by whether the iteration's decision ran. */
typedef struct ws_guard {
  const uint32_t *word;
  uint32_t want;
  uint32_t pad;
} ws_guard;
static inline ws_guard ws_guard_none(void) {
  ws_guard g = {NULL, 0, 0};
  return g;
}
#if defined(__CUDACC__) || defined(__HIPCC__)
__device__ static inline uint32_t ws_dyn_get(ws_dyn d) { return d.ptr ? *d.ptr : d.value; }
__device__ static inline bool ws_guard_off(ws_guard g) { return g.word && *g.word != g.want; }
#endif

/* cuda_queue.cu: the scheduler's queue operations (backend.h). */
ws_status ws_cuda_queue_count(ws_device *dev, const ws_queue_args *q);
ws_status ws_cuda_queue_gather(ws_device *dev, const ws_queue_args *q);
ws_status ws_cuda_queue_gather_all(ws_device *dev, const ws_queue_args *q);
ws_status ws_cuda_queue_publish(ws_device *dev, const ws_queue_args *q);
ws_status ws_cuda_queue_compact(ws_device *dev, const ws_queue_args *q);
/* Frees the CUB storage (destroy). */
void ws_cuda_queue_release(ws_cuda *c);

/* The same operations as a device loop records them (cuda_loop.cu): fixed
 * grids, every size read from the loop state when the kernel runs.
 *   count:      counts[] over [0, *scan)
 *   gather_all: the sorted lists over [0, *scan)
 *   gather:     slots = the slots of token *token in [0, *scan), the count
 *               into q->counter
 *   publish:    the plan's launch (count, src, slot list or dense range)
 *   compact:    the live frames of [*live, *scan) into the holes of [0, *live)
 * Each kernel of gather, publish and compact does nothing unless its guard
 * holds (ws_guard_none(): always). */
ws_status ws_cuda_dl_count(ws_device *dev, const ws_queue_args *q, const uint32_t *scan,
                           uint64_t counts);
ws_status ws_cuda_dl_gather_all(ws_device *dev, const ws_queue_args *q, const uint32_t *scan);
ws_status ws_cuda_dl_gather(ws_device *dev, const ws_queue_args *q, const uint32_t *token,
                            const uint32_t *scan, ws_guard guard);
ws_status ws_cuda_dl_publish(ws_device *dev, const ws_queue_args *q, const ws_launch_plan *plan,
                             ws_guard guard);
ws_status ws_cuda_dl_compact(ws_device *dev, const ws_queue_args *q, const uint32_t *live,
                             const uint32_t *scan, ws_guard guard);
/* cuda_loop.cu: the device loop (backend.h loop_create / loop_run / loop_destroy). */
ws_status ws_cuda_loop_create(ws_device *dev, const ws_loop_desc *desc, void **loop);
ws_status ws_cuda_loop_run(ws_device *dev, void *loop, uint32_t round);
void ws_cuda_loop_destroy(ws_device *dev, void *loop);

#endif
