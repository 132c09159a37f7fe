/* SPDX-License-Identifier: MIT */
/* wavesched-pathtracer: renders the built-in Cornell box or scenes from
 * files (--scene) with the wavefront (or megakernel) scheduler, writes PNG,
 * PFM or OpenEXR images and prints the statistics table.
 * See docs/pathtracer.md.
 *
 * Built a second time with PT_MPI as wavesched-pathtracer-mpi (WS_MPI,
 * docs/mpi.md): under mpirun every rank opens its own device and renders a
 * share of the image's rows; rank 0 puts the image together (copies in rank
 * order, so it is bit-identical to the single-process render), writes it
 * and prints the statistics with their per-rank spread. Every step that can
 * fail on one rank ends in agree(), so a failure stops every rank with a
 * message instead of leaving the others waiting in a collective. */
#define _POSIX_C_SOURCE 200809L /* isatty */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef PT_HAVE_PNG
#include <png.h>
#endif
#ifdef PT_HAVE_EXR
#include <ImfCRgbaFile.h>
#endif

#include "pt.h"
#include "pt_render.h"
#include "pt_scene.h"
#include "wavesched/version.h"
#ifdef PT_MPI
#include <time.h>

#include "pt_mpi.h"
#ifdef PT_MPI_CUDART
#include <cuda_runtime_api.h>
#endif
#endif


#ifdef PT_MPI
static const char *prog = "wavesched-pathtracer-mpi"; /* then with the rank */
static pt_mpi mpi = {0, 1, 0};
#else
static const char *const prog = "wavesched-pathtracer";
#endif

/* Every rank's verdict on a step (pt_mpi_agree): non-zero on every rank when
 * any rank failed. A single process decides alone. */
static int agree(int failed, const char *step) {
#ifdef PT_MPI
  return pt_mpi_agree(&mpi, failed, prog, step);
#else
  (void)step;
  return failed;
#endif
}

/* The library's messages (it never prints): why the device could not be
 * opened, and measuring aids such as the Vulkan device loop's per-phase
 * timestamps (WS_VULKAN_LOOP_TIMESTAMPS=1). On stderr: stdout may carry the
 * image (--output -). */
static void log_message(void *user, ws_log_level level, const char *message) {
  (void)user;
  fprintf(stderr, "%s: %s%s\n", prog,
          level == WS_LOG_ERROR ? "" : level == WS_LOG_WARNING ? "warning: " : "", message);
}

/* the exit status, after MPI_Finalize in the MPI build */
static int finish(int rc) {
#ifdef PT_MPI
  pt_mpi_finalize();
#endif
  return rc;
}

static void usage(FILE *f) {
  fprintf(f,
          "usage: %s [options]\n"
          "  --scene FILE                     a scene description (*.scene) or a mesh file\n"
          "                                   (glTF .gltf/.glb, OBJ: placed in the Cornell\n"
          "                                   box); repeatable (default: the built-in box)\n"
          "  --camera-eye X,Y,Z               camera position (default: the scene's)\n"
          "  --camera-target X,Y,Z            point the camera looks at\n"
          "  --camera-fov DEG                 vertical field of view (default 39)\n"
          "  --backend cpu|cuda|vulkan        backend (default cpu)\n"
          "  --threads N                      threads of the CPU backend (default: one per CPU)\n"
          "  --scheduler wavefront|megakernel (default wavefront)\n"
          "  --width W, --height H            image size (default 256 x 256)\n"
          "  --spp N                          samples per pixel (default 16)\n"
          "  --max-depth D                    scattering vertices per path (default 6)\n"
          "  --rr-depth D                     Russian roulette from this vertex on (default 3)\n"
          "  --seed S                         random seed (default 1)\n"
          "  --pool R                         resident frames (default 16384 on the CPU,\n"
          "                                   4194304 with CUDA, 1048576 with Vulkan;\n"
          "                                   on a GPU at most a batch's paths)\n"
          "  --shadow-capacity C              shadow pipeline slots (default R: the smallest\n"
          "                                   registration allows; smaller needs\n"
          "                                   --partial-admission)\n"
          "  --partial-admission              admit part of a producer queue when the\n"
          "                                   shadow pool is nearly full\n"
          "  --shadow-pool stack|append       shadow pool allocation: a free stack (default)\n"
          "                                   or append with holes, reclaimed and compacted\n"
          "                                   before admission (same image)\n"
          "  --nee pipeline|inline            next-event estimation through the auxiliary\n"
          "                                   pipeline (default) or inline in the shading\n"
          "                                   continuations (the megakernel always inlines)\n"
          "  --batch-spp N                    samples per dispatch (default: about 262144\n"
          "                                   paths on the CPU, 4194304 with Vulkan, at most\n"
          "                                   16777216 with CUDA)\n"
          "  --layout aos|soa                 frame layout (default soa on GPUs, aos on the CPU)\n"
          "  --tail N                         finish the last < N frames of a batch in one\n"
          "                                   launch (inline NEE; default pool/32, 0 = off)\n"
          "  --accounting materialized|incremental|fused (default fused on CUDA\n"
          "                                   and Vulkan, incremental on the CPU)\n"
          "  --verify                         verify the queues every iteration\n"
          "  --no-shadow-counters             skip counting shadow-ray outcomes (atomics)\n"
          "  --output FILE                    image to write, by extension: .pfm or .exr\n"
          "                                   (linear HDR), else PNG (sRGB); repeatable\n"
          "                                   (default pathtracer.png; '-' writes none)\n"
          "  --stats-json FILE                write the statistics as JSON\n"
          "  --stats-csv FILE                 write the statistics table as CSV\n"
          "  --progress / --no-progress       progress bar on stderr (default: if a tty)\n"
#ifdef PT_MPI
          "  --share interleaved|blocks       rows per rank: every R-th row (default) or\n"
          "                                   contiguous blocks (docs/mpi.md)\n"
          "  --fail-rank K                    testing: rank K fails as if its device could\n"
          "                                   not be opened (every rank must stop)\n"
#endif
          "  --version                        print the version\n"
          "  --help                           this text\n",
          prog);
}

