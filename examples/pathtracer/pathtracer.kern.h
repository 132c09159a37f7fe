/* SPDX-License-Identifier: MIT */
/* wavesched path tracer — kernels: one source for the CPU and CUDA backends.
 *
 * Main path (a coroutine): entry = camera ray; "intersect" (closest hit);
 * one shading continuation per material kind (the heavy principled BSDF has
 * its own, so its warps stay coherent); next bounce or terminate. Geometry
 * (spheres and rectangles, triangles through a BVH) is in pt_geom.h.
 * Next-event estimation: the diffuse, glossy and principled shading
 * continuations publish one shadow request each (bound b = 1) into a 3-stage
 * ws_pool pipeline
 * sample_light -> trace_shadow (self-loop through thin panes) -> accumulate,
 * or, with nee_mode = PT_NEE_INLINE (the megakernel), run the very same stage
 * functions inline.
 *
 * Floating point: only +, -, *, /, sqrt, fabs, fmin/fmax and copysign (all
 * correctly rounded or exact on IEEE hardware); sin/cos are polynomials
 * below. Built without FMA contraction (CMakeLists.txt), the arithmetic of an
 * item does not depend on where (which kernel, which backend) it runs.
 */
#include "pt_geom.h"

/* Validation switch (docs/pathtracer.md): 0 = MIS of light sampling and BSDF
 * sampling (the renderer); 1 = light sampling only; 2 = BSDF sampling only.
 * The three must agree in expectation (2 needs one more vertex). */
#ifndef PT_STRATEGY
#define PT_STRATEGY 0
#endif

/* ---- random numbers: a pure function of (seed, pixel, sample, bounce, dim) ---- */
enum {
  PT_DIM_LIGHT_U = 0,
  PT_DIM_LIGHT_V = 1,
  PT_DIM_BSDF_U = 2,
  PT_DIM_BSDF_V = 3,
  PT_DIM_LOBE = 4, /* dielectric: reflect or transmit */
  PT_DIM_RR = 5,   /* Russian roulette */
  PT_DIM_CAM_X = 6,
  PT_DIM_CAM_Y = 7,
  PT_DIMS = 8
};
/* Numbers added after the eight above are keyed by bounce PT_XBOUNCE + b, a
 * key range no path reaches, so adding them changed no existing number. */
#define PT_XBOUNCE 0x10000000u
enum { PT_XDIM_LIGHT = 0 /* which light NEE samples */ };

WS_DEVICE static inline float pt_rand(uint32_t seed, uint32_t pixel, uint32_t sample,
                                      uint32_t bounce, uint32_t dim) {
  uint32_t h = ws_hash32(seed ^ 0x9e3779b9u);
  h = ws_hash32(h ^ pixel);
  h = ws_hash32(h ^ sample);
  h = ws_hash32(h ^ (bounce * PT_DIMS + dim));
  return (float)(h >> 8) * (1.0f / 16777216.0f); /* [0, 1) */
}

/* sin and cos of 2*pi*u, u in [0, 1), from +, -, *, / only (Cephes sinf/cosf
 * polynomials on [-pi/4, pi/4], |error| < 2e-7): no libm, so the result is the
 * same bit pattern on every IEEE backend. */
WS_DEVICE static inline void pt_sincos_2pi(float u, float *s, float *c) {
  const float t = u * 4.0f;
  uint32_t q = (uint32_t)t;
  if (q > 3u)
    q = 3u;
  const float x = (t - (float)q - 0.5f) * (0.5f * PT_PI); /* angle = q*pi/2 + pi/4 + x */
  const float z = x * x;
  const float sx = x + x * z * (-1.6666654611e-1f + z * (8.3321608736e-3f + z * -1.9515295891e-4f));
  const float cx = 1.0f - 0.5f * z +
                   z * z * (4.166664568298827e-2f + z * (-1.388731625493765e-3f + z * 2.443315711809948e-5f));
  const float h = 0.70710678118654752f; /* sin(pi/4) */
  const float s0 = h * (cx + sx), c0 = h * (cx - sx);
  switch (q) {
  case 0:
    *s = s0;
    *c = c0;
    break;
  case 1:
    *s = c0;
    *c = -s0;
    break;
  case 2:
    *s = -s0;
    *c = -c0;
    break;
  default:
    *s = -c0;
    *c = s0;
    break;
  }
}

/* Orthonormal basis around unit n (Duff et al. 2017) */
WS_DEVICE static inline void pt_basis(pt_vec3 n, pt_vec3 *t, pt_vec3 *b) {
  const float sign = copysignf(1.0f, n.z);
  const float a = -1.0f / (sign + n.z);
  const float bb = n.x * n.y * a;
  *t = v3(1.0f + sign * n.x * n.x * a, sign * bb, -sign * n.x);
  *b = v3(bb, sign + n.y * n.y * a, -n.y);
}

WS_DEVICE static inline pt_vec3 pt_to_world(pt_vec3 n, float lx, float ly, float lz) {
  pt_vec3 t, b;
  pt_basis(n, &t, &b);
  return v_add(v_add(v_scale(t, lx), v_scale(b, ly)), v_scale(n, lz));
}

/* ---- scene queries ---- */
WS_DEVICE static inline const pt_scene *pt_scene_of(const pt_args *a) {
  return WS_PTR(const pt_scene, a->scene);
}
WS_DEVICE static inline const pt_prim *pt_prims(const pt_scene *sc) {
  return WS_PTR(const pt_prim, sc->prims);
}
WS_DEVICE static inline const pt_tri_shade *pt_tri_shade_of(const pt_scene *sc, uint32_t hit) {
  return &WS_PTR(const pt_tri_shade, sc->tri_shade)[hit & ~PT_TRI_BIT];
}
WS_DEVICE static inline const pt_light *pt_light_at(const pt_scene *sc, uint32_t i) {
  return &WS_PTR(const pt_light, sc->lights)[i];
}
/* material index of a hit (prim or triangle) */
WS_DEVICE static inline uint32_t pt_material_index(const pt_scene *sc, uint32_t hit) {
  return (hit & PT_TRI_BIT) ? pt_tri_shade_of(sc, hit)->material : pt_prims(sc)[hit].material;
}
WS_DEVICE static inline const pt_material *pt_material_at(const pt_scene *sc, uint32_t m) {
  return &WS_PTR(const pt_material, sc->materials)[m];
}
WS_DEVICE static inline const pt_material *pt_material_of(const pt_scene *sc, uint32_t hit) {
  return pt_material_at(sc, pt_material_index(sc, hit));
}
/* light index of an emitting hit, or PT_NONE */
WS_DEVICE static inline uint32_t pt_light_of(const pt_scene *sc, uint32_t hit) {
  return (hit & PT_TRI_BIT) ? pt_tri_shade_of(sc, hit)->light : pt_prims(sc)[hit].light;
}

