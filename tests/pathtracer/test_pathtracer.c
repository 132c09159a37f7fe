/* SPDX-License-Identifier: MIT */
/* Tests of the wavefront path tracer (examples/pathtracer, docs/pathtracer.md).
 *
 *   test_pathtracer --backend cpu|cuda|vulkan
 *       tiny renders (32x32, 4 spp, depth 6) on one backend:
 *       - wavefront (shadow pipeline at the default capacity R*b) and
 *         megakernel (inline NEE) images are bit-identical;
 *       - so are wavefront with inline NEE, partial admission on a small
 *         shadow pool, and SoA/fused/materialized variants;
 *       - the default-capacity run really had forced drains or blocked
 *         iterations, partial admission had blocked iterations;
 *       - the statistics add up (every item generated once, one shadow
 *         request per diffuse/glossy shading run, stage names);
 *       - energy: no NaN/Inf/negative value, mean radiance within bounds;
 *       - another seed gives another image;
 *       - shares of the image's rows (blocks, interleaved; docs/mpi.md)
 *         put together are bit-identical to the whole image.
 *   test_pathtracer --compare-backends cpu,cuda [--width W --height H --spp N]
 *                   [--scene FILE]
 *       renders the same image on both backends and reports the max/mean
 *       per-pixel difference; passes under the documented tolerance.
 *   test_pathtracer --scene FILE [--backend B]
 *       a real scene (docs/pathtracer.md "Scenes"), 32x32, 4 spp: wavefront
 *       (pipeline, inline NEE, SoA + fused) and megakernel bit-identical,
 *       every shading continuation ran, the shadow statistics add up, the
 *       mean radiance within the stated tolerance of the checked-in
 *       reference; skipped (77) when the scene's model files are missing.
 *   test_pathtracer --bvh
 *       the BVH (pt_scene.c, pt_geom.h) against brute force on random rays
 *       and triangles, and watertightness on a shared-edge grid.
 *
 * Exit status: 0 pass, 1 fail, 77 skipped (no device / kernels not built for
 * the backend), 2 usage. */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pt.h"
#include "pt_geom.h"
#include "pt_render.h"
#include "pt_scene.h"

#define SKIP 77

/* Energy bounds for the 32x32, 4 spp, depth 6, seed 1 test image: the mean
 * over pixels and channels of the linear radiance. The converged mean of the
 * scene at depth 6 is 0.2547 (64x64, 2048 spp); tiny renders of seeds 1..32
 * fall in [0.229, 0.268]. The bounds catch a doubled or lost strategy (NEE or
 * emission hits: each carries roughly half the energy), not noise. */
#define PT_TEST_MEAN_LO 0.20
#define PT_TEST_MEAN_HI 0.31

/* CPU vs CUDA tolerance (docs/pathtracer.md): both backends evaluate the
 * same IEEE single-precision operations without FMA contraction and without
 * libm transcendentals, so the images are expected to be identical; the
 * tolerance leaves room for a compiler that still reorders something: the mean
 * absolute difference per channel at most 1e-3, and at most 1 % of the
 * values differing by more than 1e-2 (a path that took another branch). */
#define PT_CMP_MEAN_TOL 1e-3
#define PT_CMP_OUTLIER_ABS 1e-2
#define PT_CMP_OUTLIER_FRACTION 0.01

static int failures = 0, checks = 0;

static void check(int ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void check(int ok, const char *fmt, ...) {
  va_list ap;
  checks += 1;
  va_start(ap, fmt);
  printf("  %s ", ok ? "ok  " : "FAIL");
  vprintf(fmt, ap);
  printf("\n");
  va_end(ap);
  if (!ok)
    failures += 1;
}

/* The Cornell box must render as before the scene work: FNV-1a 64 of the
 * float image of pt_options_default() at 32x32, 4 spp on the CPU, computed
 * with the code before the change (commit 6c0f40c). */
#define PT_CORNELL_32X32X4_FNV 0x8e823f3d083cb4feull

static uint64_t fnv1a(const void *p, size_t n) {
  const unsigned char *b = p;
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; ++i)
    h = (h ^ b[i]) * 0x100000001b3ull;
  return h;
}

static pt_options tiny(void) {
  pt_options o = pt_options_default();
  o.width = 32;
  o.height = 32;
  o.spp = 4;
  o.max_depth = 6;
  o.seed = 1;
  o.pool = 64; /* 32 pools per dispatch: admission has work to do (16 forced drains) */
  o.batch_spp = 2; /* two dispatches: the scheduler and pool are reused */
  return o;
}

static const char *status_msg(ws_status st, const char *err) {
  return err && err[0] ? err : ws_strerror(st);
}

typedef struct render {
  float *img;
  pt_stats stats;
  ws_status st;
} render;

static render run(ws_device *dev, const pt_options *o, const char *label) {
  render r;
  memset(&r, 0, sizeof r);
  const size_t n = (size_t)o->width * o->height * 3;
  r.img = calloc(n, sizeof(float));
  char err[512] = "";
  r.st = r.img ? pt_render(dev, o, r.img, &r.stats, err, sizeof err) : WS_ENOMEM;
  if (r.st != WS_OK)
    printf("  %s: render failed: %s\n", label, status_msg(r.st, err));
  return r;
}

