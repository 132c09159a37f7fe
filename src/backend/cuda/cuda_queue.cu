/* SPDX-License-Identifier: MIT */
/* wavesched — the CUDA backend's queue operations (backend.h): count,
 * gather, sorted gather, publish and compaction as GPU kernels.
 *
 * Why these kernels look the way they do: a queue operation streams the
 * token array once, so it is bound by memory bandwidth, and the naive way
 * to build per-token results — one global atomic per slot — serializes on a
 * handful of addresses (DEVICE.md measured 5-100x below the card). So:
 *   - every block aggregates first: per warp with match-any (one atomic per
 *     distinct token per warp), per block in shared memory, and only then
 *     one global atomic per token per tile;
 *   - kernels that must produce a total (count, the portable selection, the
 *     sorted gather's cursors) finish in their last block ("last block
 *     done": each block adds its partial result, fences, takes a ticket; the
 *     block that takes the last ticket publishes the total and restores the
 *     control block to zero), so none of them needs a memset launch first;
 *   - selections use a one-launch block-aggregated kernel (ballot ranks in
 *     the warp, a shared scan places the warps, one atomic per tile). CUB's
 *     DeviceSelect::FlaggedIf is kept behind WS_CUDA_QUEUES=cub as the
 *     reference it was measured against: on the H200 it was slower at every
 *     size (docs/cuda.md). The HIP build has no CUB at all (gpu_runtime.h).
 * Order of slots within a queue is unspecified (backend.h) and differs from
 * the CPU backend's ascending order; no result may depend on it.
 *
 * Every kernel is a grid-stride loop over tiles of WS_CUDA_TILE slots in
 * which all lanes of a warp run the same trips (warp primitives need every
 * lane), with out-of-range lanes carrying an invalid key.
 */
#include "cuda_internal.h"

#include <stdio.h>
#include <string.h>

#if WS_GPU_HAVE_CUB
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>
#endif

#define WS_U32(addr) ((uint32_t *)(uintptr_t)(addr))
#define WS_NWARPS (WS_CUDA_BLOCK / WS_GPU_WARP)
#define WS_KEY_NONE 0xffffffffu

/* ---------------------------------------------------------------------
 * Grids
 * --------------------------------------------------------------------- */

/* Which ws_cuda.resident entry caches which kernel. */
enum { WS_RES_GATHER_ALL_BITS = 0, WS_RES_MOVE = 1, WS_RES_COMPACT_SELECT = 2 };

/* `grid` (ws_cuda_grid's choice, sized for 8 resident blocks per SM) capped
 * at the blocks of `kernel` the device actually holds at once. A grid-stride
 * kernel launched with more blocks than that runs a second, partial wave:
 * with 48 registers per thread (5 blocks of 256 per SM) 1056 blocks on 132
 * SMs leave 60 % of the machine idle for the last blocks' tiles. Queried
 * once per kernel (entry `which`, for launches with `smem` bytes of dynamic
 * shared memory: the callers pass the same smem every time, or 0 to skip
 * the cache); any failure leaves `grid` as it is. */
static uint32_t ws_fit_resident(ws_cuda *c, int which, const void *kernel, size_t smem,
                                uint32_t grid) {
  uint32_t res = which >= 0 ? c->resident[which] : 0u;
  if (!res) {
    int sms = (int)c->sm_count, per_sm = 0;
    if (!sms && cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, c->device) !=
                    cudaSuccess) {
      (void)cudaGetLastError();
      return grid;
    }
    c->sm_count = (uint32_t)sms;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, (int)WS_CUDA_BLOCK, smem) !=
            cudaSuccess ||
        per_sm <= 0 || sms <= 0) {
      (void)cudaGetLastError();
      return grid;
    }
    res = (uint32_t)per_sm * (uint32_t)sms;
    if (which >= 0)
      c->resident[which] = res;
  }
  return grid < res ? grid : res;
}

/* ---------------------------------------------------------------------
 * Device helpers
 * --------------------------------------------------------------------- */

/* The lanes of this warp whose key agrees with this lane's in its low BITS
 * bits, from BITS ballots (CUB's MatchAny for radix ranks): for the few
 * queue tokens of a typical coroutine (K <= 7, 3 bits) this is cheaper than
 * match.any, which issues as a multi-cycle instruction. BITS == 0: the full
 * 32-bit key through ws_gpu_match_any. Every lane of the warp must call it. */
template <int BITS>
__device__ static inline ws_gpu_lanemask ws_match(uint32_t key) {
  if (BITS == 0)
    return ws_gpu_match_any(key);
  ws_gpu_lanemask peers = (ws_gpu_lanemask)~(ws_gpu_lanemask)0;
#pragma unroll
  for (int b = 0; b < BITS; ++b) {
    const bool bit = (key >> b) & 1u;
    const ws_gpu_lanemask v = ws_gpu_ballot(bit);
    peers &= bit ? v : (ws_gpu_lanemask)~v;
  }
  return peers;
}

/* Keys of at most WS_MATCH_BITS bits (K <= WS_MATCH_KEYS, the largest key
 * value reserved for "no key") take the ballot match. */
#define WS_MATCH_BITS 3
#define WS_MATCH_KEYS ((1u << WS_MATCH_BITS) - 1u)
static_assert(WS_MATCH_KEYS * WS_CTL_CURSOR_STRIDE <= WS_CTL_WORDS - WS_CTL_CURSORS_PADDED,
              "the padded cursors of K <= WS_MATCH_KEYS queues fit the control block");

/* Adds this lane's key to bins[key] with one atomic per distinct key per
 * warp, and returns this lane's position among everything added to that bin
 * so far (the bin's old value plus its rank among its warp peers). Lanes
 * with valid == false add nothing. Every lane of the warp must call it.
 * BITS > 0: every valid key is below (1 << BITS) - 1, which invalid lanes
 * use, so that peers never mix valid and invalid lanes. */
template <int BITS = 0>
__device__ static inline uint32_t ws_agg_add(uint32_t *bins, uint32_t key, bool valid) {
  const uint32_t k = valid ? key : (BITS ? (1u << BITS) - 1u : WS_KEY_NONE);
  const ws_gpu_lanemask peers = ws_match<BITS>(k);
  const int leader = ws_gpu_ffs(peers) - 1;
  uint32_t base = 0;
  if (valid && (int)ws_gpu_lane() == leader)
    base = atomicAdd(&bins[key], (uint32_t)ws_gpu_popc(peers));
  base = ws_gpu_shfl(base, leader);
  return base + (uint32_t)ws_gpu_popc(peers & ws_gpu_lanemask_lt());
}

/* "Last block done": call after this block's contribution to global
 * memory. True in every thread of the one block that finishes last; by then
 * every other block's atomics and writes are visible to it. */
__device__ static bool ws_last_block(uint32_t *ticket) {
  __shared__ bool last;
  if (gridDim.x == 1) {
    /* the only block: the barrier makes its own global writes and atomics
     * visible to all its threads; no ticket needed */
    __syncthreads();
    return true;
  }
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0)
    last = atomicAdd(ticket, 1u) == gridDim.x - 1u;
  __syncthreads();
  if (last)
    __threadfence();
  return last;
}

/* out[i] = in[0] + ... + in[i-1] for i < count, by the whole block
 * (wsum: shared [WS_NWARPS + 1]). `out` may be shared or global. */
__device__ static void ws_block_exclusive_scan(const uint32_t *in, uint32_t *out, uint32_t count,
                                               uint32_t *wsum) {
  const uint32_t tid = threadIdx.x, lane = ws_gpu_lane(), warp = tid / WS_GPU_WARP;
  uint32_t carry = 0;
  for (uint64_t c0 = 0; c0 < count; c0 += WS_CUDA_BLOCK) {
    const uint64_t i = c0 + tid;
    const uint32_t v = i < count ? in[i] : 0u;
    uint32_t x = v;
    for (int d = 1; d < WS_GPU_WARP; d <<= 1) {
      const uint32_t y = ws_gpu_shfl_up(x, d);
      if ((int)lane >= d)
        x += y;
    }
    if (lane == WS_GPU_WARP - 1)
      wsum[warp] = x;
    __syncthreads();
    if (tid == 0) {
      uint32_t run = 0;
      for (uint32_t w = 0; w < WS_NWARPS; ++w) {
        const uint32_t t = wsum[w];
        wsum[w] = run;
        run += t;
      }
      wsum[WS_NWARPS] = run;
    }
    __syncthreads();
    if (i < count)
      out[i] = carry + wsum[warp] + x - v;
    carry += wsum[WS_NWARPS];
    __syncthreads(); /* wsum is rewritten by the next chunk */
  }
}

