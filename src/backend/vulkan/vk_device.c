/* SPDX-License-Identifier: MIT */
/* wavesched — Vulkan backend: instance, physical device selection, logical
 * device, and the backend table.
 *
 * Selection: WS_VULKAN_DEVICE=<index> if set, else config->device_index if
 * it is >= 0, else the first physical device that is usable. Usable means
 * Vulkan 1.2+, the bufferDeviceAddress, shaderInt64 and scalarBlockLayout
 * features (every wavesched shader uses 64-bit buffer device addresses in
 * the scalar layout) and a queue family with compute. Optional features
 * (8/16-bit types and storage, float16/64, 64-bit atomics, memory model)
 * are enabled when present; vk_pipeline.c refuses a shader that needs one
 * the device lacks.
 *
 * Embedding (ws_device_config.vulkan.device set): the application's
 * instance, physical device, device and queue are used instead, and
 * destroy leaves them alive; the optional features are the ones its
 * VkDeviceCreateInfo enabled (none without it).
 */
#include "../../core/alloc.h"
#include "../registry.h"
#include "vk_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const bool ws_backend_vulkan_built = true;

/* ws_launch is pushed as is to the coroutine shaders: these are the offsets
 * kernel.glsl's push_constant block declares (WS_LAUNCH_BLOCK_). */
#define WS_VK_LAUNCH_AT_(field, offset)                                                            \
  _Static_assert(offsetof(ws_launch, field) == (offset),                                           \
                 "kernel.glsl declares ws_launch." #field " at " #offset)
WS_VK_LAUNCH_AT_(args, 0);
WS_VK_LAUNCH_AT_(frames, 8);
WS_VK_LAUNCH_AT_(field_offsets, 16);
WS_VK_LAUNCH_AT_(ids, 24);
WS_VK_LAUNCH_AT_(tokens, 32);
WS_VK_LAUNCH_AT_(slots, 40);
WS_VK_LAUNCH_AT_(counts, 48);
WS_VK_LAUNCH_AT_(count, 56);
WS_VK_LAUNCH_AT_(capacity, 60);
WS_VK_LAUNCH_AT_(first_id, 64);
WS_VK_LAUNCH_AT_(src, 68);
WS_VK_LAUNCH_AT_(slot_base, 72);
WS_VK_LAUNCH_AT_(layout, 76);
WS_VK_LAUNCH_AT_(flags, 80);
WS_VK_LAUNCH_AT_(continuation_count, 84);
WS_VK_LAUNCH_AT_(plan, 88);
WS_VK_LAUNCH_AT_(limit, 96);
_Static_assert(sizeof(ws_launch) <= WS_VK_PUSH_BYTES, "ws_launch travels in push constants");
_Static_assert(WS_MAX_KERNEL_ARGS == WS_VK_PUSH_BYTES, "kernel arguments travel in push constants");
_Static_assert(WS_LAYOUT_AOS == 0 && WS_LAYOUT_SOA == 1 && WS_LAUNCH_FUSED == 1u,
               "kernel.glsl repeats these values");

/* Feature query of one physical device (Vulkan 1.2 structures). */
typedef struct ws_vk_device_features {
  VkPhysicalDeviceFeatures2 f;
  VkPhysicalDeviceVulkan11Features v11;
  VkPhysicalDeviceVulkan12Features v12;
} ws_vk_device_features;

static void query_features(VkPhysicalDevice pd, ws_vk_device_features *q) {
  memset(q, 0, sizeof *q);
  q->f.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
  q->v11.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES;
  q->v12.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
  q->f.pNext = &q->v11;
  q->v11.pNext = &q->v12;
  vkGetPhysicalDeviceFeatures2(pd, &q->f);
}

/* NULL if the device is usable, else why not. Sets *family to its first
 * compute queue family. */
static const char *unusable(VkPhysicalDevice pd, uint32_t *family) {
  VkPhysicalDeviceProperties p;
  vkGetPhysicalDeviceProperties(pd, &p);
  if (p.apiVersion < VK_API_VERSION_1_2)
    return "it supports Vulkan 1.0/1.1 only (1.2 is needed)";
  ws_vk_device_features q;
  query_features(pd, &q);
  if (!q.v12.bufferDeviceAddress)
    return "it lacks the bufferDeviceAddress feature";
  if (!q.f.features.shaderInt64)
    return "it lacks the shaderInt64 feature";
  if (!q.v12.scalarBlockLayout)
    return "it lacks the scalarBlockLayout feature";
  /* kernel.glsl's aggregated atomics: subgroup basic, arithmetic and ballot
   * operations in compute shaders */
  VkPhysicalDeviceSubgroupProperties sg;
  memset(&sg, 0, sizeof sg);
  sg.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES;
  VkPhysicalDeviceProperties2 p2;
  memset(&p2, 0, sizeof p2);
  p2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2;
  p2.pNext = &sg;
  vkGetPhysicalDeviceProperties2(pd, &p2);
  const VkSubgroupFeatureFlags need =
      VK_SUBGROUP_FEATURE_BASIC_BIT | VK_SUBGROUP_FEATURE_ARITHMETIC_BIT |
      VK_SUBGROUP_FEATURE_BALLOT_BIT | VK_SUBGROUP_FEATURE_VOTE_BIT;
  if (!(sg.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) || (sg.supportedOperations & need) != need)
    return "its compute shaders lack subgroup basic, arithmetic, ballot or vote operations";
  /* Count first, as the API expects; devices have a handful of families,
   * and the first compute one among the first 64 is the one used. */
  VkQueueFamilyProperties qf[64];
  uint32_t n = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, NULL);
  if (n > 64)
    n = 64;
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, qf);
  for (uint32_t i = 0; i < n; ++i) {
    if ((qf[i].queueFlags & VK_QUEUE_COMPUTE_BIT) && qf[i].queueCount > 0) {
      *family = i;
      return NULL;
    }
  }
  return "it has no compute queue";
}

