/* wavesched path tracer — types shared by the host driver and the kernels.
 *
 * Everything here is plain C11 (and valid CUDA C++): scene records, the main
 * path's frame, the shadow-ray payload of the auxiliary pipeline, and the
 * argument blocks. Device addresses are uint64_t (kernel.h WS_PTR).
 *
 * Determinism (docs/pathtracer.md): every random number is a pure function of
 * (seed, pixel, sample, bounce, dimension); each item writes its own radiance
 * slot and each shadow ray its own (item, bounce) slot, with plain stores; a
 * resolve kernel sums them in a fixed order. So the image does not depend on
 * the schedule: wavefront (any pool, capacity, admission mode) and megakernel
 * give bit-identical images on one backend.
 */
#ifndef WS_PT_H
#define WS_PT_H

#include <stdint.h>

#include "wavesched/kernel.h"
#include "wavesched/pool_kernel.h"

typedef struct pt_vec3 {
  float x, y, z;
} pt_vec3;

/* ---- scene ---- */
enum pt_material_kind {
  PT_MAT_DIFFUSE = 0,    /* Lambertian, albedo */
  PT_MAT_GLOSSY = 1,     /* GGX microfacet conductor: Schlick F0 = albedo, roughness alpha */
  PT_MAT_DIELECTRIC = 2, /* smooth glass: exact Fresnel, refraction (ior); thin = a pane */
  PT_MAT_EMISSIVE = 3    /* one-sided emitter (front = the normal's side), radiance emission */
};

typedef struct pt_material {
  pt_vec3 albedo;   /* diffuse albedo / glossy F0 / dielectric tint */
  pt_vec3 emission; /* emissive radiance */
  float alpha;      /* glossy roughness (GGX alpha) */
  float ior;        /* dielectric index of refraction */
  uint32_t kind;    /* pt_material_kind */
  uint32_t thin;    /* dielectric: 1 = thin pane (no bending; transmits shadow rays) */
} pt_material;

enum pt_prim_kind { PT_PRIM_SPHERE = 0, PT_PRIM_QUAD = 1 };

/* A sphere (center p, radius r) or a parallelogram p + s*u + t*v, s,t in
 * [0,1], with geometric normal normalize(u x v) (quads are two-sided unless
 * emissive). */
typedef struct pt_prim {
  pt_vec3 p, u, v, n; /* n: unit normal of quads */
  float r;
  uint32_t kind;
  uint32_t material;
  uint32_t pad;
} pt_prim;

/* The one area light: a quad (also present in the prim list) */
typedef struct pt_light {
  pt_vec3 p, u, v, n; /* corner, edges, unit normal (emitting side) */
  pt_vec3 emission;
  float area;
  uint32_t prim;
} pt_light;

typedef struct pt_camera {
  pt_vec3 eye, lower_left, horizontal, vertical; /* pinhole, image plane at distance 1 */
} pt_camera;

typedef struct pt_scene {
  pt_camera camera;
  pt_light light;
  uint64_t prims;     /* pt_prim[prim_count] */
  uint64_t materials; /* pt_material[material_count] */
  uint32_t prim_count;
  uint32_t material_count;
} pt_scene;

/* ---- the main path: coroutine frame and continuations ---- */
#define PT_FIELDS(X)                                                                       \
  X(pt_vec3, org)      /* current ray */                                                   \
  X(pt_vec3, dir)                                                                          \
  X(pt_vec3, beta)     /* path throughput */                                               \
  X(pt_vec3, rad)      /* radiance from emission hits (BSDF-sampled, MIS-weighted) */      \
  X(pt_vec3, prev_pos) /* last non-specular vertex (MIS of emission hits) */               \
  X(float, prev_pdf)   /* its BSDF pdf (solid angle); 0 = camera or specular: weight 1 */  \
  X(float, hit_t)      /* closest hit of the current ray */                                \
  X(uint32_t, hit_prim) /* PT_NO_HIT on a miss */                                          \
  X(uint32_t, depth)   /* index of the vertex being shaded (0 = first hit) */

WS_FRAME(pt_frame, PT_FIELDS)

#define PT_NO_HIT 0xffffffffu

enum {
  PT_INTERSECT = 1,
  PT_SHADE_DIFFUSE = 2,
  PT_SHADE_GLOSSY = 3,
  PT_SHADE_DIELECTRIC = 4,
  PT_SHADE_EMISSIVE = 5, /* emissive hit or miss */
  PT_CONTINUATION_COUNT = 5
};