static int pick(const char *opt, const char *v, const char *const *names, int count) {
  for (int i = 0; i < count; ++i)
    if (strcmp(v, names[i]) == 0)
      return i;
  fprintf(stderr, "%s: --%s: unknown value '%s'\n", prog, opt, v);
  exit(2);
}

/* Strict: decimal digits only (no sign, no spaces, no suffix), in
 * [lo, 2^32 - 1]; anything else names the option and exits 2. */
static uint32_t number(const char *opt, const char *v, uint32_t lo) {
  unsigned long long x = 0;
  int ok = *v != '\0';
  for (const char *c = v; ok && *c; ++c) {
    if (*c < '0' || *c > '9')
      ok = 0;
    else if ((x = x * 10 + (unsigned long long)(*c - '0')) > 0xffffffffull)
      ok = 0;
  }
  if (!ok || x < lo) {
    fprintf(stderr, "%s: --%s: expected an integer in [%u, 4294967295], got '%s'\n", prog, opt,
            lo, v);
    exit(2);
  }
  return (uint32_t)x;
}

/* A finite float (strtof, nothing after it). */
static float real(const char *opt, const char *v, float lo, float hi) {
  char *end = NULL;
  errno = 0;
  const float x = strtof(v, &end);
  if (!*v || *end || errno == ERANGE || !isfinite(x) || x < lo || x > hi) {
    fprintf(stderr, "%s: --%s: expected a number in [%g, %g], got '%s'\n", prog, opt, lo, hi, v);
    exit(2);
  }
  return x;
}

/* X,Y,Z: three finite floats */
static pt_vec3 vec3_arg(const char *opt, const char *v) {
  char buf[256];
  pt_vec3 r;
  float *c[3] = {&r.x, &r.y, &r.z};
  if (strlen(v) >= sizeof buf) {
    fprintf(stderr, "%s: --%s: expected X,Y,Z, got a %zu-character value\n", prog, opt, strlen(v));
    exit(2);
  }
  strcpy(buf, v);
  char *save = NULL, *tok = strtok_r(buf, ",", &save);
  for (int k = 0; k < 3; ++k) {
    if (!tok) {
      fprintf(stderr, "%s: --%s: expected X,Y,Z, got '%s'\n", prog, opt, v);
      exit(2);
    }
    *c[k] = real(opt, tok, -1e6f, 1e6f);
    tok = strtok_r(NULL, ",", &save);
  }
  if (tok) {
    fprintf(stderr, "%s: --%s: expected X,Y,Z, got '%s'\n", prog, opt, v);
    exit(2);
  }
  return r;
}

static void progress(void *user, uint32_t done, uint32_t spp, double ms) {
  (void)user;
  const int width = 40;
  const int fill = (int)((uint64_t)done * width / spp);
  char bar[64];
  for (int i = 0; i < width; ++i)
    bar[i] = i < fill ? '#' : '.';
  bar[width] = '\0';
  double eta = done ? ms * (spp - done) / done / 1e3 : 0.0;
  fprintf(stderr, "\r[%s] %3u%%  %u/%u spp  %.1f s  eta %.1f s ", bar,
          (unsigned)((uint64_t)done * 100 / spp), done, spp, ms / 1e3, eta);
  if (done == spp)
    fputc('\n', stderr);
  fflush(stderr);
}

/* Linear radiance -> 8-bit sRGB (clamped; exposure 1). */
static unsigned char to_srgb8(float v) {
  if (!(v > 0.0f))
    return 0;
  if (v >= 1.0f)
    return 255;
  const float s = v <= 0.0031308f ? 12.92f * v : 1.055f * powf(v, 1.0f / 2.4f) - 0.055f;
  return (unsigned char)(s * 255.0f + 0.5f);
}

#ifdef PT_HAVE_PNG
/* png and info are set before setjmp and never modified after it */
static int write_png(FILE *f, const unsigned char *rgb, uint32_t w, uint32_t h) {
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
  if (!png)
    return -1;
  png_infop info = png_create_info_struct(png);
  if (!info) {
    png_destroy_write_struct(&png, NULL);
    return -1;
  }
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    return -1;
  }
  png_init_io(png, f);
  png_set_IHDR(png, info, w, h, 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_set_sRGB_gAMA_and_cHRM(png, info, PNG_sRGB_INTENT_PERCEPTUAL);
  png_write_info(png, info);
  for (uint32_t y = 0; y < h; ++y)
    png_write_row(png, rgb + (size_t)y * w * 3);
  png_write_end(png, NULL);
  png_destroy_write_struct(&png, &info);
  return 0;
}
#endif

