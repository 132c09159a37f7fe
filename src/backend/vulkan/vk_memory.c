/* SPDX-License-Identifier: MIT */
/* wavesched — Vulkan backend: buffers, memory and the address map.
 *
 * Each buffer owns one VkDeviceMemory allocation: the core reserves its few
 * buffers per scheduler at creation, so the allocation count stays small.
 * Invariants:
 *   M1 every live ws_vk_buffer is on impl->live exactly once;
 *   M2 impl->by_addr holds exactly the live device buffers, sorted by
 *      address; their ranges [addr, addr + size) are disjoint (distinct
 *      buffers never share device addresses), so a binary search finds the
 *      one buffer that can contain an address.
 */
#include "../../core/alloc.h"
#include "vk_internal.h"

#include <inttypes.h>
#include <string.h>

/* The first memory type allowed by `bits` that has all of `need`, preferring
 * one that also has `want`; UINT32_MAX if none. */
static uint32_t pick_memory_type(const ws_vk_impl *vk, uint32_t bits, VkMemoryPropertyFlags need,
                                 VkMemoryPropertyFlags want) {
  uint32_t fallback = UINT32_MAX;
  for (uint32_t i = 0; i < vk->memory.memoryTypeCount; ++i) {
    if (!(bits & (1u << i)))
      continue;
    VkMemoryPropertyFlags f = vk->memory.memoryTypes[i].propertyFlags;
    if ((f & need) != need)
      continue;
    if ((f & want) == want)
      return i;
    if (fallback == UINT32_MAX)
      fallback = i;
  }
  return fallback;
}

/* Inserts a device buffer into the address map (M2). */
static ws_status map_insert(ws_device *dev, ws_vk_buffer *b) {
  ws_vk_impl *vk = ws_vk_of(dev);
  if (vk->addr_count == vk->addr_cap) {
    uint32_t cap = vk->addr_cap ? 2 * vk->addr_cap : 64;
    ws_vk_buffer **grown = ws_calloc(cap, sizeof *grown);
    if (!grown)
      return ws_dev_fail(dev, WS_ENOMEM, "vulkan: no host memory for the address map (%u entries)",
                         cap);
    if (vk->addr_count)
      memcpy(grown, vk->by_addr, vk->addr_count * sizeof *grown);
    ws_free(vk->by_addr);
    vk->by_addr = grown;
    vk->addr_cap = cap;
  }
  uint32_t pos = vk->addr_count;
  while (pos > 0 && vk->by_addr[pos - 1]->addr > b->addr) {
    vk->by_addr[pos] = vk->by_addr[pos - 1];
    --pos;
  }
  vk->by_addr[pos] = b;
  vk->addr_count += 1;
  return WS_OK;
}

static void map_remove(ws_vk_impl *vk, const ws_vk_buffer *b) {
  for (uint32_t i = 0; i < vk->addr_count; ++i) {
    if (vk->by_addr[i] == b) {
      memmove(&vk->by_addr[i], &vk->by_addr[i + 1], (vk->addr_count - i - 1) * sizeof *vk->by_addr);
      vk->addr_count -= 1;
      return;
    }
  }
}

ws_status ws_vk_buffer_find(ws_device *dev, uint64_t addr, VkDeviceSize size, ws_vk_buffer **out,
                         VkDeviceSize *offset) {
  ws_vk_impl *vk = ws_vk_of(dev);
  /* last buffer whose address is <= addr */
  uint32_t lo = 0, hi = vk->addr_count;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (vk->by_addr[mid]->addr <= addr)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo > 0) {
    ws_vk_buffer *b = vk->by_addr[lo - 1];
    VkDeviceSize off = addr - b->addr;
    if (off <= b->size && size <= b->size - off) {
      *out = b;
      *offset = off;
      return WS_OK;
    }
  }
  return ws_dev_fail(dev, WS_EINVAL,
                     "vulkan: address 0x%" PRIx64 " (+%" PRIu64 " bytes) is not inside a buffer "
                     "of this device",
                     addr, (uint64_t)size);
}