/* Reports a device-found error to the host (synchronize() turns it into a
 * status). Several threads may report at once; any one report is enough. */
__device__ static void ws_report(uint32_t *herr, uint32_t kind, uint32_t a, uint32_t b) {
  herr[WS_HERR_A] = a;
  herr[WS_HERR_B] = b;
  __threadfence_system();
  herr[WS_HERR_KIND] = kind;
}

/* Tokens of one tile, striped: item j of thread t is slot t0 + j*BLOCK + t;
 * slots at or past `end` read as WS_KEY_NONE. */
__device__ static inline void ws_load_tile(const uint32_t *tokens, uint64_t t0, uint64_t end,
                                           uint32_t tok[WS_CUDA_ITEMS]) {
#pragma unroll
  for (uint32_t j = 0; j < WS_CUDA_ITEMS; ++j) {
    const uint64_t i = t0 + (uint64_t)j * WS_CUDA_BLOCK + threadIdx.x;
    tok[j] = i < end ? tokens[i] : WS_KEY_NONE;
  }
}

/* ---------------------------------------------------------------------
 * count: counts[t] = |{s < scan : tokens[s] == t}| for t <= K
 * --------------------------------------------------------------------- */

/* How a block aggregates per-token counts before touching global memory:
 *   REGS   at most WS_CUDA_REG_BINS bins (the common case, K < 8): each
 *          thread counts every bin in registers by comparison, pure ALU
 *          work that keeps up with memory; warps sum them once at the end;
 *   SMEM   a block histogram in shared memory through warp-aggregated
 *          atomics (up to WS_CUDA_SMEM_BINS bins);
 *   GLOBAL warp-aggregated atomics straight into global memory (more bins
 *          than shared memory holds). */
enum { WS_AGG_REGS = 0, WS_AGG_SMEM = 1, WS_AGG_GLOBAL = 2 };

/* Adds each thread's register counters of bins < nbins to the block
 * histogram `hist` (shared): one atomic per bin per warp. */
__device__ static inline void ws_flush_regs(const uint32_t cnt[WS_CUDA_REG_BINS], uint32_t nbins,
                                            uint32_t *hist) {
#pragma unroll
  for (uint32_t b = 0; b < WS_CUDA_REG_BINS; ++b) {
    const uint32_t v = ws_gpu_warp_sum(cnt[b]);
    if (ws_gpu_lane() == 0 && b < nbins && v)
      atomicAdd(&hist[b], v);
  }
}

/* REGS and SMEM: the block histogram (shared, nbins words) is summed into
 * the control block's accumulator and the last block publishes the total,
 * so no memset precedes the launch. GLOBAL: counts[0..K] were zeroed by a
 * memset and the kernel adds into them directly. */
template <int MODE>
__global__ void __launch_bounds__(WS_CUDA_BLOCK)
    ws_count_kernel(const uint32_t *tokens, ws_dyn scan_, uint32_t nbins, uint32_t *counts,
                    uint32_t *acc, uint32_t *ticket) {
  extern __shared__ uint32_t ws_sh[];
  const uint32_t scan = ws_dyn_get(scan_);
  if (MODE != WS_AGG_GLOBAL) {
    for (uint32_t b = threadIdx.x; b < nbins; b += WS_CUDA_BLOCK)
      ws_sh[b] = 0;
    __syncthreads();
  }
  uint32_t cnt[WS_CUDA_REG_BINS];
#pragma unroll
  for (uint32_t b = 0; b < WS_CUDA_REG_BINS; ++b)
    cnt[b] = 0;
  /* the next tile's tokens are loaded before this tile's are counted:
   * twice the bytes in flight per thread */
  const uint64_t stride = (uint64_t)gridDim.x * WS_CUDA_TILE;
  uint64_t t0 = (uint64_t)blockIdx.x * WS_CUDA_TILE;
  uint32_t tok[WS_CUDA_ITEMS];
  ws_load_tile(tokens, t0, scan, tok);
  for (; t0 < scan; t0 += stride) {
    uint32_t nxt[WS_CUDA_ITEMS];
    ws_load_tile(tokens, t0 + stride, scan, nxt); /* past scan: no load */
#pragma unroll
    for (uint32_t j = 0; j < WS_CUDA_ITEMS; ++j) {
      if (MODE == WS_AGG_REGS) {
#pragma unroll
        for (uint32_t b = 0; b < WS_CUDA_REG_BINS; ++b)
          cnt[b] += tok[j] == b;
      } else {
        ws_agg_add(MODE == WS_AGG_SMEM ? ws_sh : counts, tok[j], tok[j] < nbins);
      }
    }
#pragma unroll
    for (uint32_t j = 0; j < WS_CUDA_ITEMS; ++j)
      tok[j] = nxt[j];
  }
  if (MODE == WS_AGG_GLOBAL)
    return;
  if (MODE == WS_AGG_REGS)
    ws_flush_regs(cnt, nbins, ws_sh);
  __syncthreads();
  for (uint32_t b = threadIdx.x; b < nbins; b += WS_CUDA_BLOCK)
    if (ws_sh[b])
      atomicAdd(&acc[b], ws_sh[b]);
  if (ws_last_block(ticket)) {
    /* counts[K + 1] (the error word) is not touched. */
    for (uint32_t b = threadIdx.x; b < nbins; b += WS_CUDA_BLOCK)
      counts[b] = atomicExch(&acc[b], 0u);
    if (threadIdx.x == 0)
      *ticket = 0;
  }
}

static ws_status ws_count(ws_device *dev, const ws_queue_args *q, ws_dyn scan, uint32_t grid,
                          uint32_t *counts) {
  ws_cuda *c = ws_cuda_of(dev);
  ws_status st = ws_cuda_bind(dev);
  if (st != WS_OK)
    return st;
  const uint32_t nbins = q->queue_count + 1u;
  const size_t smem = (size_t)nbins * sizeof(uint32_t);
  uint32_t *tok = WS_U32(q->tokens);
  uint32_t *acc = c->ctl + WS_CTL_COUNT_ACC, *ticket = c->ctl + WS_CTL_COUNT_TICKET;
  /* REGS and SMEM: one launch, also for scan == 0 (the last block writes
   * the zeros). */
  if (nbins <= WS_CUDA_REG_BINS) {
    ws_count_kernel<WS_AGG_REGS>
        <<<grid, WS_CUDA_BLOCK, smem, c->stream>>>(tok, scan, nbins, counts, acc, ticket);
    return ws_cuda_check_launch(dev, "count", __FILE__, __LINE__);
  }
  if (nbins <= WS_CUDA_SMEM_BINS) {
    ws_count_kernel<WS_AGG_SMEM>
        <<<grid, WS_CUDA_BLOCK, smem, c->stream>>>(tok, scan, nbins, counts, acc, ticket);
    return ws_cuda_check_launch(dev, "count", __FILE__, __LINE__);
  }
  WS_CUDA_TRY(dev, cudaMemsetAsync(counts, 0, smem, c->stream));
  if (!scan.ptr && scan.value == 0)
    return WS_OK;
  ws_count_kernel<WS_AGG_GLOBAL>
      <<<grid, WS_CUDA_BLOCK, 0, c->stream>>>(tok, scan, nbins, counts, acc, ticket);
  return ws_cuda_check_launch(dev, "count (global)", __FILE__, __LINE__);
}

ws_status ws_cuda_queue_count(ws_device *dev, const ws_queue_args *q) {
  return ws_count(dev, q, ws_dyn_value(q->scan),
                  ws_cuda_grid(ws_cuda_of(dev), q->scan, WS_CUDA_TILE), WS_U32(q->counts));
}

