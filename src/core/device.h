/* SPDX-License-Identifier: MIT */
/* wavesched — device, buffer and readback objects (internal). */
#ifndef WAVESCHED_CORE_DEVICE_H
#define WAVESCHED_CORE_DEVICE_H

#include "backend.h"

/* What ws_device_destroy destroys first: schedulers (they drive the pools
 * registered with them), then pools (their buffers are theirs), then the
 * buffers and readbacks left. */
typedef enum ws_owned_kind {
  WS_OWNED_SCHEDULER = 0,
  WS_OWNED_POOL = 1,
  WS_OWNED_MEMORY = 2
} ws_owned_kind;

/* A live object of a device, linked into the device's list from its
 * creation to its destruction (ws_device_destroy destroys what is left).
 * The object embeds its node; destroy() unlinks it. */
typedef struct ws_owned {
  struct ws_owned *prev, *next;
  ws_owned_kind kind;
  void (*destroy)(void *object);
  void *object;
} ws_owned;

struct ws_device {
  const ws_backend_ops *ops;
  void *impl; /* backend state, owned by ops->destroy */
  ws_backend_kind kind;
  ws_log_fn log; /* ws_device_config.log, may be NULL */
  void *log_user;
  char name[128];
  char error[512];
  ws_owned *owned; /* the newest live object; older ones follow `next` */
};

struct ws_buffer {
  ws_device *dev;
  ws_owned node;
  uint64_t addr;
  size_t size;
  void *handle;
};

struct ws_readback {
  ws_device *dev;
  ws_owned node;
  void *ptr;
  void *handle;
  size_t size;
};

/* Links `node` (embedded in `object`) into the device's live objects. */
void ws_dev_own(ws_device *dev, ws_owned *node, ws_owned_kind kind, void (*destroy)(void *),
                void *object);
/* Unlinks `node`; a node never linked (all zero) is ignored. */
void ws_dev_disown(ws_device *dev, ws_owned *node);

/* Sends a message to the device's log callback, if it has one. */
void ws_dev_log(const ws_device *dev, ws_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Formats the device's last-error message and returns `status`. */
ws_status ws_dev_fail(ws_device *dev, ws_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
