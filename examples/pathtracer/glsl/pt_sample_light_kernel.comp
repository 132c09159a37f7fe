/* SPDX-License-Identifier: MIT */
#version 460
// ws:args_size 56
/* The sample_light stage kernel of the shadow pipeline (pathtracer.kern.h
 * pt_sample_light_kernel): launched over all C slots, keeps its stage's items. */
#include "wavesched/kernel.glsl"
#include "pt.glsl"

WS_KERNEL(pt_sample_light_kernel, pt_stage_args, i, sa) {
  pt_stage_slot(sa, i, PT_STAGE_SAMPLE_LIGHT);
}
