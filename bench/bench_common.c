/* SPDX-License-Identifier: MIT */
/* wavesched benchmarks — shared host code (see bench_common.h). */
#define _POSIX_C_SOURCE 200809L

#include "bench_common.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

extern char **environ; /* POSIX */

/* ------------------------------------------------------------ arguments */

bool bench_parse_u32(const char *value, void *dst) {
  char *end = NULL;
  unsigned long long v = strtoull(value, &end, 0);
  if (!*value || *end || v > UINT32_MAX)
    return false;
  *(uint32_t *)dst = (uint32_t)v;
  return true;
}

bool bench_parse_u32_list(const char *value, void *dst) {
  bench_u32_list *l = (bench_u32_list *)dst;
  l->n = 0;
  const char *p = value;
  while (*p) {
    char *end = NULL;
    unsigned long long v = strtoull(p, &end, 0);
    if (end == p || v > UINT32_MAX || l->n >= 16)
      return false;
    l->v[l->n++] = (uint32_t)v;
    if (*end == ',')
      ++end;
    else if (*end)
      return false;
    p = end;
  }
  return l->n > 0;
}

static void usage(FILE *f, const bench_opts *o, const char *summary, const bench_extra_opt *extra,
                  size_t extra_count) {
  fprintf(f,
          "usage: %s [options]\n%s\n"
          "  --backend cpu|cuda|vulkan  backend (default cpu)\n"
          "  --json FILE                also write the results as JSON\n"
          "  --quick                    smaller sizes and fewer repetitions (CPU runs)\n"
          "  --smoke                    tiny sizes: checks that it runs and verifies\n"
          "  --reps N                   timed repetitions (default: per size)\n"
          "  --threads N                threads of the CPU backend (0 = one per CPU)\n"
          "  --check                    open the device, print it, exit 0 (77 if absent)\n",
          o->prog, summary);
  for (size_t i = 0; i < extra_count; ++i) {
    char opt[64];
    snprintf(opt, sizeof opt, "%s %s", extra[i].name, extra[i].metavar);
    fprintf(f, "  --%-24s %s\n", opt, extra[i].help);
  }
  fprintf(f, "  --help                     this text\n"
             "Exit status: 0 measured and verified, 1 error or failed verification, 2 usage,\n"
             "77 skipped (backend not built, kernels not built for it, or no device).\n");
}

void bench_parse_args(int argc, char **argv, bench_opts *o, const char *summary,
                      const bench_extra_opt *extra, size_t extra_count) {
  memset(o, 0, sizeof *o);
  const char *slash = strrchr(argv[0], '/');
  o->prog = slash ? slash + 1 : argv[0];
  o->backend = WS_BACKEND_CPU;
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      usage(stdout, o, summary, extra, extra_count);
      exit(0);
    } else if (strcmp(a, "--quick") == 0) {
      if (o->size < BENCH_QUICK)
        o->size = BENCH_QUICK;
      continue;
    } else if (strcmp(a, "--smoke") == 0) {
      o->size = BENCH_SMOKE;
      continue;
    } else if (strcmp(a, "--check") == 0) {
      o->check_only = true;
      continue;
    }
    bool known = true, ok = v != NULL;
    if (strcmp(a, "--backend") == 0) {
      ok = ok && ws_backend_parse(v, &o->backend) == WS_OK;
    } else if (strcmp(a, "--json") == 0) {
      o->json_path = v;
    } else if (strcmp(a, "--reps") == 0) {
      uint32_t r = 0;
      ok = ok && bench_parse_u32(v, &r) && r >= 1 && r <= 100000;
      o->reps = (int)r;
    } else if (strcmp(a, "--threads") == 0) {
      uint32_t t = 0;
      ok = ok && bench_parse_u32(v, &t) && t <= 4096;
      o->cpu_threads = (int)t;
    } else {
      known = false;
      for (size_t k = 0; k < extra_count; ++k) {
        if (strncmp(a, "--", 2) == 0 && strcmp(a + 2, extra[k].name) == 0) {
          known = true;
          ok = ok && extra[k].parse(v, extra[k].dst);
          break;
        }
      }
    }
    if (!known) {
      fprintf(stderr, "%s: unknown option '%s' (try --help)\n", o->prog, a);
      exit(BENCH_EXIT_USAGE);
    }
    if (!ok) {
      fprintf(stderr, "%s: %s: missing or bad value%s%s%s\n", o->prog, a, v ? " '" : "",
              v ? v : "", v ? "'" : "");
      exit(BENCH_EXIT_USAGE);
    }
    ++i;
  }
}

/* --------------------------------------------------------------- device */

const char *bench_size_name(bench_size s) {
  return s == BENCH_SMOKE ? "smoke" : s == BENCH_QUICK ? "quick" : "full";
}

