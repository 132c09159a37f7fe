/* SPDX-License-Identifier: MIT */
/* wavesched — the CUDA backend's device loop (backend.h ws_loop_desc).
 *
 * One CUDA graph per scheduler, built once and replayed by every dispatch:
 *
 *   WHILE (handle `more`, default 1) {
 *     [materialized] count + sorted gather over [0, state.high)
 *     [verification] recount over [0, state.high)
 *     decide: one block copies the loop state into shared memory, runs the
 *             decisions of decide.h (the code the host loop runs), writes the
 *             state back and sets `branch` and `more`
 *     [append storages] each one's compaction over the range the decision
 *             set (selections and a move that find nothing when it is empty)
 *     SWITCH (handle `branch`) {
 *       0 NONE            nothing (done, or an error the host reads back)
 *       1 REFILL          [compaction] or [free-slot gather], entry, [publish]
 *       2 RESUME_ALL      continuations 1..K from the sorted lists
 *       2 + j RESUME j    [gather], continuation j's own kernel, [publish]
 *       3 + K + i STAGE   auxiliary stage kernel i (statistics order)
 *       3 + K + S TAIL    the coroutine's tail kernel (tail_frames set)
 *     }
 *   }
 *
 * Every kernel in the graph has a fixed grid and reads its sizes from the
 * state when it runs (cuda_queue.cu's ws_cuda_dl_*, kernel.h's device-loop
 * launchers), so replaying the graph needs no host work at all. The
 * decisions stop the WHILE when the dispatch is done or failed, or after
 * state.interval iterations; the host then reads the state back
 * (loop_device.c). Measured per iteration and chosen against the other
 * mechanisms in docs/decisions.md.
 */
#include "cuda_internal.h"

#include <string.h>

extern "C" {
#include "../../core/decide.h"
}

#define WS_LOOP_DECIDE_THREADS 128u

typedef struct ws_cuda_loop {
  cudaGraph_t graph;
  cudaGraphExec_t exec;
} ws_cuda_loop;

/* The arrays inside the state's buffer (works, their bounds and stage
 * counts, statistics, the alignment list) are addressed absolutely: moving
 * the buffer into shared memory and back rebases them. `works` is where the
 * copy's works array is (the copy being rebased). */
__device__ static void ws_rebase(ws_dstate *d, ws_dec_work *works, uint64_t from, uint64_t to,
                                 uint64_t size) {
#define WS_REBASE_(f)                                                                              \
  if ((f) >= from && (f) < from + size)                                                            \
  (f) = (f) - from + to
  for (uint32_t i = 0; i < d->aux_count; ++i) {
    WS_REBASE_(works[i].bound);
    WS_REBASE_(works[i].q);
  }
  WS_REBASE_(d->works);
  WS_REBASE_(d->node_stats);
  WS_REBASE_(d->aux_stats);
  WS_REBASE_(d->align);
#undef WS_REBASE_
}

/* The decisions of one iteration. The state (a few hundred bytes with its
 * works and statistics) is copied into shared memory by the whole block so
 * that the one thread that decides touches no global memory but the counts
 * and the auxiliary works' words; the copy goes back the same way. When it
 * does not fit (size > smem), the thread decides in place. */
