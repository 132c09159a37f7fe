/* SPDX-License-Identifier: MIT */
/* wavesched — the CUDA backend's device loop (backend.h ws_loop_desc).
 *
 * One CUDA graph per scheduler, built once and replayed by every dispatch:
 *
 *   clear the halt word
 *   WHILE (handle `more`, default 1) {
 *     U times, each after every branch of the one before:
 *     [materialized] count + sorted gather over [0, state.high)
 *     [verification] recount over [0, state.high)
 *     decide: one block copies the loop state into shared memory, runs the
 *             decisions of decide.h (the code the host loop runs), writes the
 *             state back, the chosen branch and `more`
 *     [append storages] each one's compaction over the range the decision
 *             set (selections and a move that find nothing when it is empty)
 *     the branches, b being what the decision chose:
 *       0 NONE            nothing (done, or an error the host reads back)
 *       1 REFILL          [compaction] or [free-slot gather], entry, [publish]
 *       2 RESUME_ALL      continuations 1..K from the sorted lists
 *       2 + j RESUME j    [gather], continuation j's own kernel, [publish]
 *       3 + K + i STAGE   auxiliary stage kernel i (statistics order)
 *       3 + K + S TAIL    the coroutine's tail kernel (tail_frames set)
 *   }
 *
 * The resumes (branches 2 .. 2 + K) are chains of kernels side by side after
 * the decision: every kernel of a chain not chosen returns at once — the
 * queue kernels by their guard on the word the decision wrote (ws_guard),
 * the coroutine's kernels because the plan gives them no frames (kernel.h
 * co_ws_dev_count). The refill, the stages and the tail are the branches of
 * a SWITCH node beside them (handle `branch`; out of range, so empty, when a
 * chain was chosen): stage kernels cannot tell they were not chosen, and
 * the refill's chain of up to four kernels would lengthen every iteration.
 * WS_CUDA_LOOP_SELECT=parallel makes the refill a chain too, =switch puts
 * every branch in the SWITCH (the former shape). A chain costs one kernel
 * launch where the SWITCH costs about five µs (bench/probes/loop_select.cu).
 *
 * The body holds U = WS_CUDA_LOOP_UNROLL iterations (default 8; 1 with
 * materialized accounting or verification, whose observation kernels have
 * no guard; at most the observation interval): the WHILE's own step between
 * passes costs about as much as a kernel launch. The decision that stops the
 * launch sets the halt word, and the decisions after it in the same pass
 * run nothing. Measured per iteration in docs/decisions.md.
 *
 * The persistent loop (WS_CUDA_LOOP_PERSIST=on, the default; fused
 * accounting in scan mode, no verification, no append storage): the body is
 * one iteration preceded by the coroutine's persistent kernel (kernel.h
 * co_ws_persist_gpu, a cooperative launch), which makes the decisions and
 * runs the resumes itself, iteration after iteration with grid barriers
 * between them, until a decision it cannot carry out; the decide kernel
 * then takes that decision (decide.h ws_dec_persist_decide) and the body
 * runs its branch. Resumes then cost no launch at all.
 *
 * Every kernel in the graph has a fixed grid and reads its sizes from the
 * state when it runs (cuda_queue.cu's ws_cuda_dl_*, kernel.h's device-loop
 * launchers), so replaying the graph needs no host work at all. The
 * decisions stop the WHILE when the dispatch is done or failed, or after
 * state.interval iterations; the host then reads the state back
 * (loop_device.c).
 */
#include "cuda_internal.h"

#include <stdlib.h>
#include <string.h>

extern "C" {
#include "wavesched/detail/decide.h"
}

#define WS_LOOP_DECIDE_THREADS 128u
/* the largest state the persistent kernel's block 0 keeps in shared memory
 * (a few hundred bytes plus 136 per auxiliary work in practice) */
#define WS_PERSIST_STATE_MAX (32u * 1024u)
/* iterations per pass of the WHILE body (measured: docs/decisions.md) */
#define WS_LOOP_UNROLL_DEFAULT 8u