ws_status ws_cuda_dl_count(ws_device *dev, const ws_queue_args *q, const uint32_t *scan,
                           uint64_t counts) {
  /* the scan never exceeds the pool: a grid for the pool */
  return ws_count(dev, q, ws_dyn_at(scan), ws_cuda_grid(ws_cuda_of(dev), q->capacity, WS_CUDA_TILE),
                  WS_U32(counts));
}

/* ---------------------------------------------------------------------
 * selection: out[0..m) = the slots s in [begin, end) whose token equals
 * (equal) or differs from (!equal) `token`, any order; *count_out = m
 * --------------------------------------------------------------------- */

/* One launch: per tile, ballots rank the selected slots within each warp, a
 * shared scan of the warp totals places the warps, and one global atomic on
 * the control block's accumulator reserves the tile's output range.
 * COUNT: the last block publishes the total and zeroes the accumulator.
 * Without COUNT (nobody reads the total) there is no last block, which saves
 * every block a fence and a ticket: `ticket` is then the other accumulator of
 * the SELECT_PAIR, zeroed here for the next such selection. */
template <bool COUNT>
__global__ void __launch_bounds__(WS_CUDA_BLOCK)
    ws_select_kernel(const uint32_t *tokens, ws_dyn begin_, ws_dyn end_, ws_dyn token_,
                     bool equal, uint32_t *out_base, ws_dyn out_off, uint32_t *count_out,
                     uint32_t *acc, uint32_t *ticket, ws_guard guard) {
  /* Double-buffered per tile parity (two barriers per tile instead of
   * three): tile i writes wtot[i & 1] before its first barrier, and the
   * last reads of that buffer, tile i - 2's stores, finished in every thread
   * before tile i - 1's first barrier. The next tile's tokens are loaded
   * before this tile's reservation atomic, so loads stay in flight across
   * its round trip. */
  __shared__ uint32_t wtot[2][WS_NWARPS];
  __shared__ uint32_t tile_base[2];
  if (ws_guard_off(guard))
    return;
  const uint32_t begin = ws_dyn_get(begin_), end = ws_dyn_get(end_), token = ws_dyn_get(token_);
  uint32_t *const out = out_base + ws_dyn_get(out_off);
  const uint32_t lane = ws_gpu_lane(), warp = threadIdx.x / WS_GPU_WARP;
  const ws_gpu_lanemask below = ws_gpu_lanemask_lt();
  if (!COUNT && blockIdx.x == 0 && threadIdx.x == 0)
    *ticket = 0u;
  const uint64_t stride = (uint64_t)gridDim.x * WS_CUDA_TILE;
  uint64_t t0 = (uint64_t)begin + (uint64_t)blockIdx.x * WS_CUDA_TILE;
  uint32_t tok[WS_CUDA_ITEMS];
  ws_load_tile(tokens, t0, end, tok);
  for (uint32_t par = 0; t0 < end; t0 += stride, par ^= 1u) {
    uint32_t nxt[WS_CUDA_ITEMS], off[WS_CUDA_ITEMS];
    bool sel[WS_CUDA_ITEMS];
    ws_load_tile(tokens, t0 + stride, end, nxt); /* past end: no load */
    uint32_t run = 0;
#pragma unroll
    for (uint32_t j = 0; j < WS_CUDA_ITEMS; ++j) {
      const uint64_t i = t0 + (uint64_t)j * WS_CUDA_BLOCK + threadIdx.x;
      sel[j] = i < end && ((tok[j] == token) == equal);
      const ws_gpu_lanemask m = ws_gpu_ballot(sel[j]);
      off[j] = run + (uint32_t)ws_gpu_popc(m & below);
      run += (uint32_t)ws_gpu_popc(m);
    }
    uint32_t *const wt = wtot[par];
    if (lane == 0)
      wt[warp] = run;
    __syncthreads();
    if (threadIdx.x == 0) {
      uint32_t s = 0;
      for (uint32_t w = 0; w < WS_NWARPS; ++w) {
        const uint32_t v = wt[w];
        wt[w] = s;
        s += v;
      }
      tile_base[par] = s ? atomicAdd(acc, s) : 0u;
    }
    __syncthreads();
    const uint32_t at = tile_base[par] + wt[warp];
#pragma unroll
    for (uint32_t j = 0; j < WS_CUDA_ITEMS; ++j)
      if (sel[j])
        out[at + off[j]] = (uint32_t)(t0 + (uint64_t)j * WS_CUDA_BLOCK + threadIdx.x);
#pragma unroll
    for (uint32_t j = 0; j < WS_CUDA_ITEMS; ++j)
      tok[j] = nxt[j];
  }
  if (COUNT && ws_last_block(ticket) && threadIdx.x == 0) {
    *count_out = atomicExch(acc, 0u);
    *ticket = 0;
  }
}

/* Compaction's two selections in one launch, one pass over [0, scan): the
 * free slots of [0, n) into holes[] and the live slots of [n, scan) into
 * movers_base + *movers_off, each reserved per tile from its own
 * accumulator (acc[0], acc[1]) exactly as ws_select_kernel does (ballot
 * ranks, shared scans by two different threads so that the two atomics are
 * in flight together, tile parity double-buffering, next tile's loads in
 * flight); the last block publishes both counts and restores acc and the
 * ticket to zero. One launch fewer than two selections, and a tile that
 * straddles n is read once. 58 registers: its grid is capped at the
 * resident blocks (ws_fit_resident). */
__global__ void __launch_bounds__(WS_CUDA_BLOCK)
    ws_compact_select_kernel(const uint32_t *tokens, ws_dyn n_, ws_dyn scan_, uint32_t *holes,
                             uint32_t *movers_base, ws_dyn movers_off, uint32_t *acc,
                             uint32_t *ticket, uint32_t *holes_out, uint32_t *movers_out,
                             ws_guard guard) {
  __shared__ uint32_t wtot[2][2][WS_NWARPS]; /* [parity][holes, movers][warp] */
  __shared__ uint32_t tile_base[2][2];
  if (ws_guard_off(guard))
    return;
  const uint32_t n = ws_dyn_get(n_), scan = ws_dyn_get(scan_);
  uint32_t *const movers = movers_base + ws_dyn_get(movers_off);
  const uint32_t lane = ws_gpu_lane(), warp = threadIdx.x / WS_GPU_WARP;
  const ws_gpu_lanemask below = ws_gpu_lanemask_lt();
  const uint64_t stride = (uint64_t)gridDim.x * WS_CUDA_TILE;
  uint64_t t0 = (uint64_t)blockIdx.x * WS_CUDA_TILE;
  uint32_t tok[WS_CUDA_ITEMS];
  ws_load_tile(tokens, t0, scan, tok);
  for (uint32_t par = 0; t0 < scan; t0 += stride, par ^= 1u) {
    uint32_t nxt[WS_CUDA_ITEMS], off[WS_CUDA_ITEMS];
    uint32_t kind = 0; /* bit j: item j is a hole (else, when selected, a mover) */
    uint32_t sel = 0;  /* bit j: item j is selected */
    ws_load_tile(tokens, t0 + stride, scan, nxt); /* past scan: no load */
    uint32_t run[2] = {0, 0};
#pragma unroll
    for (uint32_t j = 0; j < WS_CUDA_ITEMS; ++j) {
      const uint64_t i = t0 + (uint64_t)j * WS_CUDA_BLOCK + threadIdx.x;
      const bool hole = i < n && tok[j] == 0u; /* callers keep n <= scan */
      const bool mover = i >= n && i < scan && tok[j] != 0u;
      const ws_gpu_lanemask mh = ws_gpu_ballot(hole), mm = ws_gpu_ballot(mover);
      off[j] = hole ? run[0] + (uint32_t)ws_gpu_popc(mh & below)
                    : run[1] + (uint32_t)ws_gpu_popc(mm & below);
      run[0] += (uint32_t)ws_gpu_popc(mh);
      run[1] += (uint32_t)ws_gpu_popc(mm);
      kind |= (uint32_t)hole << j;
      sel |= (uint32_t)(hole || mover) << j;
    }
    if (lane == 0) {
      wtot[par][0][warp] = run[0];
      wtot[par][1][warp] = run[1];
    }
    __syncthreads();
    if (threadIdx.x == 0 || threadIdx.x == WS_GPU_WARP) {
      const uint32_t l = threadIdx.x == 0 ? 0u : 1u;
      uint32_t *const wt = wtot[par][l];
      uint32_t s = 0;
      for (uint32_t w = 0; w < WS_NWARPS; ++w) {
        const uint32_t v = wt[w];
        wt[w] = s;
        s += v;
      }
      tile_base[par][l] = s ? atomicAdd(&acc[l], s) : 0u;
    }
    __syncthreads();
    const uint32_t at_h = tile_base[par][0] + wtot[par][0][warp];
    const uint32_t at_m = tile_base[par][1] + wtot[par][1][warp];
#pragma unroll
    for (uint32_t j = 0; j < WS_CUDA_ITEMS; ++j) {
      if ((sel >> j) & 1u) {
        const uint32_t slot = (uint32_t)(t0 + (uint64_t)j * WS_CUDA_BLOCK + threadIdx.x);
        if ((kind >> j) & 1u)
          holes[at_h + off[j]] = slot;
        else
          movers[at_m + off[j]] = slot;
      }
    }
#pragma unroll
    for (uint32_t j = 0; j < WS_CUDA_ITEMS; ++j)
      tok[j] = nxt[j];
  }
  if (ws_last_block(ticket) && threadIdx.x == 0) {
    *holes_out = atomicExch(&acc[0], 0u);
    *movers_out = atomicExch(&acc[1], 0u);
    *ticket = 0;
  }
}

