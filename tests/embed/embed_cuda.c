/* SPDX-License-Identifier: MIT */
/* Embedding on CUDA (ws_device_config.cuda_stream): the test plays the host
 * application. It makes its device current and creates its own stream,
 * hands the stream to wavesched, runs the tutorial's coroutine on two
 * wavesched devices sharing it, destroys them, and then checks that its
 * stream still works (its own memset and copy on it) before destroying it
 * itself. It also checks that wavesched's work is ordered after the
 * application's on the stream: a dispatch follows a memset the application
 * enqueued without waiting for it.
 *
 * Exit 0 pass, 1 fail, 77 skip (no CUDA GPU here). */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <string.h>

#include "embed_common.h"

#define SKIP 77

static int stream_still_works(cudaStream_t stream, unsigned char value) {
  unsigned char *d = NULL, h[256];
  memset(h, 0, sizeof h);
  int ok = cudaMalloc((void **)&d, sizeof h) == cudaSuccess &&
           cudaMemsetAsync(d, value, sizeof h, stream) == cudaSuccess &&
           cudaMemcpyAsync(h, d, sizeof h, cudaMemcpyDeviceToHost, stream) == cudaSuccess &&
           cudaStreamSynchronize(stream) == cudaSuccess;
  for (size_t i = 0; ok && i < sizeof h; ++i)
    ok = h[i] == value;
  cudaFree(d);
  return ok;
}

int main(void) {
  int count = 0;
  if (!ws_backend_compiled(WS_BACKEND_CUDA) || cudaGetDeviceCount(&count) != cudaSuccess ||
      count == 0) {
    printf("skip: no CUDA GPU here\n");
    return SKIP;
  }
  const int device = count - 1; /* the last one: not what a default would pick on 2+ GPUs */
  cudaStream_t stream = NULL;
  if (cudaSetDevice(device) != cudaSuccess ||
      cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess) {
    fprintf(stderr, "FAIL: the application cannot create its stream\n");
    return 1;
  }
  EMBED_CHECK(stream_still_works(stream, 0x11), "the application's stream works before wavesched");

  ws_device_config dc;
  memset(&dc, 0, sizeof dc);
  dc.backend = WS_BACKEND_CUDA;
  dc.device_index = 0; /* ignored when embedding: the current device decides */
  dc.cuda_stream = stream;
  ws_device *d1 = NULL, *d2 = NULL;
  ws_status st = ws_device_create(&dc, &d1);
  EMBED_CHECK(st == WS_OK, "embedded device 1: %s", ws_status_name(st));
  st = ws_device_create(&dc, &d2);
  EMBED_CHECK(st == WS_OK, "embedded device 2: %s", ws_status_name(st));
  if (d1 && d2) {
    printf("embedded on the application's stream: %s\n", ws_device_name(d1));
    int current = -1;
    EMBED_CHECK(cudaGetDevice(&current) == cudaSuccess && current == device,
                "the current device is still the application's %d (got %d)", device, current);
    /* application work still in flight when wavesched enqueues behind it */
    void *big = NULL;
    const size_t bytes = (size_t)256 << 20;
    if (cudaMalloc(&big, bytes) == cudaSuccess) {
      EMBED_CHECK(cudaMemsetAsync(big, 0x5a, bytes, stream) == cudaSuccess, "application memset");
      embed_run_collatz(d1, 5000, "dispatch behind the application's memset");
      /* the dispatch synchronized the stream it runs on: the application's */
      EMBED_CHECK(cudaStreamQuery(stream) == cudaSuccess,
                  "the application's memset is still running after the dispatch returned: "
                  "wavesched did not run on the application's stream");
      cudaFree(big);
    }
    embed_run_collatz(d2, 5000, "dispatch on the second embedded device");
    ws_device_destroy(d1);
    d1 = NULL;
    EMBED_CHECK(stream_still_works(stream, 0x22), "the stream works after one destroy");
    embed_run_collatz(d2, 3000, "dispatch on the second device after the first was destroyed");
  }
  ws_device_destroy(d1);
  ws_device_destroy(d2);
  EMBED_CHECK(stream_still_works(stream, 0x33), "the stream works after wavesched is gone");
  EMBED_CHECK(cudaStreamDestroy(stream) == cudaSuccess, "the application destroys its stream");
  printf("%s\n", embed_failures() ? "embed_cuda: FAILED" : "embed_cuda: ok");
  return embed_failures() ? 1 : 0;
}
