/* SPDX-License-Identifier: MIT */
/* The path tracer's shared device code (examples/pathtracer/pt.h and
 * pathtracer.kern.h) in GLSL for the Vulkan backend: the same structs, the
 * same argument bytes and the same arithmetic, operation for operation.
 *
 * Floating point: every float computation is `precise` (SPIR-V NoContraction:
 * no fma contraction, no reassociation), the twin of -ffp-contract=off /
 * --fmad=false; no GLSL builtins whose rounding is not exact (dot, normalize,
 * length are written out in C's order; every division and sqrt goes through
 * pt_div / pt_sqrt, correctly rounded); copysign is done on the bits; float
 * constants are given as their bit patterns (C's rounding of the decimal
 * literal, no double rounding through the GLSL front end).
 *
 * Layouts (scalar block layout = C offsets; sizes checked against the C
 * structs): pt_material 88, pt_prim 64, pt_light 80, pt_tri 36, pt_tri_shade
 * 68, pt_bvh_node 32, pt_texture 16, pt_camera 48, pt_scene 160 (explicit
 * offsets below), pt_args 112, pt_shadow 92, pt_stage_args 56,
 * pt_resolve_args 40. pt_vec3 (struct of 3 floats) is vec3 (size 12, align 4). */
#ifndef WS_PT_GLSL
#define WS_PT_GLSL

#include "wavesched/pool.glsl"

/* ---- constants (pathtracer.kern.h) as C's float bits ---- */
#define PT_PI uintBitsToFloat(0x40490fdbu)          /* 3.14159265358979323846f */
#define PT_INV_PI uintBitsToFloat(0x3ea2f983u)      /* 0.31830988618379067154f */
#define PT_HALF_PI uintBitsToFloat(0x3fc90fdbu)     /* 0.5f * PT_PI (folded in float) */
#define PT_EPS uintBitsToFloat(0x38d1b717u)         /* 1e-4f */
#define PT_INF uintBitsToFloat(0x7149f2cau)         /* 1e30f */
#define PT_DEN_EPS uintBitsToFloat(0x3089705fu)     /* 1e-9f */
#define PT_RR_MAX uintBitsToFloat(0x3f733333u)      /* 0.95f */
#define PT_F004 uintBitsToFloat(0x3d23d70au)        /* 0.04f */
#define PT_F096 uintBitsToFloat(0x3f75c28fu)        /* 0.96f */
#define PT_BOX_WIDEN uintBitsToFloat(0x3f800002u)   /* 1.00000024f */

#define PT_MAT_DIFFUSE 0u
#define PT_MAT_GLOSSY 1u
#define PT_MAT_DIELECTRIC 2u
#define PT_MAT_EMISSIVE 3u
#define PT_MAT_PRINCIPLED 4u
#define PT_PATTERN_CHECKER 1u
#define PT_PRIM_SPHERE 0u
#define PT_PRIM_QUAD 1u
#define PT_NO_HIT 0xffffffffu
#define PT_NONE 0xffffffffu
#define PT_TRI_BIT 0x80000000u
#define PT_BVH_MAX_DEPTH 48u
#define PT_LIGHT_QUAD 0u
#define PT_ENV_NONE 0u
#define PT_ENV_CONSTANT 1u
#define PT_XBOUNCE 0x10000000u
#define PT_XDIM_LIGHT 0u

#define PT_INTERSECT 1u
#define PT_SHADE_DIFFUSE 2u
#define PT_SHADE_GLOSSY 3u
#define PT_SHADE_DIELECTRIC 4u
#define PT_SHADE_EMISSIVE 5u
#define PT_SHADE_PRINCIPLED 6u

#define PT_STAGE_SAMPLE_LIGHT 0u
#define PT_STAGE_TRACE_SHADOW 1u
#define PT_STAGE_ACCUMULATE 2u
#define PT_STAGE_COUNT 3u
#define PT_STAGE_DONE 3u
#define PT_MAX_SHADOW_STEPS 4u

#define PT_NEE_PIPELINE 0u
#define PT_NEE_INLINE 1u

#define PT_CTR_REJECTED 0u
#define PT_CTR_PANE 1u
#define PT_CTR_OCCLUDED 2u
#define PT_CTR_UNOCCLUDED 3u

#define PT_DIM_LIGHT_U 0u
#define PT_DIM_LIGHT_V 1u
#define PT_DIM_BSDF_U 2u
#define PT_DIM_BSDF_V 3u
#define PT_DIM_LOBE 4u
#define PT_DIM_RR 5u
#define PT_DIM_CAM_X 6u
#define PT_DIM_CAM_Y 7u
#define PT_DIMS 8u

#ifndef PT_STRATEGY
#define PT_STRATEGY 0
#endif