#if WS_GPU_HAVE_CUB
/* CUB only when asked for (WS_CUDA_QUEUES=cub): on the H200 the one-launch
 * block-aggregated selection measured faster at every size (docs/cuda.md:
 * 33 us against CUB's 47.5 us over 2^24 slots, 5.5 against 12.5 over 2^20). */
static bool ws_use_cub(const ws_cuda *c, uint32_t n) {
  if (n == 0) /* the one-launch kernel writes the zero count itself */
    return false;
  return c->queue_mode == WS_CUDA_QUEUES_CUB;
}

/* CUB's selection predicate, applied to the token ("flag") of each slot. */
struct ws_token_pred {
  uint32_t token;
  bool equal;
  __host__ __device__ bool operator()(uint32_t t) const { return (t == token) == equal; }
};

static cudaError_t ws_cub_select(void *temp, size_t &bytes, const uint32_t *tokens, uint32_t begin,
                                 uint32_t n, uint32_t token, bool equal, uint32_t *out,
                                 uint32_t *count_out, cudaStream_t stream) {
  return cub::DeviceSelect::FlaggedIf(temp, bytes, thrust::counting_iterator<uint32_t>(begin),
                                      tokens ? tokens + begin : tokens, out, count_out, (int64_t)n,
                                      ws_token_pred{token, equal}, stream);
}

/* CUB temporary storage for a selection of n slots, grown (never shrunk) to
 * what `capacity` slots need: the first selection of a scheduler allocates,
 * the loop after it does not. */
static ws_status ws_cub_reserve(ws_device *dev, ws_cuda *c, uint32_t n, uint32_t capacity,
                                size_t *bytes) {
  size_t need = 0;
  WS_CUDA_TRY(dev, ws_cub_select(NULL, need, NULL, 0, n, 0, true, NULL, NULL, c->stream));
  if (need <= c->cub_temp_bytes && c->cub_temp) {
    *bytes = c->cub_temp_bytes;
    return WS_OK;
  }
  const uint32_t items = capacity > n ? capacity : n;
  size_t want = 0;
  WS_CUDA_TRY(dev, ws_cub_select(NULL, want, NULL, 0, items, 0, true, NULL, NULL, c->stream));
  if (want < need)
    want = need;
  /* Selections already queued may still use the old storage. */
  WS_CUDA_TRY(dev, cudaStreamSynchronize(c->stream));
  if (c->cub_temp) {
    WS_CUDA_TRY(dev, cudaFree(c->cub_temp));
    c->cub_temp = NULL;
    c->cub_temp_bytes = 0;
  }
  WS_CUDA_TRY(dev, WS_CUDA_ALLOC(dev, cudaMalloc(&c->cub_temp, want)));
  c->cub_temp_bytes = want;
  *bytes = want;
  return WS_OK;
}
#endif

void ws_cuda_queue_release(ws_cuda *c) {
  if (c->cub_temp)
    (void)cudaFree(c->cub_temp);
  c->cub_temp = NULL;
  c->cub_temp_bytes = 0;
}

/* The device loop's selections: a fixed grid and sizes from the state; the
 * count always goes out (a last block restores the control block, which a
 * graph replaying the same launch needs: the parity trick below cannot). */
static ws_status ws_dl_select(ws_device *dev, const uint32_t *tokens, ws_dyn begin, ws_dyn end,
                              ws_dyn token, bool equal, uint32_t *out, ws_dyn out_off,
                              uint32_t *count_out, uint32_t capacity, ws_guard guard,
                              const char *what) {
  ws_cuda *c = ws_cuda_of(dev);
  const uint32_t grid = ws_cuda_grid(c, capacity, WS_CUDA_TILE);
  if (!count_out) {
    /* nobody reads the count: no last block; the loop's decisions zero the
     * accumulator before every iteration (cuda_loop.cu, WS_CTL_DL_ACC) */
    ws_select_kernel<false><<<grid, WS_CUDA_BLOCK, 0, c->stream>>>(
        tokens, begin, end, token, equal, out, out_off, NULL, c->ctl + WS_CTL_DL_ACC,
        c->ctl + WS_CTL_DL_SINK, guard);
    return ws_cuda_check_launch(dev, what, __FILE__, __LINE__);
  }
  ws_select_kernel<true><<<grid, WS_CUDA_BLOCK, 0, c->stream>>>(
      tokens, begin, end, token, equal, out, out_off, count_out, c->ctl + WS_CTL_SELECT_ACC,
      c->ctl + WS_CTL_SELECT_TICKET, guard);
  return ws_cuda_check_launch(dev, what, __FILE__, __LINE__);
}


static ws_status ws_select(ws_device *dev, const uint32_t *tokens, uint32_t begin, uint32_t end,
                           uint32_t token, bool equal, uint32_t *out, uint32_t *count_out,
                           uint32_t capacity, const char *what) {
  ws_cuda *c = ws_cuda_of(dev);
  const uint32_t n = end - begin;
#if WS_GPU_HAVE_CUB
  if (ws_use_cub(c, n)) {
    size_t bytes = 0;
    ws_status st = ws_cub_reserve(dev, c, n, capacity, &bytes);
    if (st != WS_OK)
      return st;
    cudaError_t e = ws_cub_select(c->cub_temp, bytes, tokens, begin, n, token, equal, out,
                                  count_out ? count_out : c->ctl + WS_CTL_CUB_SINK, c->stream);
    if (e != cudaSuccess) {
      char call[128];
      snprintf(call, sizeof call, "%s: cub::DeviceSelect::FlaggedIf", what);
      return ws_cuda_fail(dev, e, call, __FILE__, __LINE__);
    }
    return WS_OK;
  }
#else
  (void)capacity;
  (void)what;
#endif
  const uint32_t grid = ws_cuda_grid(c, n, WS_CUDA_TILE);
  if (!count_out) {
    uint32_t *pair = c->ctl + WS_CTL_SELECT_PAIR;
    const uint32_t p = c->select_parity;
    ws_select_kernel<false><<<grid, WS_CUDA_BLOCK, 0, c->stream>>>(
        tokens, ws_dyn_value(begin), ws_dyn_value(end), ws_dyn_value(token), equal, out,
        ws_dyn_value(0), NULL, pair + p, pair + (1u - p), ws_guard_none());
    ws_status st = ws_cuda_check_launch(dev, what, __FILE__, __LINE__);
    if (st == WS_OK)
      c->select_parity = 1u - p; /* a launch that failed zeroed nothing */
    return st;
  }
  ws_select_kernel<true><<<grid, WS_CUDA_BLOCK, 0, c->stream>>>(
      tokens, ws_dyn_value(begin), ws_dyn_value(end), ws_dyn_value(token), equal, out,
      ws_dyn_value(0), count_out, c->ctl + WS_CTL_SELECT_ACC, c->ctl + WS_CTL_SELECT_TICKET,
      ws_guard_none());
  return ws_cuda_check_launch(dev, what, __FILE__, __LINE__);
}

