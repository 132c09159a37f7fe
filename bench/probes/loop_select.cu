// SPDX-License-Identifier: MIT
// loop_select — ways for a device loop to run the one launch its decision
// chose without a SWITCH node (docs/decisions.md, device loop). Not part of
// the build:
//   nvcc -O2 -arch=sm_90 -o loop_select bench/probes/loop_select.cu && ./loop_select
// Every variant is a WHILE node whose body starts with a one-block decide
// kernel (counts iterations down, clears the WHILE condition at the end) and
// has E branches of L kernels each; the decision picks branch 0 every time,
// whose kernels update 1,024 words (a step); the rest must cost nothing:
//   switch  SWITCH(E) node after decide, branch b its L kernels in a row
//           (the library's shape today)
//   par     E chains in parallel after decide, each kernel reading which
//           branch was chosen and returning unless it is its own
//   upd     par, but every kernel node device-updatable: decide disables the
//           chains not chosen and enables the chosen one
//           (cudaGraphKernelNodeSetEnabled), so they launch nothing
//   mix     par with L = 1, plus an IF node (never taken) beside the chains
//           whose body is 3 kernels in a row (a refill: compaction twice,
//           the entry), the shape for a rarely taken long branch
//   long    par with L = 1, plus a fourth chain of 3 kernels that return at
//           once (the same refill, guarded instead of conditional)
//   *-pdl   every edge after decide programmatic: a kernel may start while
//           its predecessor runs and waits in cudaGridDependencySynchronize
#include <cstdlib>

#include "probe.h"

enum { MAXN = 64 };

// st[0] items, st[1] iterations left, st[2] iterations done, st[3] the branch
__global__ void decide_k(unsigned long long *st, int n, cudaGraphConditionalHandle more,
                         cudaGraphConditionalHandle branch, int use_switch,
                         const cudaGraphDeviceNode_t *nodes, int e_count, int l_count, int pdl) {
  if (threadIdx.x != 0)
    return;
  st[1] -= 1;
  st[2] += 1;
  st[0] = (unsigned long long)n;
  st[3] = 0;
  if (use_switch)
    cudaGraphSetConditional(branch, 0);
  if (nodes) {
    for (int e = 0; e < e_count; ++e)
      for (int l = 0; l < l_count; ++l)
        cudaGraphKernelNodeSetEnabled(nodes[e * l_count + l], e == 0);
  }
  if (st[1] == 0)
    cudaGraphSetConditional(more, 0);
  if (pdl) {
    __threadfence();
    cudaTriggerProgrammaticLaunchCompletion();
  }
}

__global__ void step_k(const unsigned long long *st, unsigned *data, int me, int pdl) {
  if (pdl)
    cudaGridDependencySynchronize();
  if (me >= 0 && (unsigned long long)me != st[3])
    return;
  const int n = (int)st[0];
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    data[i] = probe_step(data[i]);
  if (pdl) {
    __threadfence();
    cudaTriggerProgrammaticLaunchCompletion();
  }
}

// A step_k node of `grid` blocks with these arguments.
static cudaGraphNodeParams step_node(int grid, void **args) {
  cudaGraphNodeParams np = {};
  np.type = cudaGraphNodeTypeKernel;
  np.kernel.func = (void *)step_k;
  np.kernel.gridDim = dim3(grid);
  np.kernel.blockDim = dim3(256);
  np.kernel.kernelParams = args;
  return np;
}

enum kind { K_SWITCH, K_PAR, K_UPD, K_MIX, K_LONG };

