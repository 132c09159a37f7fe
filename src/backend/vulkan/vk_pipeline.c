/* SPDX-License-Identifier: MIT */
/* wavesched — Vulkan backend: compute pipelines and kernel launches.
 *
 * Every pipeline shares one layout: 128 bytes of push constants, no
 * descriptor sets (all memory is reached through buffer device addresses).
 * Specialization constant 0 is the workgroup size (kernel.glsl:
 * local_size_x_id = 0), 1 the workgroups per dispatch chunk, 2 an indirect
 * dispatch's invocation count, 2046 the continuation of a coroutine step
 * specialized for one (WS_SPEC_SRC). User pipelines are created at the first
 * launch of an (entry, form, block, invocations, continuation) key and cached
 * until the device is destroyed; the queue shaders' pipelines are created
 * when the device opens.
 */
#include "../../core/alloc.h"
#include "vk_internal.h"
#include "vk_shaders.h"

#include <stdio.h>
#include <string.h>

/* SPIR-V capabilities that need a device feature, and whether the device
 * has it enabled. A shader using one the device lacks is refused with a
 * message naming the feature (drivers are not required to diagnose it). */
static const char *missing_feature(const ws_vk_impl *vk, uint32_t capability) {
  switch (capability) {
  case 9: /* Float16 */
    return vk->features.float16 ? NULL : "shaderFloat16";
  case 10: /* Float64 */
    return vk->features.float64 ? NULL : "shaderFloat64";
  case 12: /* Int64Atomics */
    return vk->features.int64_atomics ? NULL : "shaderBufferInt64Atomics";
  case 22: /* Int16 */
    return vk->features.int16 ? NULL : "shaderInt16";
  case 39: /* Int8 */
    return vk->features.int8 ? NULL : "shaderInt8";
  case 4433: /* StorageBuffer16BitAccess */
    return vk->features.storage16 ? NULL : "storageBuffer16BitAccess";
  case 4448: /* StorageBuffer8BitAccess */
    return vk->features.storage8 ? NULL : "storageBuffer8BitAccess";
  case 5345: /* VulkanMemoryModel */
    return vk->features.memory_model ? NULL : "vulkanMemoryModel";
  default: /* Int64, PhysicalStorageBufferAddresses: required at open */
    return NULL;
  }
}

/* Checks the SPIR-V header and the OpCapability instructions at its start. */
static ws_status check_spirv(ws_device *dev, const uint32_t *code, size_t size, const char *what) {
  if (!code || size < 20 || size % 4 != 0 || code[0] != 0x07230203u)
    return ws_dev_fail(dev, WS_ENOKERNEL, "vulkan: %s: no valid SPIR-V (%zu bytes)", what, size);
  const size_t words = size / 4;
  size_t i = 5; /* after the header */
  while (i < words) {
    const uint32_t count = code[i] >> 16, op = code[i] & 0xffffu;
    if (count == 0 || i + count > words)
      return ws_dev_fail(dev, WS_ENOKERNEL, "vulkan: %s: malformed SPIR-V at word %zu", what, i);
    if (op == 17 /* OpCapability */ && count >= 2) {
      const char *feature = missing_feature(ws_vk_of(dev), code[i + 1]);
      if (feature)
        return ws_dev_fail(dev, WS_ENODEV,
                           "vulkan: %s uses SPIR-V capability %u, which needs the %s feature that "
                           "device '%s' lacks",
                           what, code[i + 1], feature, dev->name);
    } else if (op != 10 /* OpExtension */ && op != 11 /* OpExtInstImport */) {
      break; /* capabilities precede everything else but extensions */
    }
    i += count;
  }
  return WS_OK;
}

