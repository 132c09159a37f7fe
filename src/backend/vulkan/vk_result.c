/* SPDX-License-Identifier: MIT */
/* wavesched — Vulkan backend: VkResult names and their ws_status. */
#include "vk_internal.h"

#include <stdio.h>

const char *ws_vk_result_name(VkResult r) {
  switch (r) {
#define WS_VK_NAME_(x)                                                                             \
  case x:                                                                                          \
    return #x;
    WS_VK_NAME_(VK_SUCCESS)
    WS_VK_NAME_(VK_NOT_READY)
    WS_VK_NAME_(VK_TIMEOUT)
    WS_VK_NAME_(VK_EVENT_SET)
    WS_VK_NAME_(VK_EVENT_RESET)
    WS_VK_NAME_(VK_INCOMPLETE)
    WS_VK_NAME_(VK_ERROR_OUT_OF_HOST_MEMORY)
    WS_VK_NAME_(VK_ERROR_OUT_OF_DEVICE_MEMORY)
    WS_VK_NAME_(VK_ERROR_INITIALIZATION_FAILED)
    WS_VK_NAME_(VK_ERROR_DEVICE_LOST)
    WS_VK_NAME_(VK_ERROR_MEMORY_MAP_FAILED)
    WS_VK_NAME_(VK_ERROR_LAYER_NOT_PRESENT)
    WS_VK_NAME_(VK_ERROR_EXTENSION_NOT_PRESENT)
    WS_VK_NAME_(VK_ERROR_FEATURE_NOT_PRESENT)
    WS_VK_NAME_(VK_ERROR_INCOMPATIBLE_DRIVER)
    WS_VK_NAME_(VK_ERROR_TOO_MANY_OBJECTS)
    WS_VK_NAME_(VK_ERROR_FORMAT_NOT_SUPPORTED)
    WS_VK_NAME_(VK_ERROR_FRAGMENTED_POOL)
    WS_VK_NAME_(VK_ERROR_UNKNOWN)
    WS_VK_NAME_(VK_ERROR_OUT_OF_POOL_MEMORY)
    WS_VK_NAME_(VK_ERROR_INVALID_EXTERNAL_HANDLE)
    WS_VK_NAME_(VK_ERROR_FRAGMENTATION)
    WS_VK_NAME_(VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS)
    WS_VK_NAME_(VK_ERROR_SURFACE_LOST_KHR)
    WS_VK_NAME_(VK_ERROR_NATIVE_WINDOW_IN_USE_KHR)
    WS_VK_NAME_(VK_SUBOPTIMAL_KHR)
    WS_VK_NAME_(VK_ERROR_OUT_OF_DATE_KHR)
    WS_VK_NAME_(VK_ERROR_INCOMPATIBLE_DISPLAY_KHR)
    WS_VK_NAME_(VK_ERROR_VALIDATION_FAILED_EXT)
    WS_VK_NAME_(VK_ERROR_INVALID_SHADER_NV)
#undef WS_VK_NAME_
  default:
    return "unknown VkResult";
  }
}

ws_status ws_vk_status_of(VkResult r) {
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

ws_status ws_vk_check(ws_device *dev, VkResult r, const char *call) {
  if (r == VK_SUCCESS)
    return WS_OK;
  return ws_dev_fail(dev, ws_vk_status_of(r), "vulkan: %s failed: %s (%d)", call, ws_vk_result_name(r),
                     (int)r);
}