ws_status ws_vk_buffer_create(ws_device *dev, VkDeviceSize size, bool host, ws_vk_buffer **out) {
  ws_vk_impl *vk = ws_vk_of(dev);
  *out = NULL;
  ws_vk_buffer *b = ws_calloc(1, sizeof *b);
  if (!b)
    return ws_dev_fail(dev, WS_ENOMEM, "vulkan: no host memory for a buffer handle");
  /* Whole 32-bit words, never empty: fills and word-wise shader copies may
   * then touch the last word of any buffer. */
  b->size = size < 4 ? 4 : (size + 3u) & ~(VkDeviceSize)3u;

  VkBufferCreateInfo bi = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                           .size = b->size,
                           .usage =
                               VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                           .sharingMode = VK_SHARING_MODE_EXCLUSIVE};
  if (!host)
    /* indirect: the device loop's dispatch commands (vk_loop.c) */
    bi.usage |= VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT |
                VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT;
  ws_status st = WS_VK_ALLOC_CALL(dev, vkCreateBuffer, vk->device, &bi, NULL, &b->buffer);
  if (st != WS_OK) {
    ws_free(b);
    return st;
  }
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(vk->device, b->buffer, &req);
  /* Device buffers: device-local memory. Host buffers: host-visible and
   * coherent (no flush/invalidate calls), cached when the device offers it
   * because the host reads them. */
  const VkMemoryPropertyFlags need =
      host ? VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT : 0;
  const VkMemoryPropertyFlags want =
      host ? VK_MEMORY_PROPERTY_HOST_CACHED_BIT : VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
  uint32_t type = pick_memory_type(vk, req.memoryTypeBits, need, want);
  if (type == UINT32_MAX) {
    vkDestroyBuffer(vk->device, b->buffer, NULL);
    ws_free(b);
    return ws_dev_fail(dev, WS_EDEVMEM,
                       "vulkan: no %s memory type for a buffer of %" PRIu64 " bytes",
                       host ? "host-visible coherent" : "device", (uint64_t)size);
  }
  VkMemoryAllocateFlagsInfo flags = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO,
                                     .flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT};
  VkMemoryAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                             .pNext = host ? NULL : &flags,
                             .allocationSize = req.size,
                             .memoryTypeIndex = type};
  st = WS_VK_ALLOC_CALL(dev, vkAllocateMemory, vk->device, &ai, NULL, &b->memory);
  if (st == WS_OK)
    st = WS_VK_CALL(dev, vkBindBufferMemory, vk->device, b->buffer, b->memory, 0);
  if (st == WS_OK && host)
    st = WS_VK_CALL(dev, vkMapMemory, vk->device, b->memory, 0, VK_WHOLE_SIZE, 0, &b->map);
  if (st == WS_OK && !host) {
    VkBufferDeviceAddressInfo di = {.sType = VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO,
                                    .buffer = b->buffer};
    b->addr = vkGetBufferDeviceAddress(vk->device, &di);
    if (b->addr == 0)
      st = ws_dev_fail(dev, WS_EBACKEND, "vulkan: vkGetBufferDeviceAddress returned 0");
    else
      st = map_insert(dev, b);
  }
  if (st != WS_OK) {
    /* vkFreeMemory unmaps; both calls accept VK_NULL_HANDLE */
    vkDestroyBuffer(vk->device, b->buffer, NULL);
    vkFreeMemory(vk->device, b->memory, NULL);
    ws_free(b);
    return st;
  }
  b->next = vk->live;
  if (vk->live)
    vk->live->prev = b;
  vk->live = b;
  *out = b;
  return WS_OK;
}

void ws_vk_buffer_destroy(ws_device *dev, ws_vk_buffer *b) {
  if (!b)
    return;
  ws_vk_impl *vk = ws_vk_of(dev);
  /* The stream may still use the buffer: core callers free buffers only
   * when no dispatch is running, but enqueued work may be pending. Finish
   * it first (no-op when nothing is recorded). A failure has already been
   * recorded on the device and the buffer is freed regardless. */
  if (vk->recording)
    (void)ws_vk_op_synchronize(dev);
  if (b->addr)
    map_remove(vk, b);
  if (b->prev)
    b->prev->next = b->next;
  else
    vk->live = b->next;
  if (b->next)
    b->next->prev = b->prev;
  vkDestroyBuffer(vk->device, b->buffer, NULL);
  vkFreeMemory(vk->device, b->memory, NULL);
  ws_free(b);
}

ws_status ws_vk_op_buffer_alloc(ws_device *dev, size_t size, uint64_t *addr, void **handle) {
  ws_vk_buffer *b;
  ws_status st = ws_vk_buffer_create(dev, size, false, &b);
  if (st != WS_OK)
    return st;
  *addr = b->addr;
  *handle = b;
  return WS_OK;
}

void ws_vk_op_buffer_free(ws_device *dev, void *handle) {
  ws_vk_buffer_destroy(dev, handle);
}

ws_status ws_vk_op_host_alloc(ws_device *dev, size_t size, void **ptr, void **handle) {
  ws_vk_buffer *b;
  ws_status st = ws_vk_buffer_create(dev, size, true, &b);
  if (st != WS_OK)
    return st;
  /* like the CPU backend's calloc: a readback never exposes stale bytes */
  memset(b->map, 0, (size_t)b->size);
  *ptr = b->map;
  *handle = b;
  return WS_OK;
}

void ws_vk_op_host_free(ws_device *dev, void *handle) {
  ws_vk_buffer_destroy(dev, handle);
}

ws_status ws_vk_op_memory_available(ws_device *dev, uint64_t *available, uint64_t *largest) {
  ws_vk_impl *vk = ws_vk_of(dev);
  VkPhysicalDeviceMemoryBudgetPropertiesEXT budget = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_BUDGET_PROPERTIES_EXT};
  VkPhysicalDeviceMemoryProperties2 props = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_PROPERTIES_2};
  if (vk->memory_budget) {
    props.pNext = &budget;
    vkGetPhysicalDeviceMemoryProperties2(vk->phys, &props);
  }
  /* device buffers live in one device-local heap (pick_memory_type): the
   * largest of them bounds what a request can get */
  uint64_t best = 0;
  bool any = false;
  for (uint32_t h = 0; h < vk->memory.memoryHeapCount; ++h) {
    if (!(vk->memory.memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT))
      continue;
    uint64_t a = vk->memory.memoryHeaps[h].size;
    if (vk->memory_budget)
      a = budget.heapBudget[h] > budget.heapUsage[h] ? budget.heapBudget[h] - budget.heapUsage[h]
                                                     : 0;
    best = a > best ? a : best;
    any = true;
  }
  *available = any ? best : UINT64_MAX;
  *largest = vk->max_alloc ? (uint64_t)vk->max_alloc : UINT64_MAX;
  return WS_OK;
}