static int same(const render *a, const render *b, const pt_options *o) {
  return a->st == WS_OK && b->st == WS_OK &&
         memcmp(a->img, b->img, (size_t)o->width * o->height * 3 * sizeof(float)) == 0;
}

static const pt_node_total *find(const pt_node_total *n, uint32_t count, const char *name) {
  for (uint32_t i = 0; i < count; ++i)
    if (strcmp(n[i].name, name) == 0)
      return &n[i];
  return NULL;
}

static uint64_t executed(const pt_node_total *n, uint32_t count, const char *name) {
  const pt_node_total *x = find(n, count, name);
  return x ? x->executed_count : UINT64_MAX;
}

static int open_device(const char *name, ws_device **dev) {
  ws_device_config dc;
  memset(&dc, 0, sizeof dc);
  dc.device_index = -1;
  if (ws_backend_parse(name, &dc.backend) != WS_OK) {
    fprintf(stderr, "test_pathtracer: unknown backend '%s'\n", name);
    return 2;
  }
  ws_status st = ws_device_create(&dc, dev);
  if (st != WS_OK) {
    printf("SKIP: no %s device (%s)\n", name, ws_strerror(st));
    return SKIP;
  }
  return 0;
}

static int test_backend(const char *backend) {
  ws_device *dev = NULL;
  int rc = open_device(backend, &dev);
  if (rc)
    return rc;
  printf("path tracer tests on %s\n", ws_device_name(dev));
  const pt_options base = tiny();
  const size_t n = (size_t)base.width * base.height * 3;

  /* 1. the wavefront with the shadow pipeline at the default capacity */
  render w = run(dev, &base, "wavefront");
  if (w.st == WS_ENOKERNEL) {
    printf("SKIP: the path tracer's kernels are not built for %s\n", backend);
    free(w.img);
    ws_device_destroy(dev);
    return SKIP;
  }
  check(w.st == WS_OK, "wavefront render (pool %u, shadow capacity %u = R*b)", w.stats.pool,
        w.stats.shadow_capacity);
  if (w.st != WS_OK) {
    free(w.img);
    ws_device_destroy(dev);
    return 1;
  }
  const pt_stats *s = &w.stats;
  printf("  wavefront: %" PRIu64 " iterations, %" PRIu64 " stage dispatches, %" PRIu64
         " forced drains, %" PRIu64 " blocked iterations\n",
         s->total.iteration_count, s->total.aux_dispatch_count, s->total.forced_drain_count,
         s->total.blocked_count);
  check(s->shadow_capacity == base.pool, "default shadow capacity is R * b = %u", base.pool);
  check(s->total.forced_drain_count + s->total.blocked_count > 0,
        "admission acted at the default capacity: %" PRIu64 " forced drains, %" PRIu64
        " blocked iterations",
        s->total.forced_drain_count, s->total.blocked_count);
  const uint64_t items = (uint64_t)base.width * base.height * base.spp;
  check(s->dispatches == 2 && s->total.generated_count == items &&
            executed(s->nodes, s->node_count, "<entry>") == items,
        "every path generated once (%" PRIu64 " in %u dispatches)", s->total.generated_count,
        s->dispatches);
  check(s->aux_count == 3 && find(s->aux, 3, "sample_light") == &s->aux[0] &&
            find(s->aux, 3, "trace_shadow") == &s->aux[1] &&
            find(s->aux, 3, "accumulate") == &s->aux[2],
        "three stage statistics: sample_light, trace_shadow, accumulate");
  const uint64_t producers = executed(s->nodes, s->node_count, "shade_diffuse") +
                             executed(s->nodes, s->node_count, "shade_glossy");
  const uint64_t sampled = executed(s->aux, s->aux_count, "sample_light");
  check(sampled == producers,
        "one shadow request per diffuse/glossy shading run (%" PRIu64 " = %" PRIu64 ")", sampled,
        producers);
  const uint64_t traced = executed(s->aux, s->aux_count, "trace_shadow");
  const uint64_t accumulated = executed(s->aux, s->aux_count, "accumulate");
  const uint64_t *sr = s->shadow;
  printf("  shadow rays: %" PRIu64 " rejected, %" PRIu64 " pane steps, %" PRIu64
         " occluded, %" PRIu64 " unoccluded\n",
         sr[PT_CTR_REJECTED], sr[PT_CTR_PANE], sr[PT_CTR_OCCLUDED], sr[PT_CTR_UNOCCLUDED]);
  check(sampled == sr[PT_CTR_REJECTED] + sr[PT_CTR_OCCLUDED] + sr[PT_CTR_UNOCCLUDED],
        "sample_light executed %" PRIu64 " = rejected + occluded + unoccluded", sampled);
  check(traced == sr[PT_CTR_PANE] + sr[PT_CTR_OCCLUDED] + sr[PT_CTR_UNOCCLUDED],
        "trace_shadow executed %" PRIu64 " = pane steps + occluded + unoccluded", traced);
  check(accumulated == sr[PT_CTR_UNOCCLUDED] && accumulated > 0,
        "accumulate executed %" PRIu64 " = unoccluded", accumulated);
  check(sr[PT_CTR_PANE] > 0, "trace_shadow self-looped through the pane %" PRIu64 " times",
        sr[PT_CTR_PANE]);
  check(executed(s->nodes, s->node_count, "intersect") >= items &&
            executed(s->nodes, s->node_count, "shade_dielectric") > 0 &&
            executed(s->nodes, s->node_count, "shade_emissive") > 0,
        "every continuation ran (intersect %" PRIu64 ")",
        executed(s->nodes, s->node_count, "intersect"));

  /* 2. energy sanity */
  uint64_t bad = 0;
  const double mean = pt_image_mean(w.img, base.width, base.height, &bad);
  check(bad == 0, "no NaN, Inf or negative value (%" PRIu64 " found)", bad);
  check(mean >= PT_TEST_MEAN_LO && mean <= PT_TEST_MEAN_HI,
        "mean radiance %.5f within [%.2f, %.2f]", mean, PT_TEST_MEAN_LO, PT_TEST_MEAN_HI);

  /* 3. the megakernel computes the same contributions: bit-identical */
  pt_options o = base;
  o.scheduler = WS_SCHEDULER_MEGAKERNEL;
  render m = run(dev, &o, "megakernel");
  check(same(&w, &m, &base), "megakernel image is bit-identical to the wavefront image");
  check(m.st == WS_OK && m.stats.aux_count == 0, "megakernel ran without auxiliary work");
  check(m.st == WS_OK && memcmp(m.stats.shadow, w.stats.shadow, sizeof w.stats.shadow) == 0,
        "megakernel shadow-ray outcomes equal the pipeline's");

  /* 4. wavefront with inline NEE */
  o = base;
  o.nee_mode = PT_NEE_INLINE;
  render wi = run(dev, &o, "wavefront inline");
  check(same(&w, &wi, &base), "wavefront with inline NEE: bit-identical");

  /* 5. partial admission on a shadow pool smaller than R * b */
  o = base;
  o.partial_admission = true;
  o.shadow_capacity = 24;
  render pa = run(dev, &o, "partial admission");
  check(same(&w, &pa, &base), "partial admission, shadow capacity 24 < R*b = %u: bit-identical",
        base.pool);
  check(pa.st == WS_OK && pa.stats.total.blocked_count > 0,
        "partial admission: %" PRIu64 " blocked iterations, %" PRIu64 " forced drains",
        pa.stats.total.blocked_count, pa.stats.total.forced_drain_count);

  /* 6. layouts and accounting modes, another pool size, verification on */
  o = base;
  o.layout = WS_LAYOUT_SOA;
  o.accounting = 2;
  o.pool = 100;
  o.verify = true;
  render sf = run(dev, &o, "soa fused");
  check(same(&w, &sf, &base), "SoA, fused accounting, pool 100, verified queues: bit-identical");
  o = base;
  o.accounting = 0;
  o.pool = 1024;
  o.batch_spp = 2;
  render mat = run(dev, &o, "materialized");
  check(same(&w, &mat, &base), "materialized accounting, pool 1024: bit-identical");
  /* the default is fused on CUDA and incremental elsewhere: both are named */
  o = base;
  o.accounting = 1;
  o.pool = 512;
  render inc = run(dev, &o, "incremental");
  check(same(&w, &inc, &base), "incremental accounting, pool 512: bit-identical");

  /* 7. the built-in scene did not change (the CPU's bits; other backends
   * compare against the CPU in --compare-backends) */
  if (strcmp(backend, "cpu") == 0) {
    pt_options d = pt_options_default();
    d.width = 32;
    d.height = 32;
    d.spp = 4;
    render c = run(dev, &d, "default");
    const uint64_t h = c.st == WS_OK ? fnv1a(c.img, (size_t)32 * 32 * 3 * sizeof(float)) : 0;
    check(h == PT_CORNELL_32X32X4_FNV,
          "the Cornell box image is the one before the scene work (FNV %016" PRIx64 ")", h);
    free(c.img);
  }

  /* 8. the seed matters */
  o = base;
  o.seed = 2;
  render s2 = run(dev, &o, "seed 2");
  check(s2.st == WS_OK && !same(&w, &s2, &base), "seed 2 gives another image");
  if (s2.st == WS_OK) {
    double m2 = pt_image_mean(s2.img, base.width, base.height, NULL);
    check(fabs(m2 - mean) < 0.25 * mean, "seed 2 mean %.5f close to seed 1 mean %.5f", m2, mean);
  }
  (void)n;

  /* 9. shares of the image (scale-out, docs/mpi.md): the rows of each rank's
   * share rendered apart and put back are the whole image, bit for bit, for
   * blocks and interleaved rows, with the batch default left open (each
   * share takes the whole image's); more ranks than rows leave some empty */
  {
    const struct {
      ws_partition_kind kind;
      uint32_t ranks;
    } splits[] = {{WS_PARTITION_BLOCKS, 2}, {WS_PARTITION_INTERLEAVED, 3},
                  {WS_PARTITION_INTERLEAVED, 40}};
    pt_options whole = base;
    whole.batch_spp = 0;
    render ref = run(dev, &whole, "whole (default batch)");
    for (size_t k = 0; k < sizeof splits / sizeof splits[0]; ++k) {
      float *img = calloc(n, sizeof(float));
      int ok = ref.st == WS_OK && img != NULL;
      uint64_t generated = 0;
      for (uint32_t r = 0; ok && r < splits[k].ranks; ++r) {
        ws_partition part;
        ok = ws_partition_range(base.height, splits[k].ranks, r, splits[k].kind, &part) == WS_OK;
        if (!ok || part.count == 0)
          continue;
        o = whole;
        o.row_first = (uint32_t)part.first;
        o.row_count = (uint32_t)part.count;
        o.row_stride = (uint32_t)part.stride;
        render sh = run(dev, &o, "share");
        ok = sh.st == WS_OK;
        for (uint64_t l = 0; ok && l < part.count; ++l)
          memcpy(img + ws_partition_index(&part, l) * base.width * 3, sh.img + l * base.width * 3,
                 (size_t)base.width * 3 * sizeof(float));
        generated += sh.stats.total.generated_count;
        free(sh.img);
      }
      check(ok && memcmp(img, ref.img, n * sizeof(float)) == 0 &&
                generated == (uint64_t)base.width * base.height * base.spp,
            "%s shares of %u ranks put together: bit-identical to the whole image, %" PRIu64
            " paths",
            splits[k].kind == WS_PARTITION_BLOCKS ? "block" : "interleaved", splits[k].ranks,
            generated);
      free(img);
    }
    char err[256] = "";
    o = base;
    o.row_first = 30;
    o.row_count = 2;
    o.row_stride = 2; /* rows 30 and 32 of 32 */
    check(pt_options_check(&o, err, sizeof err) != 0 && strstr(err, "32 rows") != NULL,
          "a share beyond the image is refused: %s", err);
    free(ref.img);
  }

  render *all[] = {&w, &m, &wi, &pa, &sf, &mat, &inc, &s2};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i)
    free(all[i]->img);
  ws_device_destroy(dev);
  printf("%d checks, %d failed\n", checks, failures);
  return failures ? 1 : 0;
}

