/* SPDX-License-Identifier: MIT */
/* wavesched — device, buffer and readback objects (internal). */
#ifndef WAVESCHED_CORE_DEVICE_H
#define WAVESCHED_CORE_DEVICE_H

#include "backend.h"

struct ws_device {
  const ws_backend_ops *ops;
  void *impl; /* backend state, owned by ops->destroy */
  ws_backend_kind kind;
  ws_log_fn log; /* ws_device_config.log, may be NULL */
  void *log_user;
  char name[128];
  char error[512];
};

struct ws_buffer {
  ws_device *dev;
  uint64_t addr;
  size_t size;
  void *handle;
};

struct ws_readback {
  ws_device *dev;
  void *ptr;
  void *handle;
  size_t size;
};

/* Sends a message to the device's log callback, if it has one. */
void ws_dev_log(const ws_device *dev, ws_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Formats the device's last-error message and returns `status`. */
ws_status ws_dev_fail(ws_device *dev, ws_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
