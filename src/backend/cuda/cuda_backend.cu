/* SPDX-License-Identifier: MIT */
/* wavesched — CUDA backend: device, memory, copies, launches (backend.h).
 *
 * One device, one stream. Everything the core enqueues (fills, readbacks,
 * user kernels through the launchers kernel.h generates, queue kernels in
 * cuda_queue.cu) goes to that one non-blocking stream in program order, so
 * the stream contract of backend.h holds by construction. The host waits in
 * exactly two places: synchronize() (the loop's one sync per iteration) and
 * the blocking write(). Readbacks land in pinned memory (cudaHostAlloc), so
 * cudaMemcpyAsync into them is truly asynchronous and rides on the next
 * synchronize. Device memory is plain cudaMalloc, never managed memory.
 *
 * Semantics match the CPU reference backend (cpu_backend.c) operation by
 * operation; the queue operations' order of slots within a queue is the only
 * freedom taken, and backend.h leaves it unspecified.
 *
 * Every CUDA call is checked; a failure becomes a ws_status with the failing
 * call and the CUDA error's name and string in the device's message.
 *
 * Embedding (ws_device_config.cuda_stream): the stream is the application's,
 * on the device current at creation; everything above holds with it (the
 * application's own work on it is simply ordered with ours), and destroy
 * leaves it alive.
 */
#include "cuda_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern "C" {
extern const bool ws_backend_cuda_built;
const bool ws_backend_cuda_built = true;
ws_status ws_backend_cuda_open(ws_device *dev, const ws_device_config *config);
}

ws_status ws_cuda_fail(ws_device *dev, cudaError_t err, const char *call, const char *file,
                       int line) {
  /* Reset the thread's last error: a failed cudaMalloc, say, must not make
   * the next generated launcher (which returns cudaGetLastError()) fail. */
  (void)cudaGetLastError();
  ws_status st = WS_EBACKEND;
  if (err == cudaErrorMemoryAllocation)
    st = WS_EDEVMEM;
  else if (err == cudaErrorNoDevice || err == cudaErrorInsufficientDriver)
    st = WS_ENODEV;
  const char *base = strrchr(file, '/');
  return ws_dev_fail(dev, st, WS_GPU_API_NAME ": %s failed at %s:%d: %s (%s)", call,
                     base ? base + 1 : file, line, cudaGetErrorName(err), cudaGetErrorString(err));
}

ws_status ws_cuda_check_launch(ws_device *dev, const char *what, const char *file, int line) {
  const cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess)
    return WS_OK;
  char call[160];
  snprintf(call, sizeof call, "launch of the %s kernel", what);
  return ws_cuda_fail(dev, e, call, file, line);
}

ws_status ws_cuda_bind(ws_device *dev) {
  const ws_cuda *c = ws_cuda_of(dev);
  int cur = -1;
  WS_CUDA_TRY(dev, cudaGetDevice(&cur));
  if (cur != c->device)
    WS_CUDA_TRY(dev, cudaSetDevice(c->device));
  return WS_OK;
}

uint32_t ws_cuda_grid(const ws_cuda *c, uint64_t items, uint32_t per_block) {
  /* The cap defaults to 8 blocks of 256 threads per SM, which fill an SM's
   * 2048 thread slots on sm_80/sm_90; the kernels are grid-stride loops, so
   * fewer resident blocks stay correct. At least one block: several kernels
   * finish in their last block and must run even over zero items. */
  const uint64_t want = (items + per_block - 1) / per_block;
  const uint64_t cap = c->grid_limit;
  const uint64_t g = want < cap ? want : cap;
  return g ? (uint32_t)g : 1u;
}

/* ---- fill ---- */

__global__ void ws_cuda_fill_kernel(uint32_t *dst, uint32_t value, size_t count) {
  const size_t stride = (size_t)gridDim.x * blockDim.x;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < count; i += stride)
    dst[i] = value;
}

ws_status ws_cuda_fill(ws_device *dev, uint32_t *dst, uint32_t value, size_t count) {
  ws_cuda *c = ws_cuda_of(dev);
  const uint32_t grid = ws_cuda_grid(c, count, WS_CUDA_BLOCK * 4u);
  ws_cuda_fill_kernel<<<grid, WS_CUDA_BLOCK, 0, c->stream>>>(dst, value, count);
  return ws_cuda_check_launch(dev, "fill", __FILE__, __LINE__);
}

