/* SPDX-License-Identifier: MIT */
/* wavesched — Vulkan backend: SPIR-V of the queue shaders in shaders/,
 * compiled by glslc and embedded by ws_glsl_embed (cmake/WsGlsl.cmake) as
 * ws_vk_shader_<file name>. */
#ifndef WAVESCHED_BACKEND_VULKAN_SHADERS_H
#define WAVESCHED_BACKEND_VULKAN_SHADERS_H

#include <stddef.h>
#include <stdint.h>

#define VK_WS_SHADER_(name)                                                                        \
  extern const uint32_t ws_vk_shader_##name[];                                                     \
  extern const size_t ws_vk_shader_##name##_size;

VK_WS_SHADER_(count)
VK_WS_SHADER_(gather)
VK_WS_SHADER_(gather_all_prefix)
VK_WS_SHADER_(gather_all)
VK_WS_SHADER_(publish)
VK_WS_SHADER_(compact_holes)
VK_WS_SHADER_(compact_move)

#undef VK_WS_SHADER_

#endif
