/* SPDX-License-Identifier: MIT */
/* Embedding on Vulkan (ws_device_config.vulkan): the test plays the host
 * application. It creates its own VkInstance, VkDevice (only the three
 * features wavesched requires) and queue, hands them to wavesched, runs the
 * tutorial's coroutine on two wavesched devices sharing them, destroys the
 * wavesched devices, and then checks that its instance, device and queue
 * still work (a fill submitted to its queue, read back) before destroying
 * them itself. Malformed embedding configurations must fail with
 * WS_EINVAL and leave the application's objects alone.
 *
 * Exit 0 pass, 1 fail, 77 skip (no Vulkan 1.2 device with the required
 * features here). */
#include <stdio.h>
#include <string.h>
#include <vulkan/vulkan.h>

#include "embed_common.h"

#define SKIP 77

typedef struct app {
  VkInstance instance;
  VkPhysicalDevice phys;
  VkDevice device;
  VkQueue queue;
  uint32_t family;
  VkPhysicalDeviceVulkan12Features v12;
  VkPhysicalDeviceFeatures2 f2;
  VkDeviceCreateInfo info; /* what the device was created with */
} app;

/* The first device with Vulkan 1.2, the three features and a compute queue. */
static int app_create(app *a) {
  VkApplicationInfo ai = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
                          .pApplicationName = "embed_vulkan",
                          .apiVersion = VK_API_VERSION_1_2};
  VkInstanceCreateInfo ici = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
                              .pApplicationInfo = &ai};
  if (vkCreateInstance(&ici, NULL, &a->instance) != VK_SUCCESS) {
    printf("skip: no Vulkan instance\n");
    return SKIP;
  }
  VkPhysicalDevice pds[16];
  uint32_t n = 16;
  if (vkEnumeratePhysicalDevices(a->instance, &n, pds) < 0)
    n = 0;
  for (uint32_t i = 0; i < n && !a->phys; ++i) {
    VkPhysicalDeviceProperties p;
    vkGetPhysicalDeviceProperties(pds[i], &p);
    VkPhysicalDeviceVulkan12Features v12 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
    VkPhysicalDeviceFeatures2 f2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
                                    .pNext = &v12};
    vkGetPhysicalDeviceFeatures2(pds[i], &f2);
    if (p.apiVersion < VK_API_VERSION_1_2 || !v12.bufferDeviceAddress ||
        !v12.scalarBlockLayout || !f2.features.shaderInt64)
      continue;
    VkQueueFamilyProperties qf[16];
    uint32_t m = 16;
    vkGetPhysicalDeviceQueueFamilyProperties(pds[i], &m, qf);
    for (uint32_t q = 0; q < m && !a->phys; ++q) {
      if (qf[q].queueFlags & VK_QUEUE_COMPUTE_BIT) {
        a->phys = pds[i];
        a->family = q;
      }
    }
  }
  if (!a->phys) {
    printf("skip: no Vulkan 1.2 device with bufferDeviceAddress, scalarBlockLayout, shaderInt64\n");
    return SKIP;
  }
  /* the application enables what wavesched requires, nothing optional */
  a->v12 = (VkPhysicalDeviceVulkan12Features){
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
      .bufferDeviceAddress = VK_TRUE,
      .scalarBlockLayout = VK_TRUE};
  a->f2 = (VkPhysicalDeviceFeatures2){.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
                                      .pNext = &a->v12};
  a->f2.features.shaderInt64 = VK_TRUE;
  static const float priority = 1.0f;
  static VkDeviceQueueCreateInfo qi;
  qi = (VkDeviceQueueCreateInfo){.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                 .queueFamilyIndex = a->family,
                                 .queueCount = 1,
                                 .pQueuePriorities = &priority};
  a->info = (VkDeviceCreateInfo){.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
                                 .pNext = &a->f2,
                                 .queueCreateInfoCount = 1,
                                 .pQueueCreateInfos = &qi};
  VkResult r = vkCreateDevice(a->phys, &a->info, NULL, &a->device);
  EMBED_CHECK(r == VK_SUCCESS, "vkCreateDevice: %d", (int)r);
  if (r != VK_SUCCESS)
    return 1;
  vkGetDeviceQueue(a->device, a->family, 0, &a->queue);
  return 0;
}

