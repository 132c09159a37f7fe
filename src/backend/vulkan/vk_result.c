/* SPDX-License-Identifier: MIT */
/* wavesched — Vulkan backend: VkResult names and their ws_status. */
#include "vk_internal.h"

#include <stdio.h>

const char *vk_result_name(VkResult r) {
  switch (r) {
#define VK_WS_NAME_(x)                                                                             \
  case x:                                                                                          \
    return #x;
    VK_WS_NAME_(VK_SUCCESS)
    VK_WS_NAME_(VK_NOT_READY)
    VK_WS_NAME_(VK_TIMEOUT)
    VK_WS_NAME_(VK_EVENT_SET)
    VK_WS_NAME_(VK_EVENT_RESET)
    VK_WS_NAME_(VK_INCOMPLETE)
    VK_WS_NAME_(VK_ERROR_OUT_OF_HOST_MEMORY)
    VK_WS_NAME_(VK_ERROR_OUT_OF_DEVICE_MEMORY)
    VK_WS_NAME_(VK_ERROR_INITIALIZATION_FAILED)
    VK_WS_NAME_(VK_ERROR_DEVICE_LOST)
    VK_WS_NAME_(VK_ERROR_MEMORY_MAP_FAILED)
    VK_WS_NAME_(VK_ERROR_LAYER_NOT_PRESENT)
    VK_WS_NAME_(VK_ERROR_EXTENSION_NOT_PRESENT)
    VK_WS_NAME_(VK_ERROR_FEATURE_NOT_PRESENT)
    VK_WS_NAME_(VK_ERROR_INCOMPATIBLE_DRIVER)
    VK_WS_NAME_(VK_ERROR_TOO_MANY_OBJECTS)
    VK_WS_NAME_(VK_ERROR_FORMAT_NOT_SUPPORTED)
    VK_WS_NAME_(VK_ERROR_FRAGMENTED_POOL)
    VK_WS_NAME_(VK_ERROR_UNKNOWN)
    VK_WS_NAME_(VK_ERROR_OUT_OF_POOL_MEMORY)
    VK_WS_NAME_(VK_ERROR_INVALID_EXTERNAL_HANDLE)
    VK_WS_NAME_(VK_ERROR_FRAGMENTATION)
    VK_WS_NAME_(VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS)
    VK_WS_NAME_(VK_ERROR_SURFACE_LOST_KHR)
    VK_WS_NAME_(VK_ERROR_NATIVE_WINDOW_IN_USE_KHR)
    VK_WS_NAME_(VK_SUBOPTIMAL_KHR)
    VK_WS_NAME_(VK_ERROR_OUT_OF_DATE_KHR)
    VK_WS_NAME_(VK_ERROR_INCOMPATIBLE_DISPLAY_KHR)
    VK_WS_NAME_(VK_ERROR_VALIDATION_FAILED_EXT)
    VK_WS_NAME_(VK_ERROR_INVALID_SHADER_NV)
#undef VK_WS_NAME_
  default:
    return "unknown VkResult";
  }
}

ws_status vk_status_of(VkResult r) {
  switch (r) {
  case VK_SUCCESS:
    return WS_OK;
  case VK_ERROR_OUT_OF_HOST_MEMORY:
    return WS_ENOMEM;
  case VK_ERROR_OUT_OF_DEVICE_MEMORY:
  case VK_ERROR_TOO_MANY_OBJECTS:
  case VK_ERROR_FRAGMENTATION:
    return WS_EDEVMEM;
  case VK_ERROR_INCOMPATIBLE_DRIVER:
  case VK_ERROR_INITIALIZATION_FAILED:
    return WS_ENODEV;
  default:
    return WS_EBACKEND;
  }
}

ws_status vk_check(ws_device *dev, VkResult r, const char *call) {
  if (r == VK_SUCCESS)
    return WS_OK;
  return ws_dev_fail(dev, vk_status_of(r), "vulkan: %s failed: %s (%d)", call, vk_result_name(r),
                     (int)r);
}
