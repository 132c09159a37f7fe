/* SPDX-License-Identifier: MIT */
#version 460
/* The path tracer's main path (examples/pathtracer/pathtracer.kern.h,
 * coroutine pt_path) in GLSL for the Vulkan backend: the same frame, the
 * same continuations, the same arithmetic (pt.glsl). */
#include "wavesched/kernel.glsl"
#include "pt.glsl"

/* pt.h PT_FIELDS, same order and types (pt_vec3 = vec3) */
#define PT_FIELDS(X)                                                                       \
  X(vec3, org)                                                                             \
  X(vec3, dir)                                                                             \
  X(vec3, beta)                                                                            \
  X(vec3, rad)                                                                             \
  X(vec3, prev_pos)                                                                        \
  X(float, prev_pdf)                                                                       \
  X(float, hit_t)                                                                          \
  X(float, hit_u)                                                                          \
  X(float, hit_v)                                                                          \
  X(uint32_t, hit_prim)                                                                    \
  X(uint32_t, depth)

WS_FRAME(pt_frame, PT_FIELDS)

/* A shadow request from a diffuse, glossy or principled vertex: published
 * into the pool or evaluated on the spot through the same stage functions. */
void pt_request_shadow(ws_item it, pt_frame f, pt_args a, vec3 pos, vec3 n, uint material,
                       vec3 base) {
  pt_shadow s;
  s.pos = pos;
  s.nrm = n;
  s.wo = v_neg(f.dir);
  s.contrib = f.beta;
  s.base = base;
  s.tmax = 0.0;
  s.item = it.id;
  pt_keys(a, it.id, s.pixel, s.sample_);
  s.bounce = f.depth;
  s.material = material;
  s.steps = 0u;
  s.last = f.depth + 1u >= a.max_depth ? 1u : 0u;
  if (a.nee_mode == PT_NEE_INLINE) {
    uint stage = PT_STAGE_SAMPLE_LIGHT;
    while (stage != PT_STAGE_DONE)
      stage = pt_stage_step(a, s, stage);
    return;
  }
  const uint slot = ws_pool_publish(a.pool, PT_STAGE_SAMPLE_LIGHT);
  if (slot != WS_POOL_NONE)
    WS_REF(pt_shadow)(ws_pool_payload(a.pool, slot)).v = s;
}

uint pt_finish(ws_item it, pt_frame f, pt_args a) {
  const uint64_t base = uint64_t(it.id) * 3ul;
  PT_FLOAT(a.radiance, base) = f.rad.x;
  PT_FLOAT(a.radiance, base + 1ul) = f.rad.y;
  PT_FLOAT(a.radiance, base + 2ul) = f.rad.z;
  return WS_TERMINATE;
}

uint pt_next_bounce(ws_item it, inout pt_frame f, pt_args a, uint pixel, uint sample_) {
  const uint vertex = f.depth;
  f.depth = vertex + 1u;
  if (f.depth >= a.max_depth || v_zero(f.beta))
    return pt_finish(it, f, a);
  if (f.depth >= a.rr_depth) {
    precise float q = min(v_max(f.beta), PT_RR_MAX);
    if (pt_rand(a.seed, pixel, sample_, vertex, PT_DIM_RR) >= q)
      return pt_finish(it, f, a);
    precise float inv_q = pt_div(1.0, q);
    f.beta = v_scale(f.beta, inv_q);
  }
  return PT_INTERSECT;
}

uint pt_generate(ws_item it, inout pt_frame f, pt_args_ref r) {
  const pt_args a = r.a;
  const pt_camera cam = pt_scene_of(a).camera;
  uint pixel, sample_;
  pt_keys(a, it.id, pixel, sample_);
  const uint px = pixel % a.width, py = pixel / a.width;
  precise float jx = pt_rand(a.seed, pixel, sample_, 0u, PT_DIM_CAM_X);
  precise float jy = pt_rand(a.seed, pixel, sample_, 0u, PT_DIM_CAM_Y);
  precise float u = pt_div(float(px) + jx, float(a.width));
  precise float v = 1.0 - pt_div(float(py) + jy, float(a.height));
  precise vec3 target = v_madd(v_madd(cam.lower_left, cam.horizontal, u), cam.vertical, v);
  f.org = cam.eye;
  f.dir = v_norm(v_sub(target, cam.eye));
  f.beta = vec3(1.0, 1.0, 1.0);
  f.rad = vec3(0.0, 0.0, 0.0);
  f.prev_pos = cam.eye;
  f.prev_pdf = 0.0;
  f.hit_t = 0.0;
  f.hit_u = 0.0;
  f.hit_v = 0.0;
  f.hit_prim = PT_NO_HIT;
  f.depth = 0u;
  return PT_INTERSECT;
}