/* Geometric unit normal of prim at point x (outward for spheres). */
WS_DEVICE static inline pt_vec3 pt_normal(const pt_prim *p, pt_vec3 x) {
  if (p->kind == PT_PRIM_SPHERE)
    return v_scale(v_sub(x, p->p), 1.0f / p->r);
  return p->n;
}

/* A surface point: position, geometric normal ng and shading normal ns, both
 * facing the incoming ray (ns interpolated from the vertex normals on
 * triangles, = ng on prims), texture coordinates, and whether the ray came
 * from the outside (the side the unflipped normal points to). */
typedef struct pt_surface {
  pt_vec3 pos, nout, ng, ns; /* nout: the outward normal, unflipped */
  float u, v;
  int entering;
} pt_surface;

WS_DEVICE static inline pt_surface pt_surface_at(const pt_scene *sc, const pt_frame *f) {
  pt_surface s;
  s.pos = v_madd(f->org, f->dir, f->hit_t);
  s.u = 0.0f;
  s.v = 0.0f;
  if (!(f->hit_prim & PT_TRI_BIT)) {
    const pt_vec3 n = pt_normal(&pt_prims(sc)[f->hit_prim], s.pos);
    s.nout = n;
    s.entering = v_dot(n, f->dir) < 0.0f;
    s.ng = v_dot(n, f->dir) > 0.0f ? v_neg(n) : n;
    s.ns = s.ng;
    return s;
  }
  const pt_tri *t = &WS_PTR(const pt_tri, sc->tris)[f->hit_prim & ~PT_TRI_BIT];
  const pt_tri_shade *sh = pt_tri_shade_of(sc, f->hit_prim);
  const float wb = f->hit_u, wc = f->hit_v, wa = 1.0f - wb - wc;
  pt_vec3 ns = v_norm(v_add(v_add(v_scale(sh->n0, wa), v_scale(sh->n1, wb)), v_scale(sh->n2, wc)));
  pt_vec3 ng = v_norm(v_cross(v_sub(t->b, t->a), v_sub(t->c, t->a)));
  /* the vertex normals tell outside from inside (winding is not trusted) */
  if (v_dot(ng, ns) < 0.0f)
    ng = v_neg(ng);
  s.nout = ng;
  s.entering = v_dot(ng, f->dir) < 0.0f;
  if (!s.entering) {
    ng = v_neg(ng);
    ns = v_neg(ns);
  }
  s.ng = ng;
  s.ns = ns;
  s.u = sh->uv[0] * wa + sh->uv[2] * wb + sh->uv[4] * wc;
  s.v = sh->uv[1] * wa + sh->uv[3] * wb + sh->uv[5] * wc;
  return s;
}

/* Base colour at a surface point: albedo, times the texture (nearest texel,
 * repeat; v = 0 is the image's last row), times the checker. A material
 * with neither is its albedo exactly. */
WS_DEVICE static inline pt_vec3 pt_base_color(const pt_scene *sc, const pt_material *m,
                                              const pt_surface *s) {
  pt_vec3 c = m->albedo;
  if (m->texture != PT_NONE) {
    const pt_texture *tx = &WS_PTR(const pt_texture, sc->textures)[m->texture];
    const float fu = s->u - floorf(s->u), fv = s->v - floorf(s->v);
    uint32_t x = (uint32_t)(fu * (float)tx->width), y = (uint32_t)((1.0f - fv) * (float)tx->height);
    if (x >= tx->width)
      x = tx->width - 1u;
    if (y >= tx->height)
      y = tx->height - 1u;
    const float *t = WS_PTR(const float, sc->texels) + tx->offset + ((uint64_t)y * tx->width + x) * 3u;
    c = v_mul(c, v3(t[0], t[1], t[2]));
  }
  if (m->pattern == PT_PATTERN_CHECKER) {
    const float k = m->pattern_scale;
    const int32_t q = (int32_t)floorf(s->pos.x * k) + (int32_t)floorf(s->pos.y * k) +
                      (int32_t)floorf(s->pos.z * k);
    if (q & 1)
      c = v_mul(c, m->pattern_color);
  }
  return c;
}

/* Environment radiance seen along unit d (PT_ENV_NONE: black) */
WS_DEVICE static inline pt_vec3 pt_env(const pt_scene *sc, pt_vec3 d) {
  if (sc->env_kind == PT_ENV_CONSTANT)
    return sc->env_zenith;
  const float t = fmaxf(d.y, 0.0f);
  return v_add(v_scale(sc->env_horizon, 1.0f - t), v_scale(sc->env_zenith, t));
}

/* ---- materials ---- */

/* Unpolarized Fresnel reflectance of a smooth interface; eta = n_i / n_t,
 * cos_i > 0. Total internal reflection gives 1. *cos_t receives cos of the
 * transmitted angle. */
WS_DEVICE static inline float pt_fresnel(float cos_i, float eta, float *cos_t) {
  const float sin2_t = eta * eta * (1.0f - cos_i * cos_i);
  if (sin2_t >= 1.0f) {
    *cos_t = 0.0f;
    return 1.0f;
  }
  const float ct = sqrtf(1.0f - sin2_t);
  const float rs = (eta * cos_i - ct) / (eta * cos_i + ct);
  const float rp = (cos_i - eta * ct) / (cos_i + eta * ct);
  *cos_t = ct;
  return 0.5f * (rs * rs + rp * rp);
}

/* A thin pane (two parallel interfaces, multiple reflections summed):
 * reflectance 2R / (1 + R); the rest passes straight through, tinted. */
WS_DEVICE static inline float pt_thin_reflectance(const pt_material *m, float cos_i) {
  float ct;
  const float r = pt_fresnel(cos_i, 1.0f / m->ior, &ct);
  return 2.0f * r / (1.0f + r);
}

WS_DEVICE static inline float pt_ggx_d(float alpha2, float cos_h) {
  const float k = cos_h * cos_h * (alpha2 - 1.0f) + 1.0f;
  return alpha2 / (PT_PI * k * k);
}
WS_DEVICE static inline float pt_ggx_g1(float alpha2, float c) {
  return 2.0f * c / (c + sqrtf(alpha2 + (1.0f - alpha2) * c * c));
}
WS_DEVICE static inline pt_vec3 pt_schlick(pt_vec3 f0, float c) {
  const float m = 1.0f - c;
  const float m5 = m * m * m * m * m;
  return v3(f0.x + (1.0f - f0.x) * m5, f0.y + (1.0f - f0.y) * m5, f0.z + (1.0f - f0.z) * m5);
}

