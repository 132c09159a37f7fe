/* SPDX-License-Identifier: MIT */
/* Linked when the library is built without CUDA: --backend cuda then fails
 * with a message that says how to get it. */
#include "../../core/device.h"
#include "../registry.h"

const bool ws_backend_cuda_built = false;

ws_status ws_backend_cuda_open(ws_device *dev, const ws_device_config *config) {
  (void)config;
  return ws_dev_fail(dev, WS_ENODEV,
                     "this build has no CUDA backend (configure with -DWS_CUDA=ON and "
                     "-DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc)");
}
