/* SPDX-License-Identifier: MIT */
/* wavesched path tracer — host driver (pt_render.h). */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include "pt_render.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pt.h"
#include "pt_scene.h"
#include "wavesched/pool.h"

extern const ws_module_set pathtracer_modules;

WS_FRAME_DESC(pt_frame, PT_FIELDS)
WS_CONTINUATION_NAMES(pt_continuation_names, PT_CONTINUATIONS)
static const char *const pt_stage_names[PT_STAGE_COUNT] = {"sample_light", "trace_shadow",
                                                           "accumulate"};
static const char *const pt_stage_kernels[PT_STAGE_COUNT] = {
    "pt_sample_light_kernel", "pt_trace_shadow_kernel", "pt_accumulate_kernel"};
/* the producers of the shadow pipeline: one shadow request per shading run */
static const ws_aux_producer pt_producers[] = {
    {"shade_diffuse", 1}, {"shade_glossy", 1}, {"shade_principled", 1}};

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

pt_options pt_options_default(void) {
  pt_options o;
  memset(&o, 0, sizeof o);
  o.scheduler = WS_SCHEDULER_WAVEFRONT;
  o.width = 256;
  o.height = 256;
  o.spp = 16;
  o.max_depth = 6;
  o.rr_depth = 3;
  o.seed = 1;
  o.nee_mode = PT_NEE_PIPELINE;
  o.layout = PT_DEFAULT;
  o.tail_frames = PT_DEFAULT;
  o.accounting = -1;
  return o;
}

int pt_default_accounting(ws_backend_kind backend) {
  return backend == WS_BACKEND_CPU ? 1 : 2;
}

uint32_t pt_default_layout(ws_backend_kind backend) {
  return backend == WS_BACKEND_CPU ? WS_LAYOUT_AOS : WS_LAYOUT_SOA;
}

uint32_t pt_default_tail(uint32_t pool) { return pool / 32u; }

void pt_options_resolve(pt_options *o, ws_backend_kind backend) {
  if (!o->batch_spp)
    o->batch_spp = pt_default_batch(o, backend);
  if (!o->pool) {
    o->pool = pt_default_pool(backend);
    /* on a GPU, no more slots than a batch has paths (rounded up to 256):
     * slots that never hold a frame would only be allocated and scanned */
    const uint64_t items = (uint64_t)o->width * o->height *
                           (o->batch_spp < o->spp ? o->batch_spp : o->spp);
    const uint64_t need = (items + 255u) / 256u * 256u;
    if (backend != WS_BACKEND_CPU && need < o->pool)
      o->pool = (uint32_t)(need ? need : 256u);
  }
  if (o->layout == PT_DEFAULT)
    o->layout = pt_default_layout(backend);
  if (o->tail_frames == PT_DEFAULT)
    o->tail_frames = pt_default_tail(o->pool);
  if (o->accounting == -1)
    o->accounting = pt_default_accounting(backend);
}