/* WS_VULKAN_DEVICE: -1 when unset or empty, else the index; error text. */
static ws_status env_device(ws_device *dev, int *index) {
  const char *v = getenv("WS_VULKAN_DEVICE");
  *index = -1;
  if (!v || !v[0])
    return WS_OK;
  char *end;
  errno = 0;
  long x = strtol(v, &end, 10);
  if (errno || *end != '\0' || x < 0 || x > 65535)
    return ws_dev_fail(dev, WS_EINVAL, "vulkan: WS_VULKAN_DEVICE='%s' is not a device index", v);
  *index = (int)x;
  return WS_OK;
}

ws_status ws_vk_env_choice(ws_device *dev, const char *where, const char *name,
                           const char *const *values, unsigned n, unsigned unset, unsigned *out) {
  const char *v = getenv(name);
  *out = unset;
  if (!v || !v[0])
    return WS_OK;
  for (unsigned i = 0; i < n; ++i)
    if (strcmp(v, values[i]) == 0) {
      *out = i;
      return WS_OK;
    }
  if (n == 2)
    return ws_dev_fail(dev, WS_EINVAL, "vulkan: %s%s='%s' is neither %s nor %s", where, name, v,
                       values[0], values[1]);
  char list[256] = "";
  size_t at = 0;
  for (unsigned i = 0; i < n && at < sizeof list; ++i)
    at += (size_t)snprintf(list + at, sizeof list - at, "%s%s", i ? ", " : "", values[i]);
  return ws_dev_fail(dev, WS_EINVAL, "vulkan: %s%s='%s' is none of %s", where, name, v, list);
}

ws_status ws_vk_env_switch(ws_device *dev, const char *where, const char *name, const char *off,
                           const char *on, bool unset, bool *out) {
  const char *const values[2] = {off, on};
  unsigned i;
  const ws_status st = ws_vk_env_choice(dev, where, name, values, 2, unset ? 1u : 0u, &i);
  *out = i == 1;
  return st;
}

/* WS_VULKAN_SPECIALIZE: 1, unset or empty specializes every coroutine step
 * per continuation (kernel.glsl WS_SPEC_SRC), 0 runs the generic step. On by
 * default on every device: on lavapipe too, K + 1 small pipelines compiled
 * faster than one holding every continuation on a cold shader cache
 * (docs/decisions.md). */
static ws_status env_specialize(ws_device *dev, bool *on) {
  return ws_vk_env_switch(dev, "", "WS_VULKAN_SPECIALIZE", "0", "1", true, on);
}

/* WS_VULKAN_WAIT: auto (unset or empty: the default), block
 * (vkWaitForFences) or spin (the host polls the fence: no wake-up latency
 * after each submission, one host core busy while it waits; vk_stream.c
 * wait_fence). auto spins on a GPU and blocks on a CPU device (lavapipe),
 * whose own threads need the host's cores (as CUDA's default schedule
 * spins while the host has cores to spare): on an H100 spinning took 0.1 to
 * 0.15 us off bench_loop's pipelined iteration and added 1 % to the path
 * tracer (s13run1, docs/decisions.md). */
static ws_status env_wait(ws_device *dev, bool *spin) {
  static const char *const values[3] = {"auto", "block", "spin"};
  unsigned i;
  ws_status st = ws_vk_env_choice(dev, "", "WS_VULKAN_WAIT", values, 3, 0, &i);
  *spin = i == 0 ? ws_vk_of(dev)->props.deviceType != VK_PHYSICAL_DEVICE_TYPE_CPU : i == 2;
  return st;
}

