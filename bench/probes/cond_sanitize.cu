// SPDX-License-Identifier: MIT
// cond_sanitize — does compute-sanitizer run a CUDA graph that holds
// conditional nodes? The library's device loop is such a graph (a WHILE
// whose body has a SWITCH), and racecheck never got through it (docs/cuda.md,
// under fused accounting). This probe has no library code in it, so
// a variant that fails under a tool and passes without it is the tool's
// limit, not the loop's race. Not part of the build:
//   nvcc -O2 -arch=sm_90 -o cond_sanitize bench/probes/cond_sanitize.cu
//   ./cond_sanitize VARIANT        (and under compute-sanitizer --tool T)
// Variants, each ITERS iterations of the same one-block kernel that adds 1
// to every word of a 256-word array (the result is checked: ITERS each):
//   stream  ITERS launches on a stream, no graph
//   graph   a graph of ITERS kernel nodes in a row
//   while   a WHILE node whose body is the kernel; thread 0 counts down and
//           clears the condition on the last iteration
//   switch  the same WHILE, its body the kernel and then a SWITCH of two
//           branches: 0 empty, 1 (chosen every time) a one-thread kernel
//           that reads what the first wrote
// Exit status 0 when the result is right, 1 on a CUDA error or a wrong word.
#include "probe.h"

#include <cstring>

enum { ITERS = 10, WORDS = 256 };

// st[0]: iterations left (while/switch), st[1]: iterations run
__global__ void add_k(unsigned *data, unsigned *st, cudaGraphConditionalHandle more,
                      cudaGraphConditionalHandle branch, int cond) {
  data[threadIdx.x] += 1u;
  __syncthreads();
  if (threadIdx.x == 0) {
    st[1] += 1u;
    if (cond) {
      st[0] -= 1u;
      if (cond == 2)
        cudaGraphSetConditional(branch, 1);
      if (st[0] == 0u)
        cudaGraphSetConditional(more, 0);
    }
  }
}

// the SWITCH branch's kernel: reads what add_k wrote in the same iteration
__global__ void touch_k(const unsigned *st, unsigned *sink) {
  if (threadIdx.x == 0)
    sink[0] = st[1];
}

// The graph of variant v. Kernel parameters are copied when a node is added,
// so both handles exist before the nodes that name them.
static int build(const char *v, cudaGraph_t g, unsigned *data, unsigned *st, unsigned *sink) {
  cudaGraphConditionalHandle more = 0, branch = 0;
  int cond = !strcmp(v, "graph") ? 0 : !strcmp(v, "switch") ? 2 : 1;
  void *a_add[] = {&data, &st, &more, &branch, &cond};
  void *a_touch[] = {&st, &sink};
  cudaKernelNodeParams ka = {};
  ka.func = (void *)add_k;
  ka.gridDim = dim3(1);
  ka.blockDim = dim3(WORDS);
  ka.kernelParams = a_add;
  cudaKernelNodeParams kt = ka;
  kt.func = (void *)touch_k;
  kt.kernelParams = a_touch;
  cudaGraphNode_t n, prev;
  if (cond == 0) {
    for (int i = 0; i < ITERS; ++i) {
      CK(cudaGraphAddKernelNode(&n, g, i ? &prev : NULL, i ? 1 : 0, &ka));
      prev = n;
    }
    return 0;
  }
  CK(cudaGraphConditionalHandleCreate(&more, g, 1, cudaGraphCondAssignDefault));
  cudaGraph_t *wb;
  if (probe_conditional(g, NULL, more, cudaGraphCondTypeWhile, 1, &wb))
    return 1;
  if (cond == 2)
    CK(cudaGraphConditionalHandleCreate(&branch, wb[0], 0, 0));
  CK(cudaGraphAddKernelNode(&n, wb[0], NULL, 0, &ka));
  if (cond == 2) {
    cudaGraph_t *sb;
    if (probe_conditional(wb[0], &n, branch, cudaGraphCondTypeSwitch, 2, &sb))
      return 1;
    CK(cudaGraphAddEmptyNode(&prev, sb[0], NULL, 0));
    CK(cudaGraphAddKernelNode(&prev, sb[1], NULL, 0, &kt));
  }
  return 0;
}

int main(int argc, char **argv) {
  const char *v = argc > 1 ? argv[1] : "";
  if (strcmp(v, "stream") && strcmp(v, "graph") && strcmp(v, "while") && strcmp(v, "switch")) {
    printf("usage: cond_sanitize stream|graph|while|switch\n");
    return 2;
  }
  unsigned *data, *st, *sink;
  CK(cudaMalloc(&data, WORDS * sizeof *data));
  CK(cudaMalloc(&st, 2 * sizeof *st));
  CK(cudaMalloc(&sink, sizeof *sink));
  CK(cudaMemset(data, 0, WORDS * sizeof *data));
  const unsigned init[2] = {ITERS, 0};
  CK(cudaMemcpy(st, init, sizeof init, cudaMemcpyHostToDevice));
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  if (!strcmp(v, "stream")) {
    for (int i = 0; i < ITERS; ++i)
      add_k<<<1, WORDS, 0, s>>>(data, st, 0, 0, 0);
    CK(cudaGetLastError());
  } else {
    cudaGraph_t g;
    CK(cudaGraphCreate(&g, 0));
    if (build(v, g, data, st, sink))
      return 1;
    cudaGraphExec_t ge;
    CK(cudaGraphInstantiate(&ge, g, 0));
    CK(cudaGraphLaunch(ge, s));
    CK(cudaStreamSynchronize(s));
    CK(cudaGraphExecDestroy(ge));
    CK(cudaGraphDestroy(g));
  }
  CK(cudaStreamSynchronize(s));
  unsigned h[WORDS], hs[2];
  CK(cudaMemcpy(h, data, sizeof h, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(hs, st, sizeof hs, cudaMemcpyDeviceToHost));
  int bad = 0;
  for (int i = 0; i < WORDS; ++i)
    bad += h[i] != ITERS;
  printf("%s: %u iterations run, %d of %d words wrong\n", v, hs[1], bad, WORDS);
  return bad || hs[1] != ITERS;
}