int pt_options_check(const pt_options *o, char *err, size_t err_cap) {
#define PT_BAD(...)                                                                        \
  do {                                                                                     \
    if (err && err_cap)                                                                    \
      snprintf(err, err_cap, __VA_ARGS__);                                                 \
    return -1;                                                                             \
  } while (0)
  if (!o->width || !o->height)
    PT_BAD("--width and --height must be positive (got %ux%u)", o->width, o->height);
  const uint64_t pixels = (uint64_t)o->width * o->height;
  if (pixels > PT_MAX_PIXELS)
    PT_BAD("--width x --height: %ux%u = %" PRIu64 " pixels is above the limit of %u pixels",
           o->width, o->height, pixels, PT_MAX_PIXELS);
  if (!o->spp)
    PT_BAD("--spp must be positive");
  if (!o->max_depth || o->max_depth > PT_MAX_DEPTH)
    PT_BAD("--max-depth %u is outside [1, %u]", o->max_depth, PT_MAX_DEPTH);
  if (o->pool > PT_MAX_POOL)
    PT_BAD("--pool %u is above the limit of %u resident frames", o->pool, PT_MAX_POOL);
  if (o->shadow_capacity > PT_MAX_POOL)
    PT_BAD("--shadow-capacity %u is above the limit of %u slots", o->shadow_capacity,
           PT_MAX_POOL);
  if (o->layout > WS_LAYOUT_SOA && o->layout != PT_DEFAULT)
    PT_BAD("--layout: unknown layout %u", o->layout);
  if (o->accounting < -1 || o->accounting > 2)
    PT_BAD("--accounting: unknown mode %d", o->accounting);
  if (o->row_count &&
      (!o->row_stride ||
       o->row_first + (uint64_t)(o->row_count - 1) * o->row_stride >= o->height))
    PT_BAD("image share: %u rows from row %u every %u rows do not fit in %u rows",
           o->row_count, o->row_first, o->row_stride, o->height);
  const uint64_t batch = o->batch_spp ? (o->batch_spp < o->spp ? o->batch_spp : o->spp) : 1;
  const uint64_t items = pixels * batch;
  if (items > 0xffffffffull)
    PT_BAD("--batch-spp %" PRIu64 ": a batch of %" PRIu64 " paths is above the limit of %u "
           "paths per dispatch",
           batch, items, 0xffffffffu);
  const uint64_t bytes = items * (o->max_depth + 1u) * 3u * sizeof(float);
  if (bytes > PT_MAX_BATCH_BYTES)
    PT_BAD("--batch-spp %" PRIu64 " with --max-depth %u: a batch's radiance and NEE buffers "
           "need %" PRIu64 " bytes, above the limit of %llu bytes",
           batch, o->max_depth, bytes, (unsigned long long)PT_MAX_BATCH_BYTES);
#undef PT_BAD
  return 0;
}

uint32_t pt_default_pool(ws_backend_kind backend) {
  return backend == WS_BACKEND_CPU ? 16384u : backend == WS_BACKEND_CUDA ? 1u << 22 : 1u << 20;
}

uint32_t pt_default_batch(const pt_options *o, ws_backend_kind backend) {
  const uint64_t pixels = (uint64_t)o->width * o->height;
  uint64_t b;
  if (backend != WS_BACKEND_CUDA) {
    const uint64_t target = backend == WS_BACKEND_CPU ? 1u << 18 : 1u << 22;
    b = pixels ? (target + pixels - 1) / pixels : 1;
  } else {
    b = pixels ? (1u << 24) / pixels : 1;
    /* within the batch buffers' limit (pt_options_check) */
    const uint64_t per_spp = pixels * (o->max_depth + 1u) * 3u * sizeof(float);
    if (per_spp && b > PT_MAX_BATCH_BYTES / per_spp)
      b = PT_MAX_BATCH_BYTES / per_spp;
  }
  if (b < 1)
    b = 1;
  if (b > o->spp)
    b = o->spp;
  return (uint32_t)b;
}

/* ---- the render ---- */
typedef struct pt_ctx {
  ws_device *dev;
  pt_options o;
  char *err;
  size_t err_cap;
  ws_scheduler *sched;
  ws_pool *pool;
  ws_kernel stage_k[PT_STAGE_COUNT], resolve_k;
  ws_buffer *scene, *prims, *mats, *lights, *tris, *shade, *nodes, *textures, *texels;
  ws_buffer *args, *radiance, *nee, *accum, *counters;
  uint64_t args_addr;
  uint32_t capacity;
} pt_ctx;

static ws_status fail(pt_ctx *c, ws_status st, const char *fmt, ...) {
  if (c->err && c->err_cap) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->err, c->err_cap, fmt, ap);
    va_end(ap);
  }
  return st;
}

static ws_status run_stage(void *user, ws_pool *pool, uint32_t stage) {
  pt_ctx *c = user;
  pt_stage_args sa;
  memset(&sa, 0, sizeof sa);
  sa.args = c->args_addr;
  sa.pool = ws_pool_get_view(pool);
  return ws_kernel_launch(&c->stage_k[stage], c->capacity, &sa, sizeof sa);
}