typedef struct ws_cuda_loop {
  cudaGraph_t graph;
  cudaGraphExec_t exec;
} ws_cuda_loop;

/* What the decide kernel needs besides the handles. */
typedef struct ws_decide_args {
  uint64_t state;
  uint32_t size;        /* the state's bytes */
  uint32_t smem;        /* the shared copy's bytes: size, or 0 (decide in place) */
  uint32_t stages;      /* auxiliary stages (ws_dec_branch; the state has K) */
  uint32_t switch_from; /* the first branch of the SWITCH (nbranch: no SWITCH) */
  uint32_t nbranch;
  uint32_t refill_switched; /* the refill is the SWITCH's too */
  uint32_t *ctl; /* the control block: WS_CTL_DL_* words */
} ws_decide_args;

/* The decisions of one iteration. The state (a few hundred bytes with its
 * works and statistics) is copied into shared memory by the whole block so
 * that the one thread that decides touches no global memory but the counts
 * and the auxiliary works' words; the copy goes back the same way. When it
 * does not fit (size > smem), the thread decides in place.
 * Unrolled bodies (ws_build): once a decision stops the graph launch (its
 * WHILE condition 0: done, failed, or the observation interval reached),
 * the decisions after it in the same body find the halt word set and only
 * make their iteration run nothing: no branch, a plan without frames. */