ws_status ws_cuda_dl_gather(ws_device *dev, const ws_queue_args *q, const uint32_t *token,
                            const uint32_t *scan, ws_guard guard) {
  ws_status st = ws_cuda_bind(dev);
  if (st != WS_OK)
    return st;
  /* the count only for verification (WS_QUEUE_COUNTER_UNUSED otherwise) */
  uint32_t *count_out = (q->flags & WS_QUEUE_COUNTER_UNUSED) ? NULL : WS_U32(q->counter);
  return ws_dl_select(dev, WS_U32(q->tokens), ws_dyn_value(0), ws_dyn_at(scan), ws_dyn_at(token),
                      true, WS_U32(q->slots), ws_dyn_value(0), count_out, q->capacity, guard,
                      "queue gather (device loop)");
}

ws_status ws_cuda_queue_gather(ws_device *dev, const ws_queue_args *q) {
  ws_status st = ws_cuda_bind(dev);
  if (st != WS_OK)
    return st;
  uint32_t *count_out = (q->flags & WS_QUEUE_COUNTER_UNUSED) ? NULL : WS_U32(q->counter);
  return ws_select(dev, WS_U32(q->tokens), 0, q->scan, q->token, true, WS_U32(q->slots),
                   count_out, q->capacity, "queue gather");
}

/* ---------------------------------------------------------------------
 * sorted gather: slots = queue 1's slots, then queue 2's, ... (counting
 * sort over the counts already on the device)
 * --------------------------------------------------------------------- */

/* K <= WS_CUDA_SMEM_BINS, one launch. Each block derives the queue bases
 * from counts[1..K]; per tile it ranks its slots per queue in shared memory
 * and reserves each queue's range with one atomic on that queue's cursor in
 * the control block; the last block zeroes the cursors.
 * Bandwidth (issue 14: 40 % of copy at 2^24 slots before): the next tile's
 * tokens are loaded at the top of each tile, so they are in flight during
 * this tile's ranks, its cursor atomics (a round trip to L2 that used to
 * leave the block with no load outstanding) and its stores; the tile
 * histogram is double-buffered, which takes the barriers per tile from four
 * to two (tile i ranks into hist[i & 1] and zeroes hist[(i + 1) & 1], which
 * no thread can still read: its last readers were tile i - 1's stores,
 * which every thread finished before tile i's first barrier); K <= 7 ranks
 * through ballots instead of match.any (BITS = 3). Larger K (BITS = 0) keeps
 * one histogram, zeroed between two more barriers: three arrays of up to
 * 4096 words would pass the 48 KB a block gets without an opt-in. At
 * least 5 resident blocks: 48 registers for both forms (without the bound
 * the K > 7 form took 64, 4 blocks; 6 blocks would spill). Queue b's
 * cursor is cursors[b * cstride]: 1, or WS_CTL_CURSOR_STRIDE for K <= 7
 * with WS_CUDA_GATHER_CURSORS=padded (one line per cursor); the K > 7 form
 * takes 1 as a constant (a run-time stride there cost it an 8-byte spill
 * at 48 registers, ptxas -v). */
template <int BITS>
__global__ void __launch_bounds__(WS_CUDA_BLOCK, 5)
    ws_gather_all_smem_kernel(const uint32_t *tokens, ws_dyn scan_, uint32_t K,
                              const uint32_t *counts, uint32_t *slots, uint32_t capacity,
                              uint32_t *cursors, uint32_t cstride, uint32_t *ticket,
                              uint32_t *herr) {
  extern __shared__ uint32_t ws_sh[];
  __shared__ uint32_t wsum[WS_NWARPS + 1];
  const uint32_t scan = ws_dyn_get(scan_);
  const uint32_t cs = BITS ? cstride : 1u;
  uint32_t *base = ws_sh; /* [K]: start of queue b + 1 in the list */
  /* [K] each: a tile's count, then its start (BITS == 0: one array). Two
   * pointers picked by the tile's parity, not an array of two indexed by
   * it: that array lived in local memory (Nsight Compute, s8run4: local
   * loads every tile, a 16-byte stack frame) */
  uint32_t *const hist0 = ws_sh + K, *const hist1 = ws_sh + (BITS ? 2u : 1u) * K;
  for (uint32_t b = threadIdx.x; b < K; b += WS_CUDA_BLOCK)
    hist0[b] = 0;
  ws_block_exclusive_scan(counts + 1, base, K, wsum); /* ends with a barrier */
  const uint64_t stride = (uint64_t)gridDim.x * WS_CUDA_TILE;
  uint32_t tok[WS_CUDA_ITEMS];
  uint64_t t0 = (uint64_t)blockIdx.x * WS_CUDA_TILE;
  ws_load_tile(tokens, t0, scan, tok);
  for (uint32_t par = 0; t0 < scan; t0 += stride, par ^= 1u) {
    uint32_t nxt[WS_CUDA_ITEMS], rank[WS_CUDA_ITEMS];
    ws_load_tile(tokens, t0 + stride, scan, nxt); /* past scan: no load */
    uint32_t *const h = BITS && par ? hist1 : hist0, *const other = BITS && par ? hist0 : hist1;
#pragma unroll
    for (uint32_t j = 0; j < WS_CUDA_ITEMS; ++j)
      rank[j] = ws_agg_add<BITS>(h, tok[j] - 1u, tok[j] - 1u < K); /* tokens 1..K */
    __syncthreads();
    for (uint32_t b = threadIdx.x; b < K; b += WS_CUDA_BLOCK) {
      if (h[b])
        h[b] = base[b] + atomicAdd(&cursors[b * cs], h[b]);
      if (BITS)
        other[b] = 0;
    }
    __syncthreads();
#pragma unroll
    for (uint32_t j = 0; j < WS_CUDA_ITEMS; ++j) {
      if (tok[j] - 1u < K) {
        const uint32_t pos = h[tok[j] - 1u] + rank[j];
        const uint32_t slot = (uint32_t)(t0 + (uint64_t)j * WS_CUDA_BLOCK + threadIdx.x);
        if (pos < capacity)
          slots[pos] = slot;
        else
          ws_report(herr, WS_DEVERR_GATHER_ALL, tok[j], pos);
      }
    }
    if (!BITS) {
      __syncthreads(); /* every store has read h */
      for (uint32_t b = threadIdx.x; b < K; b += WS_CUDA_BLOCK)
        h[b] = 0;
      __syncthreads();
    }
#pragma unroll
    for (uint32_t j = 0; j < WS_CUDA_ITEMS; ++j)
      tok[j] = nxt[j];
  }
  if (ws_last_block(ticket)) {
    for (uint32_t b = threadIdx.x; b < K; b += WS_CUDA_BLOCK)
      cursors[b * cs] = 0;
    if (threadIdx.x == 0)
      *ticket = 0;
  }
}

/* Any K, step 1 (one block): offsets[t] = counts[1] + ... + counts[t-1]. */
__global__ void __launch_bounds__(WS_CUDA_BLOCK)
    ws_offsets_kernel(const uint32_t *counts, uint32_t K, uint32_t *offsets) {
  __shared__ uint32_t wsum[WS_NWARPS + 1];
  ws_block_exclusive_scan(counts + 1, offsets + 1, K, wsum);
}

/* Any K, step 2: each slot takes the next position of its queue with a
 * warp-aggregated atomic on offsets[t]. */