/* The application's own work on its own objects: fills a host-visible
 * buffer through its queue and reads the words back. */
static int app_still_works(const app *a, uint32_t value) {
  VkBuffer buf = VK_NULL_HANDLE;
  VkDeviceMemory mem = VK_NULL_HANDLE;
  VkCommandPool pool = VK_NULL_HANDLE;
  VkFence fence = VK_NULL_HANDLE;
  void *map = NULL;
  int ok = 0;
  uint32_t n = 0;
  VkBufferCreateInfo bi = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                           .size = 256,
                           .usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT};
  VkMemoryRequirements req;
  VkPhysicalDeviceMemoryProperties mp;
  vkGetPhysicalDeviceMemoryProperties(a->phys, &mp);
  const VkMemoryPropertyFlags want =
      VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  if (vkEnumeratePhysicalDevices(a->instance, &n, NULL) != VK_SUCCESS || n == 0 ||
      vkCreateBuffer(a->device, &bi, NULL, &buf) != VK_SUCCESS)
    goto done;
  vkGetBufferMemoryRequirements(a->device, buf, &req);
  uint32_t type = UINT32_MAX;
  for (uint32_t t = 0; t < mp.memoryTypeCount && type == UINT32_MAX; ++t)
    if ((req.memoryTypeBits & (1u << t)) && (mp.memoryTypes[t].propertyFlags & want) == want)
      type = t;
  VkMemoryAllocateInfo mi = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                             .allocationSize = req.size,
                             .memoryTypeIndex = type};
  VkCommandPoolCreateInfo pi = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                .queueFamilyIndex = a->family};
  VkFenceCreateInfo fi = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  if (type == UINT32_MAX || vkAllocateMemory(a->device, &mi, NULL, &mem) != VK_SUCCESS ||
      vkBindBufferMemory(a->device, buf, mem, 0) != VK_SUCCESS ||
      vkCreateCommandPool(a->device, &pi, NULL, &pool) != VK_SUCCESS ||
      vkCreateFence(a->device, &fi, NULL, &fence) != VK_SUCCESS)
    goto done;
  VkCommandBuffer cmd;
  VkCommandBufferAllocateInfo cai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                     .commandPool = pool,
                                     .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                     .commandBufferCount = 1};
  VkCommandBufferBeginInfo begin = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  if (vkAllocateCommandBuffers(a->device, &cai, &cmd) != VK_SUCCESS ||
      vkBeginCommandBuffer(cmd, &begin) != VK_SUCCESS)
    goto done;
  vkCmdFillBuffer(cmd, buf, 0, VK_WHOLE_SIZE, value);
  VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                        .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
                        .dstAccessMask = VK_ACCESS_HOST_READ_BIT};
  vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb,
                       0, NULL, 0, NULL);
  VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                     .commandBufferCount = 1,
                     .pCommandBuffers = &cmd};
  if (vkEndCommandBuffer(cmd) != VK_SUCCESS || vkQueueSubmit(a->queue, 1, &si, fence) != VK_SUCCESS ||
      vkWaitForFences(a->device, 1, &fence, VK_TRUE, 10ull * 1000000000ull) != VK_SUCCESS ||
      vkMapMemory(a->device, mem, 0, VK_WHOLE_SIZE, 0, &map) != VK_SUCCESS)
    goto done;
  ok = 1;
  for (uint32_t i = 0; i < 64; ++i)
    ok &= ((const uint32_t *)map)[i] == value;
  vkUnmapMemory(a->device, mem);
done:
  vkDestroyFence(a->device, fence, NULL);
  vkDestroyCommandPool(a->device, pool, NULL);
  vkDestroyBuffer(a->device, buf, NULL);
  vkFreeMemory(a->device, mem, NULL);
  return ok;
}