/* ---- scene records (pt.h) ---- */
struct pt_material { /* 88 bytes */
  vec3 albedo;
  vec3 emission;
  float alpha;
  float ior;
  uint kind;
  uint thin;
  vec3 sheen;
  vec3 pattern_color;
  float metallic;
  float coat;
  float coat_alpha;
  float pattern_scale;
  uint texture_;
  uint pattern;
};
struct pt_prim { /* 64 bytes */
  vec3 p;
  vec3 u;
  vec3 v;
  vec3 n;
  float r;
  uint kind;
  uint material;
  uint light;
};
struct pt_tri { /* 36 bytes */
  vec3 a;
  vec3 b;
  vec3 c;
};
struct pt_tri_shade { /* 68 bytes */
  vec3 n0;
  vec3 n1;
  vec3 n2;
  float uv[6];
  uint material;
  uint light;
};
struct pt_bvh_node { /* 32 bytes */
  vec3 lo;
  vec3 hi;
  uint first;
  uint count;
};
struct pt_light { /* 80 bytes */
  vec3 p;
  vec3 u;
  vec3 v;
  vec3 n;
  vec3 emission;
  float area;
  uint prim;
  uint kind;
  float select_pdf;
  float cdf;
};
struct pt_texture { /* 16 bytes, alignment 8 */
  uint64_t offset;
  uint width;
  uint height;
};
struct pt_camera { /* 48 bytes */
  vec3 eye;
  vec3 lower_left;
  vec3 horizontal;
  vec3 vertical;
};
layout(buffer_reference, scalar, buffer_reference_align = 8) readonly buffer pt_scene_ref {
  layout(offset = 0) pt_camera camera;
  layout(offset = 48) uint64_t prims;     /* pt_prim[prim_count] */
  layout(offset = 56) uint64_t materials; /* pt_material[material_count] */
  layout(offset = 64) uint64_t lights;    /* pt_light[light_count] */
  layout(offset = 72) uint64_t tris;      /* pt_tri[tri_count] */
  layout(offset = 80) uint64_t tri_shade; /* pt_tri_shade[tri_count] */
  layout(offset = 88) uint64_t nodes;     /* pt_bvh_node[node_count] */
  layout(offset = 96) uint64_t textures;  /* pt_texture[] */
  layout(offset = 104) uint64_t texels;   /* float[] */
  layout(offset = 112) vec3 env_zenith;
  layout(offset = 124) vec3 env_horizon;
  layout(offset = 136) uint prim_count;
  layout(offset = 140) uint material_count;
  layout(offset = 144) uint light_count;
  layout(offset = 148) uint tri_count;
  layout(offset = 152) uint node_count;
  layout(offset = 156) uint env_kind;
};
WS_DECLARE_ARRAY(pt_prims_ref, pt_prim, 4)
WS_DECLARE_ARRAY(pt_materials_ref, pt_material, 4)
WS_DECLARE_ARRAY(pt_lights_ref, pt_light, 4)
WS_DECLARE_ARRAY(pt_tris_ref, pt_tri, 4)
WS_DECLARE_ARRAY(pt_tri_shades_ref, pt_tri_shade, 4)
WS_DECLARE_ARRAY(pt_nodes_ref, pt_bvh_node, 4)
WS_DECLARE_ARRAY(pt_textures_ref, pt_texture, 8)

/* ---- the shadow payload (pt.h pt_shadow, 92 bytes; `sample` is a GLSL keyword) ---- */
struct pt_shadow {
  vec3 pos;
  vec3 nrm;
  vec3 wo;
  vec3 contrib;
  vec3 base;
  float tmax;
  uint item;
  uint pixel;
  uint sample_;
  uint bounce;
  uint material;
  uint steps;
  uint last;
};
#define WS_SIZEOF_pt_shadow 92u
#define WS_ALIGNOF_pt_shadow 4u
WS_DECLARE_TYPE(pt_shadow, 4)

/* ---- argument blocks (pt.h) ---- */
struct pt_args { /* 120 bytes, alignment 8 */
  uint64_t scene;    /* pt_scene */
  uint64_t radiance; /* float[items * 3] */
  uint64_t nee;      /* float[items * max_depth * 3] */
  ws_pool_view pool; /* 48 bytes */
  uint width;
  uint height;
  uint batch_spp;
  uint sample_base;
  uint max_depth;
  uint rr_depth;
  uint seed;
  uint nee_mode;
  uint row_first;  /* the rows of a share (pt.h) */
  uint row_stride;
  uint64_t counters; /* uint32[4] or 0 */
};
/* a pt_args at a device address (the coroutine's ws_launch.args, the stage
 * kernels' pt_stage_args.args) */
WS_ARGS(pt_args_ref) { pt_args a; };

struct pt_stage_args { /* 56 bytes */
  uint64_t args;
  ws_pool_view pool;
};

struct pt_resolve_args { /* 40 bytes */
  uint64_t radiance;
  uint64_t nee;
  uint64_t accum;
  uint pixels;
  uint batch_spp;
  uint max_depth;
  uint pad;
};

/* float element `idx` (a 64-bit index: item * max_depth * 3 may pass 2^32 on
 * large renders) of a float array at a device address */
#define PT_FLOAT(addr, idx) WS_REF(float)(WS_ADDR(float, addr, idx)).v

/* ---- random numbers ---- */
precise float pt_rand(uint seed, uint pixel, uint sample_, uint bounce, uint dim) {
  uint h = ws_hash32(seed ^ 0x9e3779b9u);
  h = ws_hash32(h ^ pixel);
  h = ws_hash32(h ^ sample_);
  h = ws_hash32(h ^ (bounce * PT_DIMS + dim));
  precise float r = float(h >> 8u) * uintBitsToFloat(0x33800000u); /* 1 / 2^24 */
  return r;
}

/* ---- correctly rounded division and square root ----
 * Vulkan lets OpFDiv and sqrt err by 2.5 and 3 ulp, and NVIDIA's driver
 * uses that, while C and CUDA (-prec-div, -prec-sqrt: the defaults) round
 * exactly. pt_div and pt_sqrt take the driver's result and step to a
 * neighbouring float while that is nearer the exact value, judged by the
 * residual a - b*q (x - s*s) computed without rounding error by Dekker's
 * product (Veltkamp splitting, plain precise multiplies and adds: fma is
 * not fused on every implementation, llvmpipe splits it). The quotient
 * nearer a/b is the one with the smaller |a - b*q|, so division is exact
 * by construction; for sqrt the distances are |x - s*s| / (sqrt(x) + s),
 * weighed with sqrt(x) taken as the midpoint of the two candidates, which
 * can misjudge only a root within about 2^-22 ulp of a rounding midpoint.
 * A result that is already correctly rounded (lavapipe, the usual case)
 * stays as it is. Operands or results outside [2^-40, 2^40] in magnitude
 * (zero, infinite, NaN included) pass unchanged: Dekker's product is exact
 * only away from overflow and underflow. Every float division and sqrt of
 * the path tracer goes through these two. */