/* ---- backend operations ---- */

static void cuda_release(ws_cuda *c) {
  /* Order: nothing may still run on the stream when its memory goes. Errors
   * are ignored: destroy cannot report, and a dead context frees nothing. */
  if (c->stream)
    (void)cudaStreamSynchronize(c->stream);
  ws_cuda_queue_release(c);
  for (int i = 0; i < 2; ++i)
    if (c->timer[i])
      (void)cudaEventDestroy(c->timer[i]);
  if (c->ctl)
    (void)cudaFree(c->ctl);
  if (c->herr_alloc)
    (void)cudaFreeHost(c->herr_alloc);
  if (c->stream && !c->stream_borrowed)
    (void)cudaStreamDestroy(c->stream);
  (void)cudaGetLastError();
  c->ctl = NULL;
  c->herr_alloc = NULL;
  c->herr = NULL;
  c->herr_dev = NULL;
  c->stream = NULL;
  c->timer[0] = c->timer[1] = NULL;
}

static void cuda_destroy(ws_device *dev) {
  ws_cuda *c = ws_cuda_of(dev);
  if (!c)
    return;
  int cur = -1;
  if (cudaGetDevice(&cur) == cudaSuccess && cur != c->device)
    (void)cudaSetDevice(c->device);
  cuda_release(c);
  ws_free(c);
  dev->impl = NULL;
}

static ws_status cuda_buffer_alloc(ws_device *dev, size_t size, uint64_t *addr, void **handle) {
  ws_status st = ws_cuda_bind(dev);
  if (st != WS_OK)
    return st;
  void *p = NULL;
  /* cudaMalloc returns 256-byte aligned memory: any field type, and the
   * compaction kernel's 16-byte copies rely on it. Never 0 bytes: address 0
   * means "no slot list" in launch records. */
  cudaError_t e = WS_CUDA_ALLOC(dev, cudaMalloc(&p, size ? size : 1));
  if (e != cudaSuccess) {
    (void)cudaGetLastError(); /* see ws_cuda_fail */
    return ws_dev_fail(dev, e == cudaErrorMemoryAllocation ? WS_EDEVMEM : WS_EBACKEND,
                       WS_GPU_API_NAME ": cudaMalloc of %zu bytes failed: %s (%s)", size,
                       cudaGetErrorName(e), cudaGetErrorString(e));
  }
  *addr = (uint64_t)(uintptr_t)p;
  *handle = p;
  return WS_OK;
}

static void cuda_buffer_free(ws_device *dev, void *handle) {
  ws_cuda *c = ws_cuda_of(dev);
  if (!handle || ws_cuda_bind(dev) != WS_OK)
    return;
  /* A kernel still queued may use the buffer: let the stream drain first
   * (the CPU backend runs eagerly, so there the question never arises). */
  (void)cudaStreamSynchronize(c->stream);
  (void)cudaFree(handle);
  (void)cudaGetLastError();
}

static ws_status cuda_host_alloc(ws_device *dev, size_t size, void **ptr, void **handle) {
  ws_status st = ws_cuda_bind(dev);
  if (st != WS_OK)
    return st;
  void *p = NULL;
  cudaError_t e = WS_CUDA_ALLOC(dev, cudaHostAlloc(&p, size ? size : 1, 0));
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    return ws_dev_fail(dev, WS_ENOMEM,
                       WS_GPU_API_NAME ": cudaHostAlloc of %zu bytes of pinned readback "
                                       "memory failed: %s (%s)",
                       size, cudaGetErrorName(e), cudaGetErrorString(e));
  }
  memset(p, 0, size ? size : 1); /* the CPU backend's readbacks start zeroed too */
  *ptr = p;
  *handle = p;
  return WS_OK;
}

static void cuda_host_free(ws_device *dev, void *handle) {
  ws_cuda *c = ws_cuda_of(dev);
  if (!handle || ws_cuda_bind(dev) != WS_OK)
    return;
  (void)cudaStreamSynchronize(c->stream); /* a readback may still be copying in */
  (void)cudaFreeHost(handle);
  (void)cudaGetLastError();
}

