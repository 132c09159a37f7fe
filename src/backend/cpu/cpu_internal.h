/* SPDX-License-Identifier: MIT */
/* wavesched — CPU backend internals shared by cpu_backend.c and cpu_loop.c. */
#ifndef WAVESCHED_CPU_INTERNAL_H
#define WAVESCHED_CPU_INTERNAL_H

#include "../../core/backend.h"
#include "cpu_pool.h"

/* The device's kernel threads: the `stream` every CPU launcher receives. */
ws_cpu_pool *ws_cpu_pool_of(ws_device *dev);

/* The device loop (cpu_loop.c): backend.h loop_create / loop_run / loop_destroy. */
ws_status ws_cpu_loop_create(ws_device *dev, const ws_loop_desc *desc, void **loop);
ws_status ws_cpu_loop_run(ws_device *dev, void *loop, uint32_t round);
void ws_cpu_loop_destroy(ws_device *dev, void *loop);

#endif
