/* SPDX-License-Identifier: MIT */
/* wavesched path tracer — host driver: builds the scene, the scheduler and
 * the shadow pipeline, renders in batches of samples, resolves the image.
 * Used by the CLI (main.c) and by tests/pathtracer. Public wavesched API only. */
#ifndef WS_PT_RENDER_H
#define WS_PT_RENDER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "wavesched/wavesched.h"

struct pt_host_scene;

#define PT_MAX_NODES 16
#define PT_NAME_LEN 32

typedef struct pt_options {
  ws_scheduler_kind scheduler; /* wavefront (default) or megakernel */
  uint32_t width, height;      /* default 256 x 256 */
  uint32_t spp;                /* samples per pixel, default 16 */
  uint32_t max_depth;          /* scattering vertices per path, default 6 */
  uint32_t rr_depth;           /* Russian roulette from this vertex on, default 3 */
  uint32_t seed;
  uint32_t pool;               /* R resident frames; 0 = pt_default_pool(backend) */
  uint32_t shadow_capacity;    /* C; 0 = R * b = R (the smallest registration allows) */
  bool partial_admission;
  bool shadow_append;          /* the shadow pool allocates by append (issue 18:
                                  ws_pool_set_allocation WS_POOL_APPEND) instead
                                  of from its free stack; same image */
  int nee_mode;                /* PT_NEE_PIPELINE (wavefront default) / PT_NEE_INLINE;
                                  the megakernel always runs inline */
  uint32_t batch_spp;          /* samples per dispatch; 0 = pt_default_batch() */
  uint32_t layout;             /* WS_LAYOUT_AOS / WS_LAYOUT_SOA; PT_DEFAULT =
                                  pt_default_layout(backend) (default) */
  uint32_t tail_frames;        /* ws_scheduler_config.tail_frames; PT_DEFAULT =
                                  pt_default_tail(pool) (default) */
  int accounting;              /* 0 materialized, 1 incremental, 2 fused;
                                  -1 = pt_default_accounting(backend) (default) */
  bool verify;                 /* verify queues every iteration */
  bool no_shadow_counters;     /* skip the shadow-ray outcome atomics (pt_stats.shadow = 0) */
  /* A share of the image (scale-out, docs/mpi.md): the rows row_first,
   * row_first + row_stride, ... (row_count of them, all below height) into
   * the image's rows 0 .. row_count - 1. row_count 0 = every row (the whole
   * image; row_first and row_stride are then ignored). A pixel's samples,
   * random numbers and their sum do not depend on the share, and batch_spp's
   * default comes from the whole image, so the shares of a render put
   * together are bit-identical to the whole render. */
  uint32_t row_first, row_count, row_stride;
  /* the scene (pt_scene.h, finished); NULL = the built-in Cornell box */
  const struct pt_host_scene *scene;
  /* called after every batch (a dispatch and its resolve) */
  void (*progress)(void *user, uint32_t done_spp, uint32_t spp, double elapsed_ms);
  void *progress_user;
} pt_options;

/* Statistics summed over the render's dispatches (peaks: maximum). */
typedef struct pt_node_total {
  char name[PT_NAME_LEN];
  uint64_t dispatch_count, executed_count, peak_queued_count;
} pt_node_total;

typedef struct pt_stats {
  uint32_t dispatches; /* scheduler dispatches (batches) */
  uint32_t batch_spp;
  uint64_t paths;      /* items = pixels * spp */
  ws_dispatch_stats total; /* summed; max_active_count: maximum */
  uint32_t node_count;     /* main nodes: 0 = <entry>, then the continuations */
  pt_node_total nodes[PT_MAX_NODES];
  uint32_t aux_count;      /* auxiliary stages (0 for inline NEE / megakernel) */
  pt_node_total aux[PT_MAX_NODES];
  uint64_t shadow[4];      /* shadow-ray outcomes: rejected, pane steps, occluded,
                              unoccluded (pt.h PT_CTR_*) */
  bool shadow_counted;     /* false with no_shadow_counters */
  double render_ms;        /* wall time of all batches (dispatch + resolve) */
  double dispatch_ms;      /* sum of the scheduler's elapsed times */
  uint32_t pool, shadow_capacity;
  /* an append shadow pool's storage work, summed (peak: maximum) */
  uint64_t shadow_reclaims, shadow_compactions;
  uint32_t shadow_peak_extent;
} pt_stats;