/* WS_VULKAN_QUEUE_GROUPS: N, at most N workgroups per slot-parallel queue
 * dispatch, each walking tiles g, g + N, ... (shaders/queue.glsl); unset
 * or empty: WS_VK_QUEUE_GROUPS_DEFAULT; 0: one workgroup per tile of B * 8
 * slots (the default before session 13). N must stay below the groups of
 * one dispatch chunk, which the shaders read as one group per tile.
 * WS_VULKAN_QUEUE_CURSORS: adjacent (the default: gather_all reserves on
 * offsets[t]) or padded (on cursors 128 bytes apart), for measuring
 * (docs/vulkan.md). WS_VULKAN_COMPACT: auto (unset or empty: the default),
 * pairs (one pass, shaders/compact_pairs.comp) or lists (the free slots
 * listed, a barrier, then the movers: the two passes before session 12);
 * vk_internal.h ws_vk_compact_mode. WS_VULKAN_QUEUE_BLOCK: 256 (unset or
 * empty: the default, or the device's limit if lower) or 128, the least
 * Vulkan guarantees: the queue shaders' workgroup size, so that what a
 * device with the minimum limits runs (the loops over histogram entries
 * take two passes for K up to 255) is tested on any device. A value
 * outside these fails the device's creation. */
static ws_status env_queue(ws_device *dev) {
  ws_vk_impl *vk = ws_vk_of(dev);
  bool least = false;
  ws_status st = ws_vk_env_switch(dev, "", "WS_VULKAN_QUEUE_BLOCK", "256", "128", false, &least);
  if (st != WS_OK)
    return st;
  if (least)
    vk->queue_block = 128;
  const char *v = getenv("WS_VULKAN_QUEUE_GROUPS");
  vk->queue_groups = WS_VK_QUEUE_GROUPS_DEFAULT < vk->chunk_groups ? WS_VK_QUEUE_GROUPS_DEFAULT
                                                                    : vk->chunk_groups - 1u;
  if (v && v[0]) {
    char *end;
    const unsigned long n = strtoul(v, &end, 10);
    if (*end != '\0' || v[0] == '-' || n >= vk->chunk_groups)
      return ws_dev_fail(dev, WS_EINVAL,
                         "vulkan: WS_VULKAN_QUEUE_GROUPS='%s' is not a workgroup count below %u", v,
                         vk->chunk_groups);
    vk->queue_groups = (uint32_t)n;
  }
  st = ws_vk_env_switch(dev, "", "WS_VULKAN_QUEUE_CURSORS", "adjacent", "padded", false,
                        &vk->queue_cursors_padded);
  if (st != WS_OK)
    return st;
  static const char *const compact[3] = {"auto", "pairs", "lists"};
  _Static_assert(WS_VK_COMPACT_AUTO == 0 && WS_VK_COMPACT_PAIRS == 1 && WS_VK_COMPACT_LISTS == 2,
                 "WS_VULKAN_COMPACT's values are in the order of enum ws_vk_compact_mode");
  unsigned mode;
  st = ws_vk_env_choice(dev, "", "WS_VULKAN_COMPACT", compact, 3, 0, &mode);
  vk->compact_mode = (int)mode;
  return st;
}

static uint64_t env_timeout_ns(void) {
  const char *v = getenv("WS_VULKAN_TIMEOUT_S");
  if (v && v[0]) {
    char *end;
    unsigned long long s = strtoull(v, &end, 10);
    if (*end == '\0' && s > 0 && s < 1000000u)
      return (uint64_t)s * 1000000000u;
  }
  return (uint64_t)300 * 1000000000u; /* long enough for lavapipe, bounded for a hung device */
}

