/* SPDX-License-Identifier: MIT */
#version 460
// ws:args_size 56
/* The accumulate stage kernel of the shadow pipeline (pathtracer.kern.h
 * pt_accumulate_kernel): launched over all C slots, keeps its stage's items. */
#include "wavesched/kernel.glsl"
#include "pt.glsl"

WS_KERNEL(pt_accumulate_kernel, pt_stage_args, i, sa) {
  pt_stage_slot(sa, i, PT_STAGE_ACCUMULATE);
}
