/* SPDX-License-Identifier: MIT */
/* vk_shader_stats — what the Vulkan driver made of a compute shader: the
 * statistics of VK_KHR_pipeline_executable_properties (on NVIDIA: registers,
 * shared memory, local memory, binary size; on lavapipe what llvmpipe
 * reports), for pipelines created as the wavesched backend creates its own:
 * Vulkan 1.2, buffer device addresses, the scalar layout, a 128-byte push
 * constant range, specialization constants 0..2 = workgroup size,
 * workgroups per chunk (32768), indirect invocations (0). Nsight Compute
 * does not profile Vulkan shaders on the GPU machine; this is how a
 * shader's register count (hence its resident workgroups) is read there.
 * Not part of the build (scripts/gpu-dev's vkstats step builds it):
 *   glslc --target-env=vulkan1.2 -O -I include -I src/backend/vulkan/shaders \
 *     -o gather_all.spv src/backend/vulkan/shaders/gather_all.comp
 *   cc -O2 -std=c11 -o vk_shader_stats bench/probes/vk_shader_stats.c -lvulkan
 *   ./vk_shader_stats [--block N] gather_all.spv ...
 * Environment: PROBE_DEVICE (physical device index; default the first
 * discrete GPU, else 0). One line per shader: its name, then each statistic
 * as name=value.
 */
#define PROBE_NAME "vk_shader_stats"
#include "vk_probe.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t *read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    printf("vk_shader_stats: cannot open %s\n", path);
    exit(1);
  }
  fseek(f, 0, SEEK_END);
  const long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  if (n <= 0 || n % 4) {
    printf("vk_shader_stats: %s: %ld bytes is no SPIR-V\n", path, n);
    exit(1);
  }
  uint32_t *words = malloc((size_t)n);
  if (!words || fread(words, 1, (size_t)n, f) != (size_t)n) {
    printf("vk_shader_stats: cannot read %s\n", path);
    exit(1);
  }
  fclose(f);
  *size = (size_t)n;
  return words;
}

static void print_stat(const VkPipelineExecutableStatisticKHR *s) {
  printf(" %s=", s->name);
  switch (s->format) {
  case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR:
    printf("%s", s->value.b32 ? "true" : "false");
    break;
  case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR:
    printf("%lld", (long long)s->value.i64);
    break;
  case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR:
    printf("%llu", (unsigned long long)s->value.u64);
    break;
  default:
    printf("%g", s->value.f64);
    break;
  }
}