static ws_status create_instance(ws_device *dev) {
  ws_vk_impl *vk = ws_vk_of(dev);
  uint32_t version = 0;
  ws_status st = WS_VK_CALL(dev, vkEnumerateInstanceVersion, &version);
  if (st != WS_OK)
    return ws_dev_fail(dev, WS_ENODEV, "%s (no usable Vulkan loader)", dev->error);
  if (version < VK_API_VERSION_1_2)
    return ws_dev_fail(dev, WS_ENODEV, "vulkan: the loader supports Vulkan %u.%u, 1.2 is needed",
                       VK_API_VERSION_MAJOR(version), VK_API_VERSION_MINOR(version));
  /* Portability drivers (MoltenVK) are listed only when asked for. */
  uint32_t n = 0;
  if ((st = WS_VK_CALL(dev, vkEnumerateInstanceExtensionProperties, NULL, &n, NULL)) != WS_OK)
    return st;
  bool portability = false;
  if (n) {
    VkExtensionProperties *ext = ws_calloc(n, sizeof *ext);
    if (!ext)
      return ws_dev_fail(dev, WS_ENOMEM, "vulkan: no host memory for the extension list");
    st = WS_VK_CALL(dev, vkEnumerateInstanceExtensionProperties, NULL, &n, ext);
    for (uint32_t i = 0; st == WS_OK && i < n; ++i)
      if (strcmp(ext[i].extensionName, VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME) == 0)
        portability = true;
    ws_free(ext);
    if (st != WS_OK)
      return st;
  }
  const char *exts[1] = {VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME};
  VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
                           .pApplicationName = "wavesched",
                           .pEngineName = "wavesched",
                           .apiVersion = VK_API_VERSION_1_2};
  VkInstanceCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
                             .flags =
                                 portability ? VK_INSTANCE_CREATE_ENUMERATE_PORTABILITY_BIT_KHR : 0,
                             .pApplicationInfo = &app,
                             .enabledExtensionCount = portability ? 1u : 0u,
                             .ppEnabledExtensionNames = exts};
  VkResult r = vkCreateInstance(&ci, NULL, &vk->instance);
  if (r != VK_SUCCESS) {
    vk->instance = VK_NULL_HANDLE;
    return ws_dev_fail(dev, r == VK_ERROR_OUT_OF_HOST_MEMORY ? WS_ENOMEM : WS_ENODEV,
                       "vulkan: vkCreateInstance failed: %s (%d)%s", ws_vk_result_name(r), (int)r,
                       r == VK_ERROR_INCOMPATIBLE_DRIVER
                           ? ": no Vulkan driver found (check the ICD files, VK_DRIVER_FILES)"
                           : "");
  }
  return WS_OK;
}

/* Picks vk->phys and vk->family (see the file comment). */
static ws_status select_device(ws_device *dev, const ws_device_config *config) {
  ws_vk_impl *vk = ws_vk_of(dev);
  int want;
  ws_status st = env_device(dev, &want);
  if (st != WS_OK)
    return st;
  const char *why_index = "WS_VULKAN_DEVICE";
  if (want < 0 && config->device_index >= 0) {
    want = config->device_index;
    why_index = "device_index";
  }
  uint32_t n = 0;
  if ((st = WS_VK_CALL(dev, vkEnumeratePhysicalDevices, vk->instance, &n, NULL)) != WS_OK)
    return st;
  if (n == 0)
    return ws_dev_fail(dev, WS_ENODEV,
                       "vulkan: no Vulkan physical device (is a driver installed? lavapipe: "
                       "mesa-vulkan-drivers; NVIDIA: VK_DRIVER_FILES, docs/vulkan.md)");
  VkPhysicalDevice *pds = ws_calloc(n, sizeof *pds);
  if (!pds)
    return ws_dev_fail(dev, WS_ENOMEM, "vulkan: no host memory for the device list");
  st = WS_VK_CALL(dev, vkEnumeratePhysicalDevices, vk->instance, &n, pds);
  if (st == WS_OK && want >= 0) {
    VkPhysicalDeviceProperties p;
    const char *why;
    if ((uint32_t)want >= n) {
      st = ws_dev_fail(dev, WS_ENODEV, "vulkan: %s %d is out of range: %u Vulkan device(s)",
                       why_index, want, n);
    } else if ((why = unusable(pds[want], &vk->family)) != NULL) {
      vkGetPhysicalDeviceProperties(pds[want], &p);
      st = ws_dev_fail(dev, WS_ENODEV, "vulkan: device %d '%s' (%s %d) is not usable: %s", want,
                       p.deviceName, why_index, want, why);
    } else {
      vk->phys = pds[want];
    }
  } else if (st == WS_OK) {
    /* the first usable device; the message lists why the others were not */
    char reasons[sizeof dev->error] = "";
    size_t len = 0;
    for (uint32_t i = 0; i < n && !vk->phys; ++i) {
      const char *why = unusable(pds[i], &vk->family);
      if (!why) {
        vk->phys = pds[i];
        break;
      }
      VkPhysicalDeviceProperties p;
      vkGetPhysicalDeviceProperties(pds[i], &p);
      int w = snprintf(reasons + len, sizeof reasons - len, "%s%u '%s': %s", i ? "; " : "", i,
                       p.deviceName, why);
      if (w > 0 && (size_t)w < sizeof reasons - len)
        len += (size_t)w;
    }
    if (!vk->phys)
      st = ws_dev_fail(dev, WS_ENODEV, "vulkan: none of the %u Vulkan device(s) is usable: %s", n,
                       reasons);
  }
  ws_free(pds);
  return st;
}

