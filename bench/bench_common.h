/* SPDX-License-Identifier: MIT */
/* wavesched benchmarks — what the three programs share: the command line,
 * opening the device (exit 77 when it is absent), the host monotonic clock,
 * order statistics, a small JSON writer and the summary lines bench/run-all
 * collects. */
#ifndef WS_BENCH_COMMON_H
#define WS_BENCH_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "wavesched/wavesched.h"

/* Exit codes: 0 measured and verified, 1 error or failed verification,
 * 2 usage, 77 skipped (backend not built, kernels not built for it, or no
 * device) — the ctest skip code. */
enum { BENCH_EXIT_OK = 0, BENCH_EXIT_FAIL = 1, BENCH_EXIT_USAGE = 2, BENCH_EXIT_SKIP = 77 };

/* Run size: full (the GPU default), quick (for a CPU: smaller sizes, fewer
 * repetitions, minutes not hours on 2 cores), smoke (tiny, seconds: the
 * ctest registration, checks that everything runs and verifies). */
typedef enum bench_size { BENCH_FULL = 0, BENCH_QUICK = 1, BENCH_SMOKE = 2 } bench_size;

typedef struct bench_opts {
  const char *prog;
  ws_backend_kind backend;
  const char *json_path; /* NULL: no JSON */
  bench_size size;
  bool check_only; /* --check: open the device, print it, exit 0/77 */
  int cpu_threads; /* --threads (CPU backend), 0 = one per CPU */
  int reps;        /* --reps: timed repetitions (0 = the program's default) */
} bench_opts;

/* An extra option of one program: `--name VALUE` stored by `parse`, which
 * returns false for a bad value. */
typedef struct bench_extra_opt {
  const char *name;    /* without the leading "--" */
  const char *metavar; /* shown in --help: "--name METAVAR" */
  const char *help;
  bool (*parse)(const char *value, void *dst);
  void *dst;
} bench_extra_opt;

bool bench_parse_u32(const char *value, void *dst);
bool bench_parse_u32_list(const char *value, void *dst); /* bench_u32_list */

typedef struct bench_u32_list {
  uint32_t n;
  uint32_t v[16];
} bench_u32_list;

/* Parses the command line (exits 2 on a usage error, 0 after --help). */
void bench_parse_args(int argc, char **argv, bench_opts *o, const char *summary,
                      const bench_extra_opt *extra, size_t extra_count);

/* Opens the device of o->backend and checks that `modules` were built for
 * it; exits 77 with a SKIP line when the backend, its kernels or its device
 * are absent, 1 on any other error. Prints a header: program, device,
 * backend, size, load average. With --check, exits 0 after the header. */
ws_device *bench_open_device(const bench_opts *o, const ws_module_set *modules);

/* Finds kernel `name` or exits 1. */
ws_kernel bench_find_kernel(ws_device *dev, const ws_module_set *modules, const char *name);

/* Host monotonic clock. */
double bench_now_s(void);

/* Order statistics of v[0..n) (a sorted copy is made; v is not changed). */
double bench_median(const double *v, size_t n);
double bench_min(const double *v, size_t n);
double bench_max(const double *v, size_t n);
double bench_quantile(const double *v, size_t n, double q);

/* Fails the program (exit 1) with a message when st != WS_OK. */
void bench_check(ws_status st, ws_device *dev, const char *what);
#define BENCH_TRY(dev, call) bench_check((call), (dev), #call)

/* Allocation that exits 1 on failure. */
void *bench_xmalloc(size_t size);

/* Deterministic random numbers (splitmix64). */
uint64_t bench_rand64(uint64_t *state);

/* "1/1 load: 1.23 0.98 0.70" from /proc/loadavg, or "" where there is none. */
const char *bench_loadavg(void);

/* ---- JSON ----
 * Minimal writer: objects and arrays nest; `key` is NULL inside arrays. */
typedef struct bench_json {
  FILE *f;
  int depth;
  bool first[32];
} bench_json;

/* Opens o->json_path (NULL path: every call below does nothing) and writes
 * the common header fields: bench, backend, device, size, time, load. */
bool bench_json_open(bench_json *j, const bench_opts *o, const char *bench, ws_device *dev);
void bench_json_close(bench_json *j);
void bench_json_obj(bench_json *j, const char *key);
void bench_json_arr(bench_json *j, const char *key);
void bench_json_end_obj(bench_json *j);
void bench_json_end_arr(bench_json *j);
void bench_json_str(bench_json *j, const char *key, const char *value);
void bench_json_num(bench_json *j, const char *key, double value);
void bench_json_u64(bench_json *j, const char *key, uint64_t value);
void bench_json_bool(bench_json *j, const char *key, bool value);

/* A summary line for bench/run-all, printed to stdout:
 *   SUMMARY|<bench>|<what>|<value>|<goal>|<note>
 * (fields must not contain '|'). */
void bench_summary(const char *bench, const char *what, const char *value, const char *goal,
                   const char *note);

const char *bench_size_name(bench_size s);

#endif