__global__ void __launch_bounds__(WS_CUDA_BLOCK)
    ws_gather_all_global_kernel(const uint32_t *tokens, ws_dyn scan_, uint32_t K,
                                uint32_t *offsets, uint32_t *slots, uint32_t capacity,
                                uint32_t *herr) {
  const uint32_t scan = ws_dyn_get(scan_);
  for (uint64_t t0 = (uint64_t)blockIdx.x * WS_CUDA_TILE; t0 < scan;
       t0 += (uint64_t)gridDim.x * WS_CUDA_TILE) {
    uint32_t tok[WS_CUDA_ITEMS];
    ws_load_tile(tokens, t0, scan, tok);
#pragma unroll
    for (uint32_t j = 0; j < WS_CUDA_ITEMS; ++j) {
      const bool valid = tok[j] - 1u < K;
      const uint32_t pos = ws_agg_add(offsets + 1, tok[j] - 1u, valid);
      if (valid) {
        const uint32_t slot = (uint32_t)(t0 + (uint64_t)j * WS_CUDA_BLOCK + threadIdx.x);
        if (pos < capacity)
          slots[pos] = slot;
        else
          ws_report(herr, WS_DEVERR_GATHER_ALL, tok[j], pos);
      }
    }
  }
}

static ws_status ws_gather_all(ws_device *dev, const ws_queue_args *q, ws_dyn scan,
                               uint32_t grid_want) {
  ws_cuda *c = ws_cuda_of(dev);
  ws_status st = ws_cuda_bind(dev);
  if (st != WS_OK)
    return st;
  const uint32_t K = q->queue_count;
  /* A variant ranking small K with one ballot per queue (like the selection
   * kernel) measured 15 % slower over 2^24 slots on the H200 than these
   * shared-memory ranks (77.4 against 67.4 us, docs/results/cuda-first-run.txt)
   * and was removed. */
  if (K <= WS_CUDA_SMEM_BINS) {
    /* bases and one or two tile histograms */
    const size_t smem = (K <= WS_MATCH_KEYS ? 3u : 2u) * K * sizeof(uint32_t);
    if (K <= WS_MATCH_KEYS) {
      /* the smem of K <= 7 words changes no occupancy: one cache entry */
      const uint32_t grid =
          ws_fit_resident(c, WS_RES_GATHER_ALL_BITS,
                          (const void *)ws_gather_all_smem_kernel<WS_MATCH_BITS>,
                          3u * WS_MATCH_KEYS * sizeof(uint32_t), grid_want);
      const bool padded = c->gather_padded;
      ws_gather_all_smem_kernel<WS_MATCH_BITS><<<grid, WS_CUDA_BLOCK, smem, c->stream>>>(
          WS_U32(q->tokens), scan, K, WS_U32(q->counts), WS_U32(q->slots), q->capacity,
          c->ctl + (padded ? WS_CTL_CURSORS_PADDED : WS_CTL_CURSORS),
          padded ? (uint32_t)WS_CTL_CURSOR_STRIDE : 1u, c->ctl + WS_CTL_GATHER_TICKET, c->herr_dev);
    } else {
      /* up to 32 KB of shared memory: occupancy depends on K, no cache */
      const uint32_t grid =
          ws_fit_resident(c, -1, (const void *)ws_gather_all_smem_kernel<0>, smem, grid_want);
      ws_gather_all_smem_kernel<0><<<grid, WS_CUDA_BLOCK, smem, c->stream>>>(
          WS_U32(q->tokens), scan, K, WS_U32(q->counts), WS_U32(q->slots), q->capacity,
          c->ctl + WS_CTL_CURSORS, 1u, c->ctl + WS_CTL_GATHER_TICKET, c->herr_dev);
    }
    return ws_cuda_check_launch(dev, "sorted gather", __FILE__, __LINE__);
  }
  const uint32_t grid = grid_want;
  ws_offsets_kernel<<<1, WS_CUDA_BLOCK, 0, c->stream>>>(WS_U32(q->counts), K, WS_U32(q->offsets));
  if ((st = ws_cuda_check_launch(dev, "sorted gather offsets", __FILE__, __LINE__)) != WS_OK)
    return st;
  ws_gather_all_global_kernel<<<grid, WS_CUDA_BLOCK, 0, c->stream>>>(
      WS_U32(q->tokens), scan, K, WS_U32(q->offsets), WS_U32(q->slots), q->capacity,
      c->herr_dev);
  return ws_cuda_check_launch(dev, "sorted gather (global)", __FILE__, __LINE__);
}

ws_status ws_cuda_queue_gather_all(ws_device *dev, const ws_queue_args *q) {
  if (q->scan == 0 || q->queue_count == 0)
    return WS_OK;
  return ws_gather_all(dev, q, ws_dyn_value(q->scan),
                       ws_cuda_grid(ws_cuda_of(dev), q->scan, WS_CUDA_TILE));
}

ws_status ws_cuda_dl_gather_all(ws_device *dev, const ws_queue_args *q, const uint32_t *scan) {
  if (q->queue_count == 0)
    return WS_OK;
  return ws_gather_all(dev, q, ws_dyn_at(scan),
                       ws_cuda_grid(ws_cuda_of(dev), q->capacity, WS_CUDA_TILE));
}

/* ---------------------------------------------------------------------
 * publish: counts[src] -= n (src != 0); counts[tokens[slot_i]] += 1
 * --------------------------------------------------------------------- */

/* The slots of one tile of the launch, striped like ws_load_tile: entry i
 * of the slot list (or slot_base + i for a dense launch); WS_KEY_NONE past n,
 * which no token read below accepts (it is never below capacity). */
__device__ static inline void ws_load_slots(const uint32_t *slots, uint32_t slot_base, uint64_t t0,
                                            uint64_t n, uint32_t sl[WS_CUDA_ITEMS]) {
#pragma unroll
  for (uint32_t j = 0; j < WS_CUDA_ITEMS; ++j) {
    const uint64_t i = t0 + (uint64_t)j * WS_CUDA_BLOCK + threadIdx.x;
    sl[j] = i >= n ? WS_KEY_NONE : slots ? slots[i] : slot_base + (uint32_t)i;
  }
}

/* The counts are modified with atomics only, so the subtraction and the
 * additions commute and the final value is exact whatever the block order;
 * no one reads them before the next stream-ordered readback. MODE as for
 * counting (bin b counts token b + 1). */
template <int MODE>
__global__ void __launch_bounds__(WS_CUDA_BLOCK)
    ws_publish_kernel(const uint32_t *tokens, const uint32_t *slots, uint32_t slot_base, uint32_t n,
                      uint32_t src, uint32_t K, uint32_t capacity, uint32_t *counts,
                      const ws_launch_plan *plan, ws_guard guard) {
  extern __shared__ uint32_t ws_sh[];
  if (ws_guard_off(guard))
    return;
  if (plan) {
    /* a device loop: the launch the plan describes (nothing for a plan
     * that launched no frames of a coroutine) */
    const ws_launch_plan pl = *plan;
    const bool launched = pl.action == WS_PLAN_REFILL || pl.action == WS_PLAN_RESUME;
    n = launched ? pl.count : 0u;
    src = pl.src;
    slot_base = pl.slot_base;
    slots = pl.use_slots == 1u ? slots + pl.slot_offset : NULL;
    if (!launched)
      return;
  }
  if (MODE != WS_AGG_GLOBAL) {
    for (uint32_t b = threadIdx.x; b < K; b += WS_CUDA_BLOCK)
      ws_sh[b] = 0;
    __syncthreads();
  }
  if (blockIdx.x == 0 && threadIdx.x == 0 && src != 0)
    atomicSub(&counts[src], n);
  uint32_t cnt[WS_CUDA_REG_BINS];
#pragma unroll
  for (uint32_t b = 0; b < WS_CUDA_REG_BINS; ++b)
    cnt[b] = 0;
  /* Two dependent loads per frame (its slot, then its token): the next
   * tile's slots are loaded while this tile's tokens are, so both levels
   * are in flight at once. */
  const uint64_t stride = (uint64_t)gridDim.x * WS_CUDA_TILE;
  uint64_t t0 = (uint64_t)blockIdx.x * WS_CUDA_TILE;
  uint32_t sl[WS_CUDA_ITEMS];
  ws_load_slots(slots, slot_base, t0, n, sl);
  for (; t0 < n; t0 += stride) {
    uint32_t nsl[WS_CUDA_ITEMS], key[WS_CUDA_ITEMS];
    ws_load_slots(slots, slot_base, t0 + stride, n, nsl); /* past n: no load */
    /* tokens 1..K -> bins 0..K-1; 0 and none fall outside */
#pragma unroll
    for (uint32_t j = 0; j < WS_CUDA_ITEMS; ++j)
      key[j] = (sl[j] < capacity ? tokens[sl[j]] : WS_KEY_NONE) - 1u;
#pragma unroll
    for (uint32_t j = 0; j < WS_CUDA_ITEMS; ++j)
      sl[j] = nsl[j];
#pragma unroll
    for (uint32_t j = 0; j < WS_CUDA_ITEMS; ++j) {
      if (MODE == WS_AGG_REGS) {
#pragma unroll
        for (uint32_t b = 0; b < WS_CUDA_REG_BINS; ++b)
          cnt[b] += key[j] == b;
      } else {
        ws_agg_add(MODE == WS_AGG_SMEM ? ws_sh : counts + 1, key[j], key[j] < K);
      }
    }
  }
  if (MODE == WS_AGG_GLOBAL)
    return;
  if (MODE == WS_AGG_REGS)
    ws_flush_regs(cnt, K, ws_sh);
  __syncthreads();
  for (uint32_t b = threadIdx.x; b < K; b += WS_CUDA_BLOCK)
    if (ws_sh[b])
      atomicAdd(&counts[b + 1], ws_sh[b]);
}