/* The optional features shaders may use: those enabled on the device. */
static void keep_features(ws_vk_impl *vk, const ws_vk_device_features *on) {
  vk->features = (ws_vk_features){
      .int16 = on->f.features.shaderInt16,
      .int8 = on->v12.shaderInt8,
      .float64 = on->f.features.shaderFloat64,
      .float16 = on->v12.shaderFloat16,
      .storage16 = on->v11.storageBuffer16BitAccess,
      .storage8 = on->v12.storageBuffer8BitAccess,
      .int64_atomics = on->v12.shaderBufferInt64Atomics,
      .memory_model = on->v12.vulkanMemoryModel,
  };
}

/* Embedding: the features the application enabled, read from the
 * VkDeviceCreateInfo of its device: pEnabledFeatures, and in the pNext
 * chain VkPhysicalDeviceFeatures2, the Vulkan 1.1/1.2 structures or the
 * per-feature structures they absorbed. */
static void enabled_features(const VkDeviceCreateInfo *ci, ws_vk_device_features *on) {
  memset(on, 0, sizeof *on);
  if (ci->pEnabledFeatures)
    on->f.features = *ci->pEnabledFeatures;
  for (const VkBaseInStructure *p = ci->pNext; p; p = p->pNext) {
    switch (p->sType) {
    case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2:
      on->f.features = ((const VkPhysicalDeviceFeatures2 *)p)->features;
      break;
    case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES:
      on->v11.storageBuffer16BitAccess |=
          ((const VkPhysicalDeviceVulkan11Features *)p)->storageBuffer16BitAccess;
      break;
    case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES: {
      const VkPhysicalDeviceVulkan12Features *v = (const VkPhysicalDeviceVulkan12Features *)p;
      on->v12.bufferDeviceAddress |= v->bufferDeviceAddress;
      on->v12.scalarBlockLayout |= v->scalarBlockLayout;
      on->v12.shaderInt8 |= v->shaderInt8;
      on->v12.shaderFloat16 |= v->shaderFloat16;
      on->v12.storageBuffer8BitAccess |= v->storageBuffer8BitAccess;
      on->v12.shaderBufferInt64Atomics |= v->shaderBufferInt64Atomics;
      on->v12.vulkanMemoryModel |= v->vulkanMemoryModel;
      break;
    }
    case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES:
      on->v11.storageBuffer16BitAccess |=
          ((const VkPhysicalDevice16BitStorageFeatures *)p)->storageBuffer16BitAccess;
      break;
    case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES:
      on->v12.storageBuffer8BitAccess |=
          ((const VkPhysicalDevice8BitStorageFeatures *)p)->storageBuffer8BitAccess;
      break;
    case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES:
      on->v12.shaderFloat16 |= ((const VkPhysicalDeviceShaderFloat16Int8Features *)p)->shaderFloat16;
      on->v12.shaderInt8 |= ((const VkPhysicalDeviceShaderFloat16Int8Features *)p)->shaderInt8;
      break;
    case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_BUFFER_DEVICE_ADDRESS_FEATURES:
      on->v12.bufferDeviceAddress |=
          ((const VkPhysicalDeviceBufferDeviceAddressFeatures *)p)->bufferDeviceAddress;
      break;
    case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SCALAR_BLOCK_LAYOUT_FEATURES:
      on->v12.scalarBlockLayout |=
          ((const VkPhysicalDeviceScalarBlockLayoutFeatures *)p)->scalarBlockLayout;
      break;
    case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_INT64_FEATURES:
      on->v12.shaderBufferInt64Atomics |=
          ((const VkPhysicalDeviceShaderAtomicInt64Features *)p)->shaderBufferInt64Atomics;
      break;
    case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_MEMORY_MODEL_FEATURES:
      on->v12.vulkanMemoryModel |=
          ((const VkPhysicalDeviceVulkanMemoryModelFeatures *)p)->vulkanMemoryModel;
      break;
    default:
      break;
    }
  }
}

/* Embedding (ws_device_config.vulkan): takes the application's instance,
 * physical device, device and queue instead of creating them, after
 * checking what can be checked: the handles are there, the physical device
 * meets the requirements, the queue family has compute, and (with the
 * create info) the device has the required features enabled. */