/* Sampling probabilities of the principled BSDF's lobes: clear coat pc,
 * specular ps, diffuse 1 - pc - ps (a conductor samples no diffuse). */
WS_DEVICE static inline void pt_principled_probs(const pt_material *m, float *pc, float *ps) {
  *pc = 0.25f * m->coat;
  *ps = (1.0f - *pc) * (0.25f + 0.75f * m->metallic);
}

/* The principled BSDF (docs/pathtracer.md "Materials"): a base layer of
 * (1 - metallic) * [(1 - Fd) * diffuse + sheen + Fd * GGX] + metallic *
 * Fm * GGX, with Fd Schlick from the ior and Fm Schlick from the base colour,
 * under a clear coat that reflects coat * Fc (GGX, coat_alpha, F0 0.04) and
 * passes the rest. Its pdf is the mixture of the lobes' sampling pdfs. */
WS_DEVICE static inline pt_vec3 pt_principled_eval(const pt_material *m, pt_vec3 base, pt_vec3 n,
                                                   pt_vec3 wo, pt_vec3 wi, float cos_o,
                                                   float cos_i, float *pdf) {
  const pt_vec3 h = v_norm(v_add(wo, wi));
  const float cos_h = v_dot(n, h), oh = v_dot(wo, h);
  if (cos_h <= 0.0f || oh <= 0.0f)
    return v3(0.0f, 0.0f, 0.0f);
  const float fm = 1.0f - oh;
  const float m5 = fm * fm * fm * fm * fm;
  const float r0 = (m->ior - 1.0f) / (m->ior + 1.0f);
  const float f0d = r0 * r0;
  const float fd = f0d + (1.0f - f0d) * m5;
  const float metal = m->metallic, diel = 1.0f - m->metallic;
  const float a2 = m->alpha * m->alpha;
  const float d = pt_ggx_d(a2, cos_h);
  const float spec = d * pt_ggx_g1(a2, cos_o) * pt_ggx_g1(a2, cos_i) / (4.0f * cos_o * cos_i);
  const pt_vec3 fmetal = pt_schlick(base, oh);
  const float kd = diel * (1.0f - fd) * PT_INV_PI;
  const float ks = diel * m5 * PT_INV_PI;
  pt_vec3 layer = v3(base.x * kd + m->sheen.x * ks + (diel * fd + metal * fmetal.x) * spec,
                     base.y * kd + m->sheen.y * ks + (diel * fd + metal * fmetal.y) * spec,
                     base.z * kd + m->sheen.z * ks + (diel * fd + metal * fmetal.z) * spec);
  const float c2 = m->coat_alpha * m->coat_alpha;
  const float dc = pt_ggx_d(c2, cos_h);
  const float fc = m->coat * (0.04f + 0.96f * m5);
  const float coat = fc * dc * pt_ggx_g1(c2, cos_o) * pt_ggx_g1(c2, cos_i) / (4.0f * cos_o * cos_i);
  layer = v_scale(layer, 1.0f - fc);
  float pc, ps;
  pt_principled_probs(m, &pc, &ps);
  *pdf = (1.0f - pc - ps) * cos_i * PT_INV_PI + (ps * d + pc * dc) * cos_h / (4.0f * oh);
  return v3(layer.x + coat, layer.y + coat, layer.z + coat);
}

/* BSDF value f(wo, wi) and pdf of sampling wi (solid angle), for the
 * non-delta materials (diffuse, glossy, principled) with base colour
 * `base` at the vertex. n faces wo. */
WS_DEVICE static inline pt_vec3 pt_bsdf_eval(const pt_material *m, pt_vec3 base, pt_vec3 n,
                                             pt_vec3 wo, pt_vec3 wi, float *pdf) {
  const float cos_i = v_dot(n, wi), cos_o = v_dot(n, wo);
  *pdf = 0.0f;
  if (cos_i <= 0.0f || cos_o <= 0.0f)
    return v3(0.0f, 0.0f, 0.0f);
  if (m->kind == PT_MAT_DIFFUSE) {
    *pdf = cos_i * PT_INV_PI;
    return v_scale(base, PT_INV_PI);
  }
  if (m->kind == PT_MAT_PRINCIPLED)
    return pt_principled_eval(m, base, n, wo, wi, cos_o, cos_i, pdf);
  const float alpha2 = m->alpha * m->alpha;
  const pt_vec3 h = v_norm(v_add(wo, wi));
  const float cos_h = v_dot(n, h), oh = v_dot(wo, h);
  if (cos_h <= 0.0f || oh <= 0.0f)
    return v3(0.0f, 0.0f, 0.0f);
  const float d = pt_ggx_d(alpha2, cos_h);
  const float g = pt_ggx_g1(alpha2, cos_o) * pt_ggx_g1(alpha2, cos_i);
  *pdf = d * cos_h / (4.0f * oh);
  return v_scale(pt_schlick(base, oh), d * g / (4.0f * cos_o * cos_i));
}

/* ---- item keys ---- */
/* pixel: the index in the whole image (the rows of a share, pt_args.row_first
 * and row_stride, map back to the image's), so that a path's random numbers
 * do not depend on how the image is shared out */
WS_DEVICE static inline void pt_keys(const pt_args *a, uint32_t id, uint32_t *pixel,
                                     uint32_t *sample) {
  const uint32_t local = id / a->batch_spp;
  /* the whole image and blocks of rows (stride 1) need no division: there
   * the second form equals the first */
  *pixel = a->row_stride == 1u
               ? a->row_first * a->width + local
               : (a->row_first + local / a->width * a->row_stride) * a->width + local % a->width;
  *sample = a->sample_base + id % a->batch_spp;
}

/* Outcome counters: lanes of a warp that count the same outcome combine
 * into one atomic (a handful of words take every lane's count). */
WS_DEVICE static inline void pt_count(const pt_args *a, uint32_t which) {
  if (a->counters)
    ws_atomic_add_u32_agg(WS_PTR(uint32_t, a->counters) + which, 1u);
}

/* ======================================================================
 * Next-event estimation: the three stages, as functions on one payload.
 * The stage kernels and the inline path (megakernel) call exactly these.
 * ====================================================================== */

/* The light NEE samples at a vertex: the only one, or one picked by power
 * (a binary search of the cdf) with its own random number, keyed apart from
 * the per-bounce dimensions so that a one-light scene draws exactly the
 * numbers it always drew. */
