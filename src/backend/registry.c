/* SPDX-License-Identifier: MIT */
/* wavesched — the backend registry: which backends this build contains and
 * how each one opens a device. The core asks here (ws_backend_find) and
 * knows no backend by name; a backend is added by one row below and one
 * ws_add_backend() in CMake (cmake/WsBackends.cmake). */
#include <string.h>

#include "registry.h"

static const ws_backend_entry backends[WS_BACKEND_COUNT] = {
    {WS_BACKEND_CPU, "cpu", ws_backend_cpu_open},
    {WS_BACKEND_CUDA, "cuda", ws_backend_cuda_open},
    {WS_BACKEND_VULKAN, "vulkan", ws_backend_vulkan_open},
};

const ws_backend_entry *ws_backend_find(ws_backend_kind backend) {
  return (unsigned)backend < WS_BACKEND_COUNT ? &backends[backend] : NULL;
}

const char *ws_backend_name(ws_backend_kind backend) {
  const ws_backend_entry *b = ws_backend_find(backend);
  return b ? b->name : "unknown";
}

ws_status ws_backend_parse(const char *name, ws_backend_kind *out) {
  if (!name || !out)
    return WS_EINVAL;
  for (int b = 0; b < WS_BACKEND_COUNT; ++b) {
    if (strcmp(name, backends[b].name) == 0) {
      *out = (ws_backend_kind)b;
      return WS_OK;
    }
  }
  return WS_EINVAL;
}

bool ws_backend_compiled(ws_backend_kind backend) {
  switch (backend) {
  case WS_BACKEND_CPU:
    return true;
  case WS_BACKEND_CUDA:
    return ws_backend_cuda_built;
  case WS_BACKEND_VULKAN:
    return ws_backend_vulkan_built;
  default:
    return false;
  }
}