bool pt_dekker_range(float x) {
  const float m = abs(x);
  return m >= uintBitsToFloat(0x2b800000u) && m <= uintBitsToFloat(0x53800000u); /* 2^-40, 2^40 */
}
/* a - b*q without rounding error while q is within a few ulp of a/b */
precise float pt_residual(float a, float b, float q) {
  precise float p = b * q;
  precise float cb = 4097.0 * b;
  precise float bh = cb - (cb - b);
  precise float bl = b - bh;
  precise float cq = 4097.0 * q;
  precise float qh = cq - (cq - q);
  precise float ql = q - qh;
  precise float err = ((bh * qh - p) + bh * ql + bl * qh) + bl * ql; /* b*q = p + err */
  precise float r = (a - p) - err;
  return r;
}
/* the float next to q (nonzero, finite) towards +infinity or -infinity */
float pt_next_float(float q, bool up) {
  const uint bits = floatBitsToUint(q);
  return uintBitsToFloat(up == (q > 0.0) ? bits + 1u : bits - 1u);
}
precise float pt_div(float a, float b) {
  precise float q = a / b;
  if (!pt_dekker_range(a) || !pt_dekker_range(b) || !pt_dekker_range(q))
    return q;
  for (uint i = 0u; i < 3u; ++i) {
    const float e = pt_residual(a, b, q);
    if (e == 0.0)
      break;
    const float n = pt_next_float(q, (e > 0.0) == (b > 0.0)); /* towards a/b = q + e/b */
    if (!(abs(pt_residual(a, b, n)) < abs(e)))
      break;
    q = n;
  }
  return q;
}
precise float pt_sqrt(float x) {
  precise float s = sqrt(x);
  if (!pt_dekker_range(x) || !pt_dekker_range(s) || !(s > 0.0))
    return s;
  for (uint i = 0u; i < 3u; ++i) {
    const float e = pt_residual(x, s, s);
    if (e == 0.0)
      break;
    const float n = pt_next_float(s, e > 0.0);
    const float en = pt_residual(x, n, n);
    /* |sqrt(x) - n| < |sqrt(x) - s|, with sqrt(x) ~ (s + n) / 2 */
    precise float dn = abs(en) * (3.0 * s + n);
    precise float ds = abs(e) * (s + 3.0 * n);
    if (!(dn < ds))
      break;
    s = n;
  }
  return s;
}

/* ---- vectors: componentwise ops are exact twins; sums in C's order ---- */
precise vec3 v_add(vec3 a, vec3 b) { precise vec3 r = vec3(a.x + b.x, a.y + b.y, a.z + b.z); return r; }
precise vec3 v_sub(vec3 a, vec3 b) { precise vec3 r = vec3(a.x - b.x, a.y - b.y, a.z - b.z); return r; }
precise vec3 v_mul(vec3 a, vec3 b) { precise vec3 r = vec3(a.x * b.x, a.y * b.y, a.z * b.z); return r; }
precise vec3 v_scale(vec3 a, float s) { precise vec3 r = vec3(a.x * s, a.y * s, a.z * s); return r; }
vec3 v_neg(vec3 a) { return vec3(-a.x, -a.y, -a.z); }
precise float v_dot(vec3 a, vec3 b) {
  precise float r = a.x * b.x + a.y * b.y + a.z * b.z;
  return r;
}
precise vec3 v_norm(vec3 a) {
  precise float s = pt_div(1.0, pt_sqrt(v_dot(a, a)));
  return v_scale(a, s);
}
precise vec3 v_madd(vec3 a, vec3 b, float s) { /* a + b*s */
  precise vec3 r = vec3(a.x + b.x * s, a.y + b.y * s, a.z + b.z * s);
  return r;
}
precise vec3 v_cross(vec3 a, vec3 b) {
  precise vec3 r = vec3(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x);
  return r;
}
float v_max(vec3 a) { return max(a.x, max(a.y, a.z)); }
bool v_zero(vec3 a) { return a.x == 0.0 && a.y == 0.0 && a.z == 0.0; }
float pt_copysign(float mag, float sgn) {
  return uintBitsToFloat((floatBitsToUint(mag) & 0x7fffffffu) | (floatBitsToUint(sgn) & 0x80000000u));
}

/* sin and cos of 2*pi*u (Cephes polynomials, pathtracer.kern.h) */
void pt_sincos_2pi(float u, out float s, out float c) {
  precise float t = u * 4.0;
  uint q = uint(t);
  if (q > 3u)
    q = 3u;
  precise float x = (t - float(q) - 0.5) * PT_HALF_PI;
  precise float z = x * x;
  precise float sx = x + x * z * (uintBitsToFloat(0xbe2aaaa3u) +
                                  z * (uintBitsToFloat(0x3c08839eu) + z * uintBitsToFloat(0xb94ca1f9u)));
  precise float cx = 1.0 - 0.5 * z +
                     z * z * (uintBitsToFloat(0x3d2aaaa5u) +
                              z * (uintBitsToFloat(0xbab6061au) + z * uintBitsToFloat(0x37ccf5ceu)));
  const float h = uintBitsToFloat(0x3f3504f3u); /* sin(pi/4) */
  precise float s0 = h * (cx + sx);
  precise float c0 = h * (cx - sx);
  switch (q) {
  case 0u:
    s = s0;
    c = c0;
    break;
  case 1u:
    s = c0;
    c = -s0;
    break;
  case 2u:
    s = -s0;
    c = -c0;
    break;
  default:
    s = -c0;
    c = s0;
    break;
  }
}