WS_DEVICE static inline const pt_light *pt_pick_light(const pt_args *a, const pt_scene *sc,
                                                      const pt_shadow *s) {
  if (sc->light_count == 1u)
    return pt_light_at(sc, 0u);
  const float u = pt_rand(a->seed, s->pixel, s->sample, PT_XBOUNCE + s->bounce, PT_XDIM_LIGHT);
  uint32_t lo = 0u, hi = sc->light_count - 1u;
  while (lo < hi) {
    const uint32_t mid = (lo + hi) / 2u;
    if (u < pt_light_at(sc, mid)->cdf)
      hi = mid;
    else
      lo = mid + 1u;
  }
  return pt_light_at(sc, lo);
}

/* sample_light: a point on a light, the unoccluded MIS-weighted
 * contribution, the shadow segment. -> trace_shadow, or done if zero. */
WS_DEVICE static uint32_t pt_sample_light(const pt_args *a, pt_shadow *s) {
  const pt_scene *sc = pt_scene_of(a);
  if (sc->light_count == 0u) {
    pt_count(a, PT_CTR_REJECTED);
    return PT_STAGE_DONE;
  }
  const pt_light *L = pt_pick_light(a, sc, s);
  const float u = pt_rand(a->seed, s->pixel, s->sample, s->bounce, PT_DIM_LIGHT_U);
  const float v = pt_rand(a->seed, s->pixel, s->sample, s->bounce, PT_DIM_LIGHT_V);
  pt_vec3 lp;
  if (L->kind == PT_LIGHT_QUAD) {
    lp = v_madd(v_madd(L->p, L->u, u), L->v, v);
  } else { /* uniform on the triangle p, p + u, p + v */
    const float r = sqrtf(u);
    lp = v_madd(v_madd(L->p, L->u, r * (1.0f - v)), L->v, r * v);
  }
  pt_vec3 wi = v_sub(lp, s->pos);
  const float dist2 = v_dot(wi, wi);
  const float dist = sqrtf(dist2);
  wi = v_scale(wi, 1.0f / dist);
  const float cos_s = v_dot(s->nrm, wi);
  const float cos_l = -v_dot(L->n, wi);
  if (cos_s <= 0.0f || cos_l <= 0.0f) {
    pt_count(a, PT_CTR_REJECTED);
    return PT_STAGE_DONE;
  }
  /* select_pdf is exactly 1 for a single light: the product changes no bit */
  const float pdf_l = dist2 / (cos_l * L->area) * L->select_pdf;
  float pdf_b;
  const pt_material *m = pt_material_at(sc, s->material);
  const pt_vec3 f = pt_bsdf_eval(m, s->base, s->nrm, s->wo, wi, &pdf_b);
  if (v_zero(f)) {
    pt_count(a, PT_CTR_REJECTED);
    return PT_STAGE_DONE;
  }
  float w = s->last ? 1.0f : pdf_l * pdf_l / (pdf_l * pdf_l + pdf_b * pdf_b);
#if PT_STRATEGY == 1
  w = 1.0f;
#elif PT_STRATEGY == 2
  pt_count(a, PT_CTR_REJECTED);
  return PT_STAGE_DONE;
#endif
  s->contrib = v_scale(v_mul(v_mul(s->contrib, f), L->emission), cos_s * w / pdf_l);
  s->pos = v_madd(s->pos, s->nrm, PT_EPS);
  s->wo = wi;
  s->tmax = dist - 2.0f * PT_EPS;
  s->steps = 0;
  s->material = L->kind == PT_LIGHT_QUAD ? L->prim : PT_NO_HIT; /* the prim to skip */
  return PT_STAGE_TRACE_SHADOW;
}

/* trace_shadow: the first occluder on the segment. None -> accumulate; a
 * thin pane -> attenuate, step past it, trace again (self-loop, at most
 * PT_MAX_SHADOW_STEPS times); anything else -> occluded, done. Triangles
 * are opaque to shadow rays: any one before the first prim occludes.
 * pt_trace_shadow_outcome is that choice, given whether a triangle occludes
 * and the closest prim `hit` (PT_NO_HIT: none) at distance t. */
WS_DEVICE static inline uint32_t pt_trace_shadow_outcome(const pt_args *a, pt_shadow *s,
                                                         int occluded, uint32_t hit, float t) {
  const pt_scene *sc = pt_scene_of(a);
  if (occluded) {
    pt_count(a, PT_CTR_OCCLUDED);
    return PT_STAGE_DONE;
  }
  if (hit == PT_NO_HIT) {
    pt_count(a, PT_CTR_UNOCCLUDED);
    return PT_STAGE_ACCUMULATE;
  }
  const pt_material *m = pt_material_of(sc, hit);
  if (m->kind != PT_MAT_DIELECTRIC || !m->thin || s->steps >= PT_MAX_SHADOW_STEPS) {
    pt_count(a, PT_CTR_OCCLUDED);
    return PT_STAGE_DONE;
  }
  pt_count(a, PT_CTR_PANE);
  const pt_vec3 n = pt_normal(&pt_prims(sc)[hit], v_madd(s->pos, s->wo, t));
  const float tr = 1.0f - pt_thin_reflectance(m, fabsf(v_dot(n, s->wo)));
  s->contrib = v_scale(v_mul(s->contrib, m->albedo), tr);
  s->pos = v_madd(s->pos, s->wo, t);
  s->tmax -= t;
  s->steps += 1u;
  return PT_STAGE_TRACE_SHADOW;
}

WS_DEVICE static uint32_t pt_trace_shadow(const pt_args *a, pt_shadow *s) {
  const pt_scene *sc = pt_scene_of(a);
  float t = s->tmax;
  const uint32_t hit = pt_closest_prim(sc, s->pos, s->wo, s->material, &t);
  return pt_trace_shadow_outcome(a, s, pt_tri_occluded(sc, s->pos, s->wo, t), hit, t);
}

/* The same in three parts for the stepped stage kernel (kernel.h
 * WS_KERNEL_STEPS, PT_SHADOW_STEPS): begin (the prims, the any-hit walk's
 * start), pt_bvh_any_step until 0, end (the outcome). */
typedef struct pt_shadow_walk {
  pt_any_walk w;
  uint32_t hit; /* the closest prim on the segment, or PT_NO_HIT */
  float t;      /* its distance, or the segment's end */
} pt_shadow_walk;

WS_DEVICE static inline void pt_trace_shadow_begin(const pt_args *a, const pt_shadow *s,
                                                   pt_shadow_walk *sw) {
  const pt_scene *sc = pt_scene_of(a);
  sw->t = s->tmax;
  sw->hit = pt_closest_prim(sc, s->pos, s->wo, s->material, &sw->t);
  if (sc->tri_count != 0u) { /* pt_tri_occluded */
    const pt_ray r = pt_ray_make(s->pos, s->wo);
    pt_bvh_any_begin(sc, &r, PT_EPS, sw->t, &sw->w);
  } else {
    sw->w.hit = 0u;
    sw->w.live = 0u;
  }
}

