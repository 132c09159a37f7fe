/* SPDX-License-Identifier: MIT */
/* The fuzz harness: bytes -> a random coroutine graph, pool, auxiliary
 * works and options; runs it on the CPU backend and checks it against a
 * sequential reference model (fz_harness.c). Used by the libFuzzer target
 * (fz_libfuzzer.c) and by the corpus replay (fz_replay.c, a ctest). */
#ifndef WS_FUZZ_HARNESS_H
#define WS_FUZZ_HARNESS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Opens the CPU device (once). Returns 0 on success. */
int fz_init(void);
/* Destroys the device (replay only; libFuzzer never calls it). */
void fz_shutdown(void);
/* Runs one input. Any disagreement with the model, unexpected status, leak
 * or protocol misuse prints a description and calls abort(). Returns 0. */
int fz_run_input(const uint8_t *data, size_t size);
/* Prints counts of what the inputs run so far exercised. */
void fz_summary(FILE *out);
/* Prints the decoded case of an input (for humans). */
void fz_describe_input(const uint8_t *data, size_t size, FILE *out);

#endif
