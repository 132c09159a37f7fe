/* SPDX-License-Identifier: MIT */
#ifndef WS_DEMO_PIPELINE_H
#define WS_DEMO_PIPELINE_H

#include "wavesched/wavesched.h"

/* Runs the regression's auxiliary pipeline with the given scheduler options;
 * returns the process exit code. */
int demo_pipeline(ws_device *dev, ws_scheduler_config config);

#endif