static void add_node(pt_node_total *t, const ws_node_stats *n) {
  if (!t->name[0])
    snprintf(t->name, sizeof t->name, "%s", n->name ? n->name : "?");
  t->dispatch_count += n->dispatch_count;
  t->executed_count += n->executed_count;
  if (n->peak_queued_count > t->peak_queued_count)
    t->peak_queued_count = n->peak_queued_count;
}

static void collect(const ws_scheduler *s, pt_stats *st) {
  ws_dispatch_stats d;
  ws_scheduler_dispatch_stats(s, &d);
  ws_dispatch_stats *t = &st->total;
  t->iteration_count += d.iteration_count;
  t->generated_count += d.generated_count;
  t->resumed_count += d.resumed_count;
  t->scanned_slot_count += d.scanned_slot_count;
  if (d.max_active_count > t->max_active_count)
    t->max_active_count = d.max_active_count;
  t->aux_dispatch_count += d.aux_dispatch_count;
  t->forced_drain_count += d.forced_drain_count;
  t->blocked_count += d.blocked_count;
  t->host_sync_count += d.host_sync_count;
  t->tail_item_count += d.tail_item_count;
  t->loop = d.loop;
  t->elapsed_ms += d.elapsed_ms;
  /* device time: a sum over dispatches, unknown (-1) once any is unknown */
  t->device_ms = d.device_ms < 0 || t->device_ms < 0 ? -1.0 : t->device_ms + d.device_ms;
  uint32_t nn = ws_scheduler_node_count(s);
  if (nn > PT_MAX_NODES)
    nn = PT_MAX_NODES;
  st->node_count = nn;
  for (uint32_t j = 0; j < nn; ++j) {
    ws_node_stats ns;
    if (ws_scheduler_node_stats(s, j, &ns) == WS_OK)
      add_node(&st->nodes[j], &ns);
  }
  uint32_t na = ws_scheduler_aux_stats_count(s);
  if (na > PT_MAX_NODES)
    na = PT_MAX_NODES;
  st->aux_count = na;
  for (uint32_t j = 0; j < na; ++j) {
    ws_node_stats ns;
    if (ws_scheduler_aux_stats(s, j, &ns) == WS_OK)
      add_node(&st->aux[j], &ns);
  }
}

static ws_status check_options(pt_ctx *c) {
  if (pt_options_check(&c->o, c->err, c->err_cap) != 0)
    return WS_EINVAL;
  return WS_OK;
}

static void destroy_ctx(pt_ctx *c) {
  ws_scheduler_destroy(c->sched);
  ws_pool_destroy(c->pool);
  ws_buffer_destroy(c->scene);
  ws_buffer_destroy(c->prims);
  ws_buffer_destroy(c->mats);
  ws_buffer_destroy(c->lights);
  ws_buffer_destroy(c->tris);
  ws_buffer_destroy(c->shade);
  ws_buffer_destroy(c->nodes);
  ws_buffer_destroy(c->textures);
  ws_buffer_destroy(c->texels);
  ws_buffer_destroy(c->args);
  ws_buffer_destroy(c->radiance);
  ws_buffer_destroy(c->nee);
  ws_buffer_destroy(c->accum);
  ws_buffer_destroy(c->counters);
}