/* X(index, function, name) in index order */
#define PT_CONTINUATIONS(X)                                                                \
  X(PT_INTERSECT, pt_intersect, "intersect")                                               \
  X(PT_SHADE_DIFFUSE, pt_shade_diffuse, "shade_diffuse")                                   \
  X(PT_SHADE_GLOSSY, pt_shade_glossy, "shade_glossy")                                      \
  X(PT_SHADE_DIELECTRIC, pt_shade_dielectric, "shade_dielectric")                          \
  X(PT_SHADE_EMISSIVE, pt_shade_emissive, "shade_emissive")

/* ---- the auxiliary pipeline: next-event estimation ---- */
enum {
  PT_STAGE_SAMPLE_LIGHT = 0,
  PT_STAGE_TRACE_SHADOW = 1,
  PT_STAGE_ACCUMULATE = 2,
  PT_STAGE_COUNT = 3,
  PT_STAGE_DONE = 3 /* release the slot */
};

/* Most thin panes one shadow ray steps through (trace_shadow self-loops);
 * the next pane after that many counts as an occluder. */
#define PT_MAX_SHADOW_STEPS 4u

/* One shadow request. The producer fills the vertex part; sample_light
 * turns it into a segment towards a light sample with its unoccluded
 * contribution; trace_shadow steps it through thin panes; accumulate stores
 * the contribution in the (item, bounce) slot. */
typedef struct pt_shadow {
  pt_vec3 pos;     /* the shaded vertex; then the shadow ray origin */
  pt_vec3 nrm;     /* shading normal, facing wo */
  pt_vec3 wo;      /* towards the previous vertex; then the shadow ray direction */
  pt_vec3 contrib; /* path throughput; then the unoccluded, MIS-weighted contribution */
  float tmax;      /* remaining segment length to the light sample */
  uint32_t item;   /* item id of this dispatch (radiance slot) */
  uint32_t pixel, sample, bounce;
  uint32_t material;
  uint32_t steps; /* thin panes crossed so far */
  uint32_t last;  /* 1: the vertex is the last one (no BSDF continuation: MIS weight 1) */
} pt_shadow;

enum { PT_NEE_PIPELINE = 0, PT_NEE_INLINE = 1 };

/* Coroutine arguments (device copy made by the scheduler per dispatch; the
 * driver keeps a second copy in its own buffer for the stage kernels). */
typedef struct pt_args {
  uint64_t scene;    /* pt_scene */
  uint64_t radiance; /* float[items * 3]: per-item radiance from emission hits */
  uint64_t nee;      /* float[items * max_depth * 3]: per-(item, bounce) NEE contribution */
  ws_pool_view pool; /* shadow pipeline (PT_NEE_PIPELINE) */
  uint32_t width, height;
  uint32_t batch_spp;   /* samples per pixel in this dispatch: item = pixel * batch_spp + s */
  uint32_t sample_base; /* global sample index of s = 0 */
  uint32_t max_depth;   /* most scattering vertices per path */
  uint32_t rr_depth;    /* Russian roulette from this vertex on */
  uint32_t seed;
  uint32_t nee_mode; /* PT_NEE_PIPELINE or PT_NEE_INLINE */
  uint64_t counters; /* uint32[PT_COUNTERS] shadow-ray outcomes, or 0 */
} pt_args;

/* Shadow-ray outcome counters (order-independent integers, so they are equal
 * under every scheduler): each sample_light run ends in REJECTED or enters
 * trace_shadow; each trace_shadow run ends in exactly one of PANE (self-loop),
 * OCCLUDED or UNOCCLUDED (-> accumulate). */
enum {
  PT_CTR_REJECTED = 0,   /* light sample behind the surface or the light, or f = 0 */
  PT_CTR_PANE = 1,       /* trace_shadow stepped through a thin pane */
  PT_CTR_OCCLUDED = 2,
  PT_CTR_UNOCCLUDED = 3,
  PT_COUNTERS = 4
};

/* Stage kernels (launched over all C slots of the pool) */
typedef struct pt_stage_args {
  uint64_t args; /* device address of a pt_args */
  ws_pool_view pool;
} pt_stage_args;

/* Resolve kernel (one index per pixel): accum[p] += sum over the batch's
 * samples of (radiance[item] + nee[item][0] + ... + nee[item][max_depth-1]),
 * in that order. */
typedef struct pt_resolve_args {
  uint64_t radiance, nee, accum;
  uint32_t pixels, batch_spp, max_depth, pad;
} pt_resolve_args;

#endif