ws_status ws_vk_pipeline_create(ws_device *dev, const uint32_t *code, size_t size, uint32_t block,
                                uint32_t invocations, uint32_t src, const char *what,
                                VkPipeline *out) {
  ws_vk_impl *vk = ws_vk_of(dev);
  *out = VK_NULL_HANDLE;
  const VkPhysicalDeviceLimits *lim = &vk->props.limits;
  if (block == 0 || block > lim->maxComputeWorkGroupSize[0] ||
      block > lim->maxComputeWorkGroupInvocations)
    return ws_dev_fail(dev, WS_EINVAL, "vulkan: %s: block size %u exceeds the device's %u", what,
                       block,
                       lim->maxComputeWorkGroupSize[0] < lim->maxComputeWorkGroupInvocations
                           ? lim->maxComputeWorkGroupSize[0]
                           : lim->maxComputeWorkGroupInvocations);
  ws_status st = check_spirv(dev, code, size, what);
  if (st != WS_OK)
    return st;
  VkShaderModuleCreateInfo mi = {
      .sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO, .codeSize = size, .pCode = code};
  VkShaderModule module;
  VkResult r = vkCreateShaderModule(vk->device, &mi, NULL, &module);
  if (r != VK_SUCCESS)
    return ws_dev_fail(dev, ws_vk_status_of(r), "vulkan: %s: vkCreateShaderModule failed: %s (%d)",
                       what, ws_vk_result_name(r), (int)r);
  /* kernel.glsl: workgroup size, workgroups per chunk, invocations of an
   * indirect dispatch (0 = the launch geometry says), and for a step
   * specialized for one continuation WS_SPEC_SRC (left out otherwise, so
   * that every other pipeline is created exactly as before it existed) */
  const uint32_t spec_values[4] = {block, vk->chunk_groups, invocations, src};
  const VkSpecializationMapEntry spec_map[4] = {
      {0, 0, 4}, {1, 4, 4}, {2, 8, 4}, {WS_VK_SPEC_SRC_ID, 12, 4}};
  const uint32_t spec_count = src == WS_VK_NO_SRC ? 3u : 4u;
  const VkSpecializationInfo spec = {spec_count, spec_map, 4u * spec_count, spec_values};
  VkComputePipelineCreateInfo ci = {
      .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
      /* vkCmdDispatchBase with a non-zero base needs this flag */
      .flags = VK_PIPELINE_CREATE_DISPATCH_BASE_BIT,
      .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                .module = module,
                .pName = "main",
                .pSpecializationInfo = &spec},
      .layout = vk->layout};
  r = vkCreateComputePipelines(vk->device, VK_NULL_HANDLE, 1, &ci, NULL, out);
  /* a pipeline does not need its module after creation */
  vkDestroyShaderModule(vk->device, module, NULL);
  if (r != VK_SUCCESS) {
    *out = VK_NULL_HANDLE;
    return ws_dev_fail(dev, ws_vk_status_of(r), "vulkan: %s: vkCreateComputePipelines failed: %s (%d)",
                       what, ws_vk_result_name(r), (int)r);
  }
  return WS_OK;
}

ws_status ws_vk_pipelines_init(ws_device *dev) {
  ws_vk_impl *vk = ws_vk_of(dev);
  static const struct {
    const uint32_t *code;
    const size_t *size;
    const char *name;
  } shaders[WS_VK_QS_N] = {
      [WS_VK_QS_COUNT] = {ws_vk_shader_count, &ws_vk_shader_count_size, "queue shader count"},
      [WS_VK_QS_GATHER] = {ws_vk_shader_gather, &ws_vk_shader_gather_size, "queue shader gather"},
      [WS_VK_QS_GATHER_ALL_PREFIX] = {ws_vk_shader_gather_all_prefix,
                                   &ws_vk_shader_gather_all_prefix_size,
                                   "queue shader gather_all_prefix"},
      [WS_VK_QS_GATHER_ALL] = {ws_vk_shader_gather_all, &ws_vk_shader_gather_all_size,
                            "queue shader gather_all"},
      [WS_VK_QS_PUBLISH] = {ws_vk_shader_publish, &ws_vk_shader_publish_size, "queue shader publish"},
      [WS_VK_QS_COMPACT_HOLES] = {ws_vk_shader_compact_holes, &ws_vk_shader_compact_holes_size,
                               "queue shader compact_holes"},
      [WS_VK_QS_COMPACT_MOVE] = {ws_vk_shader_compact_move, &ws_vk_shader_compact_move_size,
                              "queue shader compact_move"},
      [WS_VK_QS_COMPACT_PAIRS] = {ws_vk_shader_compact_pairs, &ws_vk_shader_compact_pairs_size,
                               "queue shader compact_pairs"},
  };
  /* The user pipeline cache's array is made with the device, not at the
   * first launch: launches then never change the number of live host
   * allocations (growing past 16 entries replaces the array), which the
   * tests' per-test leak check (ws_testing_live_allocations) relies on. */
  vk->pipelines = ws_calloc(16, sizeof *vk->pipelines);
  if (!vk->pipelines)
    return ws_dev_fail(dev, WS_ENOMEM, "vulkan: no host memory for the pipeline cache");
  vk->pipeline_cap = 16;
  VkPushConstantRange range = {VK_SHADER_STAGE_COMPUTE_BIT, 0, WS_VK_PUSH_BYTES};
  VkPipelineLayoutCreateInfo li = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
                                   .pushConstantRangeCount = 1,
                                   .pPushConstantRanges = &range};
  ws_status st = WS_VK_CALL(dev, vkCreatePipelineLayout, vk->device, &li, NULL, &vk->layout);
  for (uint32_t s = 0; s < WS_VK_QS_N && st == WS_OK; ++s)
    st = ws_vk_pipeline_create(dev, shaders[s].code, *shaders[s].size, vk->queue_block, 0,
                               WS_VK_NO_SRC, shaders[s].name, &vk->queue_pipelines[s]);
  return st;
}

void ws_vk_pipelines_destroy(ws_device *dev) {
  ws_vk_impl *vk = ws_vk_of(dev);
  for (uint32_t i = 0; i < vk->pipeline_count; ++i)
    vkDestroyPipeline(vk->device, vk->pipelines[i].pipeline, NULL);
  ws_free(vk->pipelines);
  vk->pipelines = NULL;
  vk->pipeline_count = vk->pipeline_cap = 0;
  for (uint32_t s = 0; s < WS_VK_QS_N; ++s) {
    vkDestroyPipeline(vk->device, vk->queue_pipelines[s], NULL);
    vk->queue_pipelines[s] = VK_NULL_HANDLE;
  }
  vkDestroyPipeline(vk->device, vk->loop_pipeline, NULL);
  vk->loop_pipeline = VK_NULL_HANDLE;
  vkDestroyPipelineLayout(vk->device, vk->layout, NULL);
  vk->layout = VK_NULL_HANDLE;
}