/* Orthonormal basis around unit n (Duff et al. 2017) */
void pt_basis(vec3 n, out vec3 t, out vec3 b) {
  precise float sign_ = pt_copysign(1.0, n.z);
  precise float a = pt_div(-1.0, sign_ + n.z);
  precise float bb = n.x * n.y * a;
  precise vec3 t_ = vec3(1.0 + sign_ * n.x * n.x * a, sign_ * bb, -sign_ * n.x);
  precise vec3 b_ = vec3(bb, sign_ + n.y * n.y * a, -n.y);
  t = t_;
  b = b_;
}

precise vec3 pt_to_world(vec3 n, float lx, float ly, float lz) {
  vec3 t, b;
  pt_basis(n, t, b);
  return v_add(v_add(v_scale(t, lx), v_scale(b, ly)), v_scale(n, lz));
}

/* ---- scene queries ---- */
pt_scene_ref pt_scene_of(pt_args a) { return pt_scene_ref(a.scene); }
pt_prim pt_prim_at(pt_scene_ref sc, uint i) { return pt_prims_ref(sc.prims).v[i]; }
pt_material pt_material_at(pt_scene_ref sc, uint m) { return pt_materials_ref(sc.materials).v[m]; }
pt_light pt_light_at(pt_scene_ref sc, uint i) { return pt_lights_ref(sc.lights).v[i]; }
pt_tri_shade pt_tri_shade_of(pt_scene_ref sc, uint hit) {
  return pt_tri_shades_ref(sc.tri_shade).v[hit & ~PT_TRI_BIT];
}
uint pt_material_index(pt_scene_ref sc, uint hit) {
  return (hit & PT_TRI_BIT) != 0u ? pt_tri_shade_of(sc, hit).material : pt_prim_at(sc, hit).material;
}
pt_material pt_material_of(pt_scene_ref sc, uint hit) {
  return pt_material_at(sc, pt_material_index(sc, hit));
}
uint pt_light_of(pt_scene_ref sc, uint hit) {
  return (hit & PT_TRI_BIT) != 0u ? pt_tri_shade_of(sc, hit).light : pt_prim_at(sc, hit).light;
}

/* Distance along unit d to prim p within (tmin, tmax), or PT_INF. */
precise float pt_prim_hit(pt_prim p, vec3 o, vec3 d, float tmin, float tmax) {
  if (p.kind == PT_PRIM_SPHERE) {
    precise vec3 oc = v_sub(o, p.p);
    precise float b = v_dot(oc, d);
    precise float c = v_dot(oc, oc) - p.r * p.r;
    precise float disc = b * b - c;
    if (disc < 0.0)
      return PT_INF;
    precise float sq = pt_sqrt(disc);
    precise float t = -b - sq;
    if (t <= tmin)
      t = -b + sq;
    return (t > tmin && t < tmax) ? t : PT_INF;
  }
  precise float den = v_dot(p.n, d);
  if (abs(den) < PT_DEN_EPS)
    return PT_INF;
  precise float t = pt_div(v_dot(p.n, v_sub(p.p, o)), den);
  if (!(t > tmin && t < tmax))
    return PT_INF;
  precise vec3 q = v_sub(v_madd(o, d, t), p.p);
  precise float s = pt_div(v_dot(q, p.u), v_dot(p.u, p.u));
  precise float r = pt_div(v_dot(q, p.v), v_dot(p.v, p.v));
  return (s >= 0.0 && s <= 1.0 && r >= 0.0 && r <= 1.0) ? t : PT_INF;
}

/* ---- watertight ray-triangle intersection (pt_geom.h) ---- */
struct pt_ray {
  vec3 o;
  vec3 d;
  vec3 inv;
  uint kx;
  uint ky;
  uint kz;
  float sx;
  float sy;
  float sz;
};

pt_ray pt_ray_make(vec3 o, vec3 d) {
  pt_ray r;
  r.o = o;
  r.d = d;
  precise vec3 inv = vec3(d.x != 0.0 ? pt_div(1.0, d.x) : PT_INF, d.y != 0.0 ? pt_div(1.0, d.y) : PT_INF,
                          d.z != 0.0 ? pt_div(1.0, d.z) : PT_INF);
  r.inv = inv;
  const float ax = abs(d.x), ay = abs(d.y), az = abs(d.z);
  uint kz = 2u;
  if (ax > ay && ax > az)
    kz = 0u;
  else if (ay > az)
    kz = 1u;
  uint kx = kz == 2u ? 0u : kz + 1u;
  uint ky = kx == 2u ? 0u : kx + 1u;
  const float dz = d[kz];
  if (dz < 0.0) {
    const uint t = kx;
    kx = ky;
    ky = t;
  }
  r.kx = kx;
  r.ky = ky;
  r.kz = kz;
  precise float sx = pt_div(d[kx], dz);
  precise float sy = pt_div(d[ky], dz);
  precise float sz = pt_div(1.0, dz);
  r.sx = sx;
  r.sy = sy;
  r.sz = sz;
  return r;
}