static ws_status ws_publish(ws_device *dev, const ws_queue_args *q, uint32_t grid,
                            const ws_launch_plan *plan, ws_guard guard) {
  ws_cuda *c = ws_cuda_of(dev);
  ws_status st = ws_cuda_bind(dev);
  if (st != WS_OK)
    return st;
  const uint32_t K = q->queue_count;
  const uint32_t *slots = q->slots ? WS_U32(q->slots) : NULL;
  const size_t smem = (size_t)K * sizeof(uint32_t);
  if (K <= WS_CUDA_REG_BINS)
    ws_publish_kernel<WS_AGG_REGS><<<grid, WS_CUDA_BLOCK, smem, c->stream>>>(
        WS_U32(q->tokens), slots, q->slot_base, q->n, q->src, K, q->capacity, WS_U32(q->counts),
        plan, guard);
  else if (K <= WS_CUDA_SMEM_BINS)
    ws_publish_kernel<WS_AGG_SMEM><<<grid, WS_CUDA_BLOCK, smem, c->stream>>>(
        WS_U32(q->tokens), slots, q->slot_base, q->n, q->src, K, q->capacity, WS_U32(q->counts),
        plan, guard);
  else
    ws_publish_kernel<WS_AGG_GLOBAL><<<grid, WS_CUDA_BLOCK, 0, c->stream>>>(
        WS_U32(q->tokens), slots, q->slot_base, q->n, q->src, K, q->capacity, WS_U32(q->counts),
        plan, guard);
  return ws_cuda_check_launch(dev, "publish", __FILE__, __LINE__);
}

ws_status ws_cuda_queue_publish(ws_device *dev, const ws_queue_args *q) {
  if (q->n == 0 || q->queue_count == 0) /* counts[src] -= 0, and no token can be counted */
    return WS_OK;
  return ws_publish(dev, q, ws_cuda_grid(ws_cuda_of(dev), q->n, WS_CUDA_TILE), NULL,
                    ws_guard_none());
}

ws_status ws_cuda_dl_publish(ws_device *dev, const ws_queue_args *q, const ws_launch_plan *plan,
                             ws_guard guard) {
  if (q->queue_count == 0)
    return WS_OK;
  /* q->slots is the list's base; the plan adds its offset */
  return ws_publish(dev, q, ws_cuda_grid(ws_cuda_of(dev), q->capacity, WS_CUDA_TILE), plan,
                    guard);
}

/* ---------------------------------------------------------------------
 * compaction: live frames of [n, scan) move into the free slots of [0, n)
 * --------------------------------------------------------------------- */

/* Field sizes and offsets live on the host (q->field_sizes): they travel
 * as kernel parameters (about 600 bytes, under every launch limit). */
typedef struct ws_compact_params {
  uint64_t frames;
  uint32_t *tokens;
  uint32_t *ids;
  const uint32_t *holes;  /* [WS_CTL_HOLES] entries: free slots below n */
  const uint32_t *movers; /* [WS_CTL_MOVERS] entries: live slots at or above n,
                             at movers + *movers_at when movers_at is set */
  const uint32_t *movers_at;
  const uint32_t *ctl;
  uint32_t *herr;
  uint32_t layout;
  uint32_t units; /* work items per moved frame: AoS chunks or SoA fields */
  uint32_t aos_size;
  uint32_t aos_width;
  uint32_t field_count;
  uint32_t reserved;
  ws_guard guard;
  uint64_t field_offset[WS_MAX_FRAME_FIELDS];
  uint32_t field_size[WS_MAX_FRAME_FIELDS];
  uint32_t field_width[WS_MAX_FRAME_FIELDS];
} ws_compact_params;

/* Copies one unit of `width` bytes (a power of two <= 16 that divides both
 * addresses; any other width: one byte). */
__device__ static inline void ws_copy_unit(unsigned char *dst, const unsigned char *src,
                                           uint32_t width) {
  switch (width) {
  case 16:
    *(uint4 *)dst = *(const uint4 *)src;
    break;
  case 8:
    *(unsigned long long *)dst = *(const unsigned long long *)src;
    break;
  case 4:
    *(uint32_t *)dst = *(const uint32_t *)src;
    break;
  case 2:
    *(uint16_t *)dst = *(const uint16_t *)src;
    break;
  default:
    *dst = *src;
    break;
  }
}

/* Copies `bytes` bytes in units of `width` (a power of two <= 16 that
 * divides `bytes` and both addresses; any other width: byte by byte). */
__device__ static inline void ws_copy(unsigned char *dst, const unsigned char *src, uint32_t bytes,
                                      uint32_t width) {
  const uint32_t w = width == 16u || width == 8u || width == 4u || width == 2u ? width : 1u;
  for (uint32_t k = 0; k < bytes; k += w)
    ws_copy_unit(dst + k, src + k, w);
}

/* Pairs hole p with mover p. Holes and movers are disjoint slots, and the
 * tokens were read by the selections before this launch, so the threads of
 * one pair never race: only the unit-0 thread writes the id and tokens.
 * The parameter block is only read: until session 9 the kernel advanced
 * p.movers in place, and a kernel that writes to its parameters gets a copy
 * of the whole block (616 bytes) on every thread's stack, read back from
 * local memory in the loop (tests/cuda/local_memory.sh now checks).
 * At 2^24 slots it takes 231 of a compaction's 281 us (H100, Nsight
 * Compute, s12run1). Four units in flight per thread (indices, then loads,
 * then stores: 64 registers) made no difference (235.7 us, s12run2): the
 * move is bound by the DRAM sectors its scattered writes touch, not by
 * latency (docs/decisions.md, "Compaction bandwidth"). */