uint pt_intersect(ws_item it, inout pt_frame f, pt_args_ref r) {
  const pt_args a = r.a;
  pt_scene_ref sc = pt_scene_of(a);
  float t, bu = 0.0, bv = 0.0;
  f.hit_prim = pt_closest(sc, f.org, f.dir, PT_INF, PT_NO_HIT, t, bu, bv);
  f.hit_t = t;
  f.hit_u = bu;
  f.hit_v = bv;
  if (f.hit_prim == PT_NO_HIT)
    return PT_SHADE_EMISSIVE;
  switch (pt_material_of(sc, f.hit_prim).kind) {
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

pt_surface pt_surface_of(pt_scene_ref sc, pt_frame f) {
  return pt_surface_at(sc, f.org, f.dir, f.hit_t, f.hit_u, f.hit_v, f.hit_prim);
}

precise vec3 pt_cosine_dir(vec3 n, float u1, float u2, out float cz) {
  precise float rr = pt_sqrt(u1);
  float sn, cs;
  pt_sincos_2pi(u2, sn, cs);
  precise float c = pt_sqrt(max(0.0, 1.0 - u1));
  cz = c;
  precise float lx = rr * cs;
  precise float ly = rr * sn;
  return v_norm(pt_to_world(n, lx, ly, c));
}

precise vec3 pt_ggx_half(vec3 n, float alpha2, float u1, float u2, out float cos_h) {
  precise float cos2_h = pt_div(1.0 - u1, 1.0 + (alpha2 - 1.0) * u1);
  precise float ch = pt_sqrt(cos2_h);
  precise float sin_h = pt_sqrt(max(0.0, 1.0 - cos2_h));
  cos_h = ch;
  float sn, cs;
  pt_sincos_2pi(u2, sn, cs);
  precise float lx = sin_h * cs;
  precise float ly = sin_h * sn;
  return v_norm(pt_to_world(n, lx, ly, ch));
}

uint pt_shade_diffuse(ws_item it, inout pt_frame f, pt_args_ref r) {
  const pt_args a = r.a;
  pt_scene_ref sc = pt_scene_of(a);
  const uint mi = pt_material_index(sc, f.hit_prim);
  const pt_material m = pt_material_at(sc, mi);
  const pt_surface sf = pt_surface_of(sc, f);
  precise vec3 base = pt_base_color(sc, m, sf);
  pt_request_shadow(it, f, a, sf.pos, sf.ns, mi, base);
  uint pixel, sample_;
  pt_keys(a, it.id, pixel, sample_);
  precise float u1 = pt_rand(a.seed, pixel, sample_, f.depth, PT_DIM_BSDF_U);
  precise float u2 = pt_rand(a.seed, pixel, sample_, f.depth, PT_DIM_BSDF_V);
  float cz;
  f.dir = pt_cosine_dir(sf.ns, u1, u2, cz);
  if ((f.hit_prim & PT_TRI_BIT) != 0u && v_dot(f.dir, sf.ng) <= 0.0)
    return pt_finish(it, f, a);
  f.org = v_madd(sf.pos, sf.ng, PT_EPS);
  f.beta = v_mul(f.beta, base);
  f.prev_pos = sf.pos;
  precise float pdf = cz * PT_INV_PI;
  f.prev_pdf = pdf;
  return pt_next_bounce(it, f, a, pixel, sample_);
}

uint pt_shade_glossy(ws_item it, inout pt_frame f, pt_args_ref r) {
  const pt_args a = r.a;
  pt_scene_ref sc = pt_scene_of(a);
  const uint mi = pt_material_index(sc, f.hit_prim);
  const pt_material m = pt_material_at(sc, mi);
  const pt_surface sf = pt_surface_of(sc, f);
  precise vec3 base = pt_base_color(sc, m, sf);
  const vec3 n = sf.ns;
  pt_request_shadow(it, f, a, sf.pos, n, mi, base);
  uint pixel, sample_;
  pt_keys(a, it.id, pixel, sample_);
  precise float alpha2 = m.alpha * m.alpha;
  precise float u1 = pt_rand(a.seed, pixel, sample_, f.depth, PT_DIM_BSDF_U);
  precise float u2 = pt_rand(a.seed, pixel, sample_, f.depth, PT_DIM_BSDF_V);
  float cos_h;
  precise vec3 h = pt_ggx_half(n, alpha2, u1, u2, cos_h);
  precise vec3 wo = v_neg(f.dir);
  precise float oh = v_dot(wo, h);
  precise float two_oh = 2.0 * oh;
  precise vec3 wi = v_sub(v_scale(h, two_oh), wo);
  precise float cos_o = v_dot(n, wo);
  precise float cos_i = v_dot(n, wi);
  if (oh <= 0.0 || cos_i <= 0.0 || cos_o <= 0.0 || v_dot(wi, sf.ng) <= 0.0)
    return pt_finish(it, f, a);
  precise float g = pt_ggx_g1(alpha2, cos_o) * pt_ggx_g1(alpha2, cos_i);
  precise float k = pt_div(g * oh, cos_o * cos_h);
  f.beta = v_mul(f.beta, v_scale(pt_schlick(base, oh), k));
  precise float pdf = pt_div(pt_ggx_d(alpha2, cos_h) * cos_h, 4.0 * oh);
  f.prev_pdf = pdf;
  f.prev_pos = sf.pos;
  f.dir = wi;
  f.org = v_madd(sf.pos, sf.ng, PT_EPS);
  return pt_next_bounce(it, f, a, pixel, sample_);
}

uint pt_shade_principled(ws_item it, inout pt_frame f, pt_args_ref r) {
  const pt_args a = r.a;
  pt_scene_ref sc = pt_scene_of(a);
  const uint mi = pt_material_index(sc, f.hit_prim);
  const pt_material m = pt_material_at(sc, mi);
  const pt_surface sf = pt_surface_of(sc, f);
  precise vec3 base = pt_base_color(sc, m, sf);
  const vec3 n = sf.ns;
  pt_request_shadow(it, f, a, sf.pos, n, mi, base);
  uint pixel, sample_;
  pt_keys(a, it.id, pixel, sample_);
  precise float lobe = pt_rand(a.seed, pixel, sample_, f.depth, PT_DIM_LOBE);
  precise float u1 = pt_rand(a.seed, pixel, sample_, f.depth, PT_DIM_BSDF_U);
  precise float u2 = pt_rand(a.seed, pixel, sample_, f.depth, PT_DIM_BSDF_V);
  precise vec3 wo = v_neg(f.dir);
  float pc, ps;
  pt_principled_probs(m, pc, ps);
  precise vec3 wi;
  precise float pcs = pc + ps;
  if (lobe < pcs) {
    const float alpha = lobe < pc ? m.coat_alpha : m.alpha;
    precise float alpha2 = alpha * alpha;
    float cos_h;
    precise vec3 h = pt_ggx_half(n, alpha2, u1, u2, cos_h);
    precise float two_oh = 2.0 * v_dot(wo, h);
    wi = v_sub(v_scale(h, two_oh), wo);
  } else {
    float cz;
    wi = pt_cosine_dir(n, u1, u2, cz);
  }
  if (v_dot(wi, sf.ng) <= 0.0)
    return pt_finish(it, f, a);
  float pdf;
  precise vec3 fv = pt_bsdf_eval(m, base, n, wo, wi, pdf);
  if (!(pdf > 0.0) || v_zero(fv))
    return pt_finish(it, f, a);
  precise float k = pt_div(v_dot(n, wi), pdf);
  f.beta = v_mul(f.beta, v_scale(fv, k));
  f.prev_pdf = pdf;
  f.prev_pos = sf.pos;
  f.dir = wi;
  f.org = v_madd(sf.pos, sf.ng, PT_EPS);
  return pt_next_bounce(it, f, a, pixel, sample_);
}

uint pt_shade_dielectric(ws_item it, inout pt_frame f, pt_args_ref r) {
  const pt_args a = r.a;
  pt_scene_ref sc = pt_scene_of(a);
  const pt_material m = pt_material_of(sc, f.hit_prim);
  uint pixel, sample_;
  pt_keys(a, it.id, pixel, sample_);
  const pt_surface sf = pt_surface_of(sc, f);
  precise vec3 pos = sf.pos;
  const bool entering = sf.entering;
  precise vec3 n = entering ? sf.nout : v_neg(sf.nout);
  precise float cos_i = -v_dot(n, f.dir);
  precise float lobe = pt_rand(a.seed, pixel, sample_, f.depth, PT_DIM_LOBE);
  precise float two_cos_i = 2.0 * cos_i;
  if (m.thin != 0u) {
    if (lobe < pt_thin_reflectance(m, cos_i)) {
      f.dir = v_madd(f.dir, n, two_cos_i);
      f.org = v_madd(pos, n, PT_EPS);
      f.prev_pdf = 0.0;
    } else {
      f.org = v_madd(pos, n, -PT_EPS);
      f.beta = v_mul(f.beta, m.albedo);
    }
    return pt_next_bounce(it, f, a, pixel, sample_);
  }
  precise float eta = entering ? pt_div(1.0, m.ior) : m.ior;
  float cos_t;
  precise float fr = pt_fresnel(cos_i, eta, cos_t);
  if (lobe < fr) {
    f.dir = v_madd(f.dir, n, two_cos_i);
    f.org = v_madd(pos, n, PT_EPS);
  } else {
    precise float k = eta * cos_i - cos_t;
    f.dir = v_norm(v_madd(v_scale(f.dir, eta), n, k));
    f.org = v_madd(pos, n, -PT_EPS);
    f.beta = v_mul(f.beta, m.albedo);
  }
  f.prev_pdf = 0.0;
  return pt_next_bounce(it, f, a, pixel, sample_);
}

uint pt_shade_emissive(ws_item it, inout pt_frame f, pt_args_ref r) {
  const pt_args a = r.a;
  pt_scene_ref sc = pt_scene_of(a);
  if (f.hit_prim == PT_NO_HIT) {
    if (sc.env_kind != PT_ENV_NONE)
      f.rad = v_add(f.rad, v_mul(f.beta, pt_env(sc, f.dir)));
    return pt_finish(it, f, a);
  }
  const uint li = pt_light_of(sc, f.hit_prim);
  vec3 ln;
  if ((f.hit_prim & PT_TRI_BIT) != 0u) {
    if (li == PT_NONE)
      return pt_finish(it, f, a);
    ln = pt_light_at(sc, li).n;
  } else {
    ln = pt_prim_at(sc, f.hit_prim).n;
  }
  precise float cos_l = -v_dot(ln, f.dir);
  if (cos_l > 0.0) {
    precise float w = 1.0;
    if (f.prev_pdf > 0.0 && li != PT_NONE) {
      const pt_light L = pt_light_at(sc, li);
      precise vec3 x = v_madd(f.org, f.dir, f.hit_t);
      precise vec3 dv = v_sub(x, f.prev_pos);
      precise float pdf_l = pt_div(v_dot(dv, dv), cos_l * L.area) * L.select_pdf;
      w = pt_div(f.prev_pdf * f.prev_pdf, f.prev_pdf * f.prev_pdf + pdf_l * pdf_l);
#if PT_STRATEGY == 1
      w = 0.0;
#elif PT_STRATEGY == 2
      w = 1.0;
#endif
    }
    const vec3 e = pt_material_of(sc, f.hit_prim).emission;
    f.rad = v_add(f.rad, v_scale(v_mul(f.beta, e), w));
  }
  return pt_finish(it, f, a);
}

/* the continuations take the argument block by reference (pt_args_ref);
 * entry and shading continuations read the pt_args value from it */
#define PT_CONTINUATIONS(X)                                                                \
  X(PT_INTERSECT, pt_intersect)                                                            \
  X(PT_SHADE_DIFFUSE, pt_shade_diffuse)                                                    \
  X(PT_SHADE_GLOSSY, pt_shade_glossy)                                                      \
  X(PT_SHADE_DIELECTRIC, pt_shade_dielectric)                                              \
  X(PT_SHADE_EMISSIVE, pt_shade_emissive)                                                  \
  X(PT_SHADE_PRINCIPLED, pt_shade_principled)

WS_COROUTINE(pt_path, pt_frame, pt_args_ref, pt_generate, PT_CONTINUATIONS)