const char *bench_loadavg(void) {
  static char buf[128];
  buf[0] = '\0';
  FILE *f = fopen("/proc/loadavg", "r");
  if (!f)
    return buf;
  double a = 0, b = 0, c = 0;
  if (fscanf(f, "%lf %lf %lf", &a, &b, &c) == 3)
    snprintf(buf, sizeof buf, "%.2f %.2f %.2f", a, b, c);
  fclose(f);
  return buf;
}

/* The library's messages (it never prints): why a device could not be
 * opened, and measuring aids such as WS_VULKAN_LOOP_TIMESTAMPS' phase times. */
static void bench_log(void *user, ws_log_level level, const char *message) {
  static const char *const names[] = {"error", "warning", "info"};
  printf("%s: library %s: %s\n", (const char *)user,
         (unsigned)level < 3u ? names[level] : "message", message);
}

ws_device *bench_open_device(const bench_opts *o, const ws_module_set *modules) {
  const char *bname = ws_backend_name(o->backend);
  if (!ws_backend_compiled(o->backend)) {
    printf("SKIP: %s: this build has no %s backend\n", o->prog, bname);
    exit(BENCH_EXIT_SKIP);
  }
  if (!modules->by_backend[o->backend]) {
    printf("SKIP: %s: the benchmark kernels were not built for the %s backend\n", o->prog, bname);
    exit(BENCH_EXIT_SKIP);
  }
  ws_device_config dc;
  memset(&dc, 0, sizeof dc);
  dc.backend = o->backend;
  dc.device_index = -1;
  dc.cpu_threads = o->cpu_threads;
  dc.log = bench_log;
  dc.log_user = (void *)o->prog;
  ws_device *dev = NULL;
  ws_status st = ws_device_create(&dc, &dev);
  if (st == WS_ENODEV) {
    printf("SKIP: %s: no %s device (%s)\n", o->prog, bname, ws_strerror(st));
    exit(BENCH_EXIT_SKIP);
  }
  if (st != WS_OK) {
    fprintf(stderr, "%s: cannot open the %s backend: %s (%s)\n", o->prog, bname,
            ws_status_name(st), ws_strerror(st));
    exit(BENCH_EXIT_FAIL);
  }
  printf("%s: backend %s, device %s, size %s\n", o->prog, bname, ws_device_name(dev),
         bench_size_name(o->size));
  const char *load = bench_loadavg();
  if (*load)
    printf("%s: host load average %s\n", o->prog, load);
  /* the library's knobs in effect (WS_*): an A/B run's output says which
   * side it is */
  int knobs = 0;
  for (char **e = environ; e && *e; ++e) {
    if (strncmp(*e, "WS_", 3) != 0)
      continue;
    if (!knobs++)
      printf("%s: environment:", o->prog);
    printf(" %s", *e);
  }
  if (knobs)
    printf("\n");
  const char *vq = getenv("WS_VERIFY_QUEUES");
  if (vq && *vq && strcmp(vq, "0") != 0)
    printf("%s: WARNING: WS_VERIFY_QUEUES=%s is set: every iteration verifies, times are not "
           "representative\n",
           o->prog, vq);
  fflush(stdout);
  if (o->check_only) {
    ws_device_destroy(dev);
    exit(BENCH_EXIT_OK);
  }
  return dev;
}

ws_kernel bench_find_kernel(ws_device *dev, const ws_module_set *modules, const char *name) {
  ws_kernel k;
  memset(&k, 0, sizeof k);
  ws_status st = ws_kernel_find(dev, modules, name, &k);
  if (st != WS_OK) {
    fprintf(stderr, "bench: kernel '%s': %s (%s)\n", name, ws_strerror(st),
            ws_device_last_error(dev));
    exit(BENCH_EXIT_FAIL);
  }
  return k;
}

void bench_check(ws_status st, ws_device *dev, const char *what) {
  if (st == WS_OK)
    return;
  fprintf(stderr, "bench: %s failed: %s: %s (%s)\n", what, ws_status_name(st), ws_strerror(st),
          dev ? ws_device_last_error(dev) : "");
  exit(BENCH_EXIT_FAIL);
}

void *bench_xmalloc(size_t size) {
  void *p = malloc(size ? size : 1);
  if (!p) {
    fprintf(stderr, "bench: out of host memory (%zu bytes)\n", size);
    exit(BENCH_EXIT_FAIL);
  }
  return p;
}