__global__ void __launch_bounds__(WS_CUDA_BLOCK) ws_move_kernel(ws_compact_params p) {
  if (ws_guard_off(p.guard))
    return;
  const uint32_t holes = p.ctl[WS_CTL_HOLES], movers = p.ctl[WS_CTL_MOVERS];
  const uint32_t *const mover_list = p.movers + (p.movers_at ? *p.movers_at : 0u);
  const uint64_t gid = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (holes != movers) {
    /* Precondition broken (live count wrong): move nothing, report. */
    if (gid == 0)
      ws_report(p.herr, WS_DEVERR_COMPACT, holes, movers);
    return;
  }
  const uint64_t total = (uint64_t)holes * p.units;
  const uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
  const bool narrow = total <= 0xffffffffu; /* 32-bit division is far cheaper */
  unsigned char *frames = (unsigned char *)(uintptr_t)p.frames;
  for (uint64_t u = gid; u < total; u += stride) {
    const uint32_t pair = narrow ? (uint32_t)u / p.units : (uint32_t)(u / p.units);
    const uint32_t unit = narrow ? (uint32_t)u % p.units : (uint32_t)(u % p.units);
    const uint32_t dst = p.holes[pair], src = mover_list[pair];
    if (unit == 0) {
      p.ids[dst] = p.ids[src];
      p.tokens[dst] = p.tokens[src];
      p.tokens[src] = 0;
    }
    if (p.layout == WS_LAYOUT_AOS) {
      const uint64_t off = (uint64_t)unit * p.aos_width;
      ws_copy_unit(frames + (uint64_t)dst * p.aos_size + off,
                   frames + (uint64_t)src * p.aos_size + off, p.aos_width);
    } else if (unit < p.field_count) {
      unsigned char *base = frames + p.field_offset[unit];
      const uint32_t sz = p.field_size[unit];
      ws_copy(base + (uint64_t)dst * sz, base + (uint64_t)src * sz, sz, p.field_width[unit]);
    }
  }
}

/* Largest power of two <= 16 dividing x (x's lowest set bit, capped). */
static uint32_t ws_width(uint64_t x) {
  x |= 16u;
  return (uint32_t)(x & (~x + 1u));
}

/* The move's parameters: frame layout, field widths, where the lists are. */
static ws_status ws_compact_move(ws_device *dev, const ws_queue_args *q, const uint32_t *live,
                                 uint32_t grid, ws_guard guard) {
  ws_cuda *c = ws_cuda_of(dev);
  uint32_t *tokens = WS_U32(q->tokens), *scratch = WS_U32(q->scratch);
  ws_compact_params p;
  memset(&p, 0, sizeof p);
  p.frames = q->frames;
  p.tokens = tokens;
  p.ids = WS_U32(q->ids);
  p.holes = scratch;
  p.movers = live ? scratch : scratch + q->n;
  p.movers_at = live;
  p.ctl = c->ctl;
  p.herr = c->herr_dev;
  p.layout = q->layout;
  p.guard = guard;
  if (q->layout == WS_LAYOUT_AOS) {
    p.aos_width = ws_width((uint64_t)q->frame_size | q->frames);
    p.aos_size = q->frame_size;
    p.units = q->frame_size / p.aos_width;
  } else {
    p.field_count = q->field_count;
    for (uint32_t f = 0; f < q->field_count; ++f) {
      p.field_offset[f] = q->host_field_offsets[f];
      p.field_size[f] = q->field_sizes[f];
      p.field_width[f] =
          ws_width((uint64_t)q->field_sizes[f] | q->host_field_offsets[f] | q->frames);
    }
    p.units = q->field_count;
  }
  if (p.units == 0) /* a frame without bytes still moves its id and token */
    p.units = 1;
  if (!grid) {
    const uint32_t max_pairs = q->n < q->scan - q->n ? q->n : q->scan - q->n;
    grid = ws_cuda_grid(c, (uint64_t)max_pairs * p.units, WS_CUDA_BLOCK);
  }
  grid = ws_fit_resident(c, WS_RES_MOVE, (const void *)ws_move_kernel, 0, grid);
  ws_move_kernel<<<grid, WS_CUDA_BLOCK, 0, c->stream>>>(p);
  return ws_cuda_check_launch(dev, "compaction move", __FILE__, __LINE__);
}

ws_status ws_cuda_queue_compact(ws_device *dev, const ws_queue_args *q) {
  ws_cuda *c = ws_cuda_of(dev);
  ws_status st = ws_cuda_bind(dev);
  if (st != WS_OK)
    return st;
  if (q->scan <= q->n) /* nothing lives above the live count */
    return WS_OK;
  if (q->layout != WS_LAYOUT_AOS && q->field_count > WS_MAX_FRAME_FIELDS)
    return ws_dev_fail(dev, WS_EINVAL, WS_GPU_API_NAME ": compaction: %u frame fields, at most %u",
                       q->field_count, WS_MAX_FRAME_FIELDS);
  uint32_t *tokens = WS_U32(q->tokens), *scratch = WS_U32(q->scratch);
  /* scratch[0, n) receives the holes (at most n), scratch[n, scan) the
   * movers (at most scan - n): the two lists cannot overlap. */
  if (c->queue_mode == WS_CUDA_QUEUES_CUB) {
    /* every selection through CUB, as the mode promises */
    if ((st = ws_select(dev, tokens, 0, q->n, 0u, true, scratch, c->ctl + WS_CTL_HOLES,
                        q->capacity, "compaction: free-slot selection")) != WS_OK ||
        (st = ws_select(dev, tokens, q->n, q->scan, 0u, false, scratch + q->n,
                        c->ctl + WS_CTL_MOVERS, q->capacity, "compaction: live-frame selection")) !=
            WS_OK)
      return st;
  } else {
    const uint32_t grid =
        ws_fit_resident(c, WS_RES_COMPACT_SELECT, (const void *)ws_compact_select_kernel, 0,
                        ws_cuda_grid(c, q->scan, WS_CUDA_TILE));
    ws_compact_select_kernel<<<grid, WS_CUDA_BLOCK, 0, c->stream>>>(
        tokens, ws_dyn_value(q->n), ws_dyn_value(q->scan), scratch, scratch + q->n,
        ws_dyn_value(0), c->ctl + WS_CTL_COMPACT_ACC, c->ctl + WS_CTL_COMPACT_TICKET,
        c->ctl + WS_CTL_HOLES, c->ctl + WS_CTL_MOVERS, ws_guard_none());
    if ((st = ws_cuda_check_launch(dev, "compaction: selections", __FILE__, __LINE__)) != WS_OK)
      return st;
  }
  return ws_compact_move(dev, q, NULL, 0, ws_guard_none());
}

/* The device loop's compaction over the plan's [*live, *scan): with nothing
 * to move (live == scan) both selections find nothing and the move does
 * nothing, so it is recorded unconditionally. Moving every unit of every
 * frame with a fixed grid: the kernel strides over them. */
ws_status ws_cuda_dl_compact(ws_device *dev, const ws_queue_args *q, const uint32_t *live,
                             const uint32_t *scan, ws_guard guard) {
  ws_cuda *c = ws_cuda_of(dev);
  ws_status st = ws_cuda_bind(dev);
  if (st != WS_OK)
    return st;
  if (q->layout != WS_LAYOUT_AOS && q->field_count > WS_MAX_FRAME_FIELDS)
    return ws_dev_fail(dev, WS_EINVAL, WS_GPU_API_NAME ": compaction: %u frame fields, at most %u",
                       q->field_count, WS_MAX_FRAME_FIELDS);
  uint32_t *tokens = WS_U32(q->tokens), *scratch = WS_U32(q->scratch);
  /* holes at scratch[0, *live), movers at scratch[*live, *scan) */
  const uint32_t grid =
      ws_fit_resident(c, WS_RES_COMPACT_SELECT, (const void *)ws_compact_select_kernel, 0,
                      ws_cuda_grid(c, q->capacity, WS_CUDA_TILE));
  ws_compact_select_kernel<<<grid, WS_CUDA_BLOCK, 0, c->stream>>>(
      tokens, ws_dyn_at(live), ws_dyn_at(scan), scratch, scratch, ws_dyn_at(live),
      c->ctl + WS_CTL_COMPACT_ACC, c->ctl + WS_CTL_COMPACT_TICKET, c->ctl + WS_CTL_HOLES,
      c->ctl + WS_CTL_MOVERS, guard);
  if ((st = ws_cuda_check_launch(dev, "compaction: selections (device loop)", __FILE__,
                                 __LINE__)) != WS_OK)
    return st;
  /* at most R/2 pairs move, each in `units` pieces (AoS chunks or SoA fields) */
  const uint32_t units = q->layout == WS_LAYOUT_AOS ? (q->frame_size + 3u) / 4u
                                                    : (q->field_count ? q->field_count : 1u);
  return ws_compact_move(dev, q, live,
                         ws_cuda_grid(c, (uint64_t)(q->capacity / 2u + 1u) * units, WS_CUDA_BLOCK),
                         guard);
}
