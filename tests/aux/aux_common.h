/* SPDX-License-Identifier: MIT */
/* Shared by the auxiliary-work tests: open the backend named on the command
 * line, or ask ctest to skip (exit 77) when it has no device. */
#ifndef WS_TEST_AUX_COMMON_H
#define WS_TEST_AUX_COMMON_H

#include <stdio.h>

#include "wavesched/wavesched.h"

#define AUX_SKIP 77

static inline int aux_open_device(ws_backend_kind backend, ws_device **dev) {
  ws_device_config dc = {0};
  dc.backend = backend;
  dc.device_index = -1;
  ws_status st = ws_device_create(&dc, dev);
  if (st == WS_ENODEV) {
    printf("SKIP: backend %s has no usable device here\n", ws_backend_name(backend));
    return AUX_SKIP;
  }
  if (st != WS_OK) {
    fprintf(stderr, "cannot open backend %s: %s\n", ws_backend_name(backend), ws_strerror(st));
    return 1;
  }
  return 0;
}

#endif