/* ---- real scenes ---- */

/* The reference for scenes/engine-bunny.scene at 32x32, 4 spp, depth 6
 * (the test image): the converged mean radiance of the same 32x32 image,
 * computed once on the CPU with 4096 spp (seed 1000; docs/pathtracer.md).
 * Tiny renders of seeds 1..16 fall within PT_SCENE_MEAN_TOL (relative) of
 * it: the bound catches a lost or doubled strategy, not noise. */
#define PT_SCENE_REFERENCE_MEAN 0.27302
#define PT_SCENE_MEAN_TOL 0.15

/* Loads a scene; 77 (skip) when a model file of it is missing. */
static int load_scene(const char *file, pt_host_scene *sc) {
  char err[1024];
  pt_scene_init(sc);
  if (pt_scene_load(sc, file, err, sizeof err) != 0 || pt_scene_finish(sc, err, sizeof err) != 0) {
    const int missing = strstr(err, "cannot open") != NULL;
    printf("%s: %s\n", missing ? "SKIP" : "FAIL", err);
    if (missing)
      printf("  (scripts/deps installs assimp-testmodels and glmark2-data)\n");
    pt_scene_free(sc);
    return missing ? SKIP : 1;
  }
  return 0;
}

static int test_scene(const char *backend, const char *file, uint32_t seeds, double reference,
                      double tolerance) {
  pt_host_scene sc;
  int rc = load_scene(file, &sc);
  if (rc)
    return rc;
  ws_device *dev = NULL;
  if ((rc = open_device(backend, &dev)) != 0) {
    pt_scene_free(&sc);
    return rc;
  }
  printf("scene %s on %s: %u triangles, BVH %u nodes (depth %u), %u materials, %u lights\n", file,
         ws_device_name(dev), sc.tri_count, sc.node_count, sc.bvh_depth, sc.mat_count,
         sc.light_count);
  pt_options base = tiny();
  base.scene = &sc;
  base.pool = 256;
  if (seeds) { /* --seeds N: the spread of the test image's mean (to set the tolerance) */
    for (uint32_t k = 1; k <= seeds; ++k) {
      pt_options o = base;
      o.seed = k;
      o.scheduler = WS_SCHEDULER_MEGAKERNEL;
      render r = run(dev, &o, "seed");
      printf("seed %u mean %.6f\n", k, pt_image_mean(r.img, o.width, o.height, NULL));
      free(r.img);
    }
    ws_device_destroy(dev);
    pt_scene_free(&sc);
    return 0;
  }
  render w = run(dev, &base, "wavefront");
  if (w.st == WS_ENOKERNEL) {
    printf("SKIP: the path tracer's kernels are not built for %s\n", backend);
    free(w.img);
    ws_device_destroy(dev);
    pt_scene_free(&sc);
    return SKIP;
  }
  check(w.st == WS_OK, "wavefront render of the scene");
  const pt_stats *s = &w.stats;
  const uint64_t producers = executed(s->nodes, s->node_count, "shade_diffuse") +
                             executed(s->nodes, s->node_count, "shade_glossy") +
                             executed(s->nodes, s->node_count, "shade_principled");
  const uint64_t sampled = executed(s->aux, s->aux_count, "sample_light");
  check(w.st == WS_OK && sampled == producers,
        "one shadow request per diffuse/glossy/principled run (%" PRIu64 " = %" PRIu64 ")", sampled,
        producers);
  const uint64_t *sr = s->shadow;
  check(sampled == sr[PT_CTR_REJECTED] + sr[PT_CTR_OCCLUDED] + sr[PT_CTR_UNOCCLUDED] &&
            sr[PT_CTR_OCCLUDED] > 0 && sr[PT_CTR_UNOCCLUDED] > 0,
        "shadow rays: %" PRIu64 " occluded (triangles), %" PRIu64 " unoccluded, %" PRIu64
        " rejected",
        sr[PT_CTR_OCCLUDED], sr[PT_CTR_UNOCCLUDED], sr[PT_CTR_REJECTED]);
  check(executed(s->nodes, s->node_count, "shade_principled") > 0 &&
            executed(s->nodes, s->node_count, "shade_dielectric") > 0 &&
            executed(s->nodes, s->node_count, "shade_diffuse") > 0 &&
            executed(s->nodes, s->node_count, "shade_emissive") > 0,
        "principled %" PRIu64 ", dielectric %" PRIu64 ", diffuse %" PRIu64 ", emissive %" PRIu64
        " runs",
        executed(s->nodes, s->node_count, "shade_principled"),
        executed(s->nodes, s->node_count, "shade_dielectric"),
        executed(s->nodes, s->node_count, "shade_diffuse"),
        executed(s->nodes, s->node_count, "shade_emissive"));
  uint64_t bad = 0;
  const double mean = w.st == WS_OK ? pt_image_mean(w.img, base.width, base.height, &bad) : 0.0;
  check(w.st == WS_OK && bad == 0, "no NaN, Inf or negative value (%" PRIu64 " found)", bad);
  const double rel = fabs(mean - reference) / reference;
  check(rel <= tolerance, "mean radiance %.5f within %.0f%% of the reference %.5f (%.1f%%)", mean,
        tolerance * 100, reference, rel * 100);
  pt_options o = base;
  o.scheduler = WS_SCHEDULER_MEGAKERNEL;
  render m = run(dev, &o, "megakernel");
  check(same(&w, &m, &base), "megakernel image is bit-identical to the wavefront image");
  check(m.st == WS_OK && memcmp(m.stats.shadow, w.stats.shadow, sizeof w.stats.shadow) == 0,
        "megakernel shadow-ray outcomes equal the pipeline's");
  o = base;
  o.nee_mode = PT_NEE_INLINE;
  render wi = run(dev, &o, "wavefront inline");
  check(same(&w, &wi, &base), "wavefront with inline NEE: bit-identical");
  o = base;
  o.layout = WS_LAYOUT_SOA;
  o.accounting = 2;
  o.pool = 100;
  render sf = run(dev, &o, "soa fused");
  check(same(&w, &sf, &base), "SoA, fused accounting, pool 100: bit-identical");
  render *all[] = {&w, &m, &wi, &sf};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i)
    free(all[i]->img);
  ws_device_destroy(dev);
  pt_scene_free(&sc);
  printf("%d checks, %d failed\n", checks, failures);
  return failures ? 1 : 0;
}