ws_status pt_render(ws_device *dev, const pt_options *opts, float *image, pt_stats *stats,
                    char *err, size_t err_cap) {
  pt_ctx c;
  memset(&c, 0, sizeof c);
  c.dev = dev;
  c.o = *opts;
  c.err = err;
  c.err_cap = err_cap;
  if (err && err_cap)
    err[0] = '\0';
  pt_stats local;
  pt_stats *st = stats ? stats : &local;
  memset(st, 0, sizeof *st);
  ws_status rc;
  if ((rc = check_options(&c)) != WS_OK)
    return rc;
  pt_options *o = &c.o;
  if (o->scheduler == WS_SCHEDULER_MEGAKERNEL)
    o->nee_mode = PT_NEE_INLINE; /* a megakernel takes no auxiliary work */
  pt_options_resolve(o, ws_device_backend(dev));
  if (o->batch_spp > o->spp)
    o->batch_spp = o->spp;
  if ((rc = check_options(&c)) != WS_OK) /* again, with the resolved defaults */
    return rc;
  const int pipeline = o->nee_mode == PT_NEE_PIPELINE;
  c.capacity = o->shadow_capacity ? o->shadow_capacity : o->pool; /* R * b, b = 1 */
  if (!o->row_count) {
    o->row_first = 0;
    o->row_count = o->height;
    o->row_stride = 1;
  }
  const uint32_t pixels = o->width * o->row_count; /* this share's */
  const uint64_t max_items = (uint64_t)pixels * o->batch_spp;
  if (max_items > 0xffffffffu)
    return fail(&c, WS_EINVAL, "a batch of %" PRIu64 " paths is too large", max_items);

  /* scene: the caller's (finished), or the built-in Cornell box */
  pt_host_scene own;
  pt_scene_init(&own);
  const pt_host_scene *hs = o->scene;
  if (!hs) {
    if (pt_scene_add_cornell(&own, 1) || pt_scene_finish(&own, c.err, c.err_cap)) {
      pt_scene_free(&own);
      return fail(&c, WS_ENOMEM, "out of memory for the built-in scene");
    }
    hs = &own;
  } else if (!hs->finished) {
    return fail(&c, WS_EINVAL, "the scene was not finished (pt_scene_finish)");
  }
  pt_scene sc;
  memset(&sc, 0, sizeof sc);
  pt_scene_camera(hs, o->width, o->height, &sc.camera);
  sc.prim_count = hs->prim_count;
  sc.material_count = hs->mat_count;
  sc.light_count = hs->light_count;
  sc.tri_count = hs->tri_count;
  sc.node_count = hs->node_count;
  sc.env_kind = hs->env_kind;
  sc.env_zenith = hs->env_zenith;
  sc.env_horizon = hs->env_horizon;
#define PT_TRY(call, what)                                                                 \
  do {                                                                                     \
    if ((rc = (call)) != WS_OK) {                                                          \
      fail(&c, rc, "%s: %s (%s)", what, ws_strerror(rc), ws_device_last_error(dev));       \
      goto out;                                                                            \
    }                                                                                      \
  } while (0)
/* an array of the scene at a device address (empty arrays get a small buffer
 * that nothing reads, so every address is valid) */
#define PT_UPLOAD(buf, ptr, count, what)                                                   \
  do {                                                                                     \
    const size_t bytes_ = (size_t)(count) * sizeof *(ptr);                                 \
    PT_TRY(ws_buffer_create(dev, bytes_ ? bytes_ : 64, &(buf)), what " buffer");           \
    if (bytes_)                                                                            \
      PT_TRY(ws_buffer_write((buf), 0, (ptr), bytes_), what " upload");                    \
  } while (0)
  if ((rc = ws_kernel_find(dev, &pathtracer_modules, "pt_resolve", &c.resolve_k)) != WS_OK) {
    fail(&c, rc, "the path tracer's kernels are not built for the %s backend: %s",
         ws_backend_name(ws_device_backend(dev)), ws_strerror(rc));
    goto out;
  }
  for (uint32_t s = 0; s < PT_STAGE_COUNT; ++s)
    PT_TRY(ws_kernel_find(dev, &pathtracer_modules, pt_stage_kernels[s], &c.stage_k[s]),
           "stage kernel");
  PT_UPLOAD(c.prims, hs->prims, hs->prim_count, "primitive");
  PT_UPLOAD(c.mats, hs->mats, hs->mat_count, "material");
  PT_UPLOAD(c.lights, hs->lights, hs->light_count, "light");
  PT_UPLOAD(c.tris, hs->tris, hs->tri_count, "triangle");
  PT_UPLOAD(c.shade, hs->shade, hs->tri_count, "triangle shading");
  PT_UPLOAD(c.nodes, hs->nodes, hs->node_count, "BVH");
  PT_UPLOAD(c.textures, hs->textures, hs->tex_count, "texture");
  PT_UPLOAD(c.texels, hs->texels, hs->texel_count, "texel");
  PT_TRY(ws_buffer_create(dev, sizeof sc, &c.scene), "scene buffer");
  sc.prims = ws_buffer_address(c.prims);
  sc.materials = ws_buffer_address(c.mats);
  sc.lights = ws_buffer_address(c.lights);
  sc.tris = ws_buffer_address(c.tris);
  sc.tri_shade = ws_buffer_address(c.shade);
  sc.nodes = ws_buffer_address(c.nodes);
  sc.textures = ws_buffer_address(c.textures);
  sc.texels = ws_buffer_address(c.texels);
  PT_TRY(ws_buffer_write(c.scene, 0, &sc, sizeof sc), "scene upload");
#undef PT_UPLOAD

  /* per-batch buffers */
  PT_TRY(ws_buffer_create(dev, sizeof(pt_args), &c.args), "argument buffer");
  PT_TRY(ws_buffer_create(dev, (size_t)max_items * 3 * sizeof(float), &c.radiance),
         "radiance buffer");
  PT_TRY(ws_buffer_create(dev, (size_t)max_items * o->max_depth * 3 * sizeof(float), &c.nee),
         "NEE buffer");
  PT_TRY(ws_buffer_create(dev, (size_t)pixels * 3 * sizeof(float), &c.accum), "image buffer");
  PT_TRY(ws_buffer_fill_u32(c.accum, 0, 0, (size_t)pixels * 3), "image clear");
  PT_TRY(ws_buffer_create(dev, PT_COUNTERS * sizeof(uint32_t), &c.counters), "counter buffer");
  c.args_addr = ws_buffer_address(c.args);

  /* scheduler and the shadow pipeline */
  ws_scheduler_config cfg = ws_scheduler_config_default();
  cfg.kind = o->scheduler;
  cfg.resident_frames = o->pool;
  cfg.layout = o->layout;
  cfg.tail_frames = o->tail_frames;
  cfg.accounting = (ws_accounting)o->accounting;
  cfg.statistics = true;
  cfg.verify_queues = o->verify;
  cfg.partial_admission = o->partial_admission;
  const ws_coroutine_desc co = {"pt_path",
                                &pathtracer_modules,
                                &pt_frame_ws_desc,
                                sizeof(pt_args),
                                PT_CONTINUATION_COUNT,
                                pt_continuation_names};
  if ((rc = ws_scheduler_create(dev, &co, &cfg, &c.sched)) != WS_OK) {
    fail(&c, rc, "scheduler: %s (%s)", ws_strerror(rc), ws_device_last_error(dev));
    goto out;
  }
  if (pipeline) {
    const ws_pool_config pc = {"shadow",
                               c.capacity,
                               PT_STAGE_COUNT,
                               pt_stage_names,
                               (uint32_t)((sizeof(pt_shadow) + 7) & ~(size_t)7),
                               pt_producers,
                               3,
                               run_stage,
                               &c};
    PT_TRY(ws_pool_create(dev, &pc, &c.pool), "shadow pool");
    /* before the view and the work are taken: both carry the allocation */
    PT_TRY(ws_pool_set_allocation(c.pool, o->shadow_append ? WS_POOL_APPEND : WS_POOL_STACK),
           "shadow pool allocation");
    /* the same stages as kernels, so the pipeline runs in the device loop */
    pt_stage_args sa[PT_STAGE_COUNT];
    ws_aux_stage_kernel sk[PT_STAGE_COUNT];
    for (uint32_t s = 0; s < PT_STAGE_COUNT; ++s) {
      memset(&sa[s], 0, sizeof sa[s]);
      sa[s].args = c.args_addr;
      sa[s].pool = ws_pool_get_view(c.pool);
      sk[s].kernel = c.stage_k[s];
      sk[s].args = &sa[s];
      sk[s].args_size = sizeof sa[s];
      sk[s].count = c.capacity;
    }
    PT_TRY(ws_pool_set_stage_kernels(c.pool, sk), "shadow pool stage kernels");
    if ((rc = ws_scheduler_add_aux(c.sched, ws_pool_work(c.pool))) != WS_OK) {
      fail(&c, rc, "shadow pipeline: %s", ws_scheduler_last_error(c.sched));
      goto out;
    }
  }
  st->pool = o->scheduler == WS_SCHEDULER_WAVEFRONT ? o->pool : 0;
  st->shadow_capacity = pipeline ? c.capacity : 0;
  st->batch_spp = o->batch_spp;
  st->shadow_counted = !o->no_shadow_counters;
  st->paths = (uint64_t)pixels * o->spp;

  pt_args a;
  memset(&a, 0, sizeof a);
  a.scene = ws_buffer_address(c.scene);
  a.radiance = ws_buffer_address(c.radiance);
  a.nee = ws_buffer_address(c.nee);
  if (c.pool)
    a.pool = ws_pool_get_view(c.pool);
  a.width = o->width;
  a.height = o->height;
  a.max_depth = o->max_depth;
  a.rr_depth = o->rr_depth;
  a.seed = o->seed;
  a.nee_mode = (uint32_t)o->nee_mode;
  a.row_first = o->row_first;
  a.row_stride = o->row_stride;
  a.counters = o->no_shadow_counters ? 0 : ws_buffer_address(c.counters);

  const double t0 = now_ms();
  for (uint32_t done = 0; done < o->spp;) {
    const uint32_t b = o->spp - done < o->batch_spp ? o->spp - done : o->batch_spp;
    const uint32_t items = pixels * b;
    a.batch_spp = b;
    a.sample_base = done;
    PT_TRY(ws_buffer_write(c.args, 0, &a, sizeof a), "argument upload");
    PT_TRY(ws_buffer_fill_u32(c.nee, 0, 0, (size_t)items * o->max_depth * 3), "NEE clear");
    PT_TRY(ws_buffer_fill_u32(c.counters, 0, 0, PT_COUNTERS), "counter clear");
    if ((rc = ws_scheduler_dispatch(c.sched, items, &a, sizeof a)) != WS_OK) {
      fail(&c, rc, "dispatch (samples %u..%u): %s: %s", done, done + b - 1, ws_strerror(rc),
           ws_scheduler_last_error(c.sched));
      goto out;
    }
    if (c.pool && ws_pool_errors(c.pool) != 0) {
      rc = WS_EPROTO_CLIENT;
      fail(&c, rc, "shadow pool reported %u publish/release errors", ws_pool_errors(c.pool));
      goto out;
    }
    collect(c.sched, st);
    if (c.pool) {
      ws_pool_storage ps;
      PT_TRY(ws_pool_storage_stats(c.pool, &ps), "shadow pool storage statistics");
      st->shadow_reclaims += ps.reclaims;
      st->shadow_compactions += ps.compactions;
      if (ps.peak_extent > st->shadow_peak_extent)
        st->shadow_peak_extent = ps.peak_extent;
    }
    st->dispatches += 1;
    pt_resolve_args ra;
    memset(&ra, 0, sizeof ra);
    ra.radiance = a.radiance;
    ra.nee = a.nee;
    ra.accum = ws_buffer_address(c.accum);
    ra.pixels = pixels;
    ra.batch_spp = b;
    ra.max_depth = o->max_depth;
    PT_TRY(ws_kernel_launch(&c.resolve_k, pixels, &ra, sizeof ra), "resolve");
    uint32_t ctr[PT_COUNTERS];
    PT_TRY(ws_buffer_read(c.counters, 0, ctr, sizeof ctr), "counter read");
    for (uint32_t k = 0; k < PT_COUNTERS; ++k)
      st->shadow[k] += ctr[k];
    done += b;
    if (o->progress)
      o->progress(o->progress_user, done, o->spp, now_ms() - t0);
  }
  st->render_ms = now_ms() - t0;
  st->dispatch_ms = st->total.elapsed_ms;

  PT_TRY(ws_buffer_read(c.accum, 0, image, (size_t)pixels * 3 * sizeof(float)), "image read");
  const float inv = 1.0f / (float)o->spp;
  for (size_t i = 0; i < (size_t)pixels * 3; ++i)
    image[i] *= inv;
  rc = WS_OK;
#undef PT_TRY
out:
  destroy_ctx(&c);
  pt_scene_free(&own);
  return rc;
}

