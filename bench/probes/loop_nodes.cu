// SPDX-License-Identifier: MIT
// loop_nodes — what each piece of the CUDA device loop's graph costs per
// iteration (docs/decisions.md, device loop). Not part of the build:
//   nvcc -O2 -arch=sm_90 -o loop_nodes bench/probes/loop_nodes.cu && ./loop_nodes
// Every variant is a WHILE conditional node whose body starts with a one-block
// decide kernel that counts iterations down and clears the WHILE condition at
// the end; the variants add what the library's loop has:
//   plain   decide -> step                              (DEVICE.md's probe)
//   switch  decide -> SWITCH(2 branches) -> step in branch 1
//   copy    decide copying a STATE-byte record to shared memory and back
//           (256 threads), one thread deciding -> step
//   both    copy + switch (the library's shape for a fused resume)
//   chainE  decide -> E kernel nodes in a row, each reading which branch was
//           chosen and returning at once unless it is the step (the shape
//           without a SWITCH: every branch a kernel that may do nothing)
#include "probe.h"

// st[0] items, st[1] iterations left, st[2] iterations done; the rest of the
// record (copy variants) is carried through shared memory as the library does
__global__ void decide_k(unsigned long long *st, unsigned bytes, int n, int copy,
                         cudaGraphConditionalHandle more, cudaGraphConditionalHandle branch,
                         int use_branch) {
  extern __shared__ unsigned long long sh[];
  unsigned long long *d = st;
  if (copy) {
    for (unsigned i = threadIdx.x; i < bytes / 8u; i += blockDim.x)
      sh[i] = st[i];
    __syncthreads();
    d = sh;
  }
  if (threadIdx.x == 0) {
    d[1] -= 1;
    d[2] += 1;
    d[0] = (unsigned long long)n;
    d[3] = 0; /* the branch a chain's kernels look for */
    if (use_branch)
      cudaGraphSetConditional(branch, 1);
    if (d[1] == 0)
      cudaGraphSetConditional(more, 0);
  }
  if (copy) {
    __syncthreads();
    for (unsigned i = threadIdx.x; i < bytes / 8u; i += blockDim.x)
      st[i] = sh[i];
  }
}

__global__ void step_k(const unsigned long long *st, unsigned *data, int me) {
  if (me >= 0 && (unsigned long long)me != st[3])
    return;
  const int n = (int)st[0];
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    data[i] = probe_step(data[i]);
}

static int run(const char *name, int copy, int use_switch, unsigned bytes, int grid, int chain,
               int branches) {
  const int n = 1024, N = 4000;
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  unsigned long long *st;
  unsigned *data;
  CK(cudaMalloc(&st, 64 << 10));
  CK(cudaMalloc(&data, 4u << 20));
  CK(cudaMemset(st, 0, 64 << 10));
  CK(cudaMemset(data, 0, 4u << 20));
  cudaGraph_t g;
  CK(cudaGraphCreate(&g, 0));
  cudaGraphConditionalHandle more, branch;
  CK(cudaGraphConditionalHandleCreate(&more, g, 1, cudaGraphCondAssignDefault));
  cudaGraph_t *wb;
  if (probe_conditional(g, NULL, more, cudaGraphCondTypeWhile, 1, &wb))
    return 1;
  cudaGraph_t body = wb[0];
  if (use_switch)
    CK(cudaGraphConditionalHandleCreate(&branch, body, 0, 0));
  int nn = n, cp = copy, ub = use_switch, me = chain ? 0 : -1;
  unsigned by = bytes;
  void *a1[] = {&st, &by, &nn, &cp, &more, &branch, &ub};
  void *a2[] = {&st, &data, &me};
  cudaKernelNodeParams k1 = {};
  k1.func = (void *)decide_k;
  k1.gridDim = dim3(1);
  k1.blockDim = dim3(256);
  k1.sharedMemBytes = copy ? bytes : 0;
  k1.kernelParams = a1;
  cudaKernelNodeParams k2 = {};
  k2.func = (void *)step_k;
  k2.gridDim = dim3(grid);
  k2.blockDim = dim3(256);
  k2.kernelParams = a2;
  cudaGraphNode_t n1, n2;
  CK(cudaGraphAddKernelNode(&n1, body, NULL, 0, &k1));
  if (use_switch) {
    cudaGraph_t *sb;
    if (probe_conditional(body, &n1, branch, cudaGraphCondTypeSwitch, branches, &sb))
      return 1;
    for (int b = 0; b < branches; ++b) {
      cudaGraphNode_t e;
      if (b == 1)
        CK(cudaGraphAddKernelNode(&e, sb[b], NULL, 0, &k2));
      else
        CK(cudaGraphAddEmptyNode(&e, sb[b], NULL, 0));
    }
  } else if (chain) {
    /* kernel e looks for branch e; the decision names branch 0 */
    std::vector<int> mine(chain);
    std::vector<std::vector<void *>> args(chain);
    cudaGraphNode_t prev = n1;
    for (int e = 0; e < chain; ++e) {
      mine[e] = e;
      args[e] = {&st, &data, &mine[e]};
      cudaKernelNodeParams ke = k2;
      ke.kernelParams = args[e].data();
      CK(cudaGraphAddKernelNode(&n2, body, &prev, 1, &ke));
      prev = n2;
    }
  } else {
    CK(cudaGraphAddKernelNode(&n2, body, &n1, 1, &k2));
  }
  cudaGraphExec_t ge;
  CK(cudaGraphInstantiate(&ge, g, 0));
  const unsigned long long init[3] = {0, (unsigned long long)N, 0};
  double us;
  if (probe_time_graph(ge, s, st, init, sizeof init, N, &us))
    return 1;
  unsigned long long h[3];
  CK(cudaMemcpy(h, st, sizeof h, cudaMemcpyDeviceToHost));
  printf("%-7s state %5u B, step grid %4d, %2d switch branches, %d chained: %6.2f us/iter (ran %llu)\n",
         name, copy ? bytes : 0, grid, use_switch ? branches : 0, chain, us, h[2]);
  CK(cudaGraphExecDestroy(ge));
  CK(cudaGraphDestroy(g));
  CK(cudaFree(st));
  CK(cudaFree(data));
  CK(cudaStreamDestroy(s));
  return 0;
}

int main() {
  int rc = 0;
  for (int grid : {4, 1056}) {
    rc |= run("plain", 0, 0, 0, grid, 0, 0);
    for (int b : {2, 8, 16})
      rc |= run("switch", 0, 1, 0, grid, 0, b);
    for (int e : {2, 4, 8})
      rc |= run("chain", 0, 0, 0, grid, e, 0);
    for (unsigned bytes : {1024u, 4096u, 16384u}) {
      rc |= run("copy", 1, 0, bytes, grid, 0, 0);
      rc |= run("both", 1, 1, bytes, grid, 0, 8);
    }
  }
  return rc;
}