WS_DEVICE static inline uint32_t pt_trace_shadow_end(const pt_args *a, pt_shadow *s,
                                                     const pt_shadow_walk *sw) {
  return pt_trace_shadow_outcome(a, s, (int)sw->w.hit, sw->hit, sw->t);
}

/* accumulate: the contribution goes to this (item, bounce) slot — a plain
 * store: each slot has exactly one writer, so the order of shadow rays never
 * matters. */
WS_DEVICE static uint32_t pt_accumulate(const pt_args *a, pt_shadow *s) {
  float *slot = WS_PTR(float, a->nee) + ((uint64_t)s->item * a->max_depth + s->bounce) * 3u;
  slot[0] = s->contrib.x;
  slot[1] = s->contrib.y;
  slot[2] = s->contrib.z;
  return PT_STAGE_DONE;
}

WS_DEVICE static uint32_t pt_stage_step(const pt_args *a, pt_shadow *s, uint32_t stage) {
  switch (stage) {
  case PT_STAGE_SAMPLE_LIGHT:
    return pt_sample_light(a, s);
  case PT_STAGE_TRACE_SHADOW:
    return pt_trace_shadow(a, s);
  case PT_STAGE_ACCUMULATE:
    return pt_accumulate(a, s);
  default:
    return PT_STAGE_DONE;
  }
}

/* A shadow request from a diffuse, glossy or principled vertex: published
 * into the pool (wavefront, bound b = 1: exactly one publication per run),
 * or evaluated on the spot through the same stage functions (inline /
 * megakernel). */
WS_DEVICE static void pt_request_shadow(const ws_item *it, const pt_frame *f, const pt_args *a,
                                        pt_vec3 pos, pt_vec3 n, uint32_t material, pt_vec3 base) {
  pt_shadow s;
  memset(&s, 0, sizeof s);
  s.pos = pos;
  s.nrm = n;
  s.wo = v_neg(f->dir);
  s.contrib = f->beta;
  s.base = base;
  s.item = it->id;
  pt_keys(a, it->id, &s.pixel, &s.sample);
  s.bounce = f->depth;
  s.material = material;
  s.last = f->depth + 1u >= a->max_depth;
  if (a->nee_mode == PT_NEE_INLINE) {
    uint32_t stage = PT_STAGE_SAMPLE_LIGHT;
    while (stage != PT_STAGE_DONE)
      stage = pt_stage_step(a, &s, stage);
    return;
  }
  const uint32_t slot = ws_pool_publish(&a->pool, PT_STAGE_SAMPLE_LIGHT);
  if (slot != WS_POOL_NONE) /* else the pool counted an error; the host reports it */
    *(pt_shadow *)ws_pool_payload(&a->pool, slot) = s;
}

/* ======================================================================
 * The main path
 * ====================================================================== */

WS_DEVICE static uint32_t pt_finish(const ws_item *it, const pt_frame *f, const pt_args *a) {
  float *out = WS_PTR(float, a->radiance) + (uint64_t)it->id * 3u;
  out[0] = f->rad.x;
  out[1] = f->rad.y;
  out[2] = f->rad.z;
  return WS_TERMINATE;
}

/* After scattering at vertex f->depth: next bounce, or terminate (depth
 * limit, Russian roulette keyed by this vertex). */
WS_DEVICE static uint32_t pt_next_bounce(const ws_item *it, pt_frame *f, const pt_args *a,
                                         uint32_t pixel, uint32_t sample) {
  const uint32_t vertex = f->depth;
  f->depth = vertex + 1u;
  if (f->depth >= a->max_depth || v_zero(f->beta))
    return pt_finish(it, f, a);
  if (f->depth >= a->rr_depth) {
    const float q = fminf(v_max(f->beta), 0.95f);
    if (pt_rand(a->seed, pixel, sample, vertex, PT_DIM_RR) >= q)
      return pt_finish(it, f, a);
    f->beta = v_scale(f->beta, 1.0f / q);
  }
  return PT_INTERSECT;
}

/* entry: the camera ray of item id = pixel * batch_spp + s */
WS_DEVICE static uint32_t pt_generate(const ws_item *it, pt_frame *f, const pt_args *a) {
  const pt_camera *cam = &pt_scene_of(a)->camera;
  uint32_t pixel, sample;
  pt_keys(a, it->id, &pixel, &sample);
  const uint32_t px = pixel % a->width, py = pixel / a->width;
  const float jx = pt_rand(a->seed, pixel, sample, 0, PT_DIM_CAM_X);
  const float jy = pt_rand(a->seed, pixel, sample, 0, PT_DIM_CAM_Y);
  const float u = ((float)px + jx) / (float)a->width;
  const float v = 1.0f - ((float)py + jy) / (float)a->height;
  const pt_vec3 target = v_madd(v_madd(cam->lower_left, cam->horizontal, u), cam->vertical, v);
  f->org = cam->eye;
  f->dir = v_norm(v_sub(target, cam->eye));
  f->beta = v3(1.0f, 1.0f, 1.0f);
  f->rad = v3(0.0f, 0.0f, 0.0f);
  f->prev_pos = cam->eye;
  f->prev_pdf = 0.0f;
  f->hit_t = 0.0f;
  f->hit_u = 0.0f;
  f->hit_v = 0.0f;
  f->hit_prim = PT_NO_HIT;
  f->depth = 0;
  return PT_INTERSECT;
}

/* intersect: closest hit (prims, then the BVH); the material kind picks the
 * shading queue. A stepped continuation (kernel.h): the BVH walk resumes a
 * leaf at a time, so on CUDA the lanes whose rays finish early (a miss, a
 * near wall) take new rays while the long walks go on; the megakernel has
 * no such choice, its lanes hold whole paths. PT_INTERSECT_STEPS=0 builds
 * the one-call form, for comparison (docs/decisions.md). */
#ifndef PT_INTERSECT_STEPS
#define PT_INTERSECT_STEPS 1
#endif
/* the same for the shadow rays' stage kernel (below); off by default: on the
 * H200 the stepped stage rendered the engine scene 1.8 % and the Cornell box
 * 3.5 % slower in pipeline mode (docs/decisions.md) */