/* ---- statistics output ---- */
void pt_print_stats(FILE *f, const pt_stats *s) {
  const ws_dispatch_stats *d = &s->total;
  fprintf(f,
          "dispatch: %u dispatches, %" PRIu64 " iterations, %" PRIu64 " generated, %" PRIu64
          " resumed, %" PRIu64 " slots scanned, max %" PRIu64 " active, %.3f ms",
          s->dispatches, d->iteration_count, d->generated_count, d->resumed_count,
          d->scanned_slot_count, d->max_active_count, d->elapsed_ms);
  if (d->device_ms >= 0)
    fprintf(f, " (device %.3f ms)", d->device_ms);
  fprintf(f, "; %s loop, %" PRIu64 " host synchronizations, %" PRIu64 " items in the tail\n",
          d->loop == WS_LOOP_DEVICE ? "device" : "host", d->host_sync_count, d->tail_item_count);
  if (s->aux_count)
    fprintf(f,
            "auxiliary: %" PRIu64 " stage dispatches, %" PRIu64 " forced drains, %" PRIu64
            " blocked iterations\n",
            d->aux_dispatch_count, d->forced_drain_count, d->blocked_count);
  fprintf(f, "%-6s %-24s %12s %14s %12s\n", "kind", "name", "dispatches", "executed", "peak");
  for (uint32_t j = 0; j < s->node_count; ++j)
    fprintf(f, "%-6s %-24s %12" PRIu64 " %14" PRIu64 " %12" PRIu64 "\n", "main", s->nodes[j].name,
            s->nodes[j].dispatch_count, s->nodes[j].executed_count, s->nodes[j].peak_queued_count);
  for (uint32_t j = 0; j < s->aux_count; ++j)
    fprintf(f, "%-6s %-24s %12" PRIu64 " %14" PRIu64 " %12" PRIu64 "\n", "aux", s->aux[j].name,
            s->aux[j].dispatch_count, s->aux[j].executed_count, s->aux[j].peak_queued_count);
  if (s->shadow_counted)
    fprintf(f,
          "shadow rays: %" PRIu64 " reached the light, %" PRIu64 " occluded, %" PRIu64
          " steps through the glass pane, %" PRIu64 " light samples rejected\n",
          s->shadow[PT_CTR_UNOCCLUDED], s->shadow[PT_CTR_OCCLUDED], s->shadow[PT_CTR_PANE],
          s->shadow[PT_CTR_REJECTED]);
}