static ws_status cuda_write(ws_device *dev, uint64_t dst, const void *src, size_t size) {
  ws_cuda *c = ws_cuda_of(dev);
  ws_status st = ws_cuda_bind(dev);
  if (st != WS_OK)
    return st;
  /* Stream order puts the copy after everything enqueued; the sync makes it
   * blocking (the caller may reuse `src` at once), as backend.h asks. */
  WS_CUDA_TRY(
      dev, cudaMemcpyAsync((void *)(uintptr_t)dst, src, size, cudaMemcpyHostToDevice, c->stream));
  WS_CUDA_TRY(dev, cudaStreamSynchronize(c->stream));
  return WS_OK;
}

static ws_status cuda_enqueue_read(ws_device *dev, void *host_handle, size_t host_offset,
                                   uint64_t src, size_t size) {
  ws_cuda *c = ws_cuda_of(dev);
  ws_status st = ws_cuda_bind(dev);
  if (st != WS_OK)
    return st;
  /* host_handle is the pinned pointer from host_alloc: an asynchronous DMA. */
  WS_CUDA_TRY(dev, cudaMemcpyAsync((char *)host_handle + host_offset, (const void *)(uintptr_t)src,
                                   size, cudaMemcpyDeviceToHost, c->stream));
  return WS_OK;
}

static ws_status cuda_fill_u32(ws_device *dev, uint64_t dst, uint32_t value, size_t count) {
  ws_status st = ws_cuda_bind(dev);
  if (st != WS_OK)
    return st;
  return ws_cuda_fill(dev, (uint32_t *)(uintptr_t)dst, value, count);
}

static ws_status cuda_synchronize(ws_device *dev) {
  ws_cuda *c = ws_cuda_of(dev);
  ws_status st = ws_cuda_bind(dev);
  if (st != WS_OK)
    return st;
  WS_CUDA_TRY(dev, cudaStreamSynchronize(c->stream));
  /* Errors the queue kernels found since the last sync (mapped pinned
   * memory: the device's writes are visible once the stream drained). */
  const uint32_t kind = c->herr[WS_HERR_KIND];
  if (kind != WS_DEVERR_NONE) {
    const uint32_t a = c->herr[WS_HERR_A], b = c->herr[WS_HERR_B];
    c->herr[WS_HERR_KIND] = WS_DEVERR_NONE;
    c->herr[WS_HERR_A] = 0;
    c->herr[WS_HERR_B] = 0;
    if (kind == WS_DEVERR_COMPACT)
      return ws_dev_fail(dev, WS_EPROTO_INTERNAL,
                         WS_GPU_API_NAME
                         ": compaction found %u free slots below the live count "
                         "but %u live frames above it (they must be equal); nothing was moved",
                         a, b);
    return ws_dev_fail(dev, WS_EPROTO_INTERNAL,
                       WS_GPU_API_NAME
                       ": sorted gather: a slot of queue %u would land at list "
                       "position %u, past the slot list (queue counts do not match the tokens)",
                       a, b);
  }
  return WS_OK;
}

static ws_status cuda_launch(ws_device *dev, const ws_module_entry *entry, ws_launch_form form,
                             uint32_t n, const void *args, size_t args_size, uint32_t block) {
  (void)args_size; /* the launcher copies exactly its argument struct */
  ws_cuda *c = ws_cuda_of(dev);
  const ws_launch_fn fn = ws_entry_launcher(entry, form);
  if (!fn)
    return ws_dev_fail(dev, WS_ENOKERNEL, WS_GPU_API_NAME ": '%s' has no %s launcher", entry->name,
                       ws_form_name(form));
  ws_status st = ws_cuda_bind(dev);
  if (st != WS_OK)
    return st;
  /* The generated launcher (kernel.h) enqueues on our stream and returns
   * cudaGetLastError() as an int. */
  const int rc = fn(n, args, block, (void *)c->stream);
  if (rc != 0) {
    const cudaError_t e = (cudaError_t)rc;
    (void)cudaGetLastError();
    return ws_dev_fail(dev, WS_EBACKEND,
                       WS_GPU_API_NAME ": launch of %s '%s' over %u items (block %u) failed: %s "
                                       "(%s)",
                       ws_form_name(form), entry->name, n, block, cudaGetErrorName(e),
                       cudaGetErrorString(e));
  }
  return WS_OK;
}