__global__ void __launch_bounds__(WS_LOOP_DECIDE_THREADS)
    ws_decide_kernel(uint64_t state, uint32_t size, uint32_t K, uint32_t stages, uint32_t smem,
                     uint32_t *zero,
                     cudaGraphConditionalHandle more, cudaGraphConditionalHandle branch) {
  extern __shared__ unsigned long long ws_loop_sh[];
  const bool copy = size <= smem;
  uint64_t *g = (uint64_t *)(uintptr_t)state;
  if (copy) {
    for (uint32_t i = threadIdx.x; i < size / 8u; i += blockDim.x)
      ws_loop_sh[i] = g[i];
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    ws_dstate *d = copy ? (ws_dstate *)ws_loop_sh : (ws_dstate *)g;
    const uint64_t sh = (uint64_t)(uintptr_t)ws_loop_sh;
    if (copy)
      ws_rebase(d, (ws_dec_work *)(uintptr_t)(sh + (d->works - state)), state, sh, size);
    ws_dec_observe_works(d);
    ws_dec_decide(d);
    const ws_dec_plan *p = &d->plan;
    uint32_t b = 0;
    switch (p->action) {
    case WS_ACT_REFILL:
      b = 1;
      break;
    case WS_ACT_RESUME_ALL:
      b = 2;
      break;
    case WS_ACT_RESUME:
      b = 2u + p->queue;
      break;
    case WS_ACT_STAGE:
      b = 3u + K + ws_dec_work_at(d, p->work)->first_stat + p->stage;
      break;
    case WS_ACT_TAIL:
      b = 3u + K + stages;
      break;
    default:
      break;
    }
    const uint32_t again = ws_dec_loop_next(d);
    if (copy)
      ws_rebase(d, WS_DEC_PTR(ws_dec_work, d->works), sh, state, size);
    *zero = 0u; /* the count-less gather of this iteration accumulates from 0 */
    cudaGraphSetConditional(branch, b);
    cudaGraphSetConditional(more, again);
  }
  if (copy) {
    __syncthreads();
    for (uint32_t i = threadIdx.x; i < size / 8u; i += blockDim.x)
      g[i] = ws_loop_sh[i];
  }
}

/* Grid of a device-loop step launch: every frame of the pool in one wave
 * when it fits, else as many resident blocks as the device holds (the
 * kernels stride). */
static uint32_t ws_step_grid(const ws_cuda *c, uint32_t R, uint32_t block) {
  const uint64_t want = ((uint64_t)R + block - 1u) / block;
  const uint64_t cap = (uint64_t)c->grid_limit * WS_CUDA_BLOCK / block;
  return (uint32_t)(want < cap ? (want ? want : 1u) : cap);
}

/* What one branch launches, into the stream being captured. */
static ws_status ws_record_branch(ws_device *dev, const ws_loop_desc *d, uint32_t b) {
  ws_cuda *c = ws_cuda_of(dev);
  ws_dstate *st = (ws_dstate *)(uintptr_t)d->state;
  const ws_launch_plan *plan = (const ws_launch_plan *)(uintptr_t)d->launch.plan;
  const uint32_t grid = ws_step_grid(c, d->R, d->block);
  ws_status r;
  if (b == 0)
    return WS_OK;
  if (b == 3u + d->K + d->stage_count) { /* the tail, over every slot there may be */
    const int rc = d->entry->launch_tail(d->R, &d->launch, d->block, (void *)c->stream);
    if (rc != 0)
      return ws_dev_fail(dev, WS_EBACKEND, WS_GPU_API_NAME ": device loop: '%s' tail: %s",
                         d->entry->name, cudaGetErrorString((cudaError_t)rc));
    return WS_OK;
  }
  if (b >= 3u + d->K) { /* an auxiliary stage */
    const ws_loop_stage *k = &d->stages[b - 3u - d->K];
    const int rc = k->entry->launch(k->count, k->args, d->block, (void *)c->stream);
    if (rc != 0)
      return ws_dev_fail(dev, WS_EBACKEND, WS_GPU_API_NAME ": device loop: stage kernel '%s': %s",
                         k->entry->name, cudaGetErrorString((cudaError_t)rc));
    return WS_OK;
  }
  if (b == 2 && !(d->flags & WS_DEC_GREEDY)) {
    for (uint32_t j = 1; j <= d->K; ++j) {
      const int rc = d->entry->launch_dev(j, grid, &d->launch, d->block, (void *)c->stream);
      if (rc != 0)
        return ws_dev_fail(dev, WS_EBACKEND, WS_GPU_API_NAME ": device loop: '%s' continuation %u: %s",
                           d->entry->name, j, cudaGetErrorString((cudaError_t)rc));
    }
    return WS_OK;
  }
  const uint32_t src = b == 1 ? 0u : b - 2u;
  if (b == 1 && (d->flags & WS_DEC_COMPACTION)) {
    if ((r = ws_cuda_dl_compact(dev, &d->queue, &st->plan.compact_live, &st->plan.compact_scan)) !=
        WS_OK)
      return r;
  } else if (b == 1 || !(d->flags & (WS_DEC_MATERIALIZED | WS_DEC_SCAN))) {
    /* a free-slot gather for the entry, or the queue's (scan mode's launches
     * select their frames themselves) */
    if ((r = ws_cuda_dl_gather(dev, &d->queue, &st->plan.gather_token, &st->plan.gather_scan)) !=
        WS_OK)
      return r;
  }
  const int rc = d->entry->launch_dev(src, grid, &d->launch, d->block, (void *)c->stream);
  if (rc != 0)
    return ws_dev_fail(dev, WS_EBACKEND, WS_GPU_API_NAME ": device loop: '%s' continuation %u: %s",
                       d->entry->name, src, cudaGetErrorString((cudaError_t)rc));
  if (d->flags & WS_DEC_PUBLISH)
    return ws_cuda_dl_publish(dev, &d->queue, plan);
  return WS_OK;
}