static void json_nodes(FILE *f, const char *key, const pt_node_total *n, uint32_t count) {
  fprintf(f, "  \"%s\": [", key);
  for (uint32_t j = 0; j < count; ++j)
    fprintf(f,
            "%s\n    {\"name\": \"%s\", \"dispatch_count\": %" PRIu64 ", \"executed_count\": %" PRIu64
            ", \"peak_queued_count\": %" PRIu64 "}",
            j ? "," : "", n[j].name, n[j].dispatch_count, n[j].executed_count,
            n[j].peak_queued_count);
  fprintf(f, "%s]", count ? "\n  " : "");
}

int pt_write_stats_json(const char *path, const pt_options *o, const char *backend,
                        const pt_stats *s) {
  FILE *f = fopen(path, "w");
  if (!f)
    return -1;
  const ws_dispatch_stats *d = &s->total;
  fprintf(f, "{\n");
  fprintf(f,
          "  \"config\": {\"backend\": \"%s\", \"scheduler\": \"%s\", \"nee\": \"%s\", "
          "\"width\": %u, \"height\": %u, \"spp\": %u, \"max_depth\": %u, \"seed\": %u, "
          "\"pool\": %u, \"shadow_capacity\": %u, \"partial_admission\": %s, \"batch_spp\": %u},\n",
          backend, o->scheduler == WS_SCHEDULER_MEGAKERNEL ? "megakernel" : "wavefront",
          s->aux_count ? "pipeline" : "inline", o->width, o->height, o->spp, o->max_depth,
          o->seed, s->pool, s->shadow_capacity, o->partial_admission ? "true" : "false",
          s->batch_spp);
  fprintf(f,
          "  \"totals\": {\"dispatches\": %u, \"paths\": %" PRIu64 ", \"render_ms\": %.3f, "
          "\"paths_per_second\": %.1f, \"iteration_count\": %" PRIu64 ", \"generated_count\": %" PRIu64
          ", \"resumed_count\": %" PRIu64 ", \"scanned_slot_count\": %" PRIu64
          ", \"max_active_count\": %" PRIu64 ", \"aux_dispatch_count\": %" PRIu64
          ", \"forced_drain_count\": %" PRIu64 ", \"blocked_count\": %" PRIu64
          ", \"elapsed_ms\": %.3f, \"device_ms\": %.3f},\n"
          "  \"shadow_rays\": {\"counted\": %s, \"rejected\": %" PRIu64 ", \"pane_steps\": %" PRIu64
          ", \"occluded\": %" PRIu64 ", \"unoccluded\": %" PRIu64 "},\n",
          s->dispatches, s->paths, s->render_ms,
          s->render_ms > 0 ? s->paths / (s->render_ms / 1e3) : 0.0, d->iteration_count,
          d->generated_count, d->resumed_count, d->scanned_slot_count, d->max_active_count,
          d->aux_dispatch_count, d->forced_drain_count, d->blocked_count, d->elapsed_ms,
          d->device_ms, s->shadow_counted ? "true" : "false", s->shadow[PT_CTR_REJECTED],
          s->shadow[PT_CTR_PANE], s->shadow[PT_CTR_OCCLUDED], s->shadow[PT_CTR_UNOCCLUDED]);
  json_nodes(f, "main", s->nodes, s->node_count);
  fprintf(f, ",\n");
  json_nodes(f, "aux", s->aux, s->aux_count);
  fprintf(f, "\n}\n");
  return fclose(f) == 0 ? 0 : -1;
}

