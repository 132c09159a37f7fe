/* SPDX-License-Identifier: MIT */
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

/* No persistent device-loop kernel (kernel.h): it would hold every
 * continuation and cost this module's CUDA compile 37 instead of 23 s, for
 * a render rate it does not change (its iterations resume millions of
 * frames: 411 / 737 Mpaths/s with it, 413 / 742 without, pipeline / inline
 * NEE, docs/results/2026-12-03-round2/s7run5). */
#define WS_PERSISTENT_LOOP 0
#include "wavesched/kernel.h"
#include "wavesched/pool_kernel.h"

typedef struct pt_vec3 {
  float x, y, z;
} pt_vec3;

/* ---- scene ---- */
#define PT_NONE 0xffffffffu /* no texture / no light / no hit */

enum pt_material_kind {
  PT_MAT_DIFFUSE = 0,    /* Lambertian, albedo (times texture and pattern) */
  PT_MAT_GLOSSY = 1,     /* GGX microfacet conductor: Schlick F0 = albedo, roughness alpha */
  PT_MAT_DIELECTRIC = 2, /* smooth glass: exact Fresnel, refraction (ior); thin = a pane */
  PT_MAT_EMISSIVE = 3,   /* one-sided emitter (front = the normal's side), radiance emission */
  PT_MAT_PRINCIPLED = 4  /* layered: diffuse + GGX specular (metallic) + sheen, under a clear coat */
};

enum pt_pattern { PT_PATTERN_NONE = 0, PT_PATTERN_CHECKER = 1 /* world-space 3D checker */ };

/* Materials of files map onto these (docs/pathtracer.md "Materials"): glTF
 * metallic-roughness gives albedo (base colour), metallic and alpha =
 * roughness^2; KHR_materials_clearcoat coat and coat_alpha, _sheen sheen,
 * _ior ior; transmission >= 0.5 makes a dielectric, emission an emitter. */
typedef struct pt_material {
  pt_vec3 albedo;        /* diffuse albedo / glossy F0 / dielectric tint / principled base colour */
  pt_vec3 emission;      /* emissive radiance */
  float alpha;           /* GGX roughness alpha (glossy, principled specular) */
  float ior;             /* dielectric index of refraction; principled: specular F0 */
  uint32_t kind;         /* pt_material_kind */
  uint32_t thin;         /* dielectric: 1 = thin pane (no bending; transmits shadow rays) */
  pt_vec3 sheen;         /* principled: sheen colour (0: none) */
  pt_vec3 pattern_color; /* the checker's second colour */
  float metallic;        /* principled: 0 dielectric base .. 1 conductor */
  float coat;            /* principled: clear coat weight in [0, 1] */
  float coat_alpha;      /* principled: clear coat GGX alpha */
  float pattern_scale;   /* checker cells per unit */
  uint32_t texture;      /* base-colour texture (pt_texture index) or PT_NONE */
  uint32_t pattern;      /* pt_pattern */
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
  uint32_t light; /* index in the light list, or PT_NONE */
} pt_prim;

/* Triangles (meshes from files) are a second primitive list, kept in BVH
 * leaf order. A hit on triangle i is hit_prim = PT_TRI_BIT | i; prims keep
 * their index (< 2^31). */
#define PT_TRI_BIT 0x80000000u

/* positions: what traversal reads (Woop et al. 2013 needs the vertices) */
typedef struct pt_tri {
  pt_vec3 a, b, c;
} pt_tri;

/* shading data, read once per hit */
typedef struct pt_tri_shade {
  pt_vec3 n0, n1, n2; /* unit vertex normals (the face normal where a mesh has none) */
  float uv[6];        /* texture coordinates of a, b, c */
  uint32_t material;
  uint32_t light;     /* index in the light list (emissive triangles), or PT_NONE */
} pt_tri_shade;

/* BVH node (binned SAH, built on the host): a leaf holds triangles
 * [first, first + count); an inner node (count = 0) has children first and
 * first + 1. Node 0 is the root. */
typedef struct pt_bvh_node {
  pt_vec3 lo, hi;
  uint32_t first;
  uint32_t count;
} pt_bvh_node;

/* Most BVH levels; the builder makes leaves at this depth, so traversal's
 * stack (one entry per level) cannot overflow. */
#define PT_BVH_MAX_DEPTH 48u

enum pt_light_kind { PT_LIGHT_QUAD = 0, PT_LIGHT_TRIANGLE = 1 };

