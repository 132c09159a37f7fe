/* SPDX-License-Identifier: MIT */
/* wavesched — devices, buffers, readbacks and kernel lookup: thin wrappers
 * that validate arguments once and forward to the backend table. */
#include "device.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "fault.h"
#include "memory.h"
#include "../backend/registry.h"

void ws_dev_log(const ws_device *dev, ws_log_level level, const char *fmt, ...) {
  if (!dev || !dev->log)
    return;
  char msg[1536];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  dev->log(dev->log_user, level, msg);
}

ws_status ws_dev_fail(ws_device *dev, ws_status status, const char *fmt, ...) {
  if (dev) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(dev->error, sizeof dev->error, fmt, ap);
    va_end(ap);
  }
  return status;
}

void ws_dev_own(ws_device *dev, ws_owned *node, ws_owned_kind kind, void (*destroy)(void *),
                void *object) {
  node->kind = kind;
  node->destroy = destroy;
  node->object = object;
  node->prev = NULL;
  node->next = dev->owned;
  if (dev->owned)
    dev->owned->prev = node;
  dev->owned = node;
}

void ws_dev_disown(ws_device *dev, ws_owned *node) {
  if (!node->object)
    return;
  if (node->prev)
    node->prev->next = node->next;
  else if (dev->owned == node)
    dev->owned = node->next;
  if (node->next)
    node->next->prev = node->prev;
  memset(node, 0, sizeof *node);
}

ws_status ws_device_create(const ws_device_config *config, ws_device **out) {
  if (!out)
    return WS_EINVAL;
  *out = NULL;
  ws_device_config cfg = {0};
  if (config)
    cfg = *config;
  if ((unsigned)cfg.backend >= WS_BACKEND_COUNT)
    return WS_ECONFIG_ENUM;
  ws_device *dev = ws_calloc(1, sizeof *dev);
  if (!dev)
    return WS_ENOMEM;
  dev->kind = cfg.backend;
  dev->log = cfg.log;
  dev->log_user = cfg.log_user;
  /* fault injection (testing.h) may count the backend's own allocations
   * while it opens, then wrap the opened device */
  ws_fault_open_begin(dev);
  ws_status st = ws_backend_find(cfg.backend)->open(dev, &cfg);
  const ws_status wrapped = ws_fault_open_end(dev, st);
  if (st == WS_OK && wrapped != WS_OK) {
    dev->ops->destroy(dev);
    st = wrapped;
  }
  if (st != WS_OK) {
    /* The message names why; the device is gone, so it goes to the log. */
    ws_dev_log(dev, WS_LOG_ERROR, "ws_device_create: %s backend: %s",
               ws_backend_name(cfg.backend), dev->error);
    ws_free(dev);
    return st;
  }
  *out = dev;
  return WS_OK;
}

static void destroy_buffer(void *b) { ws_buffer_destroy(b); }
static void destroy_readback(void *rb) { ws_readback_destroy(rb); }

void ws_device_destroy(ws_device *dev) {
  if (!dev)
    return;
  /* What the caller left alive, newest first within each kind: a
   * scheduler's or a pool's destroy also takes its own buffers off the list,
   * so a buffer still listed after them is the caller's. */
  for (int kind = WS_OWNED_SCHEDULER; kind <= WS_OWNED_MEMORY; ++kind) {
    ws_owned *n = dev->owned;
    while (n) {
      if ((int)n->kind != kind) {
        n = n->next;
        continue;
      }
      n->destroy(n->object);
      n = dev->owned; /* the destroy may have unlinked more than n */
    }
  }
  if (dev->ops && dev->ops->destroy)
    dev->ops->destroy(dev);
  ws_free(dev);
}

ws_backend_kind ws_device_backend(const ws_device *dev) {
  return dev ? dev->kind : WS_BACKEND_COUNT;
}
const char *ws_device_name(const ws_device *dev) { return dev ? dev->name : ""; }
const char *ws_device_last_error(const ws_device *dev) { return dev ? dev->error : ""; }

ws_status ws_device_synchronize(ws_device *dev) {
  if (!dev)
    return WS_EINVAL;
  return dev->ops->synchronize(dev);
}

void ws_dev_memory(ws_device *dev, uint64_t *available, uint64_t *largest) {
  *available = WS_MEM_UNKNOWN;
  *largest = WS_MEM_UNKNOWN;
  if (!dev || !dev->ops || !dev->ops->memory_available)
    return;
  uint64_t a = WS_MEM_UNKNOWN, l = WS_MEM_UNKNOWN;
  if (dev->ops->memory_available(dev, &a, &l) == WS_OK) {
    *available = a;
    *largest = l;
  }
}

