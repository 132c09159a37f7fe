/* SPDX-License-Identifier: MIT */
/* wavesched — the backend registry (internal): one row per backend kind. */
#ifndef WAVESCHED_BACKEND_REGISTRY_H
#define WAVESCHED_BACKEND_REGISTRY_H

#include "../core/backend.h"

typedef struct ws_backend_entry {
  ws_backend_kind kind;
  const char *name; /* as the CLIs spell it */
  /* Fills dev->ops and dev->impl, or returns WS_ENODEV (with a message on
   * dev) when the backend was built but no device is usable, or was not
   * built at all. */
  ws_status (*open)(ws_device *dev, const ws_device_config *config);
} ws_backend_entry;

/* Backend constructors. Each returns WS_ENODEV (with a message) when the
 * backend was built but no device is usable, or when it was not built. */
ws_status ws_backend_cpu_open(ws_device *dev, const ws_device_config *config);
ws_status ws_backend_cuda_open(ws_device *dev, const ws_device_config *config);
ws_status ws_backend_vulkan_open(ws_device *dev, const ws_device_config *config);
/* Whether each optional backend was compiled into this build. */
extern const bool ws_backend_cuda_built;
extern const bool ws_backend_vulkan_built;

/* NULL for a kind outside the table. */
const ws_backend_entry *ws_backend_find(ws_backend_kind backend);

#endif
