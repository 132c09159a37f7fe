/* SPDX-License-Identifier: MIT */
/* The demo CLI under hostile input (issue 12, "checks before memory"):
 * malformed numbers are refused naming the option (exit 2); a pool larger
 * than the items is reduced, not reserved; a request larger than the
 * device fails before memory is committed, naming the option and the limit
 * (exit 1); and a run holds at most 1.5x what its output needs.
 *
 *   test_cli_limits PATH/TO/wavesched-demo
 *
 * Each case runs the demo in a child process (optionally under RLIMIT_AS)
 * and reads its exit status, its output and its peak resident memory
 * (wait4's ru_maxrss). Under ASan/TSan only the argument cases run: a
 * sanitizer's shadow memory breaks address-space limits and inflates RSS. */
#define _DEFAULT_SOURCE /* wait4 */
#include <fcntl.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifndef SANITIZED
#define SANITIZED 0
#endif

static const char *g_demo;

typedef struct run {
  int status;         /* exit code, 128 + signal when killed */
  long maxrss_kib;    /* peak resident set */
  char out[8192];     /* stdout and stderr together */
} run;

/* Runs the demo with `args` (NULL-terminated), under RLIMIT_AS = as_limit
 * bytes when non-zero. */
static void run_demo(run *r, uint64_t as_limit, const char *const *args) {
  char path[] = "/tmp/ws-cli-limits-XXXXXX";
  const int fd = mkstemp(path);
  assert_true(fd >= 0);
  unlink(path);
  const char *argv[32];
  int n = 0;
  argv[n++] = g_demo;
  for (; args[n - 1] && n < 31; ++n)
    argv[n] = args[n - 1];
  argv[n] = NULL;
  fflush(stdout);
  const pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    dup2(fd, 1);
    dup2(fd, 2);
    if (as_limit) {
      struct rlimit rl = {(rlim_t)as_limit, (rlim_t)as_limit};
      if (setrlimit(RLIMIT_AS, &rl) != 0)
        _exit(99);
    }
    execv(g_demo, (char *const *)argv);
    _exit(98);
  }
  int status = 0;
  struct rusage ru;
  memset(&ru, 0, sizeof ru);
  assert_int_equal(wait4(pid, &status, 0, &ru), pid);
  r->status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r->maxrss_kib = ru.ru_maxrss;
  const ssize_t got = pread(fd, r->out, sizeof r->out - 1, 0);
  r->out[got > 0 ? got : 0] = '\0';
  close(fd);
}

static void expect_run(const run *r, int status, const char *const *needles, const char *what) {
  printf("  %-44s exit %d, %6ld KiB: %.*s", what, r->status, r->maxrss_kib,
         (int)strcspn(r->out, "\n") + 1, r->out);
  if (r->status != status)
    fail_msg("%s: exit %d, expected %d; output:\n%s", what, r->status, status, r->out);
  for (; *needles; ++needles)
    if (!strstr(r->out, *needles))
      fail_msg("%s: the output lacks '%s':\n%s", what, *needles, r->out);
}