ws_status ws_dev_check_fit(ws_device *dev, uint64_t bytes, uint64_t largest_single,
                           const char *what) {
  uint64_t available, largest;
  /* a size_t cannot hold it: no backend can allocate it on this host */
  if (largest_single > (uint64_t)SIZE_MAX)
    return ws_dev_fail(dev, WS_EDEVMEM,
                       "%s: a buffer of %" PRIu64 " bytes exceeds the host's size_t (%zu)", what,
                       largest_single, (size_t)SIZE_MAX);
  ws_dev_memory(dev, &available, &largest);
  if (largest_single > largest)
    return ws_dev_fail(dev, WS_EDEVMEM,
                       "%s: a buffer of %" PRIu64 " bytes exceeds the largest the %s device "
                       "allows (%" PRIu64 " bytes)",
                       what, largest_single, dev->ops->name, largest);
  if (bytes > available)
    return ws_dev_fail(dev, WS_EDEVMEM,
                       "%s: %" PRIu64 " bytes of device memory needed, %" PRIu64
                       " available on the %s device",
                       what, bytes, available, dev->ops->name);
  return WS_OK;
}

ws_status ws_device_memory_available(ws_device *dev, uint64_t *available, uint64_t *largest) {
  if (!dev || !available)
    return WS_EINVAL;
  uint64_t l;
  ws_dev_memory(dev, available, &l);
  if (largest)
    *largest = l;
  return WS_OK;
}

ws_status ws_buffer_create(ws_device *dev, size_t size, ws_buffer **out) {
  if (out)
    *out = NULL;
  if (!dev)
    return WS_EINVAL;
  if (!out)
    return ws_dev_fail(dev, WS_EINVAL, "ws_buffer_create: out is NULL");
  if ((uint64_t)size > WS_MEM_CHECK_MIN) {
    ws_status st = ws_dev_check_fit(dev, size, size, "ws_buffer_create");
    if (st != WS_OK)
      return st;
  }
  ws_buffer *b = ws_calloc(1, sizeof *b);
  if (!b)
    return ws_dev_fail(dev, WS_ENOMEM, "ws_buffer_create: no host memory for the handle");
  ws_status st = dev->ops->buffer_alloc(dev, size, &b->addr, &b->handle);
  if (st != WS_OK) {
    ws_free(b);
    return st;
  }
  b->dev = dev;
  b->size = size;
  ws_dev_own(dev, &b->node, WS_OWNED_MEMORY, destroy_buffer, b);
  *out = b;
  return WS_OK;
}

void ws_buffer_destroy(ws_buffer *buf) {
  if (!buf)
    return;
  ws_dev_disown(buf->dev, &buf->node);
  buf->dev->ops->buffer_free(buf->dev, buf->handle);
  ws_free(buf);
}

uint64_t ws_buffer_address(const ws_buffer *buf) { return buf ? buf->addr : 0; }
size_t ws_buffer_size(const ws_buffer *buf) { return buf ? buf->size : 0; }

static ws_status check_range(const ws_buffer *buf, size_t offset, size_t size, const char *call) {
  if (!buf)
    return WS_EINVAL;
  if (offset > buf->size || size > buf->size - offset)
    return ws_dev_fail(buf->dev, WS_EINVAL, "%s: range [%zu, +%zu) exceeds buffer size %zu", call,
                       offset, size, buf->size);
  return WS_OK;
}

ws_status ws_buffer_write(ws_buffer *buf, size_t offset, const void *src, size_t size) {
  ws_status st = check_range(buf, offset, size, "ws_buffer_write");
  if (st != WS_OK)
    return st;
  if (size == 0)
    return WS_OK;
  if (!src)
    return WS_EINVAL;
  return buf->dev->ops->write(buf->dev, buf->addr + offset, src, size);
}

ws_status ws_buffer_read(ws_buffer *buf, size_t offset, void *dst, size_t size) {
  ws_status st = check_range(buf, offset, size, "ws_buffer_read");
  if (st != WS_OK)
    return st;
  if (size == 0)
    return WS_OK;
  if (!dst)
    return WS_EINVAL;
  ws_device *dev = buf->dev;
  ws_readback *rb = NULL;
  st = ws_readback_create(dev, size, &rb);
  if (st == WS_OK)
    st = ws_readback_enqueue(rb, 0, buf, offset, size);
  if (st == WS_OK)
    st = dev->ops->synchronize(dev);
  if (st == WS_OK)
    memcpy(dst, rb->ptr, size);
  ws_readback_destroy(rb);
  return st;
}