enum { IMG_PNG, IMG_PFM, IMG_EXR };

static int ends_with(const char *s, const char *suffix) {
  const size_t n = strlen(s), m = strlen(suffix);
  if (n < m)
    return 0;
  for (size_t i = 0; i < m; ++i)
    if ((s[n - m + i] | 0x20) != (suffix[i] | 0x20))
      return 0;
  return 1;
}

static int image_format(const char *path) {
  return ends_with(path, ".pfm") ? IMG_PFM : ends_with(path, ".exr") ? IMG_EXR : IMG_PNG;
}

/* 8-bit sRGB: PNG (PPM when built without libpng) to an open file */
static int write_ldr(FILE *f, const float *img, uint32_t w, uint32_t h) {
  unsigned char *rgb = malloc((size_t)w * h * 3);
  if (!rgb)
    return -1;
  for (size_t i = 0; i < (size_t)w * h * 3; ++i)
    rgb[i] = to_srgb8(img[i]);
#ifdef PT_HAVE_PNG
  int rc = write_png(f, rgb, w, h);
#else
  /* built without libpng: a binary PPM under the requested name */
  fprintf(f, "P6\n%u %u\n255\n", w, h);
  int rc = fwrite(rgb, 1, (size_t)w * h * 3, f) == (size_t)w * h * 3 ? 0 : -1;
#endif
  free(rgb);
  return rc;
}

/* Portable float map: linear RGB, little-endian (scale -1), rows bottom to top */
static int write_pfm(FILE *f, const float *img, uint32_t w, uint32_t h) {
  if (fprintf(f, "PF\n%u %u\n-1.0\n", w, h) < 0)
    return -1;
  const uint16_t probe = 1;
  const int little = *(const unsigned char *)&probe == 1;
  float *row = malloc((size_t)w * 3 * sizeof(float));
  if (!row)
    return -1;
  int rc = 0;
  for (uint32_t y = h; y-- > 0 && rc == 0;) {
    memcpy(row, img + (size_t)y * w * 3, (size_t)w * 3 * sizeof(float));
    if (!little)
      for (size_t i = 0; i < (size_t)w * 3; ++i) {
        unsigned char *b = (unsigned char *)&row[i], t0 = b[0], t1 = b[1];
        b[0] = b[3];
        b[1] = b[2];
        b[2] = t1;
        b[3] = t0;
      }
    rc = fwrite(row, sizeof(float), (size_t)w * 3, f) == (size_t)w * 3 ? 0 : -1;
  }
  free(row);
  return rc;
}

#ifdef PT_HAVE_EXR
/* OpenEXR (half RGB, ZIP) through the library's C interface */
static int write_exr(const char *path, const float *img, uint32_t w, uint32_t h) {
  ImfRgba *px = malloc((size_t)w * h * sizeof *px);
  if (!px)
    return -1;
  for (size_t i = 0; i < (size_t)w * h; ++i) {
    ImfFloatToHalf(img[i * 3], &px[i].r);
    ImfFloatToHalf(img[i * 3 + 1], &px[i].g);
    ImfFloatToHalf(img[i * 3 + 2], &px[i].b);
    ImfFloatToHalf(1.0f, &px[i].a);
  }
  ImfHeader *hdr = ImfNewHeader();
  if (!hdr) {
    free(px);
    return -1;
  }
  ImfHeaderSetDisplayWindow(hdr, 0, 0, (int)w - 1, (int)h - 1);
  ImfHeaderSetDataWindow(hdr, 0, 0, (int)w - 1, (int)h - 1);
  ImfHeaderSetCompression(hdr, IMF_ZIP_COMPRESSION);
  ImfOutputFile *out = ImfOpenOutputFile(path, hdr, IMF_WRITE_RGB);
  ImfDeleteHeader(hdr);
  int rc = -1;
  if (out) {
    rc = ImfOutputSetFrameBuffer(out, px, 1, w) && ImfOutputWritePixels(out, (int)h) ? 0 : -1;
    if (!ImfCloseOutputFile(out))
      rc = -1;
  }
  if (rc)
    fprintf(stderr, "%s: OpenEXR: %s\n", prog, ImfErrorMessage());
  free(px);
  return rc;
}
#endif

#define MAX_OUTPUTS 4
typedef struct output {
  const char *path;
  int format;
  FILE *f; /* opened before the render (PNG, PFM); EXR is checked, then written by path */
} output;

/* Opens (creates, truncates) an output before the render, so that an
 * unwritable path fails in a moment instead of after the whole render. */
static int open_output(const char *path, const char *what, FILE **keep) {
  FILE *f = fopen(path, "wb");
  if (!f) {
    fprintf(stderr, "%s: cannot write %s %s: %s (checked before rendering)\n", prog, what, path,
            strerror(errno));
    return -1;
  }
  if (keep)
    *keep = f;
  else
    fclose(f);
  return 0;
}