/* Events time the stream's own work between the marks, so the host's share
 * of the loop (the per-iteration synchronization and its decisions) shows up
 * as the device's idle time inside that interval, exactly as with Vulkan's
 * timestamp queries. */
static ws_status cuda_timer_mark(ws_device *dev, bool end) {
  ws_cuda *c = ws_cuda_of(dev);
  if (end && !(c->timer_marks & 1u))
    return ws_dev_fail(dev, WS_EINVAL,
                       WS_GPU_API_NAME ": device timer: end mark without a start mark");
  ws_status st = ws_cuda_bind(dev);
  if (st != WS_OK)
    return st;
  WS_CUDA_TRY(dev, cudaEventRecord(c->timer[end ? 1 : 0], c->stream));
  c->timer_marks = end ? (c->timer_marks | 2u) : 1u;
  return WS_OK;
}

static ws_status cuda_timer_elapsed(ws_device *dev, double *ms) {
  ws_cuda *c = ws_cuda_of(dev);
  if (c->timer_marks != 3u)
    return ws_dev_fail(dev, WS_EINVAL,
                       WS_GPU_API_NAME ": device timer: elapsed time asked before both marks "
                                       "were enqueued");
  float t = 0.0f;
  WS_CUDA_TRY(dev, cudaEventElapsedTime(&t, c->timer[0], c->timer[1]));
  *ms = (double)t;
  return WS_OK;
}

/* Free device memory now (another process may take some before the next
 * allocation) and the device's total as the largest single buffer. */
static ws_status cuda_memory_available(ws_device *dev, uint64_t *available, uint64_t *largest) {
  ws_status st = ws_cuda_bind(dev);
  if (st != WS_OK)
    return st;
  size_t free_bytes = 0, total = 0;
  WS_CUDA_TRY(dev, cudaMemGetInfo(&free_bytes, &total));
  *available = free_bytes;
  *largest = total;
  return WS_OK;
}

static const ws_backend_ops cuda_ops = {
    /* .name = */ "cuda",
    /* .destroy = */ cuda_destroy,
    /* .buffer_alloc = */ cuda_buffer_alloc,
    /* .buffer_free = */ cuda_buffer_free,
    /* .host_alloc = */ cuda_host_alloc,
    /* .host_free = */ cuda_host_free,
    /* .write = */ cuda_write,
    /* .enqueue_read = */ cuda_enqueue_read,
    /* .enqueue_fill_u32 = */ cuda_fill_u32,
    /* .synchronize = */ cuda_synchronize,
    /* .launch = */ cuda_launch,
    /* .queue_count = */ ws_cuda_queue_count,
    /* .queue_gather = */ ws_cuda_queue_gather,
    /* .queue_gather_all = */ ws_cuda_queue_gather_all,
    /* .queue_publish = */ ws_cuda_queue_publish,
    /* .queue_compact = */ ws_cuda_queue_compact,
    /* .timer_mark = */ cuda_timer_mark,
    /* .timer_elapsed = */ cuda_timer_elapsed,
#if WS_GPU_HAVE_GRAPH_LOOP
    /* .loop_create = */ ws_cuda_loop_create,
    /* .loop_run = */ ws_cuda_loop_run,
    /* .loop_destroy = */ ws_cuda_loop_destroy,
#else
    /* .loop_create = */ NULL,
    /* .loop_run = */ NULL,
    /* .loop_destroy = */ NULL,
#endif
    /* .memory_available = */ cuda_memory_available,
    /* .loop_pipelined = */ NULL, /* one synchronization per dispatch: nothing to pipeline */
    /* .flush = */ NULL,
};

/* WS_CUDA_GRID_LIMIT=N caps the blocks of every queue kernel (a test knob:
 * with a small N, small inputs take the grid-stride loops' many-tiles-per-
 * block paths, so the conformance check and the sanitizers reach them).
 * Default: 8 blocks of 256 threads per SM. */
