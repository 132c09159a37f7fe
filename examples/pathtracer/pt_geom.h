/* SPDX-License-Identifier: MIT */
/* wavesched path tracer — device geometry: vectors, primitive and triangle
 * intersection, BVH traversal. One source for the CPU and CUDA kernels
 * (included by pathtracer.kern.h) and for the host-side BVH test
 * (tests/pathtracer), which checks traversal against brute force.
 *
 * Floating point: only +, -, *, /, sqrt, fabs, fmin/fmax and copysign
 * (correctly rounded or exact in IEEE 754); built without FMA contraction,
 * so a hit is the same bits wherever it is computed (docs/pathtracer.md). */
#ifndef WS_PT_GEOM_H
#define WS_PT_GEOM_H

#include <math.h>

#include "pt.h"

#define PT_PI 3.14159265358979323846f
#define PT_INV_PI 0.31830988618379067154f
#define PT_EPS 1e-4f /* ray offset and minimum hit distance (scene is ~2 units) */
#define PT_INF 1e30f

/* ---- vectors ---- */
WS_DEVICE static inline pt_vec3 v3(float x, float y, float z) {
  pt_vec3 r;
  r.x = x;
  r.y = y;
  r.z = z;
  return r;
}
WS_DEVICE static inline pt_vec3 v_add(pt_vec3 a, pt_vec3 b) { return v3(a.x + b.x, a.y + b.y, a.z + b.z); }
WS_DEVICE static inline pt_vec3 v_sub(pt_vec3 a, pt_vec3 b) { return v3(a.x - b.x, a.y - b.y, a.z - b.z); }
WS_DEVICE static inline pt_vec3 v_mul(pt_vec3 a, pt_vec3 b) { return v3(a.x * b.x, a.y * b.y, a.z * b.z); }
WS_DEVICE static inline pt_vec3 v_scale(pt_vec3 a, float s) { return v3(a.x * s, a.y * s, a.z * s); }
WS_DEVICE static inline pt_vec3 v_neg(pt_vec3 a) { return v3(-a.x, -a.y, -a.z); }
WS_DEVICE static inline float v_dot(pt_vec3 a, pt_vec3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
WS_DEVICE static inline pt_vec3 v_cross(pt_vec3 a, pt_vec3 b) {
  return v3(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x);
}
WS_DEVICE static inline pt_vec3 v_norm(pt_vec3 a) { return v_scale(a, 1.0f / sqrtf(v_dot(a, a))); }
WS_DEVICE static inline pt_vec3 v_madd(pt_vec3 a, pt_vec3 b, float s) { /* a + b*s */
  return v3(a.x + b.x * s, a.y + b.y * s, a.z + b.z * s);
}
WS_DEVICE static inline float v_max(pt_vec3 a) { return fmaxf(a.x, fmaxf(a.y, a.z)); }
WS_DEVICE static inline int v_zero(pt_vec3 a) { return a.x == 0.0f && a.y == 0.0f && a.z == 0.0f; }
WS_DEVICE static inline float v_at(pt_vec3 a, uint32_t k) { return k == 0u ? a.x : (k == 1u ? a.y : a.z); }

/* ---- spheres and rectangles (the built-in scene's primitives) ---- */

/* Distance along unit d to prim `p` within (tmin, tmax), or PT_INF. */
WS_DEVICE static inline float pt_prim_hit(const pt_prim *p, pt_vec3 o, pt_vec3 d, float tmin,
                                          float tmax) {
  if (p->kind == PT_PRIM_SPHERE) {
    const pt_vec3 oc = v_sub(o, p->p);
    const float b = v_dot(oc, d);
    const float c = v_dot(oc, oc) - p->r * p->r;
    const float disc = b * b - c;
    if (disc < 0.0f)
      return PT_INF;
    const float sq = sqrtf(disc);
    float t = -b - sq;
    if (t <= tmin)
      t = -b + sq;
    return (t > tmin && t < tmax) ? t : PT_INF;
  }
  const float den = v_dot(p->n, d);
  if (fabsf(den) < 1e-9f)
    return PT_INF;
  const float t = v_dot(p->n, v_sub(p->p, o)) / den;
  if (!(t > tmin && t < tmax))
    return PT_INF;
  const pt_vec3 q = v_sub(v_madd(o, d, t), p->p);
  const float s = v_dot(q, p->u) / v_dot(p->u, p->u); /* quads are rectangles: u _|_ v */
  const float r = v_dot(q, p->v) / v_dot(p->v, p->v);
  return (s >= 0.0f && s <= 1.0f && r >= 0.0f && r <= 1.0f) ? t : PT_INF;
}

/* ---- watertight ray-triangle intersection (Woop, Benthin, Wald 2013) ----
 * The ray is sheared once so that it runs along +z through the origin; each
 * triangle is then tested with 2D edge functions that are exact in sign on
 * shared edges (no cracks between neighbours). The paper's double-precision
 * recomputation of an edge function that comes out exactly 0 is left out:
 * such a ray is counted inside (the sign test accepts 0), so a ray through a
 * shared edge hits both triangles at the same t rather than neither. */
typedef struct pt_ray {
  pt_vec3 o, d, inv; /* origin, unit direction, 1/d (PT_INF where d has a 0) */
  uint32_t kx, ky, kz;
  float sx, sy, sz;
} pt_ray;

WS_DEVICE static inline pt_ray pt_ray_make(pt_vec3 o, pt_vec3 d) {
  pt_ray r;
  r.o = o;
  r.d = d;
  r.inv = v3(d.x != 0.0f ? 1.0f / d.x : PT_INF, d.y != 0.0f ? 1.0f / d.y : PT_INF,
             d.z != 0.0f ? 1.0f / d.z : PT_INF);
  const float ax = fabsf(d.x), ay = fabsf(d.y), az = fabsf(d.z);
  uint32_t kz = 2u;
  if (ax > ay && ax > az)
    kz = 0u;
  else if (ay > az)
    kz = 1u;
  uint32_t kx = kz == 2u ? 0u : kz + 1u;
  uint32_t ky = kx == 2u ? 0u : kx + 1u;
  const float dz = v_at(d, kz);
  if (dz < 0.0f) { /* keep the winding: swap kx and ky */
    const uint32_t t = kx;
    kx = ky;
    ky = t;
  }
  r.kx = kx;
  r.ky = ky;
  r.kz = kz;
  r.sx = v_at(d, kx) / dz;
  r.sy = v_at(d, ky) / dz;
  r.sz = 1.0f / dz;
  return r;
}

/* Hit distance in (tmin, tmax) or PT_INF; *bu, *bv: barycentric weights of
 * b and c. */
WS_DEVICE static inline float pt_tri_hit(const pt_tri *tri, const pt_ray *r, float tmin,
                                         float tmax, float *bu, float *bv) {
  const pt_vec3 A = v_sub(tri->a, r->o), B = v_sub(tri->b, r->o), C = v_sub(tri->c, r->o);
  const float az = v_at(A, r->kz), bz = v_at(B, r->kz), cz = v_at(C, r->kz);
  const float ax = v_at(A, r->kx) - r->sx * az, ay = v_at(A, r->ky) - r->sy * az;
  const float bx = v_at(B, r->kx) - r->sx * bz, by = v_at(B, r->ky) - r->sy * bz;
  const float cx = v_at(C, r->kx) - r->sx * cz, cy = v_at(C, r->ky) - r->sy * cz;
  const float U = cx * by - cy * bx;
  const float V = ax * cy - ay * cx;
  const float W = bx * ay - by * ax;
  if ((U < 0.0f || V < 0.0f || W < 0.0f) && (U > 0.0f || V > 0.0f || W > 0.0f))
    return PT_INF;
  const float det = U + V + W;
  if (det == 0.0f)
    return PT_INF;
  const float T = U * (r->sz * az) + V * (r->sz * bz) + W * (r->sz * cz);
  const float inv = 1.0f / det;
  const float t = T * inv;
  if (!(t > tmin && t < tmax))
    return PT_INF;
  *bu = V * inv;
  *bv = W * inv;
  return t;
}

/* On CUDA a node (32 bytes; the array is cudaMalloc'd, so 16-byte aligned)
 * is read as two 16-byte vectors through the read-only cache: 2 loads per
 * box instead of 6 (PT_VECTOR_LOADS=0: the plain loads, for comparison).
 * The same values either way. */
#ifndef PT_VECTOR_LOADS
#define PT_VECTOR_LOADS 1
#endif
WS_DEVICE static inline void pt_node_box(const pt_bvh_node *n, pt_vec3 *lo, pt_vec3 *hi) {
#if WS_KERNEL_GPU && !defined(__HIPCC__) && PT_VECTOR_LOADS
  /* bytes 0..15: lo.x lo.y lo.z hi.x; 16..31: hi.y hi.z first count */
  const float4 a = __ldg((const float4 *)n), b = __ldg((const float4 *)n + 1);
  *lo = v3(a.x, a.y, a.z);
  *hi = v3(a.w, b.x, b.y);
#else
  *lo = n->lo;
  *hi = n->hi;
#endif
}

/* Entry distance of the ray into box [lo, hi] if it is below tmax and the
 * box is not behind tmin, else PT_INF. The far distance is widened by 2 ulp
 * (Ize 2013) so that rounding cannot cull a box whose triangle is hit. */
WS_DEVICE static inline float pt_box_hit(const pt_bvh_node *n, const pt_ray *r, float tmin,
                                         float tmax) {
  pt_vec3 lo, hi;
  pt_node_box(n, &lo, &hi);
  const float tx0 = (lo.x - r->o.x) * r->inv.x, tx1 = (hi.x - r->o.x) * r->inv.x;
  const float ty0 = (lo.y - r->o.y) * r->inv.y, ty1 = (hi.y - r->o.y) * r->inv.y;
  const float tz0 = (lo.z - r->o.z) * r->inv.z, tz1 = (hi.z - r->o.z) * r->inv.z;
  const float tnear = fmaxf(fmaxf(fminf(tx0, tx1), fminf(ty0, ty1)), fmaxf(fminf(tz0, tz1), tmin));
  const float tfar =
      fminf(fminf(fmaxf(tx0, tx1), fmaxf(ty0, ty1)), fminf(fmaxf(tz0, tz1), tmax)) * 1.00000024f;
  return tnear <= tfar ? tnear : PT_INF;
}

/* Whether the ray enters the root's box in (tmin, tmax), where every walk
 * starts; only for a scene with triangles (without, there are no nodes) */
WS_DEVICE static inline int pt_bvh_enters(const pt_scene *sc, const pt_ray *r, float tmin,
                                          float tmax) {
  return pt_box_hit(&WS_PTR(const pt_bvh_node, sc->nodes)[0], r, tmin, tmax) < PT_INF;
}

/* The next node from the stack whose box is still in front of the closest
 * hit (its distance is checked again against the then closest hit), or
 * false when the stack is empty. */
WS_DEVICE static inline int pt_bvh_pop(const pt_bvh_node *nodes, const uint32_t *stack, uint32_t *sp,
                                       const pt_ray *r, float tmin, float tbest, uint32_t *node) {
  while (*sp != 0u) {
    *node = stack[--*sp];
    if (pt_box_hit(&nodes[*node], r, tmin, tbest) < PT_INF)
      return 1;
  }
  return 0;
}

/* Closest triangle hit in (tmin, *tbest) through the BVH. Near child first
 * (the far one waits on the stack, at most one entry per level:
 * PT_BVH_MAX_DEPTH). Shape (Aila and Laine's while-while): each call of
 * pt_bvh_hit_leaf descends through inner nodes from *node until the ray
 * reaches a leaf, tests the leaf's triangles (lowering *tbest, setting *bu,
 * *bv, *best) and pops the next node; 0 when the walk is over. A ray visits
 * exactly the nodes and triangles, in the order, of one-node-per-step
 * traversal, so every backend finds the same hit. Measured on the H200
 * (engine scene, 1080p, docs/decisions.md): the closest-hit continuation
 * 8.54 -> 7.44 ms, but any-hit shadow rays 4.18 -> 6.05 ms, so pt_bvh_any
 * keeps the one-node-per-step shape. The walk's state is the caller's
 * scalars (registers once inlined): pt_bvh_hit keeps them in locals, the
 * stepped form (pt_bvh_walk) copies them in and out once per leaf, so a
 * walk in one call costs what it did before the stepped form existed. */
WS_DEVICE static inline int pt_bvh_hit_leaf(const pt_scene *sc, const pt_ray *r, float tmin,
                                            float *tbest, float *bu, float *bv, uint32_t *best,
                                            uint32_t *stack, uint32_t *sp, uint32_t *node) {
  const pt_bvh_node *nodes = WS_PTR(const pt_bvh_node, sc->nodes);
  const pt_tri *tris = WS_PTR(const pt_tri, sc->tris);
  uint32_t at = *node;
  for (;;) { /* inner nodes down to a leaf */
    const pt_bvh_node *n = &nodes[at];
    if (n->count != 0u)
      break;
    const uint32_t l = n->first, rr = n->first + 1u;
    const float tl = pt_box_hit(&nodes[l], r, tmin, *tbest);
    const float tr = pt_box_hit(&nodes[rr], r, tmin, *tbest);
    if (tl < PT_INF && tr < PT_INF) {
      at = tl <= tr ? l : rr;
      stack[(*sp)++] = tl <= tr ? rr : l;
    } else if (tl < PT_INF || tr < PT_INF) {
      at = tl < PT_INF ? l : rr;
    } else if (!pt_bvh_pop(nodes, stack, sp, r, tmin, *tbest, &at)) {
      return 0;
    }
  }
  const pt_bvh_node *n = &nodes[at];
  for (uint32_t i = n->first; i < n->first + n->count; ++i) {
    float u = 0.0f, v = 0.0f;
    const float t = pt_tri_hit(&tris[i], r, tmin, *tbest, &u, &v);
    if (t < *tbest) {
      *tbest = t;
      *bu = u;
      *bv = v;
      *best = i;
    }
  }
  if (!pt_bvh_pop(nodes, stack, sp, r, tmin, *tbest, &at))
    return 0;
  *node = at;
  return 1;
}

/* The whole walk: the closest triangle hit in (tmin, *tbest), which it
 * lowers; *bu, *bv on a hit; the triangle index or PT_NONE. */
WS_DEVICE static inline uint32_t pt_bvh_hit(const pt_scene *sc, const pt_ray *r, float tmin,
                                            float *tbest, float *bu, float *bv) {
  uint32_t stack[PT_BVH_MAX_DEPTH + 2u];
  uint32_t sp = 0u, best = PT_NONE, node = 0u;
  if (!pt_bvh_enters(sc, r, tmin, *tbest))
    return PT_NONE;
  while (pt_bvh_hit_leaf(sc, r, tmin, tbest, bu, bv, &best, stack, &sp, &node)) {
  }
  return best;
}

/* The same walk resumable a leaf at a time, for a stepped continuation
 * (kernel.h): pt_bvh_hit_begin, then pt_bvh_hit_step until it returns 0;
 * w->best is then the triangle index or PT_NONE, w->tbest its distance and
 * w->bu, w->bv the barycentric weights of b and c. */
typedef struct pt_bvh_walk {
  pt_ray r;
  float tmin, tbest, bu, bv;
  uint32_t best, node, sp, live;
  uint32_t stack[PT_BVH_MAX_DEPTH + 2u];
} pt_bvh_walk;

WS_DEVICE static inline void pt_bvh_hit_begin(const pt_scene *sc, const pt_ray *r, float tmin,
                                              float tbest, pt_bvh_walk *w) {
  w->r = *r;
  w->tmin = tmin;
  w->tbest = tbest;
  w->bu = 0.0f;
  w->bv = 0.0f;
  w->best = PT_NONE;
  w->node = 0u;
  w->sp = 0u;
  w->live = (uint32_t)pt_bvh_enters(sc, r, tmin, tbest);
}

WS_DEVICE static inline int pt_bvh_hit_step(const pt_scene *sc, pt_bvh_walk *w) {
  if (!w->live)
    return 0;
  const pt_ray r = w->r;
  float tbest = w->tbest, bu = w->bu, bv = w->bv;
  uint32_t best = w->best, sp = w->sp, node = w->node;
  w->live = (uint32_t)pt_bvh_hit_leaf(sc, &r, w->tmin, &tbest, &bu, &bv, &best, w->stack, &sp,
                                      &node);
  w->tbest = tbest;
  w->bu = bu;
  w->bv = bv;
  w->best = best;
  w->sp = sp;
  w->node = node;
  return (int)w->live;
}

/* Whether any triangle is hit in (tmin, tmax): the first hit found ends the
 * walk. One node per call of pt_bvh_any_node (a leaf or an inner node), near
 * child first; 0 when the walk is over, *hit then the answer. pt_bvh_any is
 * the walk in one call (state in locals), pt_any_walk the same walk
 * resumable a node at a time (pt_bvh_any_begin, pt_bvh_any_step until 0;
 * w->hit is the answer) for a stepped kernel. */
WS_DEVICE static inline int pt_bvh_any_node(const pt_scene *sc, const pt_ray *r, float tmin,
                                            float tmax, uint32_t *stack, uint32_t *sp,
                                            uint32_t *node, uint32_t *hit) {
  const pt_bvh_node *nodes = WS_PTR(const pt_bvh_node, sc->nodes);
  const pt_tri *tris = WS_PTR(const pt_tri, sc->tris);
  const pt_bvh_node *n = &nodes[*node];
  if (n->count != 0u) {
    for (uint32_t i = n->first; i < n->first + n->count; ++i) {
      float u = 0.0f, v = 0.0f;
      if (pt_tri_hit(&tris[i], r, tmin, tmax, &u, &v) < tmax) {
        *hit = 1u;
        return 0;
      }
    }
  } else {
    const uint32_t l = n->first, rr = n->first + 1u;
    const float tl = pt_box_hit(&nodes[l], r, tmin, tmax);
    const float tr = pt_box_hit(&nodes[rr], r, tmin, tmax);
    if (tl < PT_INF || tr < PT_INF) {
      if (tl < PT_INF && tr < PT_INF) {
        *node = tl <= tr ? l : rr;
        stack[(*sp)++] = tl <= tr ? rr : l;
      } else {
        *node = tl < PT_INF ? l : rr;
      }
      return 1;
    }
  }
  return pt_bvh_pop(nodes, stack, sp, r, tmin, tmax, node);
}

WS_DEVICE static inline int pt_bvh_any(const pt_scene *sc, const pt_ray *r, float tmin, float tmax) {
  uint32_t stack[PT_BVH_MAX_DEPTH + 2u];
  uint32_t sp = 0u, node = 0u, hit = 0u;
  if (!pt_bvh_enters(sc, r, tmin, tmax))
    return 0;
  while (pt_bvh_any_node(sc, r, tmin, tmax, stack, &sp, &node, &hit)) {
  }
  return (int)hit;
}

typedef struct pt_any_walk {
  pt_ray r;
  float tmin, tmax;
  uint32_t node, sp, live, hit;
  uint32_t stack[PT_BVH_MAX_DEPTH + 2u];
} pt_any_walk;

WS_DEVICE static inline void pt_bvh_any_begin(const pt_scene *sc, const pt_ray *r, float tmin,
                                              float tmax, pt_any_walk *w) {
  w->r = *r;
  w->tmin = tmin;
  w->tmax = tmax;
  w->node = 0u;
  w->sp = 0u;
  w->hit = 0u;
  w->live = (uint32_t)pt_bvh_enters(sc, r, tmin, tmax);
}

WS_DEVICE static inline int pt_bvh_any_step(const pt_scene *sc, pt_any_walk *w) {
  if (!w->live)
    return 0;
  const pt_ray r = w->r;
  uint32_t sp = w->sp, node = w->node, hit = w->hit;
  w->live = (uint32_t)pt_bvh_any_node(sc, &r, w->tmin, w->tmax, w->stack, &sp, &node, &hit);
  w->sp = sp;
  w->node = node;
  w->hit = hit;
  return (int)w->live;
}

/* Closest hit over the scene: prims (skipping prim `skip`; PT_NO_HIT: none)
 * in order, then triangles through the BVH. pt_closest returns the prim
 * index, PT_TRI_BIT | triangle, or PT_NO_HIT; *bu, *bv are set on a
 * triangle hit. For a stepped continuation the same in three parts:
 * pt_closest_begin (the prims, the walk's start), pt_bvh_hit_step on c->w
 * until 0, pt_closest_end (the same answer). */
WS_DEVICE static inline uint32_t pt_closest_prim(const pt_scene *sc, pt_vec3 o, pt_vec3 d,
                                                 uint32_t skip, float *bt) {
  const pt_prim *prims = WS_PTR(const pt_prim, sc->prims);
  uint32_t best = PT_NO_HIT;
  for (uint32_t i = 0; i < sc->prim_count; ++i) {
    if (i == skip)
      continue;
    const float t = pt_prim_hit(&prims[i], o, d, PT_EPS, *bt);
    if (t < *bt) {
      *bt = t;
      best = i;
    }
  }
  return best;
}

WS_DEVICE static inline uint32_t pt_closest(const pt_scene *sc, pt_vec3 o, pt_vec3 d, float tmax,
                                            uint32_t skip, float *t_out, float *bu, float *bv) {
  float bt = tmax;
  uint32_t best = pt_closest_prim(sc, o, d, skip, &bt);
  if (sc->tri_count != 0u) {
    const pt_ray r = pt_ray_make(o, d);
    const uint32_t tri = pt_bvh_hit(sc, &r, PT_EPS, &bt, bu, bv);
    if (tri != PT_NONE)
      best = PT_TRI_BIT | tri;
  }
  *t_out = bt;
  return best;
}

typedef struct pt_closest_walk {
  pt_bvh_walk w;
  uint32_t prim; /* closest prim, or PT_NO_HIT */
} pt_closest_walk;

WS_DEVICE static inline void pt_closest_begin(const pt_scene *sc, pt_vec3 o, pt_vec3 d, float tmax,
                                              uint32_t skip, pt_closest_walk *c) {
  float bt = tmax;
  c->prim = pt_closest_prim(sc, o, d, skip, &bt);
  if (sc->tri_count != 0u) {
    const pt_ray r = pt_ray_make(o, d);
    pt_bvh_hit_begin(sc, &r, PT_EPS, bt, &c->w);
  } else { /* no walk: what it leaves when it finds nothing */
    c->w.tbest = bt;
    c->w.best = PT_NONE;
    c->w.live = 0u;
  }
}

WS_DEVICE static inline uint32_t pt_closest_end(const pt_closest_walk *c, float *t_out, float *bu,
                                                float *bv) {
  *t_out = c->w.tbest;
  if (c->w.best == PT_NONE)
    return c->prim;
  *bu = c->w.bu;
  *bv = c->w.bv;
  return PT_TRI_BIT | c->w.best;
}

/* Whether any triangle lies on the segment (PT_EPS, tmax). */
WS_DEVICE static inline int pt_tri_occluded(const pt_scene *sc, pt_vec3 o, pt_vec3 d, float tmax) {
  if (sc->tri_count == 0u)
    return 0;
  const pt_ray r = pt_ray_make(o, d);
  return pt_bvh_any(sc, &r, PT_EPS, tmax);
}

#endif