/* ---- the BVH against brute force ---- */
static uint32_t rng_state = 12345u;
static float frand(void) { /* xorshift32 -> [0, 1) */
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 17;
  rng_state ^= rng_state << 5;
  return (float)(rng_state >> 8) * (1.0f / 16777216.0f);
}
static pt_vec3 rvec(float lo, float hi) {
  return v3(lo + (hi - lo) * frand(), lo + (hi - lo) * frand(), lo + (hi - lo) * frand());
}

static uint32_t brute(const pt_tri *tris, uint32_t n, const pt_ray *r, float tmax, float *tbest) {
  uint32_t best = PT_NONE;
  *tbest = tmax;
  for (uint32_t i = 0; i < n; ++i) {
    float u, v;
    const float t = pt_tri_hit(&tris[i], r, PT_EPS, *tbest, &u, &v);
    if (t < *tbest) {
      *tbest = t;
      best = i;
    }
  }
  return best;
}

static int test_bvh(void) {
  /* a soup of random triangles (small and large, overlapping), then a
   * 32 x 32 grid of quads (two triangles each) sharing edges and vertices */
  const uint32_t soup = 2000, grid = 32, n = soup + grid * grid * 2;
  pt_tri *tris = calloc(n, sizeof *tris);
  if (!tris)
    return 1;
  for (uint32_t i = 0; i < soup; ++i) {
    const pt_vec3 c = rvec(-1.0f, 1.0f);
    const float size = i % 50 == 0 ? 0.8f : 0.08f;
    tris[i].a = v_add(c, rvec(-size, size));
    tris[i].b = v_add(c, rvec(-size, size));
    tris[i].c = v_add(c, rvec(-size, size));
  }
  for (uint32_t y = 0; y < grid; ++y)
    for (uint32_t x = 0; x < grid; ++x) {
      const float s = 2.0f / (float)grid, x0 = -1.0f + s * (float)x, y0 = -1.0f + s * (float)y;
      const float z = -3.0f;
      pt_tri *t = &tris[soup + (y * grid + x) * 2];
      t[0].a = v3(x0, y0, z);
      t[0].b = v3(x0 + s, y0, z);
      t[0].c = v3(x0 + s, y0 + s, z);
      t[1].a = v3(x0, y0, z);
      t[1].b = v3(x0 + s, y0 + s, z);
      t[1].c = v3(x0, y0 + s, z);
    }
  pt_tri *orig = malloc((size_t)n * sizeof *orig);
  if (!orig)
    return 1;
  memcpy(orig, tris, (size_t)n * sizeof *tris);
  pt_bvh_node *nodes = NULL;
  uint32_t node_count = 0, depth = 0;
  const int built = pt_bvh_build(tris, NULL, n, &nodes, &node_count, &depth);
  check(built == 0, "BVH of %u triangles: %u nodes, depth %u", n, node_count, depth);
  /* every triangle in exactly one leaf, leaves inside their parents' boxes */
  uint32_t covered = 0, boxes_ok = 1;
  for (uint32_t i = 0; i < node_count; ++i) {
    const pt_bvh_node *nd = &nodes[i];
    if (nd->count) {
      covered += nd->count;
      for (uint32_t k = nd->first; k < nd->first + nd->count; ++k) {
        const pt_vec3 p[3] = {tris[k].a, tris[k].b, tris[k].c};
        for (int j = 0; j < 3; ++j)
          boxes_ok &= p[j].x >= nd->lo.x && p[j].x <= nd->hi.x && p[j].y >= nd->lo.y &&
                      p[j].y <= nd->hi.y && p[j].z >= nd->lo.z && p[j].z <= nd->hi.z;
      }
    }
  }
  check(covered == n && boxes_ok && depth < PT_BVH_MAX_DEPTH,
        "leaves hold %u of %u triangles, each inside its leaf's box", covered, n);
  pt_scene sc;
  memset(&sc, 0, sizeof sc);
  sc.tris = (uint64_t)(uintptr_t)tris;
  sc.nodes = (uint64_t)(uintptr_t)nodes;
  sc.tri_count = n;
  sc.node_count = node_count;
  /* random rays: closest hit and any hit agree with brute force */
  /* (brute force costs rays x triangles: 20 M tests, seconds in an ASan build) */
  uint32_t rays = 5000, mismatch = 0, any_mismatch = 0, hits = 0, step_mismatch = 0;
  for (uint32_t i = 0; i < rays; ++i) {
    const pt_vec3 o = rvec(-2.5f, 2.5f);
    const pt_vec3 d = v_norm(v_sub(rvec(-1.0f, 1.0f), o));
    const pt_ray r = pt_ray_make(o, d);
    const float tmax = i % 3 == 0 ? 1.5f : PT_INF;
    float tb, tv = tmax, u = 0, v = 0;
    const uint32_t b = brute(tris, n, &r, tmax, &tb);
    const uint32_t h = pt_bvh_hit(&sc, &r, PT_EPS, &tv, &u, &v);
    /* the same distance; the same triangle unless two tie at that distance */
    if (b != h && !(b != PT_NONE && h != PT_NONE && tb == tv))
      mismatch += 1;
    else if (b != PT_NONE && tb != tv)
      mismatch += 1;
    hits += b != PT_NONE;
    any_mismatch += (b != PT_NONE) != pt_tri_occluded(&sc, o, d, tmax);
    /* the stepped walks (CUDA's refilled launches) = the one-call walks (the
     * CPU and the megakernel), bit for bit */
    pt_bvh_walk w;
    pt_bvh_hit_begin(&sc, &r, PT_EPS, tmax, &w);
    while (pt_bvh_hit_step(&sc, &w)) {
    }
    step_mismatch += w.best != h || memcmp(&w.tbest, &tv, sizeof tv) != 0 ||
                     (h != PT_NONE && (memcmp(&w.bu, &u, sizeof u) != 0 ||
                                       memcmp(&w.bv, &v, sizeof v) != 0));
    pt_any_walk aw;
    pt_bvh_any_begin(&sc, &r, PT_EPS, tmax, &aw);
    while (pt_bvh_any_step(&sc, &aw)) {
    }
    step_mismatch += (int)aw.hit != pt_bvh_any(&sc, &r, PT_EPS, tmax);
  }
  check(step_mismatch == 0, "stepped BVH walks = one-call walks on %u random rays (%u differ)",
        rays, step_mismatch);
  check(mismatch == 0, "closest hit: BVH = brute force on %u random rays (%u hit; %u differ)", rays,
        hits, mismatch);
  check(any_mismatch == 0, "any hit (shadow rays): BVH = brute force (%u differ)", any_mismatch);
  /* watertight: rays through the grid's shared edges and vertices, from
   * random points in front of it, never slip through (the soup is moved away) */
  for (uint32_t i = 0; i < soup; ++i) /* (the build reordered tris; orig is as made) */
    orig[i].a = orig[i].b = orig[i].c = v3(50.0f, 50.0f, 50.0f);
  free(nodes);
  memcpy(tris, orig, (size_t)n * sizeof *tris);
  check(pt_bvh_build(tris, NULL, n, &nodes, &node_count, &depth) == 0, "BVH of the grid alone");
  sc.nodes = (uint64_t)(uintptr_t)nodes;
  sc.node_count = node_count;
  uint32_t leaks = 0, probes = 0, brute_leaks = 0;
  for (uint32_t y = 1; y < grid; ++y)
    for (uint32_t x = 1; x < grid; ++x)
      for (int k = 0; k < 3; ++k) { /* a vertex, a horizontal and a diagonal edge point */
        const float s = 2.0f / (float)grid;
        const float px = -1.0f + s * (float)x + (k == 1 ? 0.5f * s : 0.0f) + (k == 2 ? 0.25f * s : 0.0f);
        const float py = -1.0f + s * (float)y + (k == 2 ? 0.25f * s : 0.0f);
        const pt_vec3 o = v_add(v3(px, py, 0.0f), rvec(-0.3f, 0.3f));
        const pt_ray r = pt_ray_make(o, v_norm(v_sub(v3(px, py, -3.0f), o)));
        float t = PT_INF, u, v;
        probes += 1;
        leaks += pt_bvh_hit(&sc, &r, PT_EPS, &t, &u, &v) == PT_NONE;
        brute_leaks += brute(tris, n, &r, PT_INF, &t) == PT_NONE;
      }
  check(leaks == 0 && brute_leaks == 0,
        "watertight: %u rays through shared edges and vertices, %u slipped through (%u without "
        "the BVH)",
        probes, leaks, brute_leaks);
  free(nodes);
  free(tris);
  free(orig);
  printf("%d checks, %d failed\n", checks, failures);
  return failures ? 1 : 0;
}