precise float pt_tri_hit(pt_tri tri, pt_ray r, float tmin, float tmax, out float bu, out float bv) {
  bu = 0.0;
  bv = 0.0;
  precise vec3 A = v_sub(tri.a, r.o);
  precise vec3 B = v_sub(tri.b, r.o);
  precise vec3 C = v_sub(tri.c, r.o);
  precise float az = A[r.kz], bz = B[r.kz], cz = C[r.kz];
  precise float ax = A[r.kx] - r.sx * az, ay = A[r.ky] - r.sy * az;
  precise float bx = B[r.kx] - r.sx * bz, by = B[r.ky] - r.sy * bz;
  precise float cx = C[r.kx] - r.sx * cz, cy = C[r.ky] - r.sy * cz;
  precise float U = cx * by - cy * bx;
  precise float V = ax * cy - ay * cx;
  precise float W = bx * ay - by * ax;
  if ((U < 0.0 || V < 0.0 || W < 0.0) && (U > 0.0 || V > 0.0 || W > 0.0))
    return PT_INF;
  precise float det = U + V + W;
  if (det == 0.0)
    return PT_INF;
  precise float T = U * (r.sz * az) + V * (r.sz * bz) + W * (r.sz * cz);
  precise float inv = pt_div(1.0, det);
  precise float t = T * inv;
  if (!(t > tmin && t < tmax))
    return PT_INF;
  precise float u = V * inv;
  precise float v = W * inv;
  bu = u;
  bv = v;
  return t;
}

precise float pt_box_hit(pt_bvh_node n, pt_ray r, float tmin, float tmax) {
  precise float tx0 = (n.lo.x - r.o.x) * r.inv.x, tx1 = (n.hi.x - r.o.x) * r.inv.x;
  precise float ty0 = (n.lo.y - r.o.y) * r.inv.y, ty1 = (n.hi.y - r.o.y) * r.inv.y;
  precise float tz0 = (n.lo.z - r.o.z) * r.inv.z, tz1 = (n.hi.z - r.o.z) * r.inv.z;
  precise float tnear = max(max(min(tx0, tx1), min(ty0, ty1)), max(min(tz0, tz1), tmin));
  precise float tfar = min(min(max(tx0, tx1), max(ty0, ty1)), min(max(tz0, tz1), tmax)) * PT_BOX_WIDEN;
  return tnear <= tfar ? tnear : PT_INF;
}

/* The BVH traversal of pt_geom.h (near child first, a stack per level). */
uint pt_bvh_hit(pt_scene_ref sc, pt_ray r, float tmin, inout float tbest, inout float bu,
                inout float bv, bool any) {
  if (sc.tri_count == 0u)
    return PT_NONE;
  pt_nodes_ref nodes = pt_nodes_ref(sc.nodes);
  pt_tris_ref tris = pt_tris_ref(sc.tris);
  uint stack[PT_BVH_MAX_DEPTH + 2u];
  uint sp = 0u, best = PT_NONE, node = 0u;
  if (pt_box_hit(nodes.v[0], r, tmin, tbest) >= PT_INF)
    return PT_NONE;
  for (;;) {
    const pt_bvh_node n = nodes.v[node];
    if (n.count != 0u) {
      for (uint i = n.first; i < n.first + n.count; ++i) {
        float u, v;
        precise float t = pt_tri_hit(tris.v[i], r, tmin, tbest, u, v);
        if (t < tbest) {
          tbest = t;
          bu = u;
          bv = v;
          best = i;
          if (any)
            return best;
        }
      }
    } else {
      const uint l = n.first, rr = n.first + 1u;
      precise float tl = pt_box_hit(nodes.v[l], r, tmin, tbest);
      precise float tr = pt_box_hit(nodes.v[rr], r, tmin, tbest);
      if (tl < PT_INF || tr < PT_INF) {
        if (tl < PT_INF && tr < PT_INF) {
          node = tl <= tr ? l : rr;
          stack[sp++] = tl <= tr ? rr : l;
        } else {
          node = tl < PT_INF ? l : rr;
        }
        continue;
      }
    }
    bool found = false;
    while (!found) {
      if (sp == 0u)
        return best;
      node = stack[--sp];
      found = pt_box_hit(nodes.v[node], r, tmin, tbest) < PT_INF;
    }
  }
  return best;
}

/* Closest hit over the scene: prims (skipping `skip`), then the BVH. */
uint pt_closest(pt_scene_ref sc, vec3 o, vec3 d, float tmax, uint skip, out float t_out,
                inout float bu, inout float bv) {
  uint best = PT_NO_HIT;
  precise float bt = tmax;
  const uint n = sc.prim_count;
  for (uint i = 0u; i < n; ++i) {
    if (i == skip)
      continue;
    precise float t = pt_prim_hit(pt_prim_at(sc, i), o, d, PT_EPS, bt);
    if (t < bt) {
      bt = t;
      best = i;
    }
  }
  if (sc.tri_count != 0u) {
    const pt_ray r = pt_ray_make(o, d);
    const uint tri = pt_bvh_hit(sc, r, PT_EPS, bt, bu, bv, false);
    if (tri != PT_NONE)
      best = PT_TRI_BIT | tri;
  }
  t_out = bt;
  return best;
}

bool pt_tri_occluded(pt_scene_ref sc, vec3 o, vec3 d, float tmax) {
  if (sc.tri_count == 0u)
    return false;
  const pt_ray r = pt_ray_make(o, d);
  float t = tmax, u = 0.0, v = 0.0;
  return pt_bvh_hit(sc, r, PT_EPS, t, u, v, true) != PT_NONE;
}

/* Geometric unit normal of prim at point x (outward for spheres). */
precise vec3 pt_normal(pt_prim p, vec3 x) {
  if (p.kind == PT_PRIM_SPHERE) {
    precise float s = pt_div(1.0, p.r);
    return v_scale(v_sub(x, p.p), s);
  }
  return p.n;
}

/* A surface point (pathtracer.kern.h pt_surface_at) */
struct pt_surface {
  vec3 pos;
  vec3 nout;
  vec3 ng;
  vec3 ns;
  float u;
  float v;
  bool entering;
};