static ws_device_config embed_config(const app *a, bool with_info) {
  ws_device_config dc;
  memset(&dc, 0, sizeof dc);
  dc.backend = WS_BACKEND_VULKAN;
  dc.device_index = -1;
  dc.vulkan.instance = a->instance;
  dc.vulkan.physical_device = a->phys;
  dc.vulkan.device = a->device;
  dc.vulkan.queue = a->queue;
  dc.vulkan.queue_family = a->family;
  dc.vulkan.device_create_info = with_info ? &a->info : NULL;
  return dc;
}

/* A configuration that must be refused, leaving the application's objects alone. */
static void expect_refused(const ws_device_config *dc, ws_status want, const char *what) {
  ws_device *d = (ws_device *)&d; /* not NULL: the call must reset it */
  const ws_status st = ws_device_create(dc, &d);
  EMBED_CHECK(st == want && d == NULL, "%s: got %s (device %p), expected %s", what,
              ws_status_name(st), (void *)d, ws_status_name(want));
  if (st == WS_OK)
    ws_device_destroy(d);
}

int main(void) {
  if (!ws_backend_compiled(WS_BACKEND_VULKAN)) {
    printf("skip: the Vulkan backend is not built\n");
    return SKIP;
  }
  app a;
  memset(&a, 0, sizeof a);
  int rc = app_create(&a);
  if (rc != 0) {
    if (a.instance)
      vkDestroyInstance(a.instance, NULL);
    return rc;
  }
  EMBED_CHECK(app_still_works(&a, 0x1111u), "the application's device works before wavesched");

  /* malformed embedding: refused, nothing touched */
  ws_device_config bad = embed_config(&a, true);
  bad.vulkan.queue = NULL;
  expect_refused(&bad, WS_EINVAL, "vulkan.queue NULL");
  bad = embed_config(&a, true);
  bad.vulkan.queue_family = 1000;
  expect_refused(&bad, WS_EINVAL, "vulkan.queue_family out of range");
  a.v12.scalarBlockLayout = VK_FALSE; /* as if the device lacked a required feature */
  bad = embed_config(&a, true);
  expect_refused(&bad, WS_EINVAL, "device created without scalarBlockLayout");
  a.v12.scalarBlockLayout = VK_TRUE;
  EMBED_CHECK(app_still_works(&a, 0x2222u), "the application's device works after refusals");

  /* two wavesched devices on the application's objects, one after the other destroyed */
  ws_device_config with_info = embed_config(&a, true), without_info = embed_config(&a, false);
  ws_device *d1 = NULL, *d2 = NULL;
  ws_status st = ws_device_create(&with_info, &d1);
  EMBED_CHECK(st == WS_OK, "embedded device (with create info): %s", ws_status_name(st));
  st = ws_device_create(&without_info, &d2);
  EMBED_CHECK(st == WS_OK, "embedded device (without create info): %s", ws_status_name(st));
  if (d1 && d2) {
    printf("embedded on the application's '%s'\n", ws_device_name(d1));
    embed_run_collatz(d1, 3000, "dispatch on the first embedded device");
    embed_run_collatz(d2, 3000, "dispatch on the second embedded device");
    ws_device_destroy(d1);
    d1 = NULL;
    EMBED_CHECK(app_still_works(&a, 0x3333u), "the application's device works after one destroy");
    embed_run_collatz(d2, 2000, "dispatch on the second device after the first was destroyed");
  }
  ws_device_destroy(d1);
  ws_device_destroy(d2);
  EMBED_CHECK(app_still_works(&a, 0x4444u),
              "the application's instance, device and queue work after wavesched is gone");
  EMBED_CHECK(vkDeviceWaitIdle(a.device) == VK_SUCCESS, "vkDeviceWaitIdle after wavesched");
  vkDestroyDevice(a.device, NULL);
  vkDestroyInstance(a.instance, NULL);
  printf("%s\n", embed_failures() ? "embed_vulkan: FAILED" : "embed_vulkan: ok");
  return embed_failures() ? 1 : 0;
}