static ws_status adopt_objects(ws_device *dev, const ws_vulkan_objects *o) {
  ws_vk_impl *vk = ws_vk_of(dev);
  const char *null_field = !o->instance          ? "instance"
                           : !o->physical_device ? "physical_device"
                           : !o->queue           ? "queue"
                                                 : NULL;
  if (null_field)
    return ws_dev_fail(dev, WS_EINVAL,
                       "vulkan: ws_device_config.vulkan.device is set (embedding) but .%s is NULL",
                       null_field);
  VkPhysicalDevice pd = (VkPhysicalDevice)o->physical_device;
  VkPhysicalDeviceProperties p;
  vkGetPhysicalDeviceProperties(pd, &p);
  uint32_t first_compute = 0;
  const char *why = unusable(pd, &first_compute);
  if (why)
    return ws_dev_fail(dev, WS_ENODEV, "vulkan: the application's device '%s' is not usable: %s",
                       p.deviceName, why);
  VkQueueFamilyProperties qf[64];
  uint32_t n = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, NULL);
  if (n > 64)
    n = 64;
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, qf);
  if (o->queue_family >= n || !(qf[o->queue_family].queueFlags & VK_QUEUE_COMPUTE_BIT))
    return ws_dev_fail(dev, WS_EINVAL,
                       "vulkan: ws_device_config.vulkan.queue_family %u of '%s' %s (it has %u "
                       "queue families; family %u has compute)",
                       o->queue_family, p.deviceName,
                       o->queue_family >= n ? "does not exist" : "has no compute", n,
                       first_compute);
  ws_vk_device_features on;
  if (o->device_create_info) {
    const VkDeviceCreateInfo *ci = (const VkDeviceCreateInfo *)o->device_create_info;
    if (ci->sType != VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO)
      return ws_dev_fail(dev, WS_EINVAL,
                         "vulkan: ws_device_config.vulkan.device_create_info is not a "
                         "VkDeviceCreateInfo (sType %d, expected %d)",
                         (int)ci->sType, (int)VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO);
    enabled_features(ci, &on);
    const char *off = !on.v12.bufferDeviceAddress  ? "bufferDeviceAddress"
                      : !on.f.features.shaderInt64 ? "shaderInt64"
                      : !on.v12.scalarBlockLayout  ? "scalarBlockLayout"
                                                   : NULL;
    if (off)
      return ws_dev_fail(dev, WS_EINVAL,
                         "vulkan: the application's device '%s' was created without the %s "
                         "feature, which every wavesched shader needs: enable it in its "
                         "VkDeviceCreateInfo",
                         p.deviceName, off);
  } else {
    memset(&on, 0, sizeof on); /* only the required features, which are not kept */
  }
  keep_features(vk, &on);
  vk->external = true;
  vk->instance = (VkInstance)o->instance;
  vk->phys = pd;
  vk->device = (VkDevice)o->device;
  vk->queue = (VkQueue)o->queue;
  vk->family = o->queue_family;
  return WS_OK;
}

static ws_status create_device(ws_device *dev) {
  ws_vk_impl *vk = ws_vk_of(dev);
  ws_vk_device_features have;
  query_features(vk->phys, &have);
  ws_vk_device_features on;
  memset(&on, 0, sizeof on);
  on.f.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
  on.v11.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES;
  on.v12.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
  on.f.pNext = &on.v11;
  on.v11.pNext = &on.v12;
  /* required (checked by unusable()) */
  on.f.features.shaderInt64 = VK_TRUE;
  on.v12.bufferDeviceAddress = VK_TRUE;
  on.v12.scalarBlockLayout = VK_TRUE;
  /* optional: whatever the device has */
  on.f.features.shaderInt16 = have.f.features.shaderInt16;
  on.f.features.shaderFloat64 = have.f.features.shaderFloat64;
  on.v11.storageBuffer16BitAccess = have.v11.storageBuffer16BitAccess;
  on.v12.shaderInt8 = have.v12.shaderInt8;
  on.v12.shaderFloat16 = have.v12.shaderFloat16;
  on.v12.storageBuffer8BitAccess = have.v12.storageBuffer8BitAccess;
  on.v12.shaderBufferInt64Atomics = have.v12.shaderBufferInt64Atomics;
  on.v12.vulkanMemoryModel = have.v12.vulkanMemoryModel;
  on.v12.vulkanMemoryModelDeviceScope = have.v12.vulkanMemoryModelDeviceScope;
  keep_features(vk, &on);
  const float priority = 1.0f;
  VkDeviceQueueCreateInfo qi = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                .queueFamilyIndex = vk->family,
                                .queueCount = 1,
                                .pQueuePriorities = &priority};
  VkDeviceCreateInfo di = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
                           .pNext = &on.f,
                           .queueCreateInfoCount = 1,
                           .pQueueCreateInfos = &qi};
  VkResult r = vkCreateDevice(vk->phys, &di, NULL, &vk->device);
  if (r != VK_SUCCESS) {
    vk->device = VK_NULL_HANDLE;
    return ws_dev_fail(dev, ws_vk_status_of(r), "vulkan: vkCreateDevice('%s') failed: %s (%d)",
                       vk->props.deviceName, ws_vk_result_name(r), (int)r);
  }
  vkGetDeviceQueue(vk->device, vk->family, 0, &vk->queue);
  return WS_OK;
}