pt_surface pt_surface_at(pt_scene_ref sc, vec3 org, vec3 dir, float hit_t, float hit_u,
                         float hit_v, uint hit_prim) {
  pt_surface s;
  s.pos = v_madd(org, dir, hit_t);
  s.u = 0.0;
  s.v = 0.0;
  if ((hit_prim & PT_TRI_BIT) == 0u) {
    precise vec3 n = pt_normal(pt_prim_at(sc, hit_prim), s.pos);
    s.nout = n;
    s.entering = v_dot(n, dir) < 0.0;
    s.ng = v_dot(n, dir) > 0.0 ? v_neg(n) : n;
    s.ns = s.ng;
    return s;
  }
  const pt_tri t = pt_tris_ref(sc.tris).v[hit_prim & ~PT_TRI_BIT];
  const pt_tri_shade sh = pt_tri_shade_of(sc, hit_prim);
  precise float wb = hit_u, wc = hit_v;
  precise float wa = 1.0 - wb - wc;
  precise vec3 ns = v_norm(v_add(v_add(v_scale(sh.n0, wa), v_scale(sh.n1, wb)), v_scale(sh.n2, wc)));
  precise vec3 ng = v_norm(v_cross(v_sub(t.b, t.a), v_sub(t.c, t.a)));
  if (v_dot(ng, ns) < 0.0)
    ng = v_neg(ng);
  s.nout = ng;
  s.entering = v_dot(ng, dir) < 0.0;
  if (!s.entering) {
    ng = v_neg(ng);
    ns = v_neg(ns);
  }
  s.ng = ng;
  s.ns = ns;
  precise float u = sh.uv[0] * wa + sh.uv[2] * wb + sh.uv[4] * wc;
  precise float v = sh.uv[1] * wa + sh.uv[3] * wb + sh.uv[5] * wc;
  s.u = u;
  s.v = v;
  return s;
}

precise vec3 pt_base_color(pt_scene_ref sc, pt_material m, pt_surface s) {
  precise vec3 c = m.albedo;
  if (m.texture_ != PT_NONE) {
    const pt_texture tx = pt_textures_ref(sc.textures).v[m.texture_];
    precise float fu = s.u - floor(s.u);
    precise float fv = s.v - floor(s.v);
    precise float xf = fu * float(tx.width);
    precise float yf = (1.0 - fv) * float(tx.height);
    uint x = uint(xf), y = uint(yf);
    if (x >= tx.width)
      x = tx.width - 1u;
    if (y >= tx.height)
      y = tx.height - 1u;
    const uint64_t at = tx.offset + (uint64_t(y) * uint64_t(tx.width) + uint64_t(x)) * 3ul;
    c = v_mul(c, vec3(PT_FLOAT(sc.texels, at), PT_FLOAT(sc.texels, at + 1ul),
                      PT_FLOAT(sc.texels, at + 2ul)));
  }
  if (m.pattern == PT_PATTERN_CHECKER) {
    const float k = m.pattern_scale;
    precise float qx = s.pos.x * k, qy = s.pos.y * k, qz = s.pos.z * k;
    const int q = int(floor(qx)) + int(floor(qy)) + int(floor(qz));
    if ((q & 1) != 0)
      c = v_mul(c, m.pattern_color);
  }
  return c;
}

precise vec3 pt_env(pt_scene_ref sc, vec3 d) {
  if (sc.env_kind == PT_ENV_CONSTANT)
    return sc.env_zenith;
  precise float t = max(d.y, 0.0);
  return v_add(v_scale(sc.env_horizon, 1.0 - t), v_scale(sc.env_zenith, t));
}

/* ---- materials ---- */
precise float pt_fresnel(float cos_i, float eta, out float cos_t) {
  precise float sin2_t = eta * eta * (1.0 - cos_i * cos_i);
  if (sin2_t >= 1.0) {
    cos_t = 0.0;
    return 1.0;
  }
  precise float ct = pt_sqrt(1.0 - sin2_t);
  precise float rs = pt_div(eta * cos_i - ct, eta * cos_i + ct);
  precise float rp = pt_div(cos_i - eta * ct, cos_i + eta * ct);
  cos_t = ct;
  precise float r = 0.5 * (rs * rs + rp * rp);
  return r;
}

precise float pt_thin_reflectance(pt_material m, float cos_i) {
  float ct;
  precise float inv_ior = pt_div(1.0, m.ior);
  precise float r = pt_fresnel(cos_i, inv_ior, ct);
  precise float res = pt_div(2.0 * r, 1.0 + r);
  return res;
}

precise float pt_ggx_d(float alpha2, float cos_h) {
  precise float k = cos_h * cos_h * (alpha2 - 1.0) + 1.0;
  precise float r = pt_div(alpha2, PT_PI * k * k);
  return r;
}
precise float pt_ggx_g1(float alpha2, float c) {
  precise float r = pt_div(2.0 * c, c + pt_sqrt(alpha2 + (1.0 - alpha2) * c * c));
  return r;
}
precise vec3 pt_schlick(vec3 f0, float c) {
  precise float m = 1.0 - c;
  precise float m5 = m * m * m * m * m;
  precise vec3 r = vec3(f0.x + (1.0 - f0.x) * m5, f0.y + (1.0 - f0.y) * m5, f0.z + (1.0 - f0.z) * m5);
  return r;
}

void pt_principled_probs(pt_material m, out float pc, out float ps) {
  precise float c = 0.25 * m.coat;
  precise float s = (1.0 - c) * (0.25 + 0.75 * m.metallic);
  pc = c;
  ps = s;
}

