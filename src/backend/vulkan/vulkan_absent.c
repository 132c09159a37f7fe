/* SPDX-License-Identifier: MIT */
/* Linked when the library is built without Vulkan. */
#include "../../core/device.h"
#include "../registry.h"

const bool ws_backend_vulkan_built = false;

ws_status ws_backend_vulkan_open(ws_device *dev, const ws_device_config *config) {
  (void)config;
  return ws_dev_fail(dev, WS_ENODEV,
                     "this build has no Vulkan backend (configure with -DWS_VULKAN=ON; needs "
                     "libvulkan-dev and glslc)");
}
