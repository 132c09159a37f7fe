/* wavesched-pathtracer: renders the built-in Cornell box with the wavefront
 * (or megakernel) scheduler, writes a PNG and prints the statistics table.
 * See docs/pathtracer.md. */
#define _POSIX_C_SOURCE 200809L /* setenv, execv, isatty */
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

#include "pt.h"
#include "pt_render.h"

static const char *const prog = "wavesched-pathtracer";

static void usage(FILE *f) {
  fprintf(f,
          "usage: %s [options]\n"
          "  --backend cpu|cuda|vulkan        backend (default cpu)\n"
          "  --scheduler wavefront|megakernel (default wavefront)\n"
          "  --width W, --height H            image size (default 256 x 256)\n"
          "  --spp N                          samples per pixel (default 16)\n"
          "  --max-depth D                    scattering vertices per path (default 6)\n"
          "  --rr-depth D                     Russian roulette from this vertex on (default 3)\n"
          "  --seed S                         random seed (default 1)\n"
          "  --pool R                         resident frames (default 16384 on the CPU,\n"
          "                                   1048576 on a GPU)\n"
          "  --shadow-capacity C              shadow pipeline slots (default R: the smallest\n"
          "                                   registration allows; smaller needs\n"
          "                                   --partial-admission)\n"
          "  --partial-admission              admit part of a producer queue when the\n"
          "                                   shadow pool is nearly full\n"
          "  --nee pipeline|inline            next-event estimation through the auxiliary\n"
          "                                   pipeline (default) or inline in the shading\n"
          "                                   continuations (the megakernel always inlines)\n"
          "  --batch-spp N                    samples per dispatch (default: about 262144\n"
          "                                   paths on the CPU, 4194304 on a GPU)\n"
          "  --layout aos|soa                 frame layout (default aos)\n"
          "  --accounting materialized|incremental|fused (default fused on CUDA,\n"
          "                                   incremental elsewhere)\n"
          "  --verify                         verify the queues every iteration\n"
          "  --no-shadow-counters             skip counting shadow-ray outcomes (atomics)\n"
          "  --output FILE                    PNG to write (default pathtracer.png;\n"
          "                                   '-' or '' writes none)\n"
          "  --stats-json FILE                write the statistics as JSON\n"
          "  --stats-csv FILE                 write the statistics table as CSV\n"
          "  --progress / --no-progress       progress bar on stderr (default: if a tty)\n"
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

static uint32_t number(const char *opt, const char *v, uint32_t lo) {
  char *end = NULL;
  unsigned long long x = strtoull(v, &end, 10);
  if (!*v || *end || x < lo || x > 0xffffffffull) {
    fprintf(stderr, "%s: --%s: expected an integer >= %u, got '%s'\n", prog, opt, lo, v);
    exit(2);
  }
  return (uint32_t)x;
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

static int write_image(const char *path, const float *img, uint32_t w, uint32_t h) {
  unsigned char *rgb = malloc((size_t)w * h * 3);
  if (!rgb)
    return -1;
  for (size_t i = 0; i < (size_t)w * h * 3; ++i)
    rgb[i] = to_srgb8(img[i]);
  FILE *f = fopen(path, "wb");
  if (!f) {
    free(rgb);
    return -1;
  }
#ifdef PT_HAVE_PNG
  int rc = write_png(f, rgb, w, h);
#else
  /* built without libpng: a binary PPM under the requested name */
  fprintf(f, "P6\n%u %u\n255\n", w, h);
  int rc = fwrite(rgb, 1, (size_t)w * h * 3, f) == (size_t)w * h * 3 ? 0 : -1;
#endif
  if (fclose(f) != 0)
    rc = -1;
  free(rgb);
  return rc;
}

int main(int argc, char **argv) {
  /* The wavefront runs thousands of short OpenMP regions per render on the
   * CPU backend; libgomp's default spin-waiting between them made the
   * default render 10x slower (8-11 s instead of 0.8 s) on 2 shared cores
   * (docs/pathtracer.md). libgomp reads OMP_WAIT_POLICY only when it is
   * loaded, before main, so unless the user chose a policy: restart once with
   * passive waiting (if the restart fails, carry on as we are). */
  if (!getenv("OMP_WAIT_POLICY")) {
    setenv("OMP_WAIT_POLICY", "passive", 1);
    execv("/proc/self/exe", argv);
  }
  pt_options o = pt_options_default();
  ws_device_config dc;
  memset(&dc, 0, sizeof dc);
  dc.device_index = -1;
  const char *output = "pathtracer.png", *json = NULL, *csv = NULL;
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
                                       {"nee", required_argument, 0, 'N'},
                                       {"batch-spp", required_argument, 0, 'B'},
                                       {"layout", required_argument, 0, 'l'},
                                       {"accounting", required_argument, 0, 'a'},
                                       {"verify", no_argument, 0, 'V'},
                                       {"no-shadow-counters", no_argument, 0, 'X'},
                                       {"output", required_argument, 0, 'o'},
                                       {"stats-json", required_argument, 0, 'j'},
                                       {"stats-csv", required_argument, 0, 'c'},
                                       {"progress", no_argument, 0, 'p'},
                                       {"no-progress", no_argument, 0, 'q'},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
  static const char *const sched_names[] = {"wavefront", "megakernel"};
  static const char *const nee_names[] = {"pipeline", "inline"};
  static const char *const layout_names[] = {"aos", "soa"};
  static const char *const acc_names[] = {"materialized", "incremental", "fused"};
  int ch;
  while ((ch = getopt_long(argc, argv, "ho:", opts, NULL)) != -1) {
    switch (ch) {
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
    case 'V':
      o.verify = true;
      break;
    case 'X':
      o.no_shadow_counters = true;
      break;
    case 'o':
      output = optarg;
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
      (o.shadow_capacity || o.partial_admission))
    fprintf(stderr, "%s: note: the megakernel takes no auxiliary work; NEE runs inline and "
                    "--shadow-capacity/--partial-admission are ignored\n", prog);

  ws_device *dev = NULL;
  ws_status st = ws_device_create(&dc, &dev);
  if (st != WS_OK) {
    fprintf(stderr, "%s: cannot open the %s backend: %s%s\n", prog, ws_backend_name(dc.backend),
            ws_strerror(st),
            !ws_backend_compiled(dc.backend) ? " (not built into this binary)" : "");
    return 1;
  }
  pt_options_resolve(&o, ws_device_backend(dev)); /* the header line shows the real values */
  const int inline_nee = o.scheduler == WS_SCHEDULER_MEGAKERNEL || o.nee_mode == PT_NEE_INLINE;
  printf("%s: %ux%u, %u spp, max depth %u, seed %u on %s\n", prog, o.width, o.height, o.spp,
         o.max_depth, o.seed, ws_device_name(dev));
  if (o.scheduler == WS_SCHEDULER_WAVEFRONT)
    printf("  wavefront scheduler: pool %u, %s, %s accounting; NEE %s", o.pool,
           layout_names[o.layout], acc_names[o.accounting], inline_nee ? "inline" : "pipeline");
  else
    printf("  megakernel scheduler; NEE inline");
  if (!inline_nee)
    printf(" (capacity %u%s)", o.shadow_capacity ? o.shadow_capacity : o.pool,
           o.partial_admission ? ", partial admission" : "");
  printf("; %u spp per dispatch\n", o.batch_spp);
  fflush(stdout);
  if (show_progress) {
    o.progress = progress;
    o.progress_user = NULL;
  }

  const size_t n = (size_t)o.width * o.height * 3;
  float *img = malloc(n * sizeof *img);
  if (!img) {
    fprintf(stderr, "%s: out of memory for a %ux%u image\n", prog, o.width, o.height);
    ws_device_destroy(dev);
    return 1;
  }
  pt_stats stats;
  char err[512];
  st = pt_render(dev, &o, img, &stats, err, sizeof err);
  if (st != WS_OK) {
    if (show_progress)
      fputc('\n', stderr);
    fprintf(stderr, "%s: render failed: %s\n", prog, err[0] ? err : ws_strerror(st));
    if (st == WS_EAUX_POOL_BOUND)
      fprintf(stderr, "%s: a shadow capacity below the pool size (R * b = %u) needs "
                      "--partial-admission\n", prog, o.pool);
    free(img);
    ws_device_destroy(dev);
    return 1;
  }
  uint64_t bad = 0;
  const double mean = pt_image_mean(img, o.width, o.height, &bad);
  printf("rendered %" PRIu64 " paths in %.3f s (%.2f Mpaths/s, scheduler %.3f s); mean radiance "
         "%.5f%s\n",
         stats.paths, stats.render_ms / 1e3,
         stats.render_ms > 0 ? stats.paths / (stats.render_ms * 1e3) : 0.0,
         stats.dispatch_ms / 1e3, mean, bad ? " (NaN/Inf/negative values!)" : "");
  pt_print_stats(stdout, &stats);
  int rc = bad ? 1 : 0;
  if (output && output[0] && strcmp(output, "-") != 0) {
    if (write_image(output, img, o.width, o.height) != 0) {
      fprintf(stderr, "%s: cannot write %s\n", prog, output);
      rc = 1;
    } else {
      printf("wrote %s\n", output);
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
  free(img);
  ws_device_destroy(dev);
  return rc;
}