/* The principled BSDF (pathtracer.kern.h pt_principled_eval) */
precise vec3 pt_principled_eval(pt_material m, vec3 base, vec3 n, vec3 wo, vec3 wi, float cos_o,
                                float cos_i, out float pdf) {
  pdf = 0.0;
  precise vec3 h = v_norm(v_add(wo, wi));
  precise float cos_h = v_dot(n, h);
  precise float oh = v_dot(wo, h);
  if (cos_h <= 0.0 || oh <= 0.0)
    return vec3(0.0);
  precise float fm = 1.0 - oh;
  precise float m5 = fm * fm * fm * fm * fm;
  precise float r0 = pt_div(m.ior - 1.0, m.ior + 1.0);
  precise float f0d = r0 * r0;
  precise float fd = f0d + (1.0 - f0d) * m5;
  precise float metal = m.metallic;
  precise float diel = 1.0 - m.metallic;
  precise float a2 = m.alpha * m.alpha;
  precise float d = pt_ggx_d(a2, cos_h);
  precise float spec = pt_div(d * pt_ggx_g1(a2, cos_o) * pt_ggx_g1(a2, cos_i), 4.0 * cos_o * cos_i);
  precise vec3 fmetal = pt_schlick(base, oh);
  precise float kd = diel * (1.0 - fd) * PT_INV_PI;
  precise float ks = diel * m5 * PT_INV_PI;
  precise vec3 layer = vec3(base.x * kd + m.sheen.x * ks + (diel * fd + metal * fmetal.x) * spec,
                            base.y * kd + m.sheen.y * ks + (diel * fd + metal * fmetal.y) * spec,
                            base.z * kd + m.sheen.z * ks + (diel * fd + metal * fmetal.z) * spec);
  precise float c2 = m.coat_alpha * m.coat_alpha;
  precise float dc = pt_ggx_d(c2, cos_h);
  precise float fc = m.coat * (PT_F004 + PT_F096 * m5);
  precise float coat = pt_div(fc * dc * pt_ggx_g1(c2, cos_o) * pt_ggx_g1(c2, cos_i), 4.0 * cos_o * cos_i);
  layer = v_scale(layer, 1.0 - fc);
  float pc, ps;
  pt_principled_probs(m, pc, ps);
  precise float p = (1.0 - pc - ps) * cos_i * PT_INV_PI + pt_div((ps * d + pc * dc) * cos_h, 4.0 * oh);
  pdf = p;
  precise vec3 r = vec3(layer.x + coat, layer.y + coat, layer.z + coat);
  return r;
}

/* BSDF value f(wo, wi) and pdf (solid angle) for diffuse, glossy and
 * principled with base colour `base`; n faces wo. */
precise vec3 pt_bsdf_eval(pt_material m, vec3 base, vec3 n, vec3 wo, vec3 wi, out float pdf) {
  precise float cos_i = v_dot(n, wi);
  precise float cos_o = v_dot(n, wo);
  pdf = 0.0;
  if (cos_i <= 0.0 || cos_o <= 0.0)
    return vec3(0.0);
  if (m.kind == PT_MAT_DIFFUSE) {
    precise float p = cos_i * PT_INV_PI;
    pdf = p;
    return v_scale(base, PT_INV_PI);
  }
  if (m.kind == PT_MAT_PRINCIPLED)
    return pt_principled_eval(m, base, n, wo, wi, cos_o, cos_i, pdf);
  precise float alpha2 = m.alpha * m.alpha;
  precise vec3 h = v_norm(v_add(wo, wi));
  precise float cos_h = v_dot(n, h);
  precise float oh = v_dot(wo, h);
  if (cos_h <= 0.0 || oh <= 0.0)
    return vec3(0.0);
  precise float d = pt_ggx_d(alpha2, cos_h);
  precise float g = pt_ggx_g1(alpha2, cos_o) * pt_ggx_g1(alpha2, cos_i);
  precise float p = pt_div(d * cos_h, 4.0 * oh);
  pdf = p;
  precise float s = pt_div(d * g, 4.0 * cos_o * cos_i);
  return v_scale(pt_schlick(base, oh), s);
}

/* ---- item keys ---- */
void pt_keys(pt_args a, uint id, out uint pixel, out uint sample_) {
  const uint local = id / a.batch_spp;
  /* stride 1 (the whole image, blocks of rows): no division (pt_keys, C) */
  pixel = a.row_stride == 1u
              ? a.row_first * a.width + local
              : (a.row_first + local / a.width * a.row_stride) * a.width + local % a.width;
  sample_ = a.sample_base + id % a.batch_spp;
}

/* Outcome counters (a handful of words that every invocation counts into):
 * one atomic for a subgroup whose invocations all count the same outcome,
 * a plain atomic per invocation when they count several (kernel.glsl's
 * ws_atomic_add_u32_agg; the C form aggregates per distinct word). */
void pt_count(pt_args a, uint which) {
  if (a.counters != 0ul)
    ws_atomic_add_u32_agg(WS_ADDR(uint32_t, a.counters, which), 1u);
}

/* ======================================================================
 * Next-event estimation: the three stages on one payload (the stage
 * kernels and the inline path call exactly these)
 * ====================================================================== */

uint pt_pick_light(pt_args a, pt_scene_ref sc, pt_shadow s) {
  if (sc.light_count == 1u)
    return 0u;
  precise float u = pt_rand(a.seed, s.pixel, s.sample_, PT_XBOUNCE + s.bounce, PT_XDIM_LIGHT);
  uint lo = 0u, hi = sc.light_count - 1u;
  while (lo < hi) {
    const uint mid = (lo + hi) / 2u;
    if (u < pt_light_at(sc, mid).cdf)
      hi = mid;
    else
      lo = mid + 1u;
  }
  return lo;
}