int pt_write_stats_csv(const char *path, const pt_stats *s) {
  FILE *f = fopen(path, "w");
  if (!f)
    return -1;
  fprintf(f, "kind,name,dispatch_count,executed_count,peak_queued_count\n");
  for (uint32_t j = 0; j < s->node_count; ++j)
    fprintf(f, "main,%s,%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n", s->nodes[j].name,
            s->nodes[j].dispatch_count, s->nodes[j].executed_count, s->nodes[j].peak_queued_count);
  for (uint32_t j = 0; j < s->aux_count; ++j)
    fprintf(f, "aux,%s,%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n", s->aux[j].name,
            s->aux[j].dispatch_count, s->aux[j].executed_count, s->aux[j].peak_queued_count);
  return fclose(f) == 0 ? 0 : -1;
}

double pt_image_mean(const float *image, uint32_t width, uint32_t height, uint64_t *bad) {
  const size_t n = (size_t)width * height * 3;
  double sum = 0.0;
  uint64_t b = 0;
  for (size_t i = 0; i < n; ++i) {
    const float v = image[i];
    if (!isfinite(v) || v < 0.0f) {
      b += 1;
      continue;
    }
    sum += v;
  }
  if (bad)
    *bad = b;
  return n ? sum / (double)n : 0.0;
}