static ws_status parse_grid_limit(ws_device *dev, int sm_count, uint32_t *limit) {
  *limit = (uint32_t)(sm_count > 0 ? sm_count : 1) * 8u;
  const char *v = getenv("WS_CUDA_GRID_LIMIT");
  if (!v || !*v)
    return WS_OK;
  char *end = NULL;
  const unsigned long n = strtoul(v, &end, 10);
  if (*end != '\0' || n == 0 || n > 65535)
    return ws_dev_fail(dev, WS_EINVAL, "WS_CUDA_GRID_LIMIT='%s': expected 1..65535 blocks", v);
  *limit = (uint32_t)n;
  return WS_OK;
}

/* WS_CUDA_QUEUES=auto|cub|portable (unset or empty = auto). */
static ws_status parse_queue_mode(ws_device *dev, ws_cuda_queue_mode *mode) {
  const char *v = getenv("WS_CUDA_QUEUES");
  *mode = WS_CUDA_QUEUES_AUTO;
  if (!v || !*v || strcmp(v, "auto") == 0)
    return WS_OK;
  if (strcmp(v, "portable") == 0) {
    *mode = WS_CUDA_QUEUES_PORTABLE;
    return WS_OK;
  }
  if (strcmp(v, "cub") == 0) {
    *mode = WS_CUDA_QUEUES_CUB;
    return WS_OK;
  }
  return ws_dev_fail(dev, WS_EINVAL, "WS_CUDA_QUEUES='%s': expected auto, cub or portable", v);
}

/* WS_CUDA_GATHER_CURSORS=adjacent|padded (unset or empty = adjacent): where
 * the sorted gather of K <= 7 queues reserves each tile's runs, on K
 * adjacent words or on words 128 bytes apart (for measuring whether the
 * tiles' atomics on one 32-byte sector serialize; docs/cuda.md). */
static ws_status parse_gather_cursors(ws_device *dev, bool *padded) {
  const char *v = getenv("WS_CUDA_GATHER_CURSORS");
  *padded = false;
  if (!v || !*v || strcmp(v, "adjacent") == 0)
    return WS_OK;
  if (strcmp(v, "padded") != 0)
    return ws_dev_fail(dev, WS_EINVAL, "WS_CUDA_GATHER_CURSORS='%s': expected adjacent or padded",
                       v);
  *padded = true;
  return WS_OK;
}

static const char *queue_mode_name(ws_cuda_queue_mode m) {
  return m == WS_CUDA_QUEUES_CUB ? "cub" : m == WS_CUDA_QUEUES_PORTABLE ? "portable" : "auto";
}

/* Everything open allocates, in order; on failure the caller releases what
 * was made (cuda_release skips what is still NULL), so nothing leaks. */
static ws_status cuda_setup(ws_device *dev, ws_cuda *c) {
  if (!c->stream_borrowed)
    WS_CUDA_TRY(dev, WS_CUDA_ALLOC(dev, cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking)));
  for (int i = 0; i < 2; ++i)
    WS_CUDA_TRY(dev, WS_CUDA_ALLOC(dev, cudaEventCreate(&c->timer[i])));
  WS_CUDA_TRY(dev, WS_CUDA_ALLOC(dev, cudaHostAlloc(&c->herr_alloc, WS_HERR_WORDS * sizeof(uint32_t),
                                                    cudaHostAllocMapped)));
  memset(c->herr_alloc, 0, WS_HERR_WORDS * sizeof(uint32_t));
  c->herr = (volatile uint32_t *)c->herr_alloc;
  void *hd = NULL;
  WS_CUDA_TRY(dev, cudaHostGetDevicePointer(&hd, c->herr_alloc, 0));
  c->herr_dev = (uint32_t *)hd;
  void *ctl = NULL;
  WS_CUDA_TRY(dev, WS_CUDA_ALLOC(dev, cudaMalloc(&ctl, WS_CTL_WORDS * sizeof(uint32_t))));
  c->ctl = (uint32_t *)ctl;
  /* The control block's invariant (all zero) starts here. Doing it with our
   * own kernel also proves, before any user work, that this binary holds
   * code the device can run (else: cudaErrorNoKernelImageForDevice). */
  ws_status st = ws_cuda_fill(dev, c->ctl, 0u, WS_CTL_WORDS);
  if (st != WS_OK)
    return st;
  WS_CUDA_TRY(dev, cudaStreamSynchronize(c->stream));
  return WS_OK;
}

