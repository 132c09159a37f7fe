/* SPDX-License-Identifier: MIT */
/* wavesched tests — the shared harness (see ws_test.h). */
#define _POSIX_C_SOURCE 200809L
#include "ws_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

ws_device *wt_dev;
ws_backend_kind wt_backend = WS_BACKEND_CPU;
static bool run_known_bugs;    /* --known-bugs: run only the known-bug tests */
static bool adding_known_bugs; /* registration is past wt_begin_known_bugs() */

/* ---------------------------------------------------------------- init */

static void wt_release_device(void) {
  ws_device_destroy(wt_dev);
  wt_dev = NULL;
}

/* The device's log callback: creation errors of the last wt_scheduler_try,
 * or the latest message (wt_last_log). */
static char wt_log_text[2048];
static void wt_log(void *user, ws_log_level level, const char *message) {
  (void)user;
  (void)level;
  snprintf(wt_log_text, sizeof wt_log_text, "%s", message);
}

const char *wt_last_log(void) { return wt_log_text; }
void wt_clear_log(void) { wt_log_text[0] = '\0'; }

void wt_init(int argc, char **argv, const wt_need *needs, size_t need_count) {
  const char *backend = getenv("WS_TEST_BACKEND");
  if (!backend || !backend[0])
    backend = "cpu";
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--backend") == 0 && i + 1 < argc) {
      backend = argv[++i];
    } else if (strncmp(argv[i], "--backend=", 10) == 0) {
      backend = argv[i] + 10;
    } else if (strcmp(argv[i], "--filter") == 0 && i + 1 < argc) {
      cmocka_set_test_filter(argv[++i]);
    } else if (strcmp(argv[i], "--known-bugs") == 0) {
      run_known_bugs = true;
    } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      printf("usage: %s [--backend cpu|cuda|vulkan] [--filter GLOB] [--known-bugs]\n"
             "Runs every case on the chosen backend; exits %d (skip) when the backend's\n"
             "device or this program's kernels for it are absent. --known-bugs runs only\n"
             "the cases that a known library bug fails today.\n",
             argv[0], WT_SKIP);
      exit(0);
    } else {
      fprintf(stderr, "%s: unknown argument '%s' (try --help)\n", argv[0], argv[i]);
      exit(2);
    }
  }
  if (ws_backend_parse(backend, &wt_backend) != WS_OK) {
    fprintf(stderr, "%s: unknown backend '%s' (cpu, cuda or vulkan)\n", argv[0], backend);
    exit(2);
  }
  ws_device_config dc;
  memset(&dc, 0, sizeof dc);
  dc.backend = wt_backend;
  dc.device_index = -1;
  dc.log = wt_log;
  ws_status st = ws_device_create(&dc, &wt_dev);
  if (st == WS_ENODEV) {
    printf("SKIP: %s: no %s device (%s)\n", argv[0], backend, ws_strerror(st));
    exit(WT_SKIP);
  }
  if (st != WS_OK) {
    fprintf(stderr, "%s: ws_device_create(%s) failed: %s (%s)\n", argv[0], backend,
            ws_status_name(st), ws_strerror(st));
    exit(1);
  }
  atexit(wt_release_device);
  for (size_t i = 0; i < need_count; ++i) {
    ws_kernel k;
    st = ws_kernel_find(wt_dev, needs[i].modules, needs[i].entry, &k);
    if (st == WS_ENOKERNEL) {
      printf("SKIP: %s: kernel '%s' was not built for the %s backend: %s\n", argv[0],
             needs[i].entry, backend, ws_device_last_error(wt_dev));
      exit(WT_SKIP);
    }
    if (st != WS_OK) {
      fprintf(stderr, "%s: ws_kernel_find('%s') failed: %s\n", argv[0], needs[i].entry,
              ws_status_name(st));
      exit(1);
    }
  }
  printf("[ wavesched ] backend %s: %s\n", backend, ws_device_name(wt_dev));
  fflush(stdout);
}

/* ---------------------------------------------------------------- combos */

static wt_combo combos[16];
static uint32_t ncombos;

static void build_combos(void) {
  static const char *const acc_names[] = {"materialized", "incremental", "fused"};
  if (ncombos)
    return;
  for (uint32_t layout = 0; layout < 2; ++layout)
    for (int acc = 0; acc < 3; ++acc)
      for (int comp = 1; comp >= 0; --comp)
        for (int greedy = 1; greedy >= 0; --greedy) {
          if (!greedy && acc != WT_MATERIALIZED)
            continue;
          wt_combo *c = &combos[ncombos++];
          c->layout = layout;
          c->accounting = (wt_accounting)acc;
          c->compaction = comp != 0;
          c->greedy = greedy != 0;
          snprintf(c->name, sizeof c->name, "%s/%s/%s/%s", layout ? "soa" : "aos", acc_names[acc],
                   comp ? "compact" : "nocompact", greedy ? "greedy" : "allq");
        }
}

uint32_t wt_combo_count(void) {
  build_combos();
  return ncombos;
}

const wt_combo *wt_combo_at(uint32_t i) {
  build_combos();
  return i < ncombos ? &combos[i] : NULL;
}

