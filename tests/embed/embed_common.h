/* SPDX-License-Identifier: MIT */
/* Embedding tests (docs/install.md, "Embedding"): what both programs do on
 * a wavesched device made on the application's own GPU objects. */
#ifndef WS_TEST_EMBED_COMMON_H
#define WS_TEST_EMBED_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include "wavesched/wavesched.h"

/* Runs the tutorial's coroutine (examples/tutorial: entry, two
 * continuations, a ws_pool stage, a plain kernel) over n items on dev and
 * checks every result against the host. 0 on success, else 1 with the
 * reason printed, naming `what`. */
int embed_run_collatz(ws_device *dev, uint32_t n, const char *what);

/* Prints "FAIL: <what>: ..." and counts a failure unless cond. */
#define EMBED_CHECK(cond, ...) embed_check_((cond), __FILE__, __LINE__, __VA_ARGS__)
void embed_check_(int cond, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Failures counted so far. */
int embed_failures(void);

#endif