static int compare_backends(const char *list, uint32_t width, uint32_t height, uint32_t spp,
                            const char *scene_file) {
  char a_name[32], b_name[32];
  const char *comma = strchr(list, ',');
  if (!comma || comma - list >= (long)sizeof a_name || strlen(comma + 1) >= sizeof b_name) {
    fprintf(stderr, "test_pathtracer: --compare-backends A,B\n");
    return 2;
  }
  memcpy(a_name, list, (size_t)(comma - list));
  a_name[comma - list] = '\0';
  strcpy(b_name, comma + 1);
  ws_device *da = NULL, *db = NULL;
  pt_host_scene sc;
  int rc;
  if (scene_file && (rc = load_scene(scene_file, &sc)) != 0)
    return rc;
  if ((rc = open_device(a_name, &da)) != 0) {
    if (scene_file)
      pt_scene_free(&sc);
    return rc;
  }
  if ((rc = open_device(b_name, &db)) != 0) {
    ws_device_destroy(da);
    if (scene_file)
      pt_scene_free(&sc);
    return rc;
  }
  pt_options o = pt_options_default();
  o.scene = scene_file ? &sc : NULL;
  o.width = width;
  o.height = height;
  o.spp = spp;
  o.batch_spp = spp; /* one summation order on both backends */
  printf("comparing %s (%s) and %s (%s): %ux%u, %u spp, depth %u\n", a_name, ws_device_name(da),
         b_name, ws_device_name(db), width, height, spp, o.max_depth);
  render ra = run(da, &o, a_name);
  render rb = run(db, &o, b_name);
  int result = 0;
  if (ra.st == WS_ENOKERNEL || rb.st == WS_ENOKERNEL) {
    printf("SKIP: the path tracer's kernels are not built for one of the backends\n");
    result = SKIP;
  } else if (ra.st != WS_OK || rb.st != WS_OK) {
    result = 1;
  } else {
    const size_t n = (size_t)width * height * 3;
    double sum = 0.0, max = 0.0, mean_a = 0.0;
    size_t outliers = 0, differ = 0, bad = 0;
    for (size_t i = 0; i < n; ++i) {
      if (!isfinite(ra.img[i]) || !isfinite(rb.img[i])) {
        bad += 1;
        continue;
      }
      const double d = fabs((double)ra.img[i] - (double)rb.img[i]);
      sum += d;
      mean_a += ra.img[i];
      if (d > max)
        max = d;
      differ += d != 0.0;
      outliers += d > PT_CMP_OUTLIER_ABS;
    }
    const double mean_d = sum / (double)n;
    printf("  mean radiance %.6f; per-channel |difference|: max %.3g, mean %.3g; %zu of %zu "
           "values differ, %zu by more than %.0e%s\n",
           mean_a / (double)n, max, mean_d, differ, n, outliers, PT_CMP_OUTLIER_ABS,
           differ == 0 ? " (bit-identical)" : "");
    check(bad == 0, "no NaN/Inf (%zu found)", bad);
    check(mean_d <= PT_CMP_MEAN_TOL, "mean |difference| %.3g <= %.0e", mean_d, PT_CMP_MEAN_TOL);
    check((double)outliers <= PT_CMP_OUTLIER_FRACTION * (double)n,
          "values off by more than %.0e: %zu <= %.0f%% of %zu", PT_CMP_OUTLIER_ABS, outliers,
          PT_CMP_OUTLIER_FRACTION * 100, n);
    printf("%d checks, %d failed\n", checks, failures);
    result = failures ? 1 : 0;
  }
  free(ra.img);
  free(rb.img);
  ws_device_destroy(da);
  ws_device_destroy(db);
  if (scene_file)
    pt_scene_free(&sc);
  return result;
}

