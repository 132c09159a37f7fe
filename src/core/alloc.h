/* SPDX-License-Identifier: MIT */
/* wavesched — the one host allocator (internal).
 *
 * Every host allocation of the library goes through these functions so that
 * tests can count allocations and fail the Nth one (include/wavesched/testing.h).
 */
#ifndef WAVESCHED_CORE_ALLOC_H
#define WAVESCHED_CORE_ALLOC_H

#include <stddef.h>

void *ws_malloc(size_t size);
void *ws_calloc(size_t count, size_t size);
void ws_free(void *ptr);

#endif
