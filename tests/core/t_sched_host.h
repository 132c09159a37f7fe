/* SPDX-License-Identifier: MIT */
/* Host side of the t_sched test coroutines (see kernels/t_sched.h). */
#ifndef WS_TESTS_T_SCHED_HOST_H
#define WS_TESTS_T_SCHED_HOST_H

#include "t_sched.h"
#include "ws_test.h"

extern const ws_module_set t_sched_modules;

WS_FRAME_DESC(t_order_frame, T_ORDER_FIELDS)
WS_CONTINUATION_NAMES(t_order_names, T_ORDER_CONTINUATIONS)
static const ws_coroutine_desc t_order_coroutine = {
    "t_order", &t_sched_modules, &t_order_frame_ws_desc, sizeof(t_order_args), 2, t_order_names};

WS_FRAME_DESC(t_forkjoin_frame, T_FORKJOIN_FIELDS)
WS_CONTINUATION_NAMES(t_forkjoin_names, T_FORKJOIN_CONTINUATIONS)
static const ws_coroutine_desc t_forkjoin_coroutine = {
    "t_forkjoin",    &t_sched_modules, &t_forkjoin_frame_ws_desc, sizeof(t_forkjoin_args), 3,
    t_forkjoin_names};

WS_FRAME_DESC(t_align_frame, T_ALIGN_FIELDS)
WS_CONTINUATION_NAMES(t_align_names, T_ALIGN_CONTINUATIONS)
static const ws_coroutine_desc t_align_coroutine = {
    "t_align", &t_sched_modules, &t_align_frame_ws_desc, sizeof(t_align_args), 3, t_align_names};

WS_FRAME_DESC(t_bad_frame, T_BAD_FIELDS)
WS_CONTINUATION_NAMES(t_bad_names, T_BAD_CONTINUATIONS)
static const ws_coroutine_desc t_bad_coroutine = {
    "t_bad", &t_sched_modules, &t_bad_frame_ws_desc, sizeof(t_bad_args), 2, t_bad_names};

WS_FRAME_DESC(t_steps_frame, T_STEPS_FIELDS)
WS_CONTINUATION_NAMES(t_steps_names, T_STEPS_CONTINUATIONS)
static const ws_coroutine_desc t_steps_coroutine = {
    "t_steps", &t_sched_modules, &t_steps_frame_ws_desc, sizeof(t_steps_args), 3, t_steps_names};

#endif