ws_scheduler_config wt_config(const wt_combo *c, uint32_t resident_frames) {
  ws_scheduler_config cfg = ws_scheduler_config_default();
  cfg.resident_frames = resident_frames;
  cfg.statistics = true;
  if (c) {
    cfg.layout = c->layout;
    cfg.accounting = (ws_accounting)c->accounting;
    cfg.compaction = c->compaction;
    cfg.largest_first = c->greedy;
  }
  return cfg;
}

/* ---------------------------------------------------------------- resources */

#define WT_MAX_RES 256
static ws_buffer *res_buf[WT_MAX_RES];
static ws_scheduler *res_sched[WT_MAX_RES];
static void *res_mem[WT_MAX_RES];
static uint32_t nbuf, nsched, nmem;

typedef struct env_saved {
  char name[64];
  char *value; /* NULL: was unset */
} env_saved;
static env_saved env_stack[8];
static uint32_t nenv;

static unsigned long live_at_setup;

/* Library host allocations (ws_testing_live_allocations) are recorded before
 * each test and compared after its teardown: a leak on any path, error paths
 * included, fails the test. */
static int wt_setup(void **state) {
  (void)state;
  live_at_setup = ws_testing_live_allocations();
  return 0;
}

static int wt_teardown(void **state) {
  (void)state;
  while (nsched)
    ws_scheduler_destroy(res_sched[--nsched]);
  while (nbuf)
    ws_buffer_destroy(res_buf[--nbuf]);
  while (nmem)
    free(res_mem[--nmem]);
  while (nenv) {
    env_saved *e = &env_stack[--nenv];
    if (e->value) {
      setenv(e->name, e->value, 1);
      free(e->value);
    } else {
      unsetenv(e->name);
    }
  }
  unsigned long live = ws_testing_live_allocations();
  if (live != live_at_setup) {
    print_error("ERROR: the library holds %lu host allocation(s) after the test, %lu before: "
                "a leak\n",
                live, live_at_setup);
    return -1;
  }
  return 0;
}

ws_buffer *wt_buffer(size_t bytes) {
  WT_CHECK(nbuf < WT_MAX_RES, "test harness: more than %d buffers in one test", WT_MAX_RES);
  ws_buffer *b = NULL;
  ws_status st = ws_buffer_create(wt_dev, bytes ? bytes : 4, &b);
  WT_CHECK(st == WS_OK, "ws_buffer_create(%zu) failed: %s: %s", bytes, ws_status_name(st),
           ws_device_last_error(wt_dev));
  res_buf[nbuf++] = b;
  wt_zero(b);
  return b;
}

void *wt_calloc(size_t count, size_t size) {
  WT_CHECK(nmem < WT_MAX_RES, "test harness: more than %d host allocations in one test",
           WT_MAX_RES);
  void *p = calloc(count ? count : 1, size ? size : 1);
  WT_CHECK(p != NULL, "out of host memory (%zu x %zu bytes)", count, size);
  res_mem[nmem++] = p;
  return p;
}

void wt_zero(ws_buffer *b) {
  size_t words = (ws_buffer_size(b) + 3) / 4;
  ws_status st = ws_buffer_fill_u32(b, 0, 0, ws_buffer_size(b) / 4);
  WT_CHECK(st == WS_OK, "ws_buffer_fill_u32 failed: %s: %s", ws_status_name(st),
           ws_device_last_error(wt_dev));
  if (words * 4 != ws_buffer_size(b)) {
    static const unsigned char zeros[4];
    size_t tail = ws_buffer_size(b) % 4;
    st = ws_buffer_write(b, ws_buffer_size(b) - tail, zeros, tail);
    WT_CHECK(st == WS_OK, "ws_buffer_write failed: %s", ws_status_name(st));
  }
}

void wt_read(ws_buffer *b, void *dst, size_t bytes) {
  ws_status st = ws_buffer_read(b, 0, dst, bytes);
  WT_CHECK(st == WS_OK, "ws_buffer_read(%zu bytes) failed: %s: %s", bytes, ws_status_name(st),
           ws_device_last_error(wt_dev));
}

ws_scheduler *wt_scheduler(const ws_coroutine_desc *co, const ws_scheduler_config *cfg) {
  WT_CHECK(nsched < WT_MAX_RES, "test harness: more than %d schedulers in one test", WT_MAX_RES);
  ws_scheduler *s = NULL;
  ws_status st = ws_scheduler_create(wt_dev, co, cfg, &s);
  WT_CHECK(st == WS_OK && s, "ws_scheduler_create('%s') failed: %s (%s); device: %s", co->name,
           ws_status_name(st), ws_strerror(st), ws_device_last_error(wt_dev));
  res_sched[nsched++] = s;
  return s;
}