/* Malformed numbers: exit 2 with a message naming the option and the value. */
static void test_bad_numbers(void **state) {
  (void)state;
  static const struct {
    const char *opt, *value, *needle;
  } cases[] = {
      {"--items", "abc", "--items: expected a decimal number"},
      {"--items", "-1", "--items: expected a decimal number"},
      {"--items", "12x", "got '12x'"},
      {"--items", "", "got ''"},
      {"--items", " 5", "got ' 5'"},
      {"--items", "+5", "got '+5'"},
      {"--items", "0x10", "got '0x10'"},
      {"--items", "4294967296", "--items: 4294967296 is out of range 0..4294967295"},
      {"--items", "99999999999999999999999", "is out of range"},
      {"--pool", "0", "--pool: 0 is out of range 1..4294967295"},
      {"--pool", "-4096", "--pool: expected a decimal number"},
      {"--cpu-threads", "1025", "--cpu-threads: 1025 is out of range 0..1024"},
      {"--cpu-threads", "-1", "--cpu-threads: expected a decimal number"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    run r;
    const char *args[] = {cases[i].opt, cases[i].value, NULL};
    const char *needles[] = {cases[i].needle, NULL};
    char what[96];
    snprintf(what, sizeof what, "%s '%s'", cases[i].opt, cases[i].value);
    run_demo(&r, 0, args);
    expect_run(&r, 2, needles, what);
  }
  run r;
  const char *pipe_args[] = {"--scenario", "pipeline", "--items", "5", NULL};
  const char *pipe_needles[] = {"--items and --pool do not apply to --scenario pipeline", NULL};
  run_demo(&r, 0, pipe_args);
  expect_run(&r, 2, pipe_needles, "--scenario pipeline --items 5");
  const char *extra_args[] = {"--items", "5", "stray", NULL};
  const char *extra_needles[] = {"unexpected argument 'stray'", NULL};
  run_demo(&r, 0, extra_args);
  expect_run(&r, 2, extra_needles, "a stray argument");
}

/* What one run holds beyond a minimal run (--items 1): the process's own
 * libraries and stacks cancel out. */
static long extra_kib(const run *r, const run *base) { return r->maxrss_kib - base->maxrss_kib; }

/* A pool above the item count is reduced (it used to reserve and fill 2.35
 * GB for --pool 200000000 --items 1000). */
static void test_pool_reduced(void **state) {
  (void)state;
  run base, r;
  const char *base_args[] = {"--items", "1", NULL};
  run_demo(&base, 0, base_args);
  const char *ok[] = {"items 1,", NULL};
  expect_run(&base, 0, ok, "--items 1 (baseline)");
  const char *args[] = {"--items", "1000", "--pool", "200000000", NULL};
  const char *needles[] = {"--pool 200000000 is larger than --items 1000: using 1000 resident",
                           "items 1000, continuation runs", NULL};
  run_demo(&r, 0, args);
  expect_run(&r, 0, needles, "--items 1000 --pool 200000000");
  if (!SANITIZED) {
    /* 1000 frames and results: well under a MiB */
    printf("  %ld KiB above the baseline\n", extra_kib(&r, &base));
    assert_true(extra_kib(&r, &base) < 4096);
  }
}

/* A request larger than the device (here: an address-space limit) fails
 * before memory is committed, naming the option and the limit. */
static void test_over_the_limit(void **state) {
  (void)state;
  if (SANITIZED) {
    printf("  skipped: a sanitizer's shadow memory does not fit an address-space limit\n");
    return;
  }
  /* the limit: what a minimal run maps, plus 256 MiB */
  run base;
  const char *base_args[] = {"--items", "1", NULL};
  run_demo(&base, 0, base_args);
  const uint64_t limit = (uint64_t)1 << 30; /* 1 GiB of address space */
  run r;
  const char *args[] = {"--items", "200000000", NULL}; /* 1.6 GB of results */
  const char *needles[] = {"--items 200000000: the results need 1600000008 bytes of device memory",
                           "available on the cpu device", "items fit", NULL};
  run_demo(&r, limit, args);
  expect_run(&r, 1, needles, "--items 200000000 under 1 GiB");
  assert_true(extra_kib(&r, &base) < 16384);
  /* the pool the scheduler would reserve: refused by the library, before
   * memory, naming resident_frames and the numbers */
  const char *pargs[] = {"--items", "100000000", "--pool", "100000000", NULL};
  const char *pneedles[] = {"--pool 100000000 does not fit the cpu device",
                            "resident_frames 100000000", "bytes of device memory needed", NULL};
  run_demo(&r, limit, pargs);
  expect_run(&r, 1, pneedles, "--items/--pool 100000000 under 1 GiB");
  assert_true(extra_kib(&r, &base) < 16384);
  /* the largest request: 2^32 - 1 items */
  const char *margs[] = {"--items", "4294967295", NULL};
  const char *mneedles[] = {"--items 4294967295: the results need 34359738368 bytes", NULL};
  run_demo(&r, limit, margs);
  expect_run(&r, 1, mneedles, "--items 4294967295 under 1 GiB");
  assert_true(extra_kib(&r, &base) < 16384);
}

/* A run that fits holds at most 1.5x what its output needs: two result
 * words per item and the pool's frames (AoS demo frame: 16 bytes, and 16
 * bytes of id, token, slot and scratch words per frame). */
static void test_memory_proportional(void **state) {
  (void)state;
  if (SANITIZED) {
    printf("  skipped: a sanitizer's shadow and quarantine inflate RSS\n");
    return;
  }
  run base, r;
  const char *base_args[] = {"--items", "1", NULL};
  run_demo(&base, 0, base_args);
  const uint32_t N = 1000000, R = 4096;
  const char *args[] = {"--items", "1000000", NULL}; /* the default pool, 4096 */
  const char *ok[] = {"items 1000000, continuation runs", NULL};
  run_demo(&r, 0, args);
  expect_run(&r, 0, ok, "--items 1000000");
  const double need_kib = (8.0 * N + 32.0 * R) / 1024.0;
  printf("  %ld KiB above the baseline, the output needs %.0f KiB (%.2fx)\n", extra_kib(&r, &base),
         need_kib, (double)extra_kib(&r, &base) / need_kib);
  assert_true((double)extra_kib(&r, &base) <= 1.5 * need_kib);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s PATH/TO/wavesched-demo\n", argv[0]);
    return 2;
  }
  g_demo = argv[1];
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_bad_numbers),
      cmocka_unit_test(test_pool_reduced),
      cmocka_unit_test(test_over_the_limit),
      cmocka_unit_test(test_memory_proportional),
  };
  return cmocka_run_group_tests_name("cli_limits", tests, NULL, NULL) ? 1 : 0;
}