#ifndef PT_SHADOW_STEPS
#define PT_SHADOW_STEPS 0
#endif
/* the hit's fields of the frame, and the shading queue its material picks */
WS_DEVICE static inline uint32_t pt_intersect_found(pt_frame *f, const pt_args *a, uint32_t hit,
                                                    float t, float bu, float bv) {
  const pt_scene *sc = pt_scene_of(a);
  f->hit_prim = hit;
  f->hit_t = t;
  f->hit_u = bu;
  f->hit_v = bv;
  if (hit == PT_NO_HIT)
    return PT_SHADE_EMISSIVE;
  switch (pt_material_of(sc, hit)->kind) {
  case PT_MAT_DIFFUSE:
    return PT_SHADE_DIFFUSE;
  case PT_MAT_GLOSSY:
    return PT_SHADE_GLOSSY;
  case PT_MAT_DIELECTRIC:
    return PT_SHADE_DIELECTRIC;
  case PT_MAT_PRINCIPLED:
    return PT_SHADE_PRINCIPLED;
  default:
    return PT_SHADE_EMISSIVE;
  }
}
WS_DEVICE static inline void pt_intersect_begin(const ws_item *it, const pt_frame *f,
                                                const pt_args *a, pt_closest_walk *c) {
  (void)it;
  pt_closest_begin(pt_scene_of(a), f->org, f->dir, PT_INF, PT_NO_HIT, c);
}
WS_DEVICE static inline int pt_intersect_step(pt_closest_walk *c, const pt_args *a) {
  return pt_bvh_hit_step(pt_scene_of(a), &c->w);
}
WS_DEVICE static inline uint32_t pt_intersect_end(const ws_item *it, pt_frame *f,
                                                  const pt_args *a, pt_closest_walk *c) {
  (void)it;
  float t, bu = 0.0f, bv = 0.0f;
  const uint32_t hit = pt_closest_end(c, &t, &bu, &bv);
  return pt_intersect_found(f, a, hit, t, bu, bv);
}
WS_DEVICE static uint32_t pt_intersect(const ws_item *it, pt_frame *f, const pt_args *a) {
  (void)it;
  float t, bu = 0.0f, bv = 0.0f;
  const uint32_t hit = pt_closest(pt_scene_of(a), f->org, f->dir, PT_INF, PT_NO_HIT, &t, &bu, &bv);
  return pt_intersect_found(f, a, hit, t, bu, bv);
}
/* pt_intersect in one call where nothing refills (the walk's scalars in
 * registers: a state object holding the stack would keep them in local
 * memory, 296 instead of 200 bytes of stack frame in the megakernel), its
 * steps in CUDA's refilled launches */
#if PT_INTERSECT_STEPS
WS_CONTINUATION_STEPS_OF(pt_intersect, pt_frame, pt_args, PT_INTERSECT, pt_closest_walk,
                         pt_intersect_begin, pt_intersect_step, pt_intersect_end)
#endif

/* Cosine-weighted direction around n from (u1, u2); *cz = its cosine. */
WS_DEVICE static inline pt_vec3 pt_cosine_dir(pt_vec3 n, float u1, float u2, float *cz) {
  const float r = sqrtf(u1);
  float sn, cs;
  pt_sincos_2pi(u2, &sn, &cs);
  *cz = sqrtf(fmaxf(0.0f, 1.0f - u1));
  return v_norm(pt_to_world(n, r * cs, r * sn, *cz));
}

/* GGX half vector around n: D(h) cos(h) sampled from (u1, u2) */
WS_DEVICE static inline pt_vec3 pt_ggx_half(pt_vec3 n, float alpha2, float u1, float u2,
                                            float *cos_h) {
  const float cos2_h = (1.0f - u1) / (1.0f + (alpha2 - 1.0f) * u1);
  *cos_h = sqrtf(cos2_h);
  const float sin_h = sqrtf(fmaxf(0.0f, 1.0f - cos2_h));
  float sn, cs;
  pt_sincos_2pi(u2, &sn, &cs);
  return v_norm(pt_to_world(n, sin_h * cs, sin_h * sn, *cos_h));
}

/* What every shading continuation with next-event estimation starts with:
 * the hit's material and surface, its base colour, the shadow request for
 * this vertex, and the path's random-number keys. */
typedef struct pt_shading {
  const pt_material *m;
  pt_surface sf;
  pt_vec3 base;
  uint32_t pixel, sample;
} pt_shading;

WS_DEVICE static inline pt_shading pt_shading_begin(const ws_item *it, pt_frame *f,
                                                    const pt_args *a) {
  const pt_scene *sc = pt_scene_of(a);
  const uint32_t mi = pt_material_index(sc, f->hit_prim);
  pt_shading s;
  s.m = pt_material_at(sc, mi);
  s.sf = pt_surface_at(sc, f);
  s.base = pt_base_color(sc, s.m, &s.sf);
  pt_request_shadow(it, f, a, s.sf.pos, s.sf.ns, mi, s.base);
  pt_keys(a, it->id, &s.pixel, &s.sample);
  return s;
}

WS_DEVICE static uint32_t pt_shade_diffuse(const ws_item *it, pt_frame *f, const pt_args *a) {
  const pt_shading s = pt_shading_begin(it, f, a);
  const pt_surface sf = s.sf;
  const pt_vec3 base = s.base;
  const uint32_t pixel = s.pixel, sample = s.sample;
  /* cosine-weighted hemisphere: f cos / pdf = albedo */
  const float u1 = pt_rand(a->seed, pixel, sample, f->depth, PT_DIM_BSDF_U);
  const float u2 = pt_rand(a->seed, pixel, sample, f->depth, PT_DIM_BSDF_V);
  float cz;
  f->dir = pt_cosine_dir(sf.ns, u1, u2, &cz);
  /* below the geometric surface (interpolated normals; on prims ns = ng) */
  if ((f->hit_prim & PT_TRI_BIT) && v_dot(f->dir, sf.ng) <= 0.0f)
    return pt_finish(it, f, a);
  f->org = v_madd(sf.pos, sf.ng, PT_EPS);
  f->beta = v_mul(f->beta, base);
  f->prev_pos = sf.pos;
  f->prev_pdf = cz * PT_INV_PI;
  return pt_next_bounce(it, f, a, pixel, sample);
}