ws_status ws_buffer_fill_u32(ws_buffer *buf, size_t offset, uint32_t value, size_t count) {
  if (count > SIZE_MAX / 4)
    return WS_EINVAL;
  ws_status st = check_range(buf, offset, count * 4, "ws_buffer_fill_u32");
  if (st != WS_OK)
    return st;
  if (offset % 4 != 0)
    return ws_dev_fail(buf->dev, WS_EINVAL, "ws_buffer_fill_u32: offset %zu not 4-byte aligned",
                       offset);
  if (count == 0)
    return WS_OK;
  return buf->dev->ops->enqueue_fill_u32(buf->dev, buf->addr + offset, value, count);
}

ws_status ws_readback_create(ws_device *dev, size_t size, ws_readback **out) {
  if (out)
    *out = NULL;
  if (!dev || !out || size == 0)
    return WS_EINVAL;
  ws_readback *rb = ws_calloc(1, sizeof *rb);
  if (!rb)
    return ws_dev_fail(dev, WS_ENOMEM, "ws_readback_create: no host memory for the handle");
  ws_status st = dev->ops->host_alloc(dev, size, &rb->ptr, &rb->handle);
  if (st != WS_OK) {
    ws_free(rb);
    return st;
  }
  rb->dev = dev;
  rb->size = size;
  ws_dev_own(dev, &rb->node, WS_OWNED_MEMORY, destroy_readback, rb);
  *out = rb;
  return WS_OK;
}

void ws_readback_destroy(ws_readback *rb) {
  if (!rb)
    return;
  ws_dev_disown(rb->dev, &rb->node);
  rb->dev->ops->host_free(rb->dev, rb->handle);
  ws_free(rb);
}

ws_status ws_readback_enqueue(ws_readback *rb, size_t dst_offset, ws_buffer *buf,
                              size_t src_offset, size_t size) {
  if (!rb || !buf || buf->dev != rb->dev)
    return WS_EINVAL;
  ws_status st = check_range(buf, src_offset, size, "ws_readback_enqueue");
  if (st != WS_OK)
    return st;
  if (dst_offset > rb->size || size > rb->size - dst_offset)
    return ws_dev_fail(rb->dev, WS_EINVAL,
                       "ws_readback_enqueue: range [%zu, +%zu) exceeds readback size %zu",
                       dst_offset, size, rb->size);
  if (size == 0)
    return WS_OK;
  return rb->dev->ops->enqueue_read(rb->dev, rb->handle, dst_offset, buf->addr + src_offset, size);
}

const void *ws_readback_data(const ws_readback *rb) { return rb ? rb->ptr : NULL; }

ws_status ws_kernel_find(ws_device *dev, const ws_module_set *modules, const char *name,
                         ws_kernel *out) {
  if (!dev || !modules || !name || !out)
    return WS_EINVAL;
  const ws_module *m = modules->by_backend[dev->kind];
  if (!m)
    return ws_dev_fail(dev, WS_ENOKERNEL, "kernel '%s': its module was not built for backend %s",
                       name, ws_backend_name(dev->kind));
  for (uint32_t i = 0; i < m->entry_count; ++i) {
    if (strcmp(m->entries[i].name, name) == 0) {
      out->dev = dev;
      out->entry = &m->entries[i];
      return WS_OK;
    }
  }
  return ws_dev_fail(dev, WS_ENOKERNEL, "kernel '%s' not found in module '%s' (%s)", name, m->name,
                     ws_backend_name(dev->kind));
}

ws_status ws_kernel_launch(const ws_kernel *k, uint32_t n, const void *args, size_t args_size) {
  if (!k || !k->dev || !k->entry)
    return WS_EINVAL;
  ws_device *dev = k->dev;
  if (k->entry->kind != WS_ENTRY_KERNEL)
    return ws_dev_fail(dev, WS_EINVAL, "ws_kernel_launch: '%s' is a coroutine, not a kernel",
                       k->entry->name);
  if (args_size > WS_MAX_KERNEL_ARGS || args_size != k->entry->args_size)
    return ws_dev_fail(dev, WS_EARGS,
                       "ws_kernel_launch: '%s' takes %u argument bytes, got %zu (limit %u)",
                       k->entry->name, k->entry->args_size, args_size, WS_MAX_KERNEL_ARGS);
  if (args_size && !args)
    return WS_EINVAL;
  if (n == 0)
    return WS_OK;
  return dev->ops->launch(dev, k->entry, WS_FORM_STEP, n, args, args_size, 128);
}