uint pt_sample_light(pt_args a, inout pt_shadow s) {
  pt_scene_ref sc = pt_scene_of(a);
  if (sc.light_count == 0u) {
    pt_count(a, PT_CTR_REJECTED);
    return PT_STAGE_DONE;
  }
  const pt_light L = pt_light_at(sc, pt_pick_light(a, sc, s));
  precise float u = pt_rand(a.seed, s.pixel, s.sample_, s.bounce, PT_DIM_LIGHT_U);
  precise float v = pt_rand(a.seed, s.pixel, s.sample_, s.bounce, PT_DIM_LIGHT_V);
  precise vec3 lp;
  if (L.kind == PT_LIGHT_QUAD) {
    lp = v_madd(v_madd(L.p, L.u, u), L.v, v);
  } else {
    precise float r = pt_sqrt(u);
    precise float wu = r * (1.0 - v);
    precise float wv = r * v;
    lp = v_madd(v_madd(L.p, L.u, wu), L.v, wv);
  }
  precise vec3 wi = v_sub(lp, s.pos);
  precise float dist2 = v_dot(wi, wi);
  precise float dist = pt_sqrt(dist2);
  precise float inv_dist = pt_div(1.0, dist);
  wi = v_scale(wi, inv_dist);
  precise float cos_s = v_dot(s.nrm, wi);
  precise float cos_l = -v_dot(L.n, wi);
  if (cos_s <= 0.0 || cos_l <= 0.0) {
    pt_count(a, PT_CTR_REJECTED);
    return PT_STAGE_DONE;
  }
  precise float pdf_l = pt_div(dist2, cos_l * L.area) * L.select_pdf;
  float pdf_b;
  const pt_material m = pt_material_at(sc, s.material);
  precise vec3 f = pt_bsdf_eval(m, s.base, s.nrm, s.wo, wi, pdf_b);
  if (v_zero(f)) {
    pt_count(a, PT_CTR_REJECTED);
    return PT_STAGE_DONE;
  }
  precise float w = s.last != 0u ? 1.0 : pt_div(pdf_l * pdf_l, pdf_l * pdf_l + pdf_b * pdf_b);
#if PT_STRATEGY == 1
  w = 1.0;
#elif PT_STRATEGY == 2
  pt_count(a, PT_CTR_REJECTED);
  return PT_STAGE_DONE;
#endif
  precise float k = pt_div(cos_s * w, pdf_l);
  s.contrib = v_scale(v_mul(v_mul(s.contrib, f), L.emission), k);
  s.pos = v_madd(s.pos, s.nrm, PT_EPS);
  s.wo = wi;
  precise float tmax = dist - 2.0 * PT_EPS;
  s.tmax = tmax;
  s.steps = 0u;
  s.material = L.kind == PT_LIGHT_QUAD ? L.prim : PT_NO_HIT;
  return PT_STAGE_TRACE_SHADOW;
}

uint pt_trace_shadow(pt_args a, inout pt_shadow s) {
  pt_scene_ref sc = pt_scene_of(a);
  uint hit = PT_NO_HIT;
  precise float bt = s.tmax;
  const uint np = sc.prim_count;
  for (uint i = 0u; i < np; ++i) {
    if (i == s.material)
      continue;
    precise float ti = pt_prim_hit(pt_prim_at(sc, i), s.pos, s.wo, PT_EPS, bt);
    if (ti < bt) {
      bt = ti;
      hit = i;
    }
  }
  precise float t = bt;
  if (pt_tri_occluded(sc, s.pos, s.wo, t)) {
    pt_count(a, PT_CTR_OCCLUDED);
    return PT_STAGE_DONE;
  }
  if (hit == PT_NO_HIT) {
    pt_count(a, PT_CTR_UNOCCLUDED);
    return PT_STAGE_ACCUMULATE;
  }
  const pt_material m = pt_material_of(sc, hit);
  if (m.kind != PT_MAT_DIELECTRIC || m.thin == 0u || s.steps >= PT_MAX_SHADOW_STEPS) {
    pt_count(a, PT_CTR_OCCLUDED);
    return PT_STAGE_DONE;
  }
  pt_count(a, PT_CTR_PANE);
  precise vec3 n = pt_normal(pt_prim_at(sc, hit), v_madd(s.pos, s.wo, t));
  precise float tr = 1.0 - pt_thin_reflectance(m, abs(v_dot(n, s.wo)));
  s.contrib = v_scale(v_mul(s.contrib, m.albedo), tr);
  s.pos = v_madd(s.pos, s.wo, t);
  precise float tmax = s.tmax - t;
  s.tmax = tmax;
  s.steps += 1u;
  return PT_STAGE_TRACE_SHADOW;
}

uint pt_accumulate(pt_args a, inout pt_shadow s) {
  const uint64_t base = (uint64_t(s.item) * uint64_t(a.max_depth) + uint64_t(s.bounce)) * 3ul;
  PT_FLOAT(a.nee, base) = s.contrib.x;
  PT_FLOAT(a.nee, base + 1ul) = s.contrib.y;
  PT_FLOAT(a.nee, base + 2ul) = s.contrib.z;
  return PT_STAGE_DONE;
}

uint pt_stage_step(pt_args a, inout pt_shadow s, uint stage) {
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

/* A stage kernel's work on one slot (pathtracer.kern.h pt_stage_slot). */
void pt_stage_slot(pt_stage_args sa, uint slot, uint stage) {
  if (!ws_pool_in_stage(sa.pool, slot, stage))
    return;
  const pt_args a = pt_args_ref(sa.args).a;
  const uint64_t stored = ws_pool_payload(sa.pool, slot);
  pt_shadow s = WS_REF(pt_shadow)(stored).v;
  const uint next = pt_stage_step(a, s, stage);
  if (next == PT_STAGE_DONE) {
    ws_pool_release(sa.pool, slot, stage);
    return;
  }
  WS_REF(pt_shadow)(stored).v = s;
  ws_pool_move(sa.pool, slot, stage, next);
}

#endif