WS_DEVICE static uint32_t pt_shade_glossy(const ws_item *it, pt_frame *f, const pt_args *a) {
  const pt_shading s = pt_shading_begin(it, f, a);
  const pt_material *m = s.m;
  const pt_surface sf = s.sf;
  const pt_vec3 base = s.base, n = sf.ns;
  const uint32_t pixel = s.pixel, sample = s.sample;
  /* sample the GGX normal distribution D(h) cos(h), reflect wo about h */
  const float alpha2 = m->alpha * m->alpha;
  const float u1 = pt_rand(a->seed, pixel, sample, f->depth, PT_DIM_BSDF_U);
  const float u2 = pt_rand(a->seed, pixel, sample, f->depth, PT_DIM_BSDF_V);
  float cos_h;
  const pt_vec3 h = pt_ggx_half(n, alpha2, u1, u2, &cos_h);
  const pt_vec3 wo = v_neg(f->dir);
  const float oh = v_dot(wo, h);
  const pt_vec3 wi = v_sub(v_scale(h, 2.0f * oh), wo);
  const float cos_o = v_dot(n, wo), cos_i = v_dot(n, wi);
  if (oh <= 0.0f || cos_i <= 0.0f || cos_o <= 0.0f || v_dot(wi, sf.ng) <= 0.0f)
    return pt_finish(it, f, a); /* sampled below the surface: absorbed */
  /* f cos_i / pdf = F G (wo.h) / (cos_o cos_h) */
  const float g = pt_ggx_g1(alpha2, cos_o) * pt_ggx_g1(alpha2, cos_i);
  f->beta = v_mul(f->beta, v_scale(pt_schlick(base, oh), g * oh / (cos_o * cos_h)));
  f->prev_pdf = pt_ggx_d(alpha2, cos_h) * cos_h / (4.0f * oh);
  f->prev_pos = sf.pos;
  f->dir = wi;
  f->org = v_madd(sf.pos, sf.ng, PT_EPS);
  return pt_next_bounce(it, f, a, pixel, sample);
}

/* The principled BSDF: pick a lobe (coat, specular, diffuse) with the
 * PT_DIM_LOBE number, sample it, weight by f cos / (mixture pdf). */
WS_DEVICE static uint32_t pt_shade_principled(const ws_item *it, pt_frame *f, const pt_args *a) {
  const pt_shading s = pt_shading_begin(it, f, a);
  const pt_material *m = s.m;
  const pt_surface sf = s.sf;
  const pt_vec3 base = s.base, n = sf.ns;
  const uint32_t pixel = s.pixel, sample = s.sample;
  const float lobe = pt_rand(a->seed, pixel, sample, f->depth, PT_DIM_LOBE);
  const float u1 = pt_rand(a->seed, pixel, sample, f->depth, PT_DIM_BSDF_U);
  const float u2 = pt_rand(a->seed, pixel, sample, f->depth, PT_DIM_BSDF_V);
  const pt_vec3 wo = v_neg(f->dir);
  float pc, ps;
  pt_principled_probs(m, &pc, &ps);
  pt_vec3 wi;
  if (lobe < pc + ps) {
    const float alpha = lobe < pc ? m->coat_alpha : m->alpha;
    float cos_h;
    const pt_vec3 h = pt_ggx_half(n, alpha * alpha, u1, u2, &cos_h);
    wi = v_sub(v_scale(h, 2.0f * v_dot(wo, h)), wo);
  } else {
    float cz;
    wi = pt_cosine_dir(n, u1, u2, &cz);
  }
  if (v_dot(wi, sf.ng) <= 0.0f)
    return pt_finish(it, f, a);
  float pdf;
  const pt_vec3 fv = pt_bsdf_eval(m, base, n, wo, wi, &pdf);
  if (!(pdf > 0.0f) || v_zero(fv))
    return pt_finish(it, f, a); /* below the surface: absorbed */
  f->beta = v_mul(f->beta, v_scale(fv, v_dot(n, wi) / pdf));
  f->prev_pdf = pdf;
  f->prev_pos = sf.pos;
  f->dir = wi;
  f->org = v_madd(sf.pos, sf.ng, PT_EPS);
  return pt_next_bounce(it, f, a, pixel, sample);
}

WS_DEVICE static uint32_t pt_shade_dielectric(const ws_item *it, pt_frame *f, const pt_args *a) {
  const pt_scene *sc = pt_scene_of(a);
  const pt_material *m = pt_material_of(sc, f->hit_prim);
  uint32_t pixel, sample;
  pt_keys(a, it->id, &pixel, &sample);
  const pt_surface sf = pt_surface_at(sc, f);
  const pt_vec3 pos = sf.pos;
  const int entering = sf.entering;
  const pt_vec3 n = entering ? sf.nout : v_neg(sf.nout); /* faces the incoming ray */
  const float cos_i = -v_dot(n, f->dir);
  const float lobe = pt_rand(a->seed, pixel, sample, f->depth, PT_DIM_LOBE);
  if (m->thin) {
    if (lobe < pt_thin_reflectance(m, cos_i)) {
      f->dir = v_madd(f->dir, n, 2.0f * cos_i);
      f->org = v_madd(pos, n, PT_EPS);
      f->prev_pdf = 0.0f;
    } else {
      /* straight through, tinted: for MIS the ray is still the one the
       * last non-specular vertex sampled (prev_pos, prev_pdf unchanged) */
      f->org = v_madd(pos, n, -PT_EPS);
      f->beta = v_mul(f->beta, m->albedo);
    }
    return pt_next_bounce(it, f, a, pixel, sample);
  }
  const float eta = entering ? 1.0f / m->ior : m->ior;
  float cos_t;
  const float fr = pt_fresnel(cos_i, eta, &cos_t);
  if (lobe < fr) {
    f->dir = v_madd(f->dir, n, 2.0f * cos_i);
    f->org = v_madd(pos, n, PT_EPS);
  } else {
    f->dir = v_norm(v_madd(v_scale(f->dir, eta), n, eta * cos_i - cos_t));
    f->org = v_madd(pos, n, -PT_EPS);
    f->beta = v_mul(f->beta, m->albedo);
  }
  f->prev_pdf = 0.0f;
  return pt_next_bounce(it, f, a, pixel, sample);
}

/* shade_emissive: an emitter's front side (MIS-weighted against the NEE of
 * the previous vertex) or a miss (the environment, if any); the path ends. */
WS_DEVICE static uint32_t pt_shade_emissive(const ws_item *it, pt_frame *f, const pt_args *a) {
  const pt_scene *sc = pt_scene_of(a);
  if (f->hit_prim == PT_NO_HIT) {
    if (sc->env_kind != PT_ENV_NONE)
      f->rad = v_add(f->rad, v_mul(f->beta, pt_env(sc, f->dir)));
    return pt_finish(it, f, a);
  }
  const uint32_t li = pt_light_of(sc, f->hit_prim);
  /* the emitting side: a quad's normal, a triangle light's recorded normal */
  pt_vec3 ln;
  if (f->hit_prim & PT_TRI_BIT) {
    if (li == PT_NONE)
      return pt_finish(it, f, a);
    ln = pt_light_at(sc, li)->n;
  } else {
    ln = pt_prims(sc)[f->hit_prim].n;
  }
  const float cos_l = -v_dot(ln, f->dir);
  if (cos_l > 0.0f) {
    float w = 1.0f;
    if (f->prev_pdf > 0.0f && li != PT_NONE) {
      const pt_light *L = pt_light_at(sc, li);
      const pt_vec3 x = v_madd(f->org, f->dir, f->hit_t);
      const pt_vec3 dv = v_sub(x, f->prev_pos);
      const float pdf_l = v_dot(dv, dv) / (cos_l * L->area) * L->select_pdf;
      w = f->prev_pdf * f->prev_pdf / (f->prev_pdf * f->prev_pdf + pdf_l * pdf_l);
#if PT_STRATEGY == 1
      w = 0.0f;
#elif PT_STRATEGY == 2
      w = 1.0f;
#endif
    }
    const pt_vec3 e = pt_material_of(sc, f->hit_prim)->emission;
    f->rad = v_add(f->rad, v_scale(v_mul(f->beta, e), w));
  }
  return pt_finish(it, f, a);
}