/* Issue 18: the shadow pipeline with an append-allocated pool renders the
 * same image, bit for bit, as with the free stack (each shadow result lands
 * in its path's own NEE record, so the schedule cannot change a pixel),
 * while the pool really reclaims and compacts its extent. Three shapes: the
 * tiny render, a larger pool (more compaction), partial admission. */
static int test_shadow_pools(const char *backend) {
  ws_device *dev = NULL;
  int rc = open_device(backend, &dev);
  if (rc)
    return rc;
  printf("shadow pool allocations on %s\n", ws_device_name(dev));
  uint64_t compactions = 0;
  for (int shape = 0; shape < 3; ++shape) {
    pt_options o = tiny();
    if (shape == 1)
      o.pool = 256;
    if (shape == 2) {
      o.shadow_capacity = 48;
      o.partial_admission = true;
    }
    render a = run(dev, &o, "stack");
    if (a.st == WS_ENOKERNEL) {
      printf("SKIP: the path tracer's kernels are not built for %s\n", backend);
      free(a.img);
      ws_device_destroy(dev);
      return SKIP;
    }
    o.shadow_append = true;
    render b = run(dev, &o, "append");
    check(same(&a, &b, &o),
          "pool %u, shadow capacity %u%s: stack and append images bit-identical", o.pool,
          o.shadow_capacity ? o.shadow_capacity : o.pool,
          o.partial_admission ? ", partial admission" : "");
    check(b.st == WS_OK && b.stats.shadow_reclaims + b.stats.shadow_compactions > 0 &&
              b.stats.shadow_peak_extent <= b.stats.shadow_capacity,
          "append: peak extent %u <= %u, %" PRIu64 " reclaims, %" PRIu64 " compactions",
          b.stats.shadow_peak_extent, b.stats.shadow_capacity, b.stats.shadow_reclaims,
          b.stats.shadow_compactions);
    check(a.st == WS_OK && a.stats.shadow_reclaims + a.stats.shadow_compactions == 0,
          "stack: no append storage work");
    printf("  stack: %" PRIu64 " iterations, %" PRIu64 " forced drains; append: %" PRIu64
           " iterations, %" PRIu64 " forced drains\n",
           a.stats.total.iteration_count, a.stats.total.forced_drain_count,
           b.stats.total.iteration_count, b.stats.total.forced_drain_count);
    compactions += b.stats.shadow_compactions;
    free(a.img);
    free(b.img);
  }
  check(compactions > 0, "the append pool compacted (%" PRIu64 " compactions in all)",
        compactions);
  ws_device_destroy(dev);
  printf("%d checks, %d failed\n", checks, failures);
  return failures ? 1 : 0;
}