/* A submission of the stream (vk_internal.h ws_vk_submission) whose error
 * copy lands in state_host word `err_word`. */
static ws_status create_submission(ws_device *dev, ws_vk_submission *sb, uint32_t err_word) {
  ws_vk_impl *vk = ws_vk_of(dev);
  VkCommandPoolCreateInfo pi = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                .flags = VK_COMMAND_POOL_CREATE_TRANSIENT_BIT,
                                .queueFamilyIndex = vk->family};
  sb->err_word = err_word;
  ws_status st = WS_VK_ALLOC_CALL(dev, vkCreateCommandPool, vk->device, &pi, NULL, &sb->pool);
  if (st != WS_OK)
    return st;
  VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                    .commandPool = sb->pool,
                                    .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                    .commandBufferCount = 1};
  if ((st = WS_VK_ALLOC_CALL(dev, vkAllocateCommandBuffers, vk->device, &ai, &sb->cmd)) != WS_OK)
    return st;
  VkFenceCreateInfo fi = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  return WS_VK_ALLOC_CALL(dev, vkCreateFence, vk->device, &fi, NULL, &sb->fence);
}

/* The stream's two submissions: the one being recorded and the one a
 * flush may leave pending (vk_stream.c). */
static ws_status create_stream(ws_device *dev) {
  ws_vk_impl *vk = ws_vk_of(dev);
  ws_status st = create_submission(dev, &vk->sub, 0);
  return st == WS_OK ? create_submission(dev, &vk->sub2, 1) : st;
}

static void ws_vk_destroy(ws_device *dev) {
  ws_vk_impl *vk = ws_vk_of(dev);
  if (!vk)
    return;
  if (vk->device) {
    /* Run what is still recorded (buffers may be freed below), then make
     * sure the queue is idle before anything is destroyed. */
    if (vk->recording && !vk->broken)
      (void)ws_vk_op_synchronize(dev);
    /* An application's device (embedding) is waited for through the queue
     * we submitted to: its other queues are neither ours to wait for nor
     * ours to synchronize. */
    if (vk->external)
      (void)vkQueueWaitIdle(vk->queue);
    else
      (void)vkDeviceWaitIdle(vk->device);
    ws_vk_pipelines_destroy(dev);
    /* the backend's own buffers, then any the user did not destroy */
    while (vk->live)
      ws_vk_buffer_destroy(dev, vk->live);
    vkDestroyQueryPool(vk->device, vk->timer_pool, NULL); /* VK_NULL_HANDLE: no-op */
    vkDestroyFence(vk->device, vk->sub.fence, NULL);
    vkDestroyCommandPool(vk->device, vk->sub.pool, NULL); /* frees cmd */
    vkDestroyFence(vk->device, vk->sub2.fence, NULL);
    vkDestroyCommandPool(vk->device, vk->sub2.pool, NULL);
    if (!vk->external)
      vkDestroyDevice(vk->device, NULL);
  }
  if (vk->instance && !vk->external)
    vkDestroyInstance(vk->instance, NULL);
  ws_free(vk->by_addr);
  ws_free(vk);
  dev->impl = NULL;
}

static const ws_backend_ops ws_vk_ops = {
    .name = "vulkan",
    .destroy = ws_vk_destroy,
    .buffer_alloc = ws_vk_op_buffer_alloc,
    .buffer_free = ws_vk_op_buffer_free,
    .host_alloc = ws_vk_op_host_alloc,
    .host_free = ws_vk_op_host_free,
    .write = ws_vk_op_write,
    .enqueue_read = ws_vk_op_enqueue_read,
    .enqueue_fill_u32 = ws_vk_op_fill_u32,
    .synchronize = ws_vk_op_synchronize,
    .flush = ws_vk_op_flush,
    .loop_pipelined = ws_vk_loop_pipelined,
    .launch = ws_vk_op_launch,
    .queue_count = ws_vk_op_queue_count,
    .queue_gather = ws_vk_op_queue_gather,
    .queue_gather_all = ws_vk_op_queue_gather_all,
    .queue_publish = ws_vk_op_queue_publish,
    .queue_compact = ws_vk_op_queue_compact,
    /* Always set, although a queue family without timestamps has no device
     * timer: the table is shared by every device (static const), so such a
     * device cannot leave the ops NULL. Its timer_mark records nothing and
     * its timer_elapsed gives *ms = -1, which the statistics report as "no
     * device time" exactly as they would for NULL ops. */
    .timer_mark = ws_vk_op_timer_mark,
    .timer_elapsed = ws_vk_op_timer_elapsed,
    .loop_create = ws_vk_loop_create,
    .loop_run = ws_vk_loop_run,
    .loop_destroy = ws_vk_loop_destroy,
    .memory_available = ws_vk_op_memory_available,
};