/* The two BVH traversals (closest hit, shadow rays) are latency-bound: on
 * CUDA they may compile with fewer registers than they would take, for more
 * resident warps (kernel.h "register caps"; the value measured on the H200 is
 * in docs/decisions.md; 0 = no cap). The megakernel has no such choice: it
 * holds the heaviest shading code in the same kernel. */
#ifndef PT_TRAVERSAL_REGISTERS
#define PT_TRAVERSAL_REGISTERS 0
#endif
WS_CONTINUATION_MAX_REGISTERS(pt_frame, PT_INTERSECT, PT_TRAVERSAL_REGISTERS)
WS_KERNEL_MAX_REGISTERS(pt_trace_shadow_kernel, PT_TRAVERSAL_REGISTERS)

WS_COROUTINE(pt_path, pt_frame, pt_args, pt_generate, PT_CONTINUATIONS)

/* ---- stage kernels: launched over all C slots, keep their stage's items ---- */
WS_DEVICE static inline void pt_stage_slot(const pt_stage_args *sa, uint32_t slot, uint32_t stage) {
  if (!ws_pool_in_stage(&sa->pool, slot, stage))
    return;
  const pt_args *a = WS_PTR(const pt_args, sa->args);
  pt_shadow *stored = (pt_shadow *)ws_pool_payload(&sa->pool, slot);
  pt_shadow s = *stored;
  const uint32_t next = pt_stage_step(a, &s, stage);
  if (next == PT_STAGE_DONE) {
    ws_pool_release(&sa->pool, slot, stage);
    return;
  }
  *stored = s;
  ws_pool_move(&sa->pool, slot, stage, next);
}

WS_KERNEL(pt_sample_light_kernel, pt_stage_args, i, sa) {
  pt_stage_slot(sa, i, PT_STAGE_SAMPLE_LIGHT);
}
#if PT_SHADOW_STEPS
/* The shadow rays' stage as a stepped kernel (kernel.h WS_KERNEL_STEPS): on
 * CUDA the lanes whose slots are not in the stage, or whose rays end early,
 * take other slots while the long any-hit walks go on. The same outcome per
 * slot as pt_stage_slot: the payload is read for begin and again for end. */
WS_DEVICE static int pt_trace_shadow_k_begin(uint32_t slot, const pt_stage_args *sa,
                                             pt_shadow_walk *sw) {
  if (!ws_pool_in_stage(&sa->pool, slot, PT_STAGE_TRACE_SHADOW))
    return 0;
  pt_trace_shadow_begin(WS_PTR(const pt_args, sa->args),
                        (const pt_shadow *)ws_pool_payload(&sa->pool, slot), sw);
  return 1;
}
WS_DEVICE static int pt_trace_shadow_k_step(pt_shadow_walk *sw, const pt_stage_args *sa) {
  return pt_bvh_any_step(pt_scene_of(WS_PTR(const pt_args, sa->args)), &sw->w);
}
WS_DEVICE static void pt_trace_shadow_k_end(uint32_t slot, const pt_stage_args *sa,
                                            pt_shadow_walk *sw) {
  pt_shadow *stored = (pt_shadow *)ws_pool_payload(&sa->pool, slot);
  pt_shadow s = *stored;
  const uint32_t next = pt_trace_shadow_end(WS_PTR(const pt_args, sa->args), &s, sw);
  if (next == PT_STAGE_DONE) {
    ws_pool_release(&sa->pool, slot, PT_STAGE_TRACE_SHADOW);
    return;
  }
  *stored = s;
  ws_pool_move(&sa->pool, slot, PT_STAGE_TRACE_SHADOW, next);
}
WS_KERNEL_STEPS(pt_trace_shadow_kernel, pt_stage_args, pt_shadow_walk, pt_trace_shadow_k_begin,
                pt_trace_shadow_k_step, pt_trace_shadow_k_end)
#else
WS_KERNEL(pt_trace_shadow_kernel, pt_stage_args, i, sa) {
  pt_stage_slot(sa, i, PT_STAGE_TRACE_SHADOW);
}
#endif
WS_KERNEL(pt_accumulate_kernel, pt_stage_args, i, sa) {
  pt_stage_slot(sa, i, PT_STAGE_ACCUMULATE);
}

/* ---- resolve: one pixel per index, a fixed summation order ---- */
WS_KERNEL(pt_resolve, pt_resolve_args, p, ra) {
  if (p >= ra->pixels)
    return;
  const float *rad = WS_PTR(const float, ra->radiance);
  const float *nee = WS_PTR(const float, ra->nee);
  float *acc = WS_PTR(float, ra->accum);
  float sx = 0.0f, sy = 0.0f, sz = 0.0f;
  for (uint32_t s = 0; s < ra->batch_spp; ++s) {
    const uint64_t item = (uint64_t)p * ra->batch_spp + s;
    float vx = rad[item * 3u], vy = rad[item * 3u + 1u], vz = rad[item * 3u + 2u];
    for (uint32_t d = 0; d < ra->max_depth; ++d) {
      const float *e = nee + (item * ra->max_depth + d) * 3u;
      vx += e[0];
      vy += e[1];
      vz += e[2];
    }
    sx += vx;
    sy += vy;
    sz += vz;
  }
  acc[(uint64_t)p * 3u] += sx;
  acc[(uint64_t)p * 3u + 1u] += sy;
  acc[(uint64_t)p * 3u + 2u] += sz;
}

WS_MODULE_BEGIN(pathtracer)
WS_MODULE_COROUTINE(pt_path)
WS_MODULE_KERNEL(pt_sample_light_kernel)
WS_MODULE_KERNEL(pt_trace_shadow_kernel)
WS_MODULE_KERNEL(pt_accumulate_kernel)
WS_MODULE_KERNEL(pt_resolve)
WS_MODULE_END(pathtracer)
