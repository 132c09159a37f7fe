/* SPDX-License-Identifier: MIT */
/** @file
 * wavesched — hooks for the library's own tests. Not for production use:
 * they change global state and exist so that fault-injection and
 * verification tests can fail on purpose. */
#ifndef WAVESCHED_TESTING_H
#define WAVESCHED_TESTING_H

#include "wavesched/wavesched.h"

#ifdef __cplusplus
extern "C" {
#endif
WS_API_BEGIN

/** Make the Nth host allocation from now fail (1 = the next one); 0 = never. */
void ws_testing_fail_alloc_after(unsigned long n);
/** Host allocations currently live. */
unsigned long ws_testing_live_allocations(void);
/** Host allocations made since the start. */
unsigned long ws_testing_total_allocations(void);

/** Backend fault injection: wraps the device's backend table so that its Nth
 * fallible call from now fails (1 = the next one); 0 = never (the wrapper
 * stays and keeps counting). An injected failure returns what a real backend
 * returns for it: WS_EDEVMEM from a device allocation, WS_ENOMEM from a host
 * (readback) allocation, WS_EBACKEND from a copy, fill, synchronize, launch
 * or queue operation, with a message on the device. Frees and destroy are
 * never failed. The first call allocates the wrapper (one host allocation,
 * freed by ws_device_destroy): WS_ENOMEM if that fails, WS_EINVAL for NULL.
 * Calls and faults count from the last ws_testing_fail_backend_after. */
ws_status ws_testing_fail_backend_after(ws_device *dev, unsigned long n);
/** Fallible backend calls counted since the last ws_testing_fail_backend_after. */
unsigned long ws_testing_backend_calls(const ws_device *dev);
/** Failures injected since the last ws_testing_fail_backend_after. */
unsigned long ws_testing_backend_faults(const ws_device *dev);
/** The same countdown from the start of the next device's life: the next
 * ws_device_create that reaches its backend's open counts the backend's own
 * allocations while it opens (CUDA: stream, events, pinned error words,
 * control block; Vulkan: command pool and buffer, fence, staging and state
 * buffers) as fallible calls, and the device it creates is wrapped as by
 * ws_testing_fail_backend_after with what is left. Backends also count
 * their allocations inside a call (Vulkan's vkCreateBuffer and
 * vkAllocateMemory, CUDA's cudaMalloc, CUB temporary storage) on a wrapped
 * device. One N then numbers every backend call of a scenario from device
 * creation on; 0 = count, never fail. Used up by that open (process-wide:
 * for single-threaded tests). */
void ws_testing_fail_next_device_after(unsigned long n);

/** Adds `delta` to the device count of main queue `queue` at the next
 * iteration boundary of the next dispatch (once). Verification mode must
 * report it; without verification the loop may misbehave but must not hang
 * or write out of bounds. */
void ws_testing_corrupt_count(ws_scheduler *s, uint32_t queue, int32_t delta);
/** Writes `token` into the token of frame slot `slot` in the next dispatch,
 * once, just before verification reads the tokens at the boundary after the
 * first launch (iteration 1, in the host and the device loop alike), as a
 * broken kernel would leave it. Verification mode must report it
 * (WS_EVERIFY) when the token names no continuation, or, with compaction, a
 * live frame at or above the compacted prefix. A slot outside the pool is
 * ignored. */
void ws_testing_corrupt_token(ws_scheduler *s, uint32_t slot, uint32_t token);
/** Materialized accounting in the host loop: at the first boundary of the
 * next dispatch whose sorted slot lists hold more than `entry` entries, the
 * lists verification reads have entry 0's slot at `entry` too (a slot
 * gathered twice, another lost), as a broken gather would leave them; once.
 * Verification mode must report it (WS_EVERIFY). Entry 0 or one outside the
 * pool is ignored. */
void ws_testing_corrupt_list(ws_scheduler *s, uint32_t entry);

WS_API_END
#ifdef __cplusplus
}
#endif
#endif