int main(int argc, char **argv) {
  const char *backend = getenv("WS_TEST_BACKEND") ? getenv("WS_TEST_BACKEND") : "cpu";
  const char *compare = NULL, *scene = NULL;
  uint32_t width = 64, height = 64, spp = 8, seeds = 0;
  double reference = PT_SCENE_REFERENCE_MEAN, tolerance = PT_SCENE_MEAN_TOL;
  int bvh = 0, shadow_pools = 0;
  for (int i = 1; i < argc; ++i) {
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(argv[i], "--backend") == 0 && v)
      backend = argv[++i];
    else if (strncmp(argv[i], "--backend=", 10) == 0)
      backend = argv[i] + 10;
    else if (strcmp(argv[i], "--compare-backends") == 0 && v)
      compare = argv[++i];
    else if (strcmp(argv[i], "--scene") == 0 && v)
      scene = argv[++i];
    else if (strcmp(argv[i], "--bvh") == 0)
      bvh = 1;
    else if (strcmp(argv[i], "--shadow-pools") == 0)
      shadow_pools = 1;
    else if (strcmp(argv[i], "--reference") == 0 && v)
      reference = strtod(argv[++i], NULL);
    else if (strcmp(argv[i], "--tolerance") == 0 && v)
      tolerance = strtod(argv[++i], NULL);
    else if (strcmp(argv[i], "--seeds") == 0 && v)
      seeds = (uint32_t)strtoul(argv[++i], NULL, 10);
    else if (strcmp(argv[i], "--width") == 0 && v)
      width = (uint32_t)strtoul(argv[++i], NULL, 10);
    else if (strcmp(argv[i], "--height") == 0 && v)
      height = (uint32_t)strtoul(argv[++i], NULL, 10);
    else if (strcmp(argv[i], "--spp") == 0 && v)
      spp = (uint32_t)strtoul(argv[++i], NULL, 10);
    else {
      fprintf(stderr,
              "usage: test_pathtracer [--backend cpu|cuda|vulkan] [--scene FILE [--seeds N]\n"
              "                       [--reference MEAN --tolerance FRACTION]]\n"
              "       test_pathtracer --compare-backends cpu,cuda [--width W --height H --spp N]"
              " [--scene FILE]\n"
              "       test_pathtracer --bvh\n"
              "       test_pathtracer --shadow-pools [--backend cpu|cuda|vulkan]\n");
      return 2;
    }
  }
  if (!width || !height || !spp) {
    fprintf(stderr, "test_pathtracer: width, height and spp must be positive\n");
    return 2;
  }
  if (bvh)
    return test_bvh();
  if (shadow_pools)
    return test_shadow_pools(backend);
  if (compare)
    return compare_backends(compare, width, height, spp, scene);
  if (scene && !(reference > 0.0 && tolerance > 0.0)) {
    fprintf(stderr, "test_pathtracer: --reference and --tolerance must be positive\n");
    return 2;
  }
  return scene ? test_scene(backend, scene, seeds, reference, tolerance) : test_backend(backend);
}