/* Captures `n` of the stream's launches into `graph` (after `deps`). */
#define WS_CAPTURE_BEGIN(dev, c, graph)                                                            \
  WS_CUDA_TRY(dev, cudaStreamBeginCaptureToGraph((c)->stream, (graph), NULL, NULL, 0,            \
                                                 cudaStreamCaptureModeRelaxed))

static ws_status ws_capture_end(ws_device *dev, ws_cuda *c, ws_status st) {
  cudaGraph_t g = NULL;
  const cudaError_t e = cudaStreamEndCapture(c->stream, &g);
  if (st != WS_OK)
    return st;
  if (e != cudaSuccess)
    return ws_cuda_fail(dev, e, "cudaStreamEndCapture", __FILE__, __LINE__);
  return WS_OK;
}

static ws_status ws_build(ws_device *dev, const ws_loop_desc *d, ws_cuda_loop *l) {
  ws_cuda *c = ws_cuda_of(dev);
  ws_dstate *st = (ws_dstate *)(uintptr_t)d->state;
  WS_CUDA_TRY(dev, cudaGraphCreate(&l->graph, 0));
  cudaGraphConditionalHandle more, branch;
  WS_CUDA_TRY(dev, cudaGraphConditionalHandleCreate(&more, l->graph, 1, cudaGraphCondAssignDefault));
  /* aggregate initialization: the union's default constructor is deleted */
  cudaGraphNodeParams wp = {cudaGraphNodeTypeConditional, {}, {}, 0};
  wp.conditional.handle = more;
  wp.conditional.type = cudaGraphCondTypeWhile;
  wp.conditional.size = 1;
  cudaGraphNode_t wnode;
  WS_CUDA_TRY(dev, cudaGraphAddNode(&wnode, l->graph, NULL, NULL, 0, &wp));
  cudaGraph_t body = wp.conditional.phGraph_out[0];
  WS_CUDA_TRY(dev, cudaGraphConditionalHandleCreate(&branch, body, 0, 0));

  /* the body: observation kernels and the decisions, then the switch */
  const uint32_t nbranch = 4u + d->K + d->stage_count;
  ws_status r = WS_OK;
  WS_CAPTURE_BEGIN(dev, c, body);
  if (d->flags & WS_DEC_MATERIALIZED) {
    if ((r = ws_cuda_dl_count(dev, &d->queue, &st->high, d->queue.counts)) == WS_OK)
      r = ws_cuda_dl_gather_all(dev, &d->queue, &st->high);
  }
  if (r == WS_OK && (d->flags & WS_DEC_VERIFY))
    r = ws_cuda_dl_count(dev, &d->queue, &st->high, d->recount);
  if (r == WS_OK) {
    const uint32_t bytes = d->state_bytes;
    /* the copy in shared memory: at most the default 48 KiB per block */
    const uint32_t smem = bytes <= 48u * 1024u ? bytes : 0u;
    ws_decide_kernel<<<1, WS_LOOP_DECIDE_THREADS, smem, c->stream>>>(
        d->state, bytes, d->K, d->stage_count, smem, ws_cuda_dl_zero_word(dev), more, branch);
    r = ws_cuda_check_launch(dev, "device loop decisions", __FILE__, __LINE__);
  }
  /* issue 18: append storages compacted before the plan's launches */
  for (uint32_t i = 0; r == WS_OK && i < d->storage_count; ++i)
    r = ws_cuda_dl_compact(dev, &d->storage[i].q, (const uint32_t *)(uintptr_t)d->storage[i].live,
                           (const uint32_t *)(uintptr_t)d->storage[i].scan);
  if (r == WS_OK) {
    cudaStreamCaptureStatus cs;
    const cudaGraphNode_t *deps = NULL;
    size_t ndeps = 0;
    cudaGraph_t cg = NULL;
    cudaError_t e = cudaStreamGetCaptureInfo(c->stream, &cs, NULL, &cg, &deps, NULL, &ndeps);
    cudaGraphNodeParams sp = {cudaGraphNodeTypeConditional, {}, {}, 0};
    sp.conditional.handle = branch;
    sp.conditional.type = cudaGraphCondTypeSwitch;
    sp.conditional.size = nbranch;
    cudaGraphNode_t snode = NULL;
    if (e == cudaSuccess)
      e = cudaGraphAddNode(&snode, cg, deps, NULL, ndeps, &sp);
    if (e == cudaSuccess)
      e = cudaStreamUpdateCaptureDependencies(c->stream, &snode, NULL, 1,
                                              cudaStreamSetCaptureDependencies);
    if (e != cudaSuccess)
      r = ws_cuda_fail(dev, e, "device loop: the switch node", __FILE__, __LINE__);
    if ((r = ws_capture_end(dev, c, r)) != WS_OK)
      return r;
    for (uint32_t b = 0; b < nbranch; ++b) {
      cudaGraph_t bg = sp.conditional.phGraph_out[b];
      /* RESUME_ALL is never taken under the greedy policy, RESUME j never
       * under the all-queues policy, NONE runs nothing: an empty node each */
      const bool taken = b != 0 && !(b == 2 && (d->flags & WS_DEC_GREEDY)) &&
                         !(b >= 3 && b < 3u + d->K && !(d->flags & WS_DEC_GREEDY)) &&
                         !(b == nbranch - 1u && !(d->flags & WS_DEC_TAIL));
      if (taken) {
        WS_CAPTURE_BEGIN(dev, c, bg);
        if ((r = ws_capture_end(dev, c, ws_record_branch(dev, d, b))) != WS_OK)
          return r;
      }
      size_t nodes = 0;
      WS_CUDA_TRY(dev, cudaGraphGetNodes(bg, NULL, &nodes));
      if (nodes == 0) {
        cudaGraphNode_t empty;
        WS_CUDA_TRY(dev, cudaGraphAddEmptyNode(&empty, bg, NULL, 0));
      }
    }
  } else {
    return ws_capture_end(dev, c, r);
  }
  WS_CUDA_TRY(dev, cudaGraphInstantiate(&l->exec, l->graph, 0));
  return WS_OK;
}

