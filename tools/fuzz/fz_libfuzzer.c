/* SPDX-License-Identifier: MIT */
/* libFuzzer entry point: clang -fsanitize=fuzzer,address,undefined (run.sh). */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "fz_harness.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  if (fz_init() != 0) {
    fprintf(stderr, "fuzz: cannot open the CPU device\n");
    abort();
  }
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) { return fz_run_input(data, size); }