uint64_t bench_rand64(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* ---------------------------------------------------------------- time */

double bench_now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

double bench_quantile(const double *v, size_t n, double q) {
  if (n == 0)
    return NAN;
  double *c = (double *)bench_xmalloc(n * sizeof *c);
  memcpy(c, v, n * sizeof *c);
  qsort(c, n, sizeof *c, cmp_double);
  double pos = q * (double)(n - 1);
  size_t lo = (size_t)pos;
  double frac = pos - (double)lo;
  double r = lo + 1 < n ? c[lo] * (1.0 - frac) + c[lo + 1] * frac : c[lo];
  free(c);
  return r;
}

double bench_median(const double *v, size_t n) { return bench_quantile(v, n, 0.5); }

double bench_min(const double *v, size_t n) {
  double m = n ? v[0] : NAN;
  for (size_t i = 1; i < n; ++i)
    if (v[i] < m)
      m = v[i];
  return m;
}

double bench_max(const double *v, size_t n) {
  double m = n ? v[0] : NAN;
  for (size_t i = 1; i < n; ++i)
    if (v[i] > m)
      m = v[i];
  return m;
}

/* ---------------------------------------------------------------- JSON */

static void json_sep(bench_json *j, const char *key) {
  if (!j->first[j->depth])
    fputc(',', j->f);
  j->first[j->depth] = false;
  fputc('\n', j->f);
  for (int i = 0; i < j->depth; ++i)
    fputs("  ", j->f);
  if (key)
    fprintf(j->f, "\"%s\": ", key);
}

static void json_string(FILE *f, const char *s) {
  fputc('"', f);
  for (; s && *s; ++s) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\')
      fprintf(f, "\\%c", c);
    else if (c < 0x20)
      fprintf(f, "\\u%04x", c);
    else
      fputc(c, f);
  }
  fputc('"', f);
}

bool bench_json_open(bench_json *j, const bench_opts *o, const char *bench, ws_device *dev) {
  memset(j, 0, sizeof *j);
  if (!o->json_path)
    return true;
  j->f = fopen(o->json_path, "w");
  if (!j->f) {
    fprintf(stderr, "%s: cannot write %s\n", o->prog, o->json_path);
    return false;
  }
  fputc('{', j->f);
  j->first[0] = true;
  char when[64] = "";
  time_t t = time(NULL);
  struct tm tm;
  if (gmtime_r(&t, &tm))
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
  bench_json_str(j, "bench", bench);
  bench_json_str(j, "backend", ws_backend_name(o->backend));
  bench_json_str(j, "device", ws_device_name(dev));
  bench_json_str(j, "size", bench_size_name(o->size));
  bench_json_str(j, "time_utc", when);
  bench_json_str(j, "host_load_start", bench_loadavg());
  return true;
}

void bench_json_close(bench_json *j) {
  if (!j->f)
    return;
  bench_json_str(j, "host_load_end", bench_loadavg());
  fputs("\n}\n", j->f);
  fclose(j->f);
  j->f = NULL;
}

void bench_json_obj(bench_json *j, const char *key) {
  if (!j->f)
    return;
  json_sep(j, key);
  fputc('{', j->f);
  j->first[++j->depth] = true;
}

void bench_json_arr(bench_json *j, const char *key) {
  if (!j->f)
    return;
  json_sep(j, key);
  fputc('[', j->f);
  j->first[++j->depth] = true;
}

static void json_end(bench_json *j, char c) {
  if (!j->f)
    return;
  bool empty = j->first[j->depth];
  --j->depth;
  if (!empty) {
    fputc('\n', j->f);
    for (int i = 0; i < j->depth; ++i)
      fputs("  ", j->f);
  }
  fputc(c, j->f);
}

void bench_json_end_obj(bench_json *j) { json_end(j, '}'); }
void bench_json_end_arr(bench_json *j) { json_end(j, ']'); }

void bench_json_str(bench_json *j, const char *key, const char *value) {
  if (!j->f)
    return;
  json_sep(j, key);
  json_string(j->f, value);
}

void bench_json_num(bench_json *j, const char *key, double value) {
  if (!j->f)
    return;
  json_sep(j, key);
  if (isfinite(value))
    fprintf(j->f, "%.9g", value);
  else
    fputs("null", j->f);
}

void bench_json_u64(bench_json *j, const char *key, uint64_t value) {
  if (!j->f)
    return;
  json_sep(j, key);
  fprintf(j->f, "%llu", (unsigned long long)value);
}

void bench_json_bool(bench_json *j, const char *key, bool value) {
  if (!j->f)
    return;
  json_sep(j, key);
  fputs(value ? "true" : "false", j->f);
}

/* ------------------------------------------------------------- summary */

void bench_summary(const char *bench, const char *what, const char *value, const char *goal,
                   const char *note) {
  printf("SUMMARY|%s|%s|%s|%s|%s\n", bench, what, value, goal ? goal : "-",
         note && *note ? note : "-");
}
