// SPDX-License-Identifier: MIT
// loop_persistent — what one iteration of a device loop costs when no
// kernel is launched per iteration at all: one cooperative kernel holds the
// whole loop (docs/decisions.md, "The CUDA device loop's body": the graph
// body's floor is about 5 µs per iteration; this is the alternative's).
// Not part of the build:
//   nvcc -O2 -arch=sm_90 -o loop_persistent bench/probes/loop_persistent.cu && ./loop_persistent
// The workload is bench_loop's ping-pong: F frames, each a counter that
// bounces between queue 1 and queue 2 B times. Per iteration:
//   grid barrier; block 0, thread 0 "decides": reads the two queue counts,
//   picks the larger (ties to the lower), stops when both are 0, writes the
//   plan; grid barrier; every thread runs the chosen continuation over its
//   frames whose token matches (scan mode), with fused counts (one atomic
//   per warp per queue).
// Variants: the barrier (cooperative_groups grid.sync, or a hand-rolled
// sense-reversing barrier on one global word), and the grid (one block per
// SM, or every resident block). Output: µs per iteration, and whether every
// frame ended with the right count.
#include "probe.h"
#include <cooperative_groups.h>

namespace cg = cooperative_groups;


struct loop_state {
  unsigned counts[3];   // queue 0 unused, 1 ping, 2 pong
  unsigned plan;        // the queue to run, 0 = stop
  unsigned iterations;  // decisions that ran a queue
  unsigned barrier[2];  // hand-rolled barrier: arrivals, generation
};

// A grid barrier on two global words: the last block to arrive bumps the
// generation; the others wait for it to change.
__device__ static void grid_barrier(loop_state *s, unsigned nblocks) {
  __syncthreads();
  if (threadIdx.x == 0) {
    volatile unsigned *gen = &s->barrier[1];
    const unsigned g = *gen;
    __threadfence();
    if (atomicAdd(&s->barrier[0], 1u) == nblocks - 1u) {
      s->barrier[0] = 0u;
      __threadfence();
      atomicAdd(&s->barrier[1], 1u);
    } else {
      while (*gen == g) {
      }
    }
    __threadfence();
  }
  __syncthreads();
}

template <bool COOP>
__global__ void loop_kernel(loop_state *s, unsigned *tokens, unsigned *left, unsigned *value,
                            unsigned frames) {
  cg::grid_group grid = cg::this_grid();
  const unsigned nblocks = gridDim.x;
  const unsigned tid = blockIdx.x * blockDim.x + threadIdx.x;
  const unsigned nthreads = gridDim.x * blockDim.x;
  for (;;) {
    if (COOP)
      grid.sync();
    else
      grid_barrier(s, nblocks);
    if (blockIdx.x == 0 && threadIdx.x == 0) {
      volatile unsigned *c = s->counts;
      const unsigned a = c[1], b = c[2];
      s->plan = a == 0 && b == 0 ? 0u : a >= b ? 1u : 2u;
      if (s->plan)
        s->iterations += 1u;
    }
    if (COOP)
      grid.sync();
    else
      grid_barrier(s, nblocks);
    const unsigned q = *(volatile unsigned *)&s->plan;
    if (q == 0)
      return;
    for (unsigned i = tid; i - threadIdx.x < frames; i += nthreads) {
      const bool mine = i < frames && tokens[i] == q;
      unsigned next = 0;
      if (mine) {
        value[i] = probe_step(value[i]);
        next = --left[i] ? (q == 1 ? 2u : 1u) : 0u;
        tokens[i] = next;
      }
      // fused counts: one atomic per warp per queue
      const unsigned leaving = __popc(__ballot_sync(0xffffffffu, mine));
      const unsigned to1 = __popc(__ballot_sync(0xffffffffu, mine && next == 1u));
      const unsigned to2 = __popc(__ballot_sync(0xffffffffu, mine && next == 2u));
      if ((threadIdx.x & 31u) == 0) {
        if (leaving)
          atomicSub(&s->counts[q], leaving);
        if (to1)
          atomicAdd(&s->counts[1], to1);
        if (to2)
          atomicAdd(&s->counts[2], to2);
      }
    }
  }
}

static int run(bool coop, unsigned blocks_per_sm_wanted, unsigned frames, unsigned bounces) {
  int dev = 0, sms = 0, per_sm = 0;
  CK(cudaGetDevice(&dev));
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  const int block = 256;
  auto kern = coop ? loop_kernel<true> : loop_kernel<false>;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kern, block, 0));
  const unsigned bps = std::min<unsigned>(blocks_per_sm_wanted, (unsigned)per_sm);
  // every block resident at once: the barriers need it (the cooperative
  // launch checks it; the own barrier would hang without it)
  const unsigned grid = (unsigned)sms * bps;
  loop_state *s;
  unsigned *tokens, *left, *value;
  CK(cudaMalloc(&s, sizeof *s));
  CK(cudaMalloc(&tokens, frames * 4u));
  CK(cudaMalloc(&left, frames * 4u));
  CK(cudaMalloc(&value, frames * 4u));
  std::vector<double> r;
  std::vector<unsigned> ones(frames, 1u), nb(frames, bounces), zero(frames, 0u);
  loop_state init = {};
  init.counts[1] = frames;
  unsigned iters = 0;
  bool ok = true;
  for (int rep = 0; rep < 6; ++rep) {
    CK(cudaMemcpy(s, &init, sizeof init, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(tokens, ones.data(), frames * 4u, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(left, nb.data(), frames * 4u, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(value, zero.data(), frames * 4u, cudaMemcpyHostToDevice));
    CK(cudaDeviceSynchronize());
    void *args[] = {&s, &tokens, &left, &value, &frames};
    const auto t0 = std::chrono::steady_clock::now();
    if (coop)
      CK(cudaLaunchCooperativeKernel((void *)kern, grid, block, args, 0, 0));
    else
      CK(cudaLaunchKernel((void *)kern, grid, block, args, 0, 0));
    CK(cudaDeviceSynchronize());
    const double us =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    loop_state h;
    CK(cudaMemcpy(&h, s, sizeof h, cudaMemcpyDeviceToHost));
    iters = h.iterations;
    std::vector<unsigned> v(frames);
    CK(cudaMemcpy(v.data(), value, frames * 4u, cudaMemcpyDeviceToHost));
    unsigned want = 0;
    for (unsigned b = 0; b < bounces; ++b)
      want = probe_step(want);
    ok = ok && v[0] == want && v[frames - 1] == want && iters == bounces;
    if (rep)
      r.push_back(us / (iters ? iters : 1u));
  }
  printf("%-12s grid %4u (%u per SM), %u frames x %u bounces: %6.2f us/iter (%u iterations, %s)\n",
         coop ? "grid.sync" : "own barrier", grid, bps, frames, bounces, median(r), iters,
         ok ? "ok" : "WRONG");
  CK(cudaFree(s));
  CK(cudaFree(tokens));
  CK(cudaFree(left));
  CK(cudaFree(value));
  return 0;
}

int main() {
  int rc = 0;
  for (unsigned frames : {1024u, 1u << 20})
    for (unsigned bps : {1u, 8u}) {
      rc |= run(true, bps, frames, 1000);
      rc |= run(false, bps, frames, 1000);
    }
  return rc;
}