#ifdef PT_MPI
static double wall_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* The ranks' statistics as one render's (rank 0's table): counts summed,
 * peaks the largest (pt_stats' own rule over dispatches), the dispatch
 * statistics through ws_dispatch_stats_combine over the ranks that rendered
 * (a rank without rows has none), render_ms the wall time from the common
 * start to the gathered image. */
static void combine_ranks(const pt_stats *all, int ranks, double wall, pt_stats *out) {
  pt_stats c = all[0]; /* rank 0 always has rows: names, sizes, batch */
  ws_dispatch_stats *totals = malloc((size_t)ranks * sizeof *totals);
  uint32_t rendered = 0;
  c.paths = 0;
  c.dispatches = 0;
  memset(c.shadow, 0, sizeof c.shadow);
  c.shadow_reclaims = c.shadow_compactions = 0;
  c.shadow_peak_extent = 0;
  for (uint32_t j = 0; j < c.node_count; ++j)
    c.nodes[j].dispatch_count = c.nodes[j].executed_count = c.nodes[j].peak_queued_count = 0;
  for (uint32_t j = 0; j < c.aux_count; ++j)
    c.aux[j].dispatch_count = c.aux[j].executed_count = c.aux[j].peak_queued_count = 0;
  for (int r = 0; r < ranks; ++r) {
    const pt_stats *s = &all[r];
    if (!s->paths)
      continue;
    if (totals)
      totals[rendered++] = s->total;
    c.paths += s->paths;
    if (s->dispatches > c.dispatches)
      c.dispatches = s->dispatches;
    for (int k = 0; k < 4; ++k)
      c.shadow[k] += s->shadow[k];
    c.shadow_reclaims += s->shadow_reclaims;
    c.shadow_compactions += s->shadow_compactions;
    if (s->shadow_peak_extent > c.shadow_peak_extent)
      c.shadow_peak_extent = s->shadow_peak_extent;
    for (uint32_t j = 0; j < c.node_count && j < s->node_count; ++j) {
      c.nodes[j].dispatch_count += s->nodes[j].dispatch_count;
      c.nodes[j].executed_count += s->nodes[j].executed_count;
      if (s->nodes[j].peak_queued_count > c.nodes[j].peak_queued_count)
        c.nodes[j].peak_queued_count = s->nodes[j].peak_queued_count;
    }
    for (uint32_t j = 0; j < c.aux_count && j < s->aux_count; ++j) {
      c.aux[j].dispatch_count += s->aux[j].dispatch_count;
      c.aux[j].executed_count += s->aux[j].executed_count;
      if (s->aux[j].peak_queued_count > c.aux[j].peak_queued_count)
        c.aux[j].peak_queued_count = s->aux[j].peak_queued_count;
    }
  }
  ws_dispatch_stats_ranks dr; /* without memory for it: rank 0's */
  if (totals && ws_dispatch_stats_combine(totals, rendered, &dr) == WS_OK)
    c.total = dr.total;
  free(totals);
  c.render_ms = wall;
  c.dispatch_ms = c.total.elapsed_ms; /* the slowest rank's */
  *out = c;
}

/* Rank 0's per-rank table and the spread: which rank took how long for how
 * much work (the balance of the row split, docs/mpi.md). */
static void print_ranks(FILE *f, const pt_stats *all, const char (*devices)[64], int ranks,
                        uint32_t height, ws_partition_kind kind) {
  fprintf(f, "%-5s %-28s %7s %13s %10s %9s %12s %14s\n", "rank", "device", "rows", "paths",
          "render s", "Mpaths/s", "iterations", "resumed");
  double lo = 0, hi = 0, sum = 0;
  int slowest = 0, counted = 0;
  ws_dispatch_stats *totals = malloc((size_t)ranks * sizeof *totals);
  uint32_t rendered = 0;
  for (int r = 0; r < ranks; ++r) {
    const pt_stats *s = &all[r];
    ws_partition p;
    ws_partition_range(height, (uint32_t)ranks, (uint32_t)r, kind, &p);
    fprintf(f, "%-5d %-28.28s %7" PRIu64 " %13" PRIu64 " %10.3f %9.2f %12" PRIu64 " %14" PRIu64 "\n",
            r, devices[r], p.count, s->paths, s->render_ms / 1e3,
            s->render_ms > 0 ? s->paths / (s->render_ms * 1e3) : 0.0, s->total.iteration_count,
            s->total.resumed_count);
    if (!s->paths)
      continue;
    if (totals)
      totals[rendered++] = s->total;
    if (!counted || s->render_ms < lo)
      lo = s->render_ms;
    if (!counted || s->render_ms > hi) {
      hi = s->render_ms;
      slowest = r;
    }
    sum += s->render_ms;
    counted += 1;
  }
  ws_dispatch_stats_ranks dr;
  const ws_status cs = totals ? ws_dispatch_stats_combine(totals, rendered, &dr) : WS_ENOMEM;
  free(totals);
  if (cs != WS_OK)
    return;
  const double mean = counted ? sum / counted : 0.0;
  fprintf(f,
          "spread over %u ranks with rows: render %.3f .. %.3f s (slowest rank %d, %.2fx the "
          "mean); scheduler %.3f .. %.3f s; iterations %" PRIu64 " .. %" PRIu64
          "; resumed %" PRIu64 " .. %" PRIu64 "; max active %" PRIu64 " .. %" PRIu64 "\n",
          rendered, lo / 1e3, hi / 1e3, slowest, mean > 0 ? hi / mean : 0.0,
          dr.min.elapsed_ms / 1e3, dr.max.elapsed_ms / 1e3, dr.min.iteration_count,
          dr.max.iteration_count, dr.min.resumed_count, dr.max.resumed_count,
          dr.min.max_active_count, dr.max.max_active_count);
}
#endif

int main(int argc, char **argv) {
  pt_options o = pt_options_default();
  ws_device_config dc;
  memset(&dc, 0, sizeof dc);
  dc.device_index = -1;
  dc.log = log_message;
  const char *json = NULL, *csv = NULL;
  output outs[MAX_OUTPUTS];
  int nout = 0, no_output = 0;
  const char *scenes[64];
  int nscenes = 0;
  int have_eye = 0, have_target = 0, have_fov = 0;
  pt_vec3 eye = {0, 0, 0}, target = {0, 0, 0};
  float fov = 39.0f;
  int show_progress = isatty(2);
  static const struct option opts[] = {{"backend", required_argument, 0, 'b'},
                                       {"scheduler", required_argument, 0, 's'},
                                       {"width", required_argument, 0, 'W'},
                                       {"height", required_argument, 0, 'H'},
                                       {"spp", required_argument, 0, 'n'},
                                       {"max-depth", required_argument, 0, 'd'},
                                       {"seed", required_argument, 0, 'S'},
                                       {"rr-depth", required_argument, 0, 'R'},
                                       {"pool", required_argument, 0, 'r'},
                                       {"shadow-capacity", required_argument, 0, 'C'},
                                       {"partial-admission", no_argument, 0, 'P'},
                                       {"shadow-pool", required_argument, 0, 'A'},
                                       {"nee", required_argument, 0, 'N'},
                                       {"batch-spp", required_argument, 0, 'B'},
                                       {"layout", required_argument, 0, 'l'},
                                       {"accounting", required_argument, 0, 'a'},
                                       {"tail", required_argument, 0, 'L'},
                                       {"verify", no_argument, 0, 'V'},
                                       {"no-shadow-counters", no_argument, 0, 'X'},
                                       {"output", required_argument, 0, 'o'},
                                       {"stats-json", required_argument, 0, 'j'},
                                       {"stats-csv", required_argument, 0, 'c'},
                                       {"progress", no_argument, 0, 'p'},
                                       {"no-progress", no_argument, 0, 'q'},
                                       {"scene", required_argument, 0, 'e'},
                                       {"camera-eye", required_argument, 0, 'E'},
                                       {"camera-target", required_argument, 0, 'T'},
                                       {"camera-fov", required_argument, 0, 'F'},
                                       {"threads", required_argument, 0, 't'},
                                       {"version", no_argument, 0, 'v'},
#ifdef PT_MPI
                                       {"share", required_argument, 0, 'Z'},
                                       {"fail-rank", required_argument, 0, 'K'},
#endif
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
  static const char *const sched_names[] = {"wavefront", "megakernel"};
  static const char *const nee_names[] = {"pipeline", "inline"};
  static const char *const layout_names[] = {"aos", "soa"};
  static const char *const acc_names[] = {"materialized", "incremental", "fused"};
  static const char *const shadow_pool_names[] = {"stack", "append"};
#ifdef PT_MPI
  static const char *const share_names[] = {"blocks", "interleaved"};
  ws_partition_kind share = WS_PARTITION_INTERLEAVED;
  int64_t fail_rank = -1;
#endif
  int ch;
  while ((ch = getopt_long(argc, argv, "ho:", opts, NULL)) != -1) {
    switch (ch) {
#ifdef PT_MPI
    case 'Z':
      share = (ws_partition_kind)pick("share", optarg, share_names, 2);
      break;
    case 'K':
      fail_rank = number("fail-rank", optarg, 0);
      break;
#endif
    case 'b':
      if (ws_backend_parse(optarg, &dc.backend) != WS_OK) {
        fprintf(stderr, "%s: --backend: unknown backend '%s' (cpu, cuda, vulkan)\n", prog, optarg);
        return 2;
      }
      break;
    case 's':
      o.scheduler = (ws_scheduler_kind)pick("scheduler", optarg, sched_names, 2);
      break;
    case 'W':
      o.width = number("width", optarg, 1);
      break;
    case 'H':
      o.height = number("height", optarg, 1);
      break;
    case 'n':
      o.spp = number("spp", optarg, 1);
      break;
    case 'd':
      o.max_depth = number("max-depth", optarg, 1);
      break;
    case 'S':
      o.seed = number("seed", optarg, 0);
      break;
    case 'R':
      o.rr_depth = number("rr-depth", optarg, 0);
      break;
    case 'r':
      o.pool = number("pool", optarg, 1);
      break;
    case 'C':
      o.shadow_capacity = number("shadow-capacity", optarg, 1);
      break;
    case 'P':
      o.partial_admission = true;
      break;
    case 'A':
      o.shadow_append = pick("shadow-pool", optarg, shadow_pool_names, 2) == 1;
      break;
    case 'N':
      o.nee_mode = pick("nee", optarg, nee_names, 2);
      break;
    case 'B':
      o.batch_spp = number("batch-spp", optarg, 1);
      break;
    case 'l':
      o.layout = (uint32_t)pick("layout", optarg, layout_names, 2);
      break;
    case 'a':
      o.accounting = pick("accounting", optarg, acc_names, 3);
      break;
    case 'L':
      o.tail_frames = number("tail", optarg, 0);
      break;
    case 'V':
      o.verify = true;
      break;
    case 'X':
      o.no_shadow_counters = true;
      break;
    case 'o':
      if (!optarg[0] || strcmp(optarg, "-") == 0) {
        no_output = 1;
        break;
      }
      if (nout == MAX_OUTPUTS) {
        fprintf(stderr, "%s: --output: at most %d images\n", prog, MAX_OUTPUTS);
        return 2;
      }
      outs[nout].path = optarg;
      outs[nout].format = image_format(optarg);
      outs[nout].f = NULL;
#ifndef PT_HAVE_EXR
      if (outs[nout].format == IMG_EXR) {
        fprintf(stderr, "%s: --output %s: this build writes no OpenEXR (install libopenexr-dev); "
                        "use .pfm for HDR\n", prog, optarg);
        return 2;
      }
#endif
      nout += 1;
      break;
    case 'j':
      json = optarg;
      break;
    case 'c':
      csv = optarg;
      break;
    case 'p':
      show_progress = 1;
      break;
    case 'q':
      show_progress = 0;
      break;
    case 'e':
      if (nscenes == (int)(sizeof scenes / sizeof scenes[0])) {
        fprintf(stderr, "%s: --scene: at most %zu files\n", prog, sizeof scenes / sizeof scenes[0]);
        return 2;
      }
      scenes[nscenes++] = optarg;
      break;
    case 'E':
      eye = vec3_arg("camera-eye", optarg);
      have_eye = 1;
      break;
    case 'T':
      target = vec3_arg("camera-target", optarg);
      have_target = 1;
      break;
    case 'F':
      fov = real("camera-fov", optarg, 1.0f, 179.0f);
      have_fov = 1;
      break;
    case 't':
      /* refused before the int conversion: 4096 is beyond any host */
    {
      const uint32_t threads = number("threads", optarg, 1);
      if (threads > 4096) {
        fprintf(stderr, "%s: --threads: %u is above the limit of 4096\n", prog, threads);
        return 2;
      }
      dc.cpu_threads = (int)threads;
    }
      break;
    case 'v':
      printf("%s %s\n", prog, ws_version()); /* the library's version (version.h) */
      return 0;
    case 'h':
      usage(stdout);
      return 0;
    default:
      usage(stderr);
      return 2;
    }
  }
  if (optind < argc) {
    fprintf(stderr, "%s: unexpected argument '%s'\n", prog, argv[optind]);
    usage(stderr);
    return 2;
  }
  if (o.scheduler == WS_SCHEDULER_MEGAKERNEL && o.nee_mode == PT_NEE_PIPELINE &&
      (o.shadow_capacity || o.partial_admission || o.shadow_append))
    fprintf(stderr, "%s: note: the megakernel takes no auxiliary work; NEE runs inline and "
                    "--shadow-capacity/--partial-admission/--shadow-pool are ignored\n", prog);
  if (dc.cpu_threads && dc.backend != WS_BACKEND_CPU)
    fprintf(stderr, "%s: note: --threads applies to the CPU backend only\n", prog);
  if (!nout && !no_output) {
    outs[0].path = "pathtracer.png";
    outs[0].format = IMG_PNG;
    outs[0].f = NULL;
    nout = 1;
  }
  /* '-' only drops the default: explicit outputs are still written */

  /* sizes first: nothing is allocated for a render that cannot run (the
   * batch default depends on the backend and is checked again below) */
  char err[1024];
  if (pt_options_check(&o, err, sizeof err) != 0) {
    fprintf(stderr, "%s: %s\n", prog, err);
    return 2;
  }
  /* The command line is every rank's: whatever fails above fails on all of
   * them alike, before MPI starts. From here on a rank can fail alone. */
#ifdef PT_MPI
  if (pt_mpi_init(&mpi, err, sizeof err) != 0) {
    fprintf(stderr, "%s: %s\n", prog, err);
    return 1;
  }
  static char prog_rank[64];
  snprintf(prog_rank, sizeof prog_rank, "%s[%d/%d]", prog, mpi.rank, mpi.size);
  prog = prog_rank;
  const int root = mpi.rank == 0;
#else
  const int root = 1;
#endif

  /* the scene */
  pt_host_scene scene;
  pt_scene_init(&scene);
  int failed = 0;
  for (int i = 0; i < nscenes && !failed; ++i)
    if (pt_scene_load(&scene, scenes[i], err, sizeof err) != 0) {
      fprintf(stderr, "%s: --scene: %s\n", prog, err);
      failed = 1;
    }
  if (!failed && !nscenes && pt_scene_add_cornell(&scene, 1) != 0) {
    fprintf(stderr, "%s: out of memory for the built-in scene\n", prog);
    failed = 1;
  }
  if (agree(failed, "loading the scene")) {
    pt_scene_free(&scene);
    return finish(1);
  }
  if (have_eye || have_target || have_fov) {
    if (!scene.camera_set && !(have_eye && have_target)) {
      /* the box's camera, changed in part */
      scene.eye = (pt_vec3){0.0f, 1.0f, 3.9f};
      scene.target = (pt_vec3){0.0f, 1.0f, 2.9f};
    }
    if (have_eye)
      scene.eye = eye;
    if (have_target)
      scene.target = target;
    if (have_fov)
      scene.fov_deg = fov;
    scene.camera_set = 1;
  }
  failed = pt_scene_finish(&scene, err, sizeof err) != 0;
  if (failed)
    fprintf(stderr, "%s: %s\n", prog, err);
  if (agree(failed, "preparing the scene")) {
    pt_scene_free(&scene);
    return finish(1);
  }
  o.scene = &scene;

  ws_device *dev = NULL;
  ws_status st;
#ifdef PT_MPI
  /* each rank its own device: CUDA device = local rank modulo the node's
   * devices (ranks beyond the count share them); Vulkan takes the default
   * device or WS_VULKAN_DEVICE from each rank's environment */
#ifdef PT_MPI_CUDART
  int cuda_devices = 0;
  if (dc.backend == WS_BACKEND_CUDA && cudaGetDeviceCount(&cuda_devices) == cudaSuccess &&
      cuda_devices > 0)
    dc.device_index = mpi.local_rank % cuda_devices;
#endif
  if (fail_rank == mpi.rank) {
    st = WS_ENODEV;
    fprintf(stderr, "%s: cannot open the %s backend: %s (--fail-rank %d)\n", prog,
            ws_backend_name(dc.backend), ws_strerror(st), mpi.rank);
  } else
#endif
  {
    st = ws_device_create(&dc, &dev);
    if (st != WS_OK)
      fprintf(stderr, "%s: cannot open the %s backend: %s%s\n", prog, ws_backend_name(dc.backend),
              ws_strerror(st),
              !ws_backend_compiled(dc.backend) ? " (not built into this binary)" : "");
  }
  if (agree(st != WS_OK, "opening the devices")) {
    ws_device_destroy(dev);
    pt_scene_free(&scene);
    return finish(1);
  }
  pt_options_resolve(&o, ws_device_backend(dev)); /* the header line shows the real values */
  failed = pt_options_check(&o, err, sizeof err) != 0;
  if (failed)
    fprintf(stderr, "%s: %s\n", prog, err);
  if (agree(failed, "checking the options")) {
    ws_device_destroy(dev);
    pt_scene_free(&scene);
    return finish(2);
  }
  /* this process's rows: all of them, or its rank's share */
  ws_partition part = {0, o.height, 1};
#ifdef PT_MPI
  ws_partition_range(o.height, (uint32_t)mpi.size, (uint32_t)mpi.rank, share, &part);
  o.row_first = (uint32_t)part.first;
  o.row_count = (uint32_t)part.count;
  o.row_stride = (uint32_t)part.stride;
#endif
  /* every output is created before the render (by rank 0, which writes them) */
  int rc = 0;
  if (!root) {
    nout = 0;
    json = csv = NULL;
  }
  for (int i = 0; i < nout && rc == 0; ++i)
    rc = open_output(outs[i].path, "image", outs[i].format == IMG_EXR ? NULL : &outs[i].f);
  if (rc == 0 && json)
    rc = open_output(json, "statistics", NULL);
  if (rc == 0 && csv)
    rc = open_output(csv, "statistics", NULL);
  /* img: this process's rows; full: the whole image (rank 0), the same
   * buffer in a single process */
  const size_t n = (size_t)o.width * part.count * 3;
  float *img = rc == 0 ? malloc((n ? n : 1) * sizeof *img) : NULL;
  float *full = img;
  int oom = rc == 0 && !img;
#ifdef PT_MPI
  /* rank 0: the whole image and every rank's statistics and device name */
  pt_stats *rank_stats = NULL;
  char(*rank_devices)[64] = NULL;
  full = NULL;
  if (rc == 0 && root) {
    full = malloc((size_t)o.width * o.height * 3 * sizeof *full);
    rank_stats = malloc((size_t)mpi.size * sizeof *rank_stats);
    rank_devices = malloc((size_t)mpi.size * sizeof *rank_devices);
    oom |= !full || !rank_stats || !rank_devices;
  }
#endif
  if (oom) {
    fprintf(stderr, "%s: out of memory for a %ux%u image\n", prog, o.width, o.height);
    rc = 1;
  }
  if (agree(rc != 0, "preparing the outputs")) {
    failed = 1;
    goto release; /* every rank: nothing rendered, nothing written */
  }
  const int inline_nee = o.scheduler == WS_SCHEDULER_MEGAKERNEL || o.nee_mode == PT_NEE_INLINE;
  if (root) {
    printf("%s: %ux%u, %u spp, max depth %u, seed %u on %s\n", prog, o.width, o.height, o.spp,
           o.max_depth, o.seed, ws_device_name(dev));
    if (nscenes)
      printf("  scene: %u triangles (BVH %u nodes, depth %u), %u prims, %u materials, %u textures, "
             "%u lights\n",
             scene.tri_count, scene.node_count, scene.bvh_depth, scene.prim_count, scene.mat_count,
             scene.tex_count, scene.light_count);
    if (o.scheduler == WS_SCHEDULER_WAVEFRONT)
      printf("  wavefront scheduler: pool %u, %s, %s accounting, tail %u; NEE %s", o.pool,
             layout_names[o.layout], acc_names[o.accounting], o.tail_frames,
             inline_nee ? "inline" : "pipeline");
    else
      printf("  megakernel scheduler; NEE inline");
    if (!inline_nee)
      printf(" (capacity %u%s%s)", o.shadow_capacity ? o.shadow_capacity : o.pool,
             o.partial_admission ? ", partial admission" : "",
             o.shadow_append ? ", append allocation" : "");
    printf("; %u spp per dispatch\n", o.batch_spp);
#ifdef PT_MPI
    printf("  MPI: %d ranks, rows %s (rank 0: %u of %u rows)\n", mpi.size,
           share == WS_PARTITION_BLOCKS ? "in blocks" : "interleaved", (unsigned)part.count,
           o.height);
#endif
    fflush(stdout);
  }
  if (show_progress && root) {
    o.progress = progress;
    o.progress_user = NULL;
  }

  pt_stats stats;
  memset(&stats, 0, sizeof stats);
#ifdef PT_MPI
  pt_mpi_barrier(); /* the ranks' wall time starts together */
  const double t0 = wall_ms();
#endif
  /* a rank with no rows (more ranks than rows) renders nothing */
  st = part.count ? pt_render(dev, &o, img, &stats, err, sizeof err) : WS_OK;
  if (st != WS_OK) {
    if (show_progress && root)
      fputc('\n', stderr);
    fprintf(stderr, "%s: render failed: %s\n", prog, err[0] ? err : ws_strerror(st));
    if (st == WS_EAUX_POOL_BOUND)
      fprintf(stderr, "%s: a shadow capacity below the pool size (R * b = %u) needs "
                      "--partial-admission\n", prog, o.pool);
  }
  failed = st != WS_OK;
#ifdef PT_MPI
  /* the image and the statistics to rank 0, in rank order */
  if (!agree(failed, "rendering")) {
    failed = pt_mpi_gather_rows(&mpi, img, o.width, o.height, share, full) != 0;
    if (failed && root)
      fprintf(stderr, "%s: out of memory for the gathered %ux%u image\n", prog, o.width,
              o.height);
    if (!failed) {
      char name[64];
      snprintf(name, sizeof name, "%s", ws_device_name(dev));
      pt_mpi_gather_bytes(&mpi, &stats, sizeof stats, rank_stats);
      pt_mpi_gather_bytes(&mpi, name, sizeof name, rank_devices);
      if (root)
        combine_ranks(rank_stats, mpi.size, wall_ms() - t0, &stats);
    }
  } else {
    failed = 1;
  }
  free(img);
  img = NULL; /* rank 0 goes on with the whole image */
#endif
release:
  if (failed || !root) {
    for (int i = 0; i < nout; ++i)
      if (outs[i].f)
        fclose(outs[i].f);
    free(img);
#ifdef PT_MPI
    free(full);
    free(rank_stats);
    free(rank_devices);
#endif
    ws_device_destroy(dev);
    pt_scene_free(&scene);
    return finish(failed);
  }
  uint64_t bad = 0;
  const double mean = pt_image_mean(full, o.width, o.height, &bad);
  printf("rendered %" PRIu64 " paths in %.3f s (%.2f Mpaths/s, scheduler %.3f s); mean radiance "
         "%.5f%s\n",
         stats.paths, stats.render_ms / 1e3,
         stats.render_ms > 0 ? stats.paths / (stats.render_ms * 1e3) : 0.0,
         stats.dispatch_ms / 1e3, mean, bad ? " (NaN/Inf/negative values!)" : "");
  pt_print_stats(stdout, &stats);
  if (o.shadow_append && stats.shadow_capacity)
    printf("append shadow pool: peak extent %u of %u, %" PRIu64 " reclaims, %" PRIu64
           " compactions\n",
           stats.shadow_peak_extent, stats.shadow_capacity, stats.shadow_reclaims,
           stats.shadow_compactions);
#ifdef PT_MPI
  print_ranks(stdout, rank_stats, rank_devices, mpi.size, o.height, share);
#endif
  rc = bad ? 1 : 0;
  for (int i = 0; i < nout; ++i) {
    int w = -1;
    if (outs[i].format == IMG_PNG)
      w = write_ldr(outs[i].f, full, o.width, o.height);
    else if (outs[i].format == IMG_PFM)
      w = write_pfm(outs[i].f, full, o.width, o.height);
#ifdef PT_HAVE_EXR
    else
      w = write_exr(outs[i].path, full, o.width, o.height);
#endif
    if (outs[i].f && fclose(outs[i].f) != 0)
      w = -1;
    if (w != 0) {
      fprintf(stderr, "%s: cannot write %s\n", prog, outs[i].path);
      rc = 1;
    } else {
      printf("wrote %s\n", outs[i].path);
    }
  }
  if (json && pt_write_stats_json(json, &o, ws_backend_name(dc.backend), &stats) != 0) {
    fprintf(stderr, "%s: cannot write %s\n", prog, json);
    rc = 1;
  }
  if (csv && pt_write_stats_csv(csv, &stats) != 0) {
    fprintf(stderr, "%s: cannot write %s\n", prog, csv);
    rc = 1;
  }
  free(full);
#ifdef PT_MPI
  free(rank_stats);
  free(rank_devices);
#endif
  ws_device_destroy(dev);
  pt_scene_free(&scene);
  return finish(rc);
}