ws_status ws_backend_cuda_open(ws_device *dev, const ws_device_config *config) {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    /* The usual case on a machine without a GPU: no driver (insufficient
     * driver) or no device. */
    (void)cudaGetLastError();
    return ws_dev_fail(dev, WS_ENODEV,
                       "no usable " WS_GPU_API_NAME " GPU on this machine (cudaGetDeviceCount "
                       "failed: %s: %s)",
                       cudaGetErrorName(e), cudaGetErrorString(e));
  }
  if (count <= 0)
    return ws_dev_fail(dev, WS_ENODEV,
                       "no " WS_GPU_API_NAME " GPU on this machine (cudaGetDeviceCount: 0)");
  /* Embedding: the application's stream belongs to the device (and
   * context) current on this thread, which device_index cannot override. */
  cudaStream_t borrowed = (cudaStream_t)config->cuda_stream;
  int index = config->device_index < 0 ? 0 : config->device_index;
  if (borrowed) {
    WS_CUDA_TRY(dev, cudaGetDevice(&index));
#if !defined(__HIPCC__) && CUDART_VERSION >= 12080
    int stream_device = -1;
    WS_CUDA_TRY(dev, cudaStreamGetDevice(borrowed, &stream_device));
    if (stream_device != index)
      return ws_dev_fail(dev, WS_EINVAL,
                         WS_GPU_API_NAME ": ws_device_config.cuda_stream belongs to device %d, "
                                         "but device %d is current on this thread: make the "
                                         "stream's device current first",
                         stream_device, index);
#endif
  }
  if (index >= count)
    return ws_dev_fail(dev, WS_ENODEV,
                       WS_GPU_API_NAME " device %d requested, but this machine has %d", index,
                       count);
  ws_cuda_queue_mode mode;
  ws_status st = parse_queue_mode(dev, &mode);
  if (st != WS_OK)
    return st;
#if !WS_GPU_HAVE_CUB
  mode = WS_CUDA_QUEUES_PORTABLE; /* no CUB in this build (HIP): one path */
#endif
  if (!borrowed) /* an application's current context stays current */
    WS_CUDA_TRY(dev, cudaSetDevice(index));
  cudaDeviceProp prop;
  memset(&prop, 0, sizeof prop);
  WS_CUDA_TRY(dev, cudaGetDeviceProperties(&prop, index));

  uint32_t grid_limit = 0;
  if ((st = parse_grid_limit(dev, prop.multiProcessorCount, &grid_limit)) != WS_OK)
    return st;
  bool gather_padded = false;
  if ((st = parse_gather_cursors(dev, &gather_padded)) != WS_OK)
    return st;

  ws_cuda *c = (ws_cuda *)ws_calloc(1, sizeof *c);
  if (!c)
    return ws_dev_fail(dev, WS_ENOMEM, WS_GPU_API_NAME ": no host memory for the backend state");
  c->device = index;
  c->grid_limit = grid_limit;
  c->queue_mode = mode;
  c->gather_padded = gather_padded;
  c->stream = borrowed;
  c->stream_borrowed = borrowed != NULL;
  dev->impl = c; /* ws_cuda_of() in the helpers below */
  st = cuda_setup(dev, c);
  if (st != WS_OK) {
    cuda_release(c);
    ws_free(c);
    dev->impl = NULL;
    return st;
  }
  dev->ops = &cuda_ops;
  /* "%.64s": the name must fit dev->name with the rest of the line */
  snprintf(dev->name, sizeof dev->name,
           "%.64s (" WS_GPU_API_NAME " device %d, sm_%d%d, %d SMs, %s queues)", prop.name, index,
           prop.major, prop.minor, prop.multiProcessorCount, queue_mode_name(mode));
  return WS_OK;
}
