/* SPDX-License-Identifier: MIT */
/* wavesched — the fault layer's hooks for backends (internal; the public
 * side is include/wavesched/testing.h, the implementation src/core/fault.c).
 *
 * ws_testing_fail_backend_after() wraps dev->ops, so every backend call the
 * core makes can be failed. A backend also allocates on its own, outside
 * those calls (CUDA: the control block, pinned error words and CUB's
 * temporary storage; Vulkan: the staging and state buffers, the command
 * pool, buffer and fence) or inside one call more than once (Vulkan:
 * vkCreateBuffer then vkAllocateMemory). Before each such allocation the
 * backend asks ws_fault_backend_alloc(): when it answers true the backend
 * takes its own failure path exactly as if the driver had refused, so that
 * path is exercised and must leak nothing.
 *
 * The question counts as one call of the device's fault countdown (the same
 * N as the wrapped calls). While a device opens, before any wrapper exists,
 * it counts on the countdown ws_testing_fail_next_device_after() armed,
 * which the new device then keeps. Without fault injection the answer is a
 * pointer comparison and a load: false.
 */
#ifndef WAVESCHED_CORE_FAULT_H
#define WAVESCHED_CORE_FAULT_H

#include <stdbool.h>

#include "device.h"

#ifdef __cplusplus
extern "C" {
#endif

/* True when the backend must fail this allocation (`what` names it in the
 * device's message, which the backend's own failure path then overwrites
 * with its usual text). */
bool ws_fault_backend_alloc(ws_device *dev, const char *what);

/* ws_device_create: around the backend's open. Begin makes `dev` the device
 * the armed countdown applies to; end wraps the opened device with what is
 * left of it (ws_testing_fail_backend_after), or drops it when the open
 * failed. Either way the arming is used up. WS_ENOMEM if the wrapper cannot
 * be allocated (the device is then not usable for the test). */
void ws_fault_open_begin(ws_device *dev);
ws_status ws_fault_open_end(ws_device *dev, ws_status open_status);

#ifdef __cplusplus
}
#endif
#endif
