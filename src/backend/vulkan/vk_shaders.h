/* SPDX-License-Identifier: MIT */
/* wavesched — Vulkan backend: SPIR-V of the queue shaders in shaders/,
 * compiled by glslc and embedded by ws_glsl_embed (cmake/WsGlsl.cmake) as
 * ws_vk_shader_<file name>. */
#ifndef WAVESCHED_BACKEND_VULKAN_SHADERS_H
#define WAVESCHED_BACKEND_VULKAN_SHADERS_H

#include <stddef.h>
#include <stdint.h>

#define WS_VK_SHADER_(name)                                                                        \
  extern const uint32_t ws_vk_shader_##name[];                                                     \
  extern const size_t ws_vk_shader_##name##_size;

WS_VK_SHADER_(count)
WS_VK_SHADER_(gather)
WS_VK_SHADER_(gather_all_prefix)
WS_VK_SHADER_(gather_all)
WS_VK_SHADER_(publish)
WS_VK_SHADER_(compact_holes)
WS_VK_SHADER_(compact_move)
WS_VK_SHADER_(compact_pairs)
WS_VK_SHADER_(loop)

#undef WS_VK_SHADER_

#endif