/* An area light: quad p + s*u + t*v or triangle (p, p + u, p + v), one-sided
 * (emitting towards n). NEE picks light i with probability select_pdf, by
 * power (luminance * area), through the cumulative cdf. */
typedef struct pt_light {
  pt_vec3 p, u, v, n; /* corner, edges, unit normal (emitting side) */
  pt_vec3 emission;
  float area;
  uint32_t prim;      /* the prim or PT_TRI_BIT | triangle that emits */
  uint32_t kind;      /* pt_light_kind */
  float select_pdf;   /* probability of picking this light (1 for a single light) */
  float cdf;          /* sum of select_pdf of lights 0..i (the last is 1) */
} pt_light;

/* A base-colour texture: width * height linear RGB texels (floats) from
 * texel offset `offset` of the scene's texel array (sRGB decoded on the host). */
typedef struct pt_texture {
  uint64_t offset;
  uint32_t width, height;
} pt_texture;

enum pt_env_kind { PT_ENV_NONE = 0, PT_ENV_CONSTANT = 1, PT_ENV_SKY = 2 };

typedef struct pt_camera {
  pt_vec3 eye, lower_left, horizontal, vertical; /* pinhole, image plane at distance 1 */
} pt_camera;

typedef struct pt_scene {
  pt_camera camera;
  uint64_t prims;     /* pt_prim[prim_count] */
  uint64_t materials; /* pt_material[material_count] */
  uint64_t lights;    /* pt_light[light_count] */
  uint64_t tris;      /* pt_tri[tri_count], BVH leaf order */
  uint64_t tri_shade; /* pt_tri_shade[tri_count] */
  uint64_t nodes;     /* pt_bvh_node[node_count] */
  uint64_t textures;  /* pt_texture[] */
  uint64_t texels;    /* float[] (RGB) */
  pt_vec3 env_zenith; /* constant: the radiance; sky: radiance straight up */
  pt_vec3 env_horizon; /* sky: radiance at and below the horizon */
  uint32_t prim_count;
  uint32_t material_count;
  uint32_t light_count;
  uint32_t tri_count;
  uint32_t node_count;
  uint32_t env_kind; /* pt_env_kind; a miss adds beta * env (BSDF sampling only) */
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
  X(float, hit_u)      /* barycentric weights of b and c on a triangle hit */              \
  X(float, hit_v)                                                                          \
  X(uint32_t, hit_prim) /* PT_NO_HIT on a miss; PT_TRI_BIT | i for triangle i */           \
  X(uint32_t, depth)   /* index of the vertex being shaded (0 = first hit) */

WS_FRAME(pt_frame, PT_FIELDS)

#define PT_NO_HIT 0xffffffffu

enum {
  PT_INTERSECT = 1,
  PT_SHADE_DIFFUSE = 2,
  PT_SHADE_GLOSSY = 3,
  PT_SHADE_DIELECTRIC = 4,
  PT_SHADE_EMISSIVE = 5, /* emissive hit or miss */
  PT_SHADE_PRINCIPLED = 6, /* the layered BSDF: the heavy one, in its own queue */
  PT_CONTINUATION_COUNT = 6
};

/* X(index, function, name) in index order */
#define PT_CONTINUATIONS(X)                                                                \
  X(PT_INTERSECT, pt_intersect, "intersect")                                               \
  X(PT_SHADE_DIFFUSE, pt_shade_diffuse, "shade_diffuse")                                   \
  X(PT_SHADE_GLOSSY, pt_shade_glossy, "shade_glossy")                                      \
  X(PT_SHADE_DIELECTRIC, pt_shade_dielectric, "shade_dielectric")                          \
  X(PT_SHADE_EMISSIVE, pt_shade_emissive, "shade_emissive")                                \
  X(PT_SHADE_PRINCIPLED, pt_shade_principled, "shade_principled")

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
  pt_vec3 base;    /* the vertex's base colour (albedo times texture and pattern) */
  float tmax;      /* remaining segment length to the light sample */
  uint32_t item;   /* item id of this dispatch (radiance slot) */
  uint32_t pixel, sample, bounce;
  uint32_t material; /* the vertex's material; from trace_shadow on, the prim the
                        shadow ray skips (a quad light's own), or PT_NO_HIT */
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
  /* the image rows this dispatch renders (a rank's share, docs/mpi.md): the
   * pixel of id is in row row_first + (id / batch_spp / width) * row_stride,
   * so every path keeps the random numbers and the camera ray of its pixel
   * in the whole image; 0 and 1 for the whole image */
  uint32_t row_first, row_stride;
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
