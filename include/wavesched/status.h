/* SPDX-License-Identifier: MIT */
/** @file
 * wavesched — status codes.
 *
 * Every fallible call returns a ws_status: 0 on success, a negative code on
 * failure. The codes come from one X-macro table so that the enum, the names
 * and the messages can never drift apart (the pattern of libuv's UV_ERRNO_MAP).
 * The object that failed keeps a longer message naming the call, the
 * iteration and the numbers that disagree: see ws_device_last_error() and
 * ws_scheduler_last_error().
 */
#ifndef WAVESCHED_STATUS_H
#define WAVESCHED_STATUS_H

#include "wavesched/export.h"

#ifdef __cplusplus
extern "C" {
#endif
WS_API_BEGIN

/** The status table, one X(NAME, value, "message") per code: the enum
 * ws_status (WS_NAME = value), ws_status_name() and ws_strerror() are all
 * generated from it. docs/errors.md says which call returns which code. */
#define WS_STATUS_MAP(X)                                                                   \
  X(OK, 0, "success")                                                                      \
  X(EINVAL, -1, "invalid argument")                                                        \
  X(ENOMEM, -2, "out of host memory")                                                      \
  X(EDEVMEM, -3, "out of device memory")                                                   \
  X(ENODEV, -4, "backend or device not available")                                         \
  X(EBACKEND, -5, "backend call failed")                                                   \
  X(ENOKERNEL, -6, "kernel not found in module for this backend")                          \
  X(EARGS, -7, "kernel argument block too large")                                          \
  X(EBUSY, -8, "the scheduler is already dispatching (re-entrant call)")                   \
  /* scheduler configuration (rejected at creation) */                                     \
  X(ECONFIG_POOL, -20, "resident frame pool size is zero")                                 \
  X(ECONFIG_ACCOUNTING, -21, "incremental and fused accounting require the greedy policy") \
  X(ECONFIG_NAME, -23, "continuation name empty or duplicated")                            \
  X(ECONFIG_CONTINUATION, -24, "unknown continuation name")                                \
  X(ECONFIG_COROUTINE, -25, "malformed coroutine description")                             \
  X(ECONFIG_BLOCK, -26, "block size must be a positive multiple of 32 up to 1024")         \
  X(ECONFIG_ENUM, -27, "enumeration value out of range")                                   \
  X(ECONFIG_LOOP, -28, "the device loop cannot run this configuration")                    \
  /* auxiliary work registration (nothing is registered on failure) */                     \
  X(EAUX_NULL, -40, "auxiliary work is NULL or lacks a required call")                     \
  X(EAUX_CLOSED, -41, "auxiliary registration is closed after the first dispatch")         \
  X(EAUX_POLICY, -42, "auxiliary work requires the greedy policy")                         \
  X(EAUX_CAPACITY, -43, "auxiliary capacity must be positive")                             \
  X(EAUX_NAME, -44, "auxiliary work name empty or already registered")                     \
  X(EAUX_NO_PRODUCER, -45, "auxiliary work declares no producer")                          \
  X(EAUX_PRODUCER, -46, "producer names no continuation, the entry, or repeats")           \
  X(EAUX_BOUND, -47, "producer bound is zero")                                             \
  X(EAUX_POOL_BOUND, -48, "resident frames times producer bound exceeds capacity")         \
  X(EAUX_STAGES, -49, "stage count zero or stage names empty or duplicated")               \
  /* protocol violations found during a dispatch */                                        \
  X(EPROTO_OVER_CAPACITY, -60, "auxiliary live count exceeds capacity")                    \
  X(EPROTO_STAGE_SUM, -61, "stage sum differs from live count")                            \
  X(EPROTO_STAGE_COUNT, -62, "stage count changed while registered")                       \
  X(EPROTO_DRAIN_STAGE, -63, "admission stage out of range or empty")                      \
  X(EPROTO_CLONED, -64, "a stage dispatch created items")                                  \
  X(EPROTO_BOUND, -65, "a producer published more than its declared bound")                \
  X(EPROTO_CLIENT, -66, "an auxiliary client call failed")                                 \
  X(EPROTO_INTERNAL, -67, "internal scheduler invariant violated")                         \
  X(EITERATION_LIMIT, -68, "iteration limit reached before the dispatch drained")          \
  X(EVERIFY, -69, "queue verification found a mismatch")                                   \
  X(ESTALL, -70, "no queue can make progress")                                            \
  X(EPROTO_AVAILABILITY, -71, "available slots exceed the free capacity, or an empty work "  \
                              "is not fully available")

/** What every fallible call returns: WS_OK (0) or a negative code from
 * WS_STATUS_MAP (WS_EINVAL, WS_ENOMEM, ..., WS_ESTALL). */
typedef enum ws_status {
#define WS_STATUS_ENUM_(name, value, msg) WS_##name = (value),
  WS_STATUS_MAP(WS_STATUS_ENUM_)
#undef WS_STATUS_ENUM_
} ws_status;

/** The code's name, "WS_EINVAL" etc.; "WS_UNKNOWN" for a value not in the table. */
const char *ws_status_name(ws_status status);
/** One-line description of the code (not of the failing call: see the
 * object's last-error message for that). */
const char *ws_strerror(ws_status status);

WS_API_END
#ifdef __cplusplus
}
#endif
#endif