__global__ void __launch_bounds__(WS_LOOP_DECIDE_THREADS)
    ws_decide_kernel(ws_decide_args a, cudaGraphConditionalHandle more,
                     cudaGraphConditionalHandle branch) {
  extern __shared__ unsigned long long ws_loop_sh[];
  uint32_t *const chosen = a.ctl + WS_CTL_DL_BRANCH;
  uint32_t *const pw = a.ctl + WS_CTL_DL_PERSIST;
  uint64_t *g = (uint64_t *)(uintptr_t)a.state;
  if (a.ctl[WS_CTL_DL_HALT]) {
    if (threadIdx.x == 0) {
      ((ws_dstate *)g)->plan.action = WS_ACT_NONE;
      *chosen = 0u;
      a.ctl[WS_CTL_DL_RAN] = 0u;
      if (a.switch_from < a.nbranch)
        cudaGraphSetConditional(branch, a.nbranch);
    }
    return;
  }
  /* the persistent kernel before this one made this iteration's decision
   * (decide.h ws_dec_persist_decide): take it */
  const bool pre = pw[WS_PERSIST_PRE] != 0u;
  const bool copy = !pre && a.size <= a.smem;
  if (copy) {
    for (uint32_t i = threadIdx.x; i < a.size / 8u; i += blockDim.x)
      ws_loop_sh[i] = g[i];
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    uint32_t b, again;
    if (pre) {
      b = pw[WS_PERSIST_BRANCH];
      again = pw[WS_PERSIST_MORE];
      pw[WS_PERSIST_PRE] = 0u;
    } else {
      ws_dstate *d = copy ? (ws_dstate *)ws_loop_sh : (ws_dstate *)g;
      const uint64_t sh = (uint64_t)(uintptr_t)ws_loop_sh;
      if (copy)
        ws_dec_rebase(d, a.state, sh, a.size);
      ws_dec_observe_works(d);
      ws_dec_decide(d);
      b = ws_dec_branch(d, a.stages);
      again = ws_dec_loop_next(d);
      if (copy)
        ws_dec_rebase(d, sh, a.state, a.size);
    }
    a.ctl[WS_CTL_DL_ACC] = 0u; /* the count-less gather of this iteration accumulates from 0 */
    a.ctl[WS_CTL_DL_RAN] = 1u;
    a.ctl[WS_CTL_DL_HALT] = again ? 0u : 1u;
    *chosen = b;
    /* a branch that is a chain is none of the SWITCH's */
    if (a.switch_from < a.nbranch)
      cudaGraphSetConditional(branch, b >= a.switch_from || (b == 1 && a.refill_switched)
                                          ? b
                                          : a.nbranch);
    cudaGraphSetConditional(more, again);
  }
  if (copy) {
    __syncthreads();
    for (uint32_t i = threadIdx.x; i < a.size / 8u; i += blockDim.x)
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

/* What one branch launches, into the stream being captured; the queue
 * kernels run only under `guard`. */
static ws_status ws_record_branch(ws_device *dev, const ws_loop_desc *d, uint32_t b,
                                  ws_guard guard) {
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
    if ((r = ws_cuda_dl_compact(dev, &d->queue, &st->plan.compact_live, &st->plan.compact_scan,
                                guard)) != WS_OK)
      return r;
  } else if (b == 1 || !((d->flags & WS_DEC_MATERIALIZED) || WS_DEC_SCAN_ONLY(d->flags))) {
    /* a free-slot gather for the entry, or the queue's (scan mode's launches
     * select their frames themselves; with a scan share the gather runs
     * over [0, plan.gather_scan), 0 when the plan scans: decide.h) */
    if ((r = ws_cuda_dl_gather(dev, &d->queue, &st->plan.gather_token, &st->plan.gather_scan,
                               guard)) != WS_OK)
      return r;
  }
  const int rc = d->entry->launch_dev(src, grid, &d->launch, d->block, (void *)c->stream);
  if (rc != 0)
    return ws_dev_fail(dev, WS_EBACKEND, WS_GPU_API_NAME ": device loop: '%s' continuation %u: %s",
                       d->entry->name, src, cudaGetErrorString((cudaError_t)rc));
  if (d->flags & WS_DEC_PUBLISH)
    return ws_cuda_dl_publish(dev, &d->queue, plan, guard);
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

/* How the body runs the branch the decision chose (the header comment):
 * WS_CUDA_LOOP_SELECT=resumes (unset or empty: the resumes as chains, the
 * refill in the SWITCH), parallel (the refill a chain too) or switch. */
typedef enum ws_select_mode { WS_SELECT_RESUMES, WS_SELECT_PARALLEL, WS_SELECT_SWITCH } ws_select_mode;

static ws_status ws_parse_select(ws_device *dev, uint32_t *mode) {
  static const char *const names[] = {"resumes", "parallel", "switch"};
  const char *v = getenv("WS_CUDA_LOOP_SELECT");
  *mode = WS_SELECT_RESUMES;
  if (!v || !*v)
    return WS_OK;
  for (uint32_t i = 0; i < 3; ++i)
    if (strcmp(v, names[i]) == 0) {
      *mode = i;
      return WS_OK;
    }
  return ws_dev_fail(dev, WS_EINVAL,
                     "WS_CUDA_LOOP_SELECT='%s': expected resumes, parallel or switch", v);
}

/* Whether knob value v is a decimal number in 1..max, into *out. */
static bool ws_env_number(const char *v, unsigned long max, uint32_t *out) {
  char *end = NULL;
  const unsigned long n = strtoul(v, &end, 10);
  if (end == v || *end != '\0' || n < 1 || n > max)
    return false;
  *out = (uint32_t)n;
  return true;
}

/* WS_CUDA_LOOP_PERSIST=on (unset or empty: where the coroutine allows it),
 * off, or N: on, carrying out resumes of at most N frames (decide.h
 * ws_dec_persist.max_frames; the tests mix both kinds of iteration). */
static ws_status ws_parse_persist(ws_device *dev, bool *on, uint32_t *max_frames) {
  const char *v = getenv("WS_CUDA_LOOP_PERSIST");
  *on = true;
  *max_frames = 0;
  if (!v || !*v || strcmp(v, "on") == 0)
    return WS_OK;
  if (strcmp(v, "off") == 0) {
    *on = false;
    return WS_OK;
  }
  if (!ws_env_number(v, UINT32_MAX, max_frames))
    return ws_dev_fail(dev, WS_EINVAL, "WS_CUDA_LOOP_PERSIST='%s': expected on, off or 1..%u frames",
                       v, UINT32_MAX);
  return WS_OK;
}

/* WS_CUDA_LOOP_UNROLL=U, 1..16 (unset or empty: WS_LOOP_UNROLL_DEFAULT):
 * iterations per pass of the WHILE body (ws_build). */
static ws_status ws_parse_unroll(ws_device *dev, uint32_t *unroll) {
  const char *v = getenv("WS_CUDA_LOOP_UNROLL");
  *unroll = WS_LOOP_UNROLL_DEFAULT;
  if (!v || !*v || ws_env_number(v, 16, unroll))
    return WS_OK;
  return ws_dev_fail(dev, WS_EINVAL, "WS_CUDA_LOOP_UNROLL='%s': expected 1..16", v);
}

/* The capture's current dependencies, copied (the runtime's array is
 * valid only until the next capture call). */
static ws_status ws_capture_deps(ws_device *dev, ws_cuda *c, cudaGraphNode_t *deps, size_t cap,
                                 size_t *n, cudaGraph_t *graph) {
  cudaStreamCaptureStatus cs;
  const cudaGraphNode_t *d = NULL;
  cudaError_t e = cudaStreamGetCaptureInfo(c->stream, &cs, NULL, graph, &d, NULL, n);
  if (e == cudaSuccess && *n > cap)
    return ws_dev_fail(dev, WS_EBACKEND,
                       WS_GPU_API_NAME ": device loop: %zu capture dependencies, at most %zu", *n,
                       cap);
  if (e != cudaSuccess)
    return ws_cuda_fail(dev, e, "device loop: cudaStreamGetCaptureInfo", __FILE__, __LINE__);
  for (size_t i = 0; i < *n; ++i)
    deps[i] = d[i];
  return WS_OK;
}

static ws_status ws_set_deps(ws_device *dev, ws_cuda *c, cudaGraphNode_t *deps, size_t n) {
  const cudaError_t e =
      cudaStreamUpdateCaptureDependencies(c->stream, deps, NULL, n, cudaStreamSetCaptureDependencies);
  return e == cudaSuccess ? WS_OK
                          : ws_cuda_fail(dev, e, "device loop: capture dependencies", __FILE__,
                                         __LINE__);
}

/* Whether branch b is one of the SWITCH's (else a chain of its own). */
static bool ws_branch_switched(const ws_decide_args *a, uint32_t b) {
  return a->switch_from < a->nbranch && (b >= a->switch_from || (b == 1 && a->refill_switched));
}

/* RESUME_ALL is never taken under the greedy policy, RESUME j never under
 * the all-queues policy, NONE runs nothing, the tail only when configured */
static bool ws_branch_taken(const ws_loop_desc *d, uint32_t b) {
  const uint32_t nbranch = 4u + d->K + d->stage_count;
  const bool greedy = (d->flags & WS_DEC_GREEDY) != 0;
  return b != 0 && !(b == 2 && greedy) && !(b >= 3 && b < 3u + d->K && !greedy) &&
         !(b == nbranch - 1u && !(d->flags & WS_DEC_TAIL));
}

/* One iteration into the body being captured, after what the capture
 * depends on now: observations, [the persistent kernel (pp)], decisions,
 * storage compactions, then every chain side by side and the SWITCH beside
 * them. Leaves in `sinks` the
 * nodes the next iteration must wait for, and in `*switch_bodies` the
 * SWITCH's branch graphs (NULL without one), to be filled after the
 * capture. */
static ws_status ws_capture_iteration(ws_device *dev, const ws_loop_desc *d, ws_decide_args da,
                                      const ws_dec_persist *pp, cudaGraphConditionalHandle more,
                                      cudaGraphConditionalHandle branch,
                                      cudaGraphNode_t *sinks, size_t sink_cap, size_t *nsinks,
                                      cudaGraph_t **switch_bodies) {
  ws_cuda *c = ws_cuda_of(dev);
  ws_dstate *st = (ws_dstate *)(uintptr_t)d->state;
  ws_status r = WS_OK;
  *switch_bodies = NULL;
  if (d->flags & WS_DEC_MATERIALIZED) {
    if ((r = ws_cuda_dl_count(dev, &d->queue, &st->high, d->queue.counts)) == WS_OK)
      r = ws_cuda_dl_gather_all(dev, &d->queue, &st->high);
  }
  if (r == WS_OK && (d->flags & WS_DEC_VERIFY))
    r = ws_cuda_dl_count(dev, &d->queue, &st->high, d->recount);
  if (r != WS_OK)
    return r;
  if (pp) {
    ws_dec_persist q = *pp;
    const int rc = d->entry->launch_persist(&d->launch, &q, d->block, (void *)c->stream);
    if (rc != 0)
      return ws_dev_fail(dev, WS_EBACKEND, WS_GPU_API_NAME ": device loop: '%s' persistent kernel: %s",
                         d->entry->name, cudaGetErrorString((cudaError_t)rc));
  }
  ws_decide_kernel<<<1, WS_LOOP_DECIDE_THREADS, da.smem, c->stream>>>(da, more, branch);
  if ((r = ws_cuda_check_launch(dev, "device loop decisions", __FILE__, __LINE__)) != WS_OK)
    return r;
  /* issue 18: append storages compacted before the plan's launches, when
   * this iteration's decision ran */
  const ws_guard ran = {da.ctl + WS_CTL_DL_RAN, 1u, 0u};
  for (uint32_t i = 0; r == WS_OK && i < d->storage_count; ++i)
    r = ws_cuda_dl_compact(dev, &d->storage[i].q, (const uint32_t *)(uintptr_t)d->storage[i].live,
                           (const uint32_t *)(uintptr_t)d->storage[i].scan, ran);
  /* every branch starts from what the decisions left */
  cudaGraphNode_t deps[8];
  size_t ndeps = 0;
  cudaGraph_t cg = NULL;
  if (r == WS_OK)
    r = ws_capture_deps(dev, c, deps, sizeof deps / sizeof deps[0], &ndeps, &cg);
  *nsinks = 0;
  for (uint32_t b = 1; r == WS_OK && b < da.nbranch; ++b) {
    if (ws_branch_switched(&da, b) || !ws_branch_taken(d, b))
      continue;
    size_t n = 0;
    if ((r = ws_set_deps(dev, c, deps, ndeps)) != WS_OK ||
        (r = ws_record_branch(dev, d, b, ws_guard{da.ctl + WS_CTL_DL_BRANCH, b, 0})) != WS_OK ||
        (r = ws_capture_deps(dev, c, sinks + *nsinks, sink_cap - *nsinks, &n, &cg)) != WS_OK)
      return r;
    *nsinks += n;
  }
  if (r == WS_OK && da.switch_from < da.nbranch) {
    cudaGraphNodeParams sp = {cudaGraphNodeTypeConditional, {}, {}, 0};
    sp.conditional.handle = branch;
    sp.conditional.type = cudaGraphCondTypeSwitch;
    sp.conditional.size = da.nbranch;
    cudaGraphNode_t snode = NULL;
    const cudaError_t e = cudaGraphAddNode(&snode, cg, deps, NULL, ndeps, &sp);
    if (e != cudaSuccess)
      return ws_cuda_fail(dev, e, "device loop: the switch node", __FILE__, __LINE__);
    if (*nsinks == sink_cap)
      return ws_dev_fail(dev, WS_EBACKEND, WS_GPU_API_NAME ": device loop: too many branch ends");
    sinks[(*nsinks)++] = snode;
    *switch_bodies = sp.conditional.phGraph_out;
  }
  return r;
}

static ws_status ws_build(ws_device *dev, const ws_loop_desc *d, ws_cuda_loop *l) {
  ws_cuda *c = ws_cuda_of(dev);
  uint32_t mode = WS_SELECT_RESUMES, persist_frames = 0, unroll = 1;
  bool persist_on = true;
  ws_status r = ws_parse_select(dev, &mode);
  if (r == WS_OK)
    r = ws_parse_persist(dev, &persist_on, &persist_frames);
  if (r == WS_OK)
    r = ws_parse_unroll(dev, &unroll);
  if (r != WS_OK)
    return r;
  /* the persistent kernel carries out scan-mode resumes alone (decide.h
   * ws_dec_persist_decide): fused accounting without verification, no
   * append storage, whose compaction follows each decision, and a state
   * that fits its shared memory */
  ws_dec_persist pp;
  memset(&pp, 0, sizeof pp);
  bool persist = persist_on && d->entry->launch_persist && (d->flags & WS_DEC_SCAN) &&
                       !(d->flags & (WS_DEC_MATERIALIZED | WS_DEC_VERIFY)) &&
                       d->storage_count == 0 && d->state_bytes <= WS_PERSIST_STATE_MAX;
  if (persist) {
    pp.state = d->state;
    pp.size = d->state_bytes;
    pp.words = (uint64_t)(uintptr_t)(c->ctl + WS_CTL_DL_PERSIST);
    pp.stages = d->stage_count;
    pp.grid = ws_step_grid(c, d->R, d->block);
    pp.max_frames = persist_frames;
    /* the grid the kernel gets at this block size; none when its registers
     * (the heaviest continuation's) do not fit a block of d->block threads */
    pp.dry_run = 1;
    const int rc = d->entry->launch_persist(&d->launch, &pp, d->block, (void *)c->stream);
    if (rc != 0)
      return ws_dev_fail(dev, WS_EBACKEND, WS_GPU_API_NAME ": device loop: '%s' persistent kernel: %s",
                         d->entry->name, cudaGetErrorString((cudaError_t)rc));
    pp.dry_run = 0;
    persist = pp.grid != 0;
  }
  /* observation kernels are not guarded: a body that has them decides
   * once; a launch never needs more iterations than its interval; and the
   * persistent kernel runs every iteration it can before the decide kernel */
  if ((d->flags & (WS_DEC_MATERIALIZED | WS_DEC_VERIFY)) || persist)
    unroll = 1;
  if (d->interval != 0 && d->interval < unroll)
    unroll = d->interval;
  ws_decide_args da;
  memset(&da, 0, sizeof da);
  da.state = d->state;
  da.size = d->state_bytes;
  /* the copy in shared memory: at most the default 48 KiB per block
   * (deciding in global memory instead was slower, s6run7) */
  da.smem = da.size <= 48u * 1024u ? da.size : 0u;
  da.stages = d->stage_count;
  da.nbranch = 4u + d->K + d->stage_count;
  da.ctl = c->ctl;
  /* the SWITCH holds the branches from switch_from on (all of them, or the
   * stages and the tail) and, unless every chain is parallel, the refill;
   * no SWITCH when none of those is ever taken */
  da.switch_from = mode == WS_SELECT_SWITCH ? 0u : 3u + d->K;
  da.refill_switched = mode != WS_SELECT_PARALLEL;
  bool any_switched = false;
  for (uint32_t b = 0; b < da.nbranch; ++b)
    any_switched = any_switched || (ws_branch_switched(&da, b) && ws_branch_taken(d, b));
  if (!any_switched)
    da.switch_from = da.nbranch;

  WS_CUDA_TRY(dev, cudaGraphCreate(&l->graph, 0));
  /* every launch of the graph starts with the halt word clear */
  cudaMemsetParams mp;
  memset(&mp, 0, sizeof mp);
  mp.dst = c->ctl + WS_CTL_DL_HALT;
  mp.elementSize = sizeof(uint32_t);
  mp.width = 1;
  mp.height = 1;
  cudaGraphNode_t clear;
  WS_CUDA_TRY(dev, cudaGraphAddMemsetNode(&clear, l->graph, NULL, 0, &mp));
  cudaGraphConditionalHandle more;
  WS_CUDA_TRY(dev, cudaGraphConditionalHandleCreate(&more, l->graph, 1, cudaGraphCondAssignDefault));
  /* aggregate initialization: the union's default constructor is deleted */
  cudaGraphNodeParams wp = {cudaGraphNodeTypeConditional, {}, {}, 0};
  wp.conditional.handle = more;
  wp.conditional.type = cudaGraphCondTypeWhile;
  wp.conditional.size = 1;
  cudaGraphNode_t wnode;
  WS_CUDA_TRY(dev, cudaGraphAddNode(&wnode, l->graph, &clear, NULL, 1, &wp));
  cudaGraph_t body = wp.conditional.phGraph_out[0];

  /* the body: `unroll` iterations in a row, each waiting for every branch
   * of the one before */
  const size_t sink_cap = da.nbranch + 8u;
  cudaGraphNode_t *sinks = (cudaGraphNode_t *)ws_calloc(sink_cap, sizeof *sinks);
  cudaGraph_t *bodies[16] = {NULL};
  if (!sinks)
    return ws_dev_fail(dev, WS_ENOMEM, WS_GPU_API_NAME ": device loop: out of host memory");
  size_t nsinks = 0;
  const cudaError_t ce =
      cudaStreamBeginCaptureToGraph(c->stream, body, NULL, NULL, 0, cudaStreamCaptureModeRelaxed);
  if (ce != cudaSuccess) {
    ws_free(sinks);
    return ws_cuda_fail(dev, ce, "device loop: cudaStreamBeginCaptureToGraph", __FILE__, __LINE__);
  }
  for (uint32_t u = 0; r == WS_OK && u < unroll; ++u) {
    cudaGraphConditionalHandle branch = 0;
    if (any_switched) {
      const cudaError_t e = cudaGraphConditionalHandleCreate(&branch, body, 0, 0);
      if (e != cudaSuccess)
        r = ws_cuda_fail(dev, e, "device loop: a switch handle", __FILE__, __LINE__);
    }
    if (r == WS_OK && u)
      r = ws_set_deps(dev, c, sinks, nsinks);
    if (r == WS_OK)
      r = ws_capture_iteration(dev, d, da, persist ? &pp : NULL, more, branch, sinks, sink_cap,
                               &nsinks, &bodies[u]);
  }
  ws_free(sinks);
  if ((r = ws_capture_end(dev, c, r)) != WS_OK)
    return r;
  for (uint32_t u = 0; u < unroll && bodies[u]; ++u)
    for (uint32_t b = 0; b < da.nbranch; ++b) {
      cudaGraph_t bg = bodies[u][b];
      if (ws_branch_switched(&da, b) && ws_branch_taken(d, b)) {
        WS_CAPTURE_BEGIN(dev, c, bg);
        if ((r = ws_capture_end(dev, c, ws_record_branch(dev, d, b, ws_guard_none()))) != WS_OK)
          return r;
      }
      size_t nodes = 0;
      WS_CUDA_TRY(dev, cudaGraphGetNodes(bg, NULL, &nodes));
      if (nodes == 0) {
        cudaGraphNode_t empty;
        WS_CUDA_TRY(dev, cudaGraphAddEmptyNode(&empty, bg, NULL, 0));
      }
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

ws_status ws_cuda_loop_run(ws_device *dev, void *loop, uint32_t round) {
  (void)round; /* the graph runs to the interval or the end */
  ws_cuda_loop *l = (ws_cuda_loop *)loop;
  ws_status st = ws_cuda_bind(dev);
  if (st != WS_OK)
    return st;
  WS_CUDA_TRY(dev, cudaGraphLaunch(l->exec, ws_cuda_of(dev)->stream));
  return WS_OK;
}
