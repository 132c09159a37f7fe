/* SPDX-License-Identifier: MIT */
#version 460
// ws:args_size 40
/* The resolve kernel (pathtracer.kern.h pt_resolve): one pixel per index,
 * the C summation order. */
#include "wavesched/kernel.glsl"
#include "pt.glsl"

WS_KERNEL(pt_resolve, pt_resolve_args, p, ra) {
  if (p >= ra.pixels)
    return;
  precise float sx = 0.0, sy = 0.0, sz = 0.0;
  for (uint s = 0u; s < ra.batch_spp; ++s) {
    const uint64_t item = uint64_t(p) * uint64_t(ra.batch_spp) + uint64_t(s);
    precise float vx = PT_FLOAT(ra.radiance, item * 3ul);
    precise float vy = PT_FLOAT(ra.radiance, item * 3ul + 1ul);
    precise float vz = PT_FLOAT(ra.radiance, item * 3ul + 2ul);
    for (uint d = 0u; d < ra.max_depth; ++d) {
      const uint64_t e = (item * uint64_t(ra.max_depth) + uint64_t(d)) * 3ul;
      vx += PT_FLOAT(ra.nee, e);
      vy += PT_FLOAT(ra.nee, e + 1ul);
      vz += PT_FLOAT(ra.nee, e + 2ul);
    }
    sx += vx;
    sy += vy;
    sz += vz;
  }
  const uint64_t o = uint64_t(p) * 3ul;
  precise float ax = PT_FLOAT(ra.accum, o) + sx;
  precise float ay = PT_FLOAT(ra.accum, o + 1ul) + sy;
  precise float az = PT_FLOAT(ra.accum, o + 2ul) + sz;
  PT_FLOAT(ra.accum, o) = ax;
  PT_FLOAT(ra.accum, o + 1ul) = ay;
  PT_FLOAT(ra.accum, o + 2ul) = az;
}