static int run(const char *name, kind kd, int E, int L, int grid, int pdl) {
  const int n = 1024, N = 4000;
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  unsigned long long *st;
  unsigned *data;
  cudaGraphDeviceNode_t *dnodes = NULL;
  CK(cudaMalloc(&st, 4096));
  CK(cudaMalloc(&data, 4u << 20));
  CK(cudaMalloc(&dnodes, MAXN * sizeof *dnodes));
  CK(cudaMemset(st, 0, 4096));
  CK(cudaMemset(data, 0, 4u << 20));
  cudaGraph_t g;
  CK(cudaGraphCreate(&g, 0));
  cudaGraphConditionalHandle more, branch = 0;
  CK(cudaGraphConditionalHandleCreate(&more, g, 1, cudaGraphCondAssignDefault));
  cudaGraph_t *wb;
  if (probe_conditional(g, NULL, more, cudaGraphCondTypeWhile, 1, &wb))
    return 1;
  cudaGraph_t body = wb[0];
  const int use_switch = kd == K_SWITCH;
  if (use_switch)
    CK(cudaGraphConditionalHandleCreate(&branch, body, 0, 0));
  int nn = n, ub = use_switch, ec = E, lc = L, pd = pdl;
  const cudaGraphDeviceNode_t *dn = kd == K_UPD ? dnodes : NULL;
  void *a1[] = {&st, &nn, &more, &branch, &ub, &dn, &ec, &lc, &pd};
  cudaKernelNodeParams k1 = {};
  k1.func = (void *)decide_k;
  k1.gridDim = dim3(1);
  k1.blockDim = dim3(32);
  k1.kernelParams = a1;
  cudaGraphNode_t n1;
  CK(cudaGraphAddKernelNode(&n1, body, NULL, 0, &k1));
  std::vector<int> mine(E * L);
  std::vector<std::vector<void *>> args(E * L);
  std::vector<cudaGraphDeviceNode_t> hn(E * L);
  cudaGraphEdgeData ed = {};
  if (pdl) {
    ed.from_port = cudaGraphKernelNodePortProgrammatic;
    ed.type = cudaGraphDependencyTypeProgrammatic;
  }
  for (int e = 0; e < E; ++e) {
    cudaGraph_t where = body;
    cudaGraphNode_t prev = n1;
    int nprev = 1;
    if (use_switch) {
      if (e == 0) {
        cudaGraph_t *bodies;
        if (probe_conditional(body, &n1, branch, cudaGraphCondTypeSwitch, E, &bodies))
          return 1;
        mine.assign(E * L, -1);
        for (int b = 0; b < E; ++b) {
          cudaGraphNode_t p = NULL;
          for (int l = 0; l < L; ++l) {
            args[b * L + l] = {&st, &data, &mine[b * L + l], &pd};
            cudaGraphNodeParams np = step_node(grid, args[b * L + l].data());
            cudaGraphNode_t x;
            CK(cudaGraphAddNode(&x, bodies[b], l ? &p : NULL, l && pdl ? &ed : NULL, l ? 1 : 0,
                                &np));
            p = x;
          }
        }
      }
      break;
    }
    for (int l = 0; l < L; ++l) {
      const int i = e * L + l;
      mine[i] = kd == K_UPD ? -1 : e;
      args[i] = {&st, &data, &mine[i], &pd};
      cudaGraphNodeParams np = step_node(grid, args[i].data());
      cudaGraphNode_t x;
      CK(cudaGraphAddNode(&x, where, &prev, pdl ? &ed : NULL, nprev, &np));
      if (kd == K_UPD) {
        cudaLaunchAttributeValue v = {};
        v.deviceUpdatableKernelNode.deviceUpdatable = 1;
        CK(cudaGraphKernelNodeSetAttribute(x, cudaLaunchAttributeDeviceUpdatableKernelNode, &v));
        hn[i] = v.deviceUpdatableKernelNode.devNode;
      }
      prev = x;
    }
  }
  if (kd == K_MIX || kd == K_LONG) {
    static int never = 99;
    static void *na[] = {&st, &data, &never, &pd};
    cudaGraph_t where = body;
    if (kd == K_MIX) {
      cudaGraphConditionalHandle ifh;
      CK(cudaGraphConditionalHandleCreate(&ifh, body, 0, cudaGraphCondAssignDefault));
      cudaGraph_t *ib;
      if (probe_conditional(body, &n1, ifh, cudaGraphCondTypeIf, 1, &ib))
        return 1;
      where = ib[0];
    }
    cudaGraphNode_t p = NULL;
    for (int l = 0; l < 3; ++l) {
      cudaGraphNodeParams np = step_node(grid, na);
      cudaGraphNode_t x;
      const cudaGraphNode_t *dep = l ? &p : kd == K_LONG ? &n1 : NULL;
      CK(cudaGraphAddNode(&x, where, dep, NULL, dep ? 1 : 0, &np));
      p = x;
    }
  }
  if (kd == K_UPD)
    CK(cudaMemcpy(dnodes, hn.data(), hn.size() * sizeof hn[0], cudaMemcpyHostToDevice));
  cudaGraphExec_t ge;
  CK(cudaGraphInstantiate(&ge, g, 0));
  CK(cudaGraphUpload(ge, s));
  const unsigned long long init[4] = {0, (unsigned long long)N, 0, 0};
  double us;
  if (probe_time_graph(ge, s, st, init, sizeof init, N, &us))
    return 1;
  unsigned long long h[3];
  CK(cudaMemcpy(h, st, sizeof h, cudaMemcpyDeviceToHost));
  std::vector<unsigned> d(n);
  CK(cudaMemcpy(d.data(), data, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
  // every word was stepped L times per iteration by branch 0 only: a
  // variant that ran a branch not chosen, or skipped the chosen one, differs
  unsigned want = 0;
  for (long it = 0; it < 6L * N * L; ++it)
    want = probe_step(want);
  printf("%-10s E %2d L %d grid %4d: %6.2f us/iter (ran %llu, data %s)\n", name, E, L, grid,
         us, h[2], d[0] == want && d[n - 1] == want ? "ok" : "WRONG");
  CK(cudaGraphExecDestroy(ge));
  CK(cudaGraphDestroy(g));
  CK(cudaFree(st));
  CK(cudaFree(data));
  CK(cudaFree(dnodes));
  CK(cudaStreamDestroy(s));
  return 0;
}

int main() {
  int rc = 0;
  for (int grid : {4, 264})
    for (int L : {1, 2})
      if (!getenv("SHORT"))
      for (int E : {1, 3, 8})
        for (int pdl : {0, 1}) {
          rc |= run(pdl ? "switch-pdl" : "switch", K_SWITCH, E, L, grid, pdl);
          rc |= run(pdl ? "par-pdl" : "par", K_PAR, E, L, grid, pdl);
          rc |= run(pdl ? "upd-pdl" : "upd", K_UPD, E, L, grid, pdl);
        }
  for (int grid : {4, 264})
    for (int E : {2, 3, 8}) {
      rc |= run("mix", K_MIX, E, 1, grid, 0);
      rc |= run("long", K_LONG, E, 1, grid, 0);
      rc |= run("par", K_PAR, E, 1, grid, 0);
    }
  return rc;
}