void ws_cuda_loop_destroy(ws_device *dev, void *loop) {
  ws_cuda_loop *l = (ws_cuda_loop *)loop;
  if (!l)
    return;
  if (ws_cuda_bind(dev) == WS_OK)
    (void)cudaStreamSynchronize(ws_cuda_of(dev)->stream);
  if (l->exec)
    (void)cudaGraphExecDestroy(l->exec);
  if (l->graph)
    (void)cudaGraphDestroy(l->graph);
  (void)cudaGetLastError();
  ws_free(l);
}

ws_status ws_cuda_loop_create(ws_device *dev, const ws_loop_desc *desc, void **out) {
  ws_status st = ws_cuda_bind(dev);
  if (st != WS_OK)
    return st;
  if (!desc->entry->launch_dev)
    return ws_dev_fail(dev, WS_ENOKERNEL,
                       WS_GPU_API_NAME ": device loop: coroutine '%s' has no device-loop launcher",
                       desc->entry->name);
  ws_cuda_loop *l = (ws_cuda_loop *)ws_calloc(1, sizeof *l);
  if (!l)
    return ws_dev_fail(dev, WS_ENOMEM, WS_GPU_API_NAME ": device loop: out of host memory");
  st = ws_build(dev, desc, l);
  if (st != WS_OK) {
    ws_cuda_loop_destroy(dev, l);
    return st;
  }
  *out = l;
  return WS_OK;
}

ws_status ws_cuda_loop_run(ws_device *dev, void *loop) {
  ws_cuda_loop *l = (ws_cuda_loop *)loop;
  ws_status st = ws_cuda_bind(dev);
  if (st != WS_OK)
    return st;
  WS_CUDA_TRY(dev, cudaGraphLaunch(l->exec, ws_cuda_of(dev)->stream));
  return WS_OK;
}