/* Limits checked before anything is allocated (pt_options_check): */
#define PT_MAX_PIXELS (1u << 26)          /* width * height (8192 x 8192) */
#define PT_MAX_DEPTH 64u                  /* max_depth */
#define PT_MAX_POOL (1u << 24)            /* pool and shadow_capacity */
#define PT_MAX_BATCH_BYTES (4ull << 30)   /* radiance + NEE buffers of one batch */

/* Defaults for every field (256x256, 16 spp, depth 6, wavefront, ...). */
pt_options pt_options_default(void);
/* Replaces the backend-dependent defaults left open (pool = 0, batch_spp =
 * 0, accounting = -1) with their values; pt_render does the same. */
void pt_options_resolve(pt_options *o, ws_backend_kind backend);
/* Checks every size in 64-bit against the limits above; call it after
 * pt_options_resolve (a batch_spp of 0 is checked as 1). 0, or -1 with a
 * message naming the CLI option and the limit. */
int pt_options_check(const pt_options *o, char *err, size_t err_cap);
/* Resident frames when pool = 0: 16384 on the CPU, 4 Mi on CUDA, 1 Mi on
 * Vulkan (on a GPU no more than a batch has paths, rounded up to 256:
 * pt_options_resolve). On the H200 with CUDA the engine scene at 1080p 32 spp
 * rendered 187.5 Mpaths/s (inline NEE) at 1 Mi frames and 2 spp per batch,
 * 279.6 at 4 Mi and 8 spp (docs/decisions.md); Vulkan keeps the former
 * defaults until they are measured there. */
uint32_t pt_default_pool(ws_backend_kind backend);
/* Accounting when accounting = -1: fused on CUDA and Vulkan, whose fused
 * count updates are combined per warp or subgroup (on the H200 with CUDA
 * fused renders at least as fast, with half of incremental's queue-kernel
 * time: docs/pathtracer.md; on the H100 with Vulkan fused rendered Cornell
 * 6-8 % faster and engine+bunny 1-2 % slower: docs/decisions.md); incremental on
 * the CPU, whose fused updates are one atomic per frame and cost more than
 * the publish pass they save (docs/benchmarks.md). */
int pt_default_accounting(ws_backend_kind backend);
/* "Use the default" for layout and tail_frames. */
#define PT_DEFAULT 0xffffffffu
/* Layout when layout = PT_DEFAULT: SoA on GPUs, where each warp's frame
 * accesses then coalesce (H200, 1080p 1 spp, kernel time: pipeline 5.39 ms
 * AoS vs 4.29 ms SoA, inline 3.50 vs 2.56: docs/decisions.md); AoS on the
 * CPU, where a frame is one cache line's worth of neighbours. */
uint32_t pt_default_layout(ws_backend_kind backend);
/* Tail when tail_frames = PT_DEFAULT: pool / 32 (the last frames of a batch
 * finish in one launch instead of many small ones; it runs with inline NEE
 * only: the shadow pipeline's pool is an auxiliary work). */
uint32_t pt_default_tail(uint32_t pool);
/* Samples per dispatch when batch_spp = 0: about 2^18 paths per dispatch on
 * the CPU (16 pools' worth at the default R), 2^22 on Vulkan; on CUDA at
 * most 2^24 paths (4 pools' worth) and within PT_MAX_BATCH_BYTES; at least 1
 * spp, at most spp. Depends only on the image settings and the backend,
 * never on the scheduler, so every scheduler sums the image in the same
 * order. */
uint32_t pt_default_batch(const pt_options *o, ws_backend_kind backend);

/* Renders into `image` (width * height * 3 floats, linear radiance, the mean
 * over spp; width * row_count * 3 for a share). `stats` may be NULL (its
 * paths count the share's). On failure returns the status and writes a
 * message into err. */
ws_status pt_render(ws_device *dev, const pt_options *o, float *image, pt_stats *stats,
                    char *err, size_t err_cap);

/* The statistics table (same columns as ws_scheduler_print_stats), totals
 * over the render's dispatches. */
void pt_print_stats(FILE *f, const pt_stats *s);
/* JSON / CSV versions; return 0 or -1 (errno set) */
int pt_write_stats_json(const char *path, const pt_options *o, const char *backend,
                        const pt_stats *s);
int pt_write_stats_csv(const char *path, const pt_stats *s);

/* Mean of all channels; counts NaN/Inf/negative values when non-NULL. */
double pt_image_mean(const float *image, uint32_t width, uint32_t height, uint64_t *bad);

#endif