int main(int argc, char **argv) {
  uint32_t block = 256;
  int first = 1;
  if (argc > 2 && strcmp(argv[1], "--block") == 0) {
    block = (uint32_t)strtoul(argv[2], NULL, 10);
    first = 3;
  }
  if (first >= argc || block == 0) {
    printf("usage: vk_shader_stats [--block N] shader.spv ...\n");
    return 2;
  }
  VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
                           .pApplicationName = "vk_shader_stats",
                           .apiVersion = VK_API_VERSION_1_2};
  VkInstanceCreateInfo ici = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
                              .pApplicationInfo = &app};
  VkInstance inst;
  VK(vkCreateInstance(&ici, NULL, &inst));
  uint32_t npd = 0;
  VK(vkEnumeratePhysicalDevices(inst, &npd, NULL));
  if (!npd) {
    printf("vk_shader_stats: no Vulkan device\n");
    return 1;
  }
  VkPhysicalDevice pds[16];
  npd = npd > 16 ? 16 : npd;
  VK(vkEnumeratePhysicalDevices(inst, &npd, pds));
  uint32_t pick = 0;
  const char *env = getenv("PROBE_DEVICE");
  VkPhysicalDeviceProperties props;
  if (env) {
    pick = (uint32_t)strtoul(env, NULL, 10) % npd;
  } else {
    for (uint32_t i = 0; i < npd; ++i) {
      vkGetPhysicalDeviceProperties(pds[i], &props);
      if (props.deviceType == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU) {
        pick = i;
        break;
      }
    }
  }
  VkPhysicalDevice pd = pds[pick];
  vkGetPhysicalDeviceProperties(pd, &props);
  printf("device: %s (driver %u)\n", props.deviceName, props.driverVersion);

  uint32_t nq = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &nq, NULL);
  VkQueueFamilyProperties qf[16];
  nq = nq > 16 ? 16 : nq;
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &nq, qf);
  uint32_t family = 0;
  while (family < nq && !(qf[family].queueFlags & VK_QUEUE_COMPUTE_BIT))
    ++family;
  if (family == nq) {
    printf("vk_shader_stats: no compute queue\n");
    return 1;
  }
  VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR pef = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR};
  VkPhysicalDeviceVulkan12Features v12 = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, .pNext = &pef};
  VkPhysicalDeviceVulkan11Features v11 = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES, .pNext = &v12};
  VkPhysicalDeviceFeatures2 f2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
                                  .pNext = &v11};
  vkGetPhysicalDeviceFeatures2(pd, &f2);
  if (!pef.pipelineExecutableInfo) {
    printf("vk_shader_stats: %s lacks VK_KHR_pipeline_executable_properties\n", props.deviceName);
    return 1;
  }
  /* everything the device has, as the backend enables its optional
   * features; pipelineExecutableInfo is the probe's own */
  v12.bufferDeviceAddressCaptureReplay = VK_FALSE;
  v12.bufferDeviceAddressMultiDevice = VK_FALSE;
  const char *ext = VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME;
  const float prio = 1.0f;
  VkDeviceQueueCreateInfo qi = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                .queueFamilyIndex = family,
                                .queueCount = 1,
                                .pQueuePriorities = &prio};
  VkDeviceCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
                            .pNext = &f2,
                            .queueCreateInfoCount = 1,
                            .pQueueCreateInfos = &qi,
                            .enabledExtensionCount = 1,
                            .ppEnabledExtensionNames = &ext};
  VkDevice dev;
  VK(vkCreateDevice(pd, &dci, NULL, &dev));
  PFN_vkGetPipelineExecutablePropertiesKHR get_props =
      (PFN_vkGetPipelineExecutablePropertiesKHR)vkGetDeviceProcAddr(
          dev, "vkGetPipelineExecutablePropertiesKHR");
  PFN_vkGetPipelineExecutableStatisticsKHR get_stats =
      (PFN_vkGetPipelineExecutableStatisticsKHR)vkGetDeviceProcAddr(
          dev, "vkGetPipelineExecutableStatisticsKHR");
  if (!get_props || !get_stats) {
    printf("vk_shader_stats: the driver does not export the executable-properties calls\n");
    return 1;
  }
  VkPushConstantRange range = {VK_SHADER_STAGE_COMPUTE_BIT, 0, 128};
  VkPipelineLayoutCreateInfo lci = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
                                    .pushConstantRangeCount = 1,
                                    .pPushConstantRanges = &range};
  VkPipelineLayout layout;
  VK(vkCreatePipelineLayout(dev, &lci, NULL, &layout));
  const uint32_t spec_values[3] = {block, 32768u, 0u};
  const VkSpecializationMapEntry spec_map[3] = {{0, 0, 4}, {1, 4, 4}, {2, 8, 4}};
  const VkSpecializationInfo spec = {3, spec_map, sizeof spec_values, spec_values};

  for (int a = first; a < argc; ++a) {
    size_t size = 0;
    uint32_t *code = read_file(argv[a], &size);
    VkShaderModuleCreateInfo mi = {
        .sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO, .codeSize = size, .pCode = code};
    VkShaderModule module;
    VK(vkCreateShaderModule(dev, &mi, NULL, &module));
    VkComputePipelineCreateInfo ci = {
        .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
        .flags = VK_PIPELINE_CREATE_DISPATCH_BASE_BIT |
                 VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR,
        .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                  .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                  .module = module,
                  .pName = "main",
                  .pSpecializationInfo = &spec},
        .layout = layout};
    VkPipeline pipe;
    VK(vkCreateComputePipelines(dev, VK_NULL_HANDLE, 1, &ci, NULL, &pipe));
    VkPipelineInfoKHR pinfo = {.sType = VK_STRUCTURE_TYPE_PIPELINE_INFO_KHR, .pipeline = pipe};
    uint32_t nexe = 0;
    VK(get_props(dev, &pinfo, &nexe, NULL));
    for (uint32_t e = 0; e < nexe && e < 8; ++e) {
      VkPipelineExecutableInfoKHR einfo = {.sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR,
                                           .pipeline = pipe,
                                           .executableIndex = e};
      uint32_t ns = 0;
      VK(get_stats(dev, &einfo, &ns, NULL));
      VkPipelineExecutableStatisticKHR *st = calloc(ns ? ns : 1, sizeof *st);
      for (uint32_t i = 0; i < ns; ++i)
        st[i].sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR;
      VK(get_stats(dev, &einfo, &ns, st));
      const char *slash = strrchr(argv[a], '/');
      printf("%s[%u] block %u:", slash ? slash + 1 : argv[a], e, block);
      for (uint32_t i = 0; i < ns; ++i)
        print_stat(&st[i]);
      printf("\n");
      free(st);
    }
    vkDestroyPipeline(dev, pipe, NULL);
    vkDestroyShaderModule(dev, module, NULL);
    free(code);
  }
  vkDestroyPipelineLayout(dev, layout, NULL);
  vkDestroyDevice(dev, NULL);
  vkDestroyInstance(inst, NULL);
  return 0;
}
