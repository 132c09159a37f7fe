/* SPDX-License-Identifier: MIT */
/* wavesched — the CPU backend's worker threads (internal).
 *
 * The CPU launchers of kernel.h run a kernel's indices through
 * ws_cpu_parallel_for() on the device's pool, which the backend passes as
 * the launcher's `stream`. The pool belongs to one device: its thread count
 * (ws_device_config.cpu_threads) changes nothing else in the process, and
 * no environment variable changes how it waits. See cpu_pool.c.
 */
#ifndef WAVESCHED_BACKEND_CPU_POOL_H
#define WAVESCHED_BACKEND_CPU_POOL_H

#include <stdint.h>

#include "wavesched/status.h"

typedef struct ws_cpu_pool ws_cpu_pool;

/* A pool of `threads` threads in all, the caller's included (1 = every
 * launch runs on the caller). Workers start at the first launch large
 * enough to use them. NULL when the pool's memory cannot be allocated. */
ws_cpu_pool *ws_cpu_pool_create(int threads);
/* Stops and joins the workers. NULL is a no-op. */
void ws_cpu_pool_destroy(ws_cpu_pool *pool);
int ws_cpu_pool_threads(const ws_cpu_pool *pool);

/* Threads a device uses when its configuration says 0: one per CPU this
 * process may run on, at most WS_CPU_MAX_THREADS. */
int ws_cpu_default_threads(void);

#endif