/* What memory_available reports besides the heaps: whether budgets can be
 * queried (VK_EXT_memory_budget, a physical-device query that needs no
 * enabling) and the largest single allocation. */
static ws_status query_memory_limits(ws_device *dev) {
  ws_vk_impl *vk = ws_vk_of(dev);
  VkPhysicalDeviceMaintenance3Properties m3 = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES};
  VkPhysicalDeviceProperties2 p2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
                                    .pNext = &m3};
  vkGetPhysicalDeviceProperties2(vk->phys, &p2);
  vk->max_alloc = m3.maxMemoryAllocationSize;
  uint32_t n = 0;
  ws_status st = WS_VK_CALL(dev, vkEnumerateDeviceExtensionProperties, vk->phys, NULL, &n, NULL);
  if (st != WS_OK || n == 0)
    return st;
  VkExtensionProperties *ext = ws_calloc(n, sizeof *ext);
  if (!ext)
    return ws_dev_fail(dev, WS_ENOMEM, "vulkan: no host memory for the device extension list");
  st = WS_VK_CALL(dev, vkEnumerateDeviceExtensionProperties, vk->phys, NULL, &n, ext);
  for (uint32_t i = 0; st == WS_OK && i < n; ++i)
    if (strcmp(ext[i].extensionName, VK_EXT_MEMORY_BUDGET_EXTENSION_NAME) == 0)
      vk->memory_budget = true;
  ws_free(ext);
  return st;
}

ws_status ws_backend_vulkan_open(ws_device *dev, const ws_device_config *config) {
  ws_vk_impl *vk = ws_calloc(1, sizeof *vk);
  if (!vk)
    return ws_dev_fail(dev, WS_ENOMEM, "vulkan: no host memory for the device state");
  dev->impl = vk;
  dev->ops = &ws_vk_ops;
  vk->timeout_ns = env_timeout_ns();
  ws_status st;
  if (config->vulkan.device) {
    st = adopt_objects(dev, &config->vulkan);
  } else {
    st = create_instance(dev);
    if (st == WS_OK)
      st = select_device(dev, config);
  }
  if (st == WS_OK) {
    vkGetPhysicalDeviceProperties(vk->phys, &vk->props);
    vkGetPhysicalDeviceMemoryProperties(vk->phys, &vk->memory);
    snprintf(dev->name, sizeof dev->name, "%.*s", (int)sizeof dev->name - 1, vk->props.deviceName);
    const VkPhysicalDeviceLimits *lim = &vk->props.limits;
    vk->chunk_groups = lim->maxComputeWorkGroupCount[0] < WS_VK_CHUNK_GROUPS
                           ? lim->maxComputeWorkGroupCount[0]
                           : WS_VK_CHUNK_GROUPS;
    /* 256 where the device allows it (Vulkan guarantees 128) */
    vk->queue_block = 256;
    if (lim->maxComputeWorkGroupSize[0] < vk->queue_block)
      vk->queue_block = lim->maxComputeWorkGroupSize[0];
    if (lim->maxComputeWorkGroupInvocations < vk->queue_block)
      vk->queue_block = lim->maxComputeWorkGroupInvocations;
    st = env_specialize(dev, &vk->specialize);
    if (st == WS_OK)
      st = env_wait(dev, &vk->wait_spin);
    if (st == WS_OK)
      st = env_queue(dev);
    if (st == WS_OK)
      st = query_memory_limits(dev);
  }
  if (st == WS_OK && !vk->external)
    st = create_device(dev);
  if (st == WS_OK)
    st = create_stream(dev);
  if (st == WS_OK)
    st = ws_vk_timer_init(dev);
  if (st == WS_OK)
    st = ws_vk_buffer_create(dev, WS_VK_STAGING_BYTES, true, &vk->staging);
  if (st == WS_OK)
    st = ws_vk_buffer_create(dev, 4u * WS_VK_STATE_WORDS, false, &vk->state);
  if (st == WS_OK)
    st = ws_vk_buffer_create(dev, 16, true, &vk->state_host);
  if (st == WS_OK)
    st = ws_vk_record_fill(dev, vk->state->addr, 0, WS_VK_STATE_WORDS);
  if (st == WS_OK)
    st = ws_vk_op_synchronize(dev);
  if (st == WS_OK)
    st = ws_vk_pipelines_init(dev);
  if (st != WS_OK) {
    ws_vk_destroy(dev);
    dev->ops = NULL;
    return st;
  }
  return WS_OK;
}