/* The cached pipeline of (entry, form, block, invocations, src), created on
 * first use. GLSL modules have step and megakernel shaders; no tail
 * (ws_scheduler_config.tail_frames then never runs a tail on Vulkan). */
ws_status ws_vk_user_pipeline(ws_device *dev, const ws_module_entry *entry, ws_launch_form form,
                              uint32_t block, uint32_t invocations, uint32_t src, VkPipeline *out) {
  ws_vk_impl *vk = ws_vk_of(dev);
  for (uint32_t i = 0; i < vk->pipeline_count; ++i) {
    const ws_vk_pipeline *p = &vk->pipelines[i];
    if (p->entry == entry && p->form == form && p->block == block &&
        p->invocations == invocations && p->src == src) {
      *out = p->pipeline;
      return WS_OK;
    }
  }
  const bool mega = form == WS_FORM_MEGA;
  const uint32_t *code = form == WS_FORM_TAIL ? NULL : mega ? entry->spirv_mega : entry->spirv;
  const size_t size = mega ? entry->spirv_mega_size : entry->spirv_size;
  if (!code)
    return ws_dev_fail(dev, WS_ENOKERNEL,
                       "vulkan: entry '%s' has no %s SPIR-V (is its module built from GLSL? see "
                       "docs/vulkan.md)",
                       entry->name, ws_form_name(form));
  if (vk->pipeline_count == vk->pipeline_cap) {
    const uint32_t cap = vk->pipeline_cap ? 2 * vk->pipeline_cap : 16;
    ws_vk_pipeline *grown = ws_calloc(cap, sizeof *grown);
    if (!grown)
      return ws_dev_fail(dev, WS_ENOMEM, "vulkan: no host memory for the pipeline cache");
    if (vk->pipeline_count)
      memcpy(grown, vk->pipelines, vk->pipeline_count * sizeof *grown);
    ws_free(vk->pipelines);
    vk->pipelines = grown;
    vk->pipeline_cap = cap;
  }
  char what[192];
  if (src != WS_VK_NO_SRC)
    snprintf(what, sizeof what, "entry '%s' (step specialized for continuation %u)", entry->name,
             src);
  else
    snprintf(what, sizeof what, "entry '%s'%s", entry->name, mega ? " (megakernel)" : "");
  VkPipeline p = VK_NULL_HANDLE;
  ws_status st = ws_vk_pipeline_create(dev, code, size, block, invocations, src, what, &p);
  if (st != WS_OK)
    return st;
  vk->pipelines[vk->pipeline_count++] = (ws_vk_pipeline){entry, form, block, invocations, src, p};
  *out = p;
  return WS_OK;
}

ws_status ws_vk_step_pipeline(ws_device *dev, const ws_module_entry *entry, uint32_t block,
                              uint32_t src, uint32_t continuation_count, VkPipeline *out) {
  const ws_vk_impl *vk = ws_vk_of(dev);
  const bool one = vk->specialize && entry->kind == WS_ENTRY_COROUTINE && src <= continuation_count;
  return ws_vk_user_pipeline(dev, entry, WS_FORM_STEP, block, 0, one ? src : WS_VK_NO_SRC, out);
}

ws_status ws_vk_op_launch(ws_device *dev, const ws_module_entry *entry, ws_launch_form form,
                       uint32_t n, const void *args, size_t args_size, uint32_t block) {
  if (args_size > WS_VK_PUSH_BYTES)
    return ws_dev_fail(dev, WS_EARGS,
                       "vulkan: entry '%s': %zu argument bytes, push constants "
                       "hold %u",
                       entry->name, args_size, WS_VK_PUSH_BYTES);
  VkPipeline p = VK_NULL_HANDLE;
  ws_status st;
  if (form == WS_FORM_STEP && entry->kind == WS_ENTRY_COROUTINE && args_size == sizeof(ws_launch)) {
    /* a coroutine step: the pipeline of the continuation the launch runs */
    ws_launch l;
    memcpy(&l, args, sizeof l);
    st = ws_vk_step_pipeline(dev, entry, block, l.src, l.continuation_count, &p);
    /* scan mode: one invocation per slot below the scan bound (kernel.glsl) */
    if (st == WS_OK && (l.flags & WS_LAUNCH_SCAN)) {
      if (l.src == 0)
        return ws_dev_fail(dev, WS_EARGS,
                           "vulkan: entry '%s': a scan-mode launch must resume a continuation "
                           "(src 0 given)",
                           entry->name);
      n = l.slot_base;
    }
  } else {
    st = ws_vk_user_pipeline(dev, entry, form, block, 0, WS_VK_NO_SRC, &p);
  }
  if (st != WS_OK)
    return st;
  return ws_vk_record_dispatch(dev, p, args, (uint32_t)args_size, n, block, entry->name);
}
