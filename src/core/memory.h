/* SPDX-License-Identifier: MIT */
/* wavesched — checks before memory (internal).
 *
 * Every size the library derives from user input is computed in 64 bits and
 * compared with what the device says it can hold before anything is
 * allocated or filled, so that an impossible request fails at once with a
 * message naming the parameter and the numbers, instead of after gigabytes
 * were committed (or, with overcommit, when the fill touches them).
 */
#ifndef WAVESCHED_CORE_MEMORY_H
#define WAVESCHED_CORE_MEMORY_H

#include <stdint.h>

#include "device.h"

/* "Nothing known" in the figures below. */
#define WS_MEM_UNKNOWN UINT64_MAX

/* Requests up to this size are not checked by ws_buffer_create: the check
 * reads /proc on the CPU backend (tens of microseconds), and a request this
 * small cannot commit a harmful amount before its allocation fails. */
#define WS_MEM_CHECK_MIN ((uint64_t)1 << 20)

/* Sizes saturate at UINT64_MAX instead of wrapping: a sum of user-derived
 * sizes (R x a 4 GiB frame, 32 SoA arrays, C x a 4 GiB stride) can pass
 * 2^64, and a wrapped sum would pass the check. */
static inline uint64_t ws_mem_add(uint64_t a, uint64_t b) {
  return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}
static inline uint64_t ws_mem_mul(uint64_t a, uint64_t b) {
  return b && a > UINT64_MAX / b ? UINT64_MAX : a * b;
}

/* The device's memory figures (backend.h memory_available); both
 * WS_MEM_UNKNOWN when the backend has no query or the query failed. */
void ws_dev_memory(ws_device *dev, uint64_t *available, uint64_t *largest);

/* Host memory this process can still commit: the smallest of the system's
 * available memory (/proc/meminfo MemAvailable, else sysconf) and the
 * headroom under RLIMIT_AS and RLIMIT_DATA. WS_MEM_UNKNOWN if none is known.
 * (src/backend/cpu/cpu_backend.c: the CPU backend's device memory.) */
uint64_t ws_host_memory_available(void);

/* Checks that `bytes` (one request, or the sum of a creation's requests)
 * fits. `largest_single` is the biggest single buffer of the request.
 * Returns WS_OK, or WS_EDEVMEM with `what` and the numbers on the device. */
ws_status ws_dev_check_fit(ws_device *dev, uint64_t bytes, uint64_t largest_single,
                           const char *what);

#endif