ws_status wt_scheduler_try(const ws_coroutine_desc *co, const ws_scheduler_config *cfg, char *text,
                           size_t cap) {
  /* Creation errors reach the device's log callback (the scheduler is
   * gone); stderr is captured to prove the library printed nothing. */
  wt_log_text[0] = '\0';
  fflush(stderr);
  int saved = dup(2);
  FILE *tmp = tmpfile();
  WT_CHECK(saved >= 0 && tmp, "test harness: cannot redirect stderr");
  dup2(fileno(tmp), 2);
  ws_scheduler *const poison = (ws_scheduler *)(uintptr_t)1;
  ws_scheduler *s = poison; /* must be reset */
  ws_status st = ws_scheduler_create(wt_dev, co, cfg, &s);
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  char printed[256];
  rewind(tmp);
  const size_t len = fread(printed, 1, sizeof printed - 1, tmp);
  printed[len] = '\0';
  fclose(tmp);
  WT_CHECK(len == 0, "ws_scheduler_create('%s') wrote to stderr: '%s'",
           co && co->name ? co->name : "(null)", printed);
  if (text && cap)
    snprintf(text, cap, "%s", wt_log_text);
  if (st == WS_OK && s && s != poison) {
    if (nsched < WT_MAX_RES)
      res_sched[nsched++] = s;
    else
      ws_scheduler_destroy(s);
  }
  WT_CHECK(st == WS_OK || s == NULL,
           "ws_scheduler_create('%s') failed with %s but did not set *out to NULL",
           co && co->name ? co->name : "(null)", ws_status_name(st));
  WT_CHECK(st != WS_OK || (s != NULL && s != poison),
           "ws_scheduler_create('%s') returned WS_OK without a scheduler",
           co && co->name ? co->name : "(null)");
  return st;
}

ws_status wt_scheduler_expect_(const ws_coroutine_desc *co, const ws_scheduler_config *cfg,
                               ws_status expect, char *text, size_t cap, const char *what,
                               const char *file, int line) {
  char local[2048];
  if (!text || !cap) {
    text = local;
    cap = sizeof local;
  }
  ws_status st = wt_scheduler_try(co, cfg, text, cap);
  if (st != expect)
    wt_fail_(file, line, "%s: ws_scheduler_create('%s'): expected %s, got %s; log: %s",
             what ? what : "scheduler creation", co && co->name ? co->name : "(null)",
             ws_status_name(expect), ws_status_name(st), text);
  return st;
}

void wt_setenv(const char *name, const char *value) {
  WT_CHECK(nenv < 8 && strlen(name) < sizeof env_stack[0].name, "test harness: wt_setenv");
  env_saved *e = &env_stack[nenv++];
  snprintf(e->name, sizeof e->name, "%s", name);
  const char *old = getenv(name);
  e->value = old ? strdup(old) : NULL;
  if (value)
    setenv(name, value, 1);
  else
    unsetenv(name);
}

/* ---------------------------------------------------------------- messages */

void wt_fail_(const char *file, int line, const char *fmt, ...) {
  char msg[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  print_error("ERROR: %s\n", msg);
  _fail(file, line);
  abort(); /* _fail does not return */
}

void wt_expect_status_(ws_status st, ws_status expect, const ws_scheduler *s, const char *ctx,
                       const char *file, int line) {
  if (st == expect)
    return;
  wt_fail_(file, line, "%s: expected %s, got %s (%s); last error: %s", ctx ? ctx : "call",
           ws_status_name(expect), ws_status_name(st), ws_strerror(st),
           s ? ws_scheduler_last_error(s) : "-");
}

/* ---------------------------------------------------------------- registry */

#define WT_MAX_TESTS 512
static struct CMUnitTest tests[WT_MAX_TESTS];
static char names[WT_MAX_TESTS][128];
static size_t ntests;

void wt_begin_known_bugs(void) {
  adding_known_bugs = true;
}

void wt_add(const char *name, CMUnitTestFunction fn, void *state) {
  if (adding_known_bugs != run_known_bugs)
    return;
  if (ntests >= WT_MAX_TESTS) {
    fprintf(stderr, "test harness: more than %d tests\n", WT_MAX_TESTS);
    exit(1);
  }
  snprintf(names[ntests], sizeof names[ntests], "%s", name);
  tests[ntests].name = names[ntests];
  tests[ntests].test_func = fn;
  tests[ntests].setup_func = wt_setup;
  tests[ntests].teardown_func = wt_teardown;
  tests[ntests].initial_state = state;
  ++ntests;
}

void wt_add_per_combo(const char *name, CMUnitTestFunction fn) {
  char full[128];
  for (uint32_t i = 0; i < wt_combo_count(); ++i) {
    snprintf(full, sizeof full, "%s[%s]", name, combos[i].name);
    wt_add(full, fn, &combos[i]);
  }
}

int wt_run(const char *group_name) {
  char group[160];
  snprintf(group, sizeof group, "%s/%s%s", group_name, ws_backend_name(wt_backend),
           run_known_bugs ? "/known-bugs" : "");
  if (ntests == 0) {
    printf("%s: no tests to run%s\n", group, run_known_bugs ? " (no known bugs)" : "");
    return 0;
  }
  int failed = _cmocka_run_group_tests(group, tests, ntests, NULL, NULL);
  /* never 77 by accident: that would read as a skip */
  return failed ? 1 : 0;
}
