/* SPDX-License-Identifier: MIT */
/* Shared by the auxiliary-work tests: open the backend named on the command
 * line, or ask ctest to skip (exit 77) when it has no device. */
#ifndef WS_TEST_AUX_COMMON_H
#define WS_TEST_AUX_COMMON_H

#include <stdio.h>
#include <string.h>

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

#ifdef cmocka_unit_test
/* The command line of a cmocka test program here: --backend B (default
 * cpu) and --filter PATTERN; opens *dev. Returns -1 to go on and run the
 * tests, else the exit status (2 usage, 77 no device, 1 error). */
static inline int aux_cmocka_open(int argc, char **argv, ws_device **dev) {
  ws_backend_kind backend = WS_BACKEND_CPU;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--backend") == 0 && i + 1 < argc) {
      if (ws_backend_parse(argv[++i], &backend) != WS_OK)
        return 2;
    } else if (strcmp(argv[i], "--filter") == 0 && i + 1 < argc) {
      cmocka_set_test_filter(argv[++i]);
    } else {
      fprintf(stderr, "usage: %s [--backend cpu|cuda|vulkan] [--filter PATTERN]\n", argv[0]);
      return 2;
    }
  }
  const int code = aux_open_device(backend, dev);
  return code != 0 ? code : -1;
}
#endif

#endif
