/* SPDX-License-Identifier: MIT */
/* wavesched tests — the small harness every test program shares.
 *
 *   int main(int argc, char **argv) {
 *     const wt_need needs[] = {{&t_basic_modules, "t_basic"}};
 *     wt_init(argc, argv, needs, 1);     // --backend cpu|cuda|vulkan; exits 77
 *                                        // when the device or a kernel is absent
 *     wt_add_per_combo("oversubscribed", test_fn);   // one cmocka test per combo
 *     wt_add("bad_config", other_fn, NULL);
 *     return wt_run("core_basic");
 *   }
 *
 * Every test registered here gets a teardown that destroys whatever it made
 * through wt_buffer()/wt_scheduler(), so an assertion that fails half-way
 * leaks nothing into the next test.
 */
#ifndef WS_TEST_H
#define WS_TEST_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* clang-format off: cmocka.h needs the headers above first */
#include <cmocka.h>
/* clang-format on */

#include "wavesched/testing.h"
#include "wavesched/wavesched.h"

/* exit code that ctest reads as "skipped" (SKIP_RETURN_CODE) */
#define WT_SKIP 77

/* ---- the run ---- */
extern ws_device *wt_dev;
extern ws_backend_kind wt_backend;

/* A kernel entry the program needs: `entry` (a coroutine or kernel name) in
 * `modules`. */
typedef struct wt_need {
  const ws_module_set *modules;
  const char *entry;
} wt_need;

/* Parses `--backend NAME` (or --backend=NAME; default: $WS_TEST_BACKEND, else
 * cpu), `--filter GLOB` (cmocka test-name filter) and `--known-bugs` (see
 * wt_begin_known_bugs). Opens the device; exits
 * with WT_SKIP when it is absent (WS_ENODEV) or when one of the needed
 * entries has no kernel for the backend (WS_ENOKERNEL: e.g. its GLSL version
 * was not written yet), so ctest reports a skip, never a pass. */
void wt_init(int argc, char **argv, const wt_need *needs, size_t need_count);

/* ---- combinations: layout x accounting x compaction x policy ---- */
typedef enum wt_accounting { WT_MATERIALIZED = 0, WT_INCREMENTAL = 1, WT_FUSED = 2 } wt_accounting;

typedef struct wt_combo {
  uint32_t layout; /* WS_LAYOUT_AOS / WS_LAYOUT_SOA */
  wt_accounting accounting;
  bool compaction;
  bool greedy; /* largest_first; false = all-queues (materialized only) */
  char name[64];
} wt_combo;

/* The 16 legal combinations (all-queues only with materialized accounting;
 * fused implies incremental). */
uint32_t wt_combo_count(void);
const wt_combo *wt_combo_at(uint32_t i);
/* A configuration for `c` (NULL: the library default) with R resident frames,
 * statistics on, everything else default. */
ws_scheduler_config wt_config(const wt_combo *c, uint32_t resident_frames);

/* ---- registering and running cmocka tests ---- */
void wt_add(const char *name, CMUnitTestFunction fn, void *state);
/* One test per combination, named "<name>[<combo>]"; *state is the wt_combo. */
void wt_add_per_combo(const char *name, CMUnitTestFunction fn);
/* Tests registered after this call assert correct behaviour that a known
 * library bug breaks today: they run only with `--known-bugs` (and then
 * alone), so the default run stays green; ctest has them as a DISABLED
 * `<name>_known_bugs` test (ws_add_backend_test KNOWN_BUGS). */
void wt_begin_known_bugs(void);
/* Runs the registered tests; returns 0 when all passed, 1 otherwise. */
int wt_run(const char *group_name);

/* ---- resources tracked for the test's teardown ---- */
/* A device buffer of `bytes`, zero-filled. */
ws_buffer *wt_buffer(size_t bytes);
void wt_read(ws_buffer *b, void *dst, size_t bytes);
void wt_zero(ws_buffer *b);
/* Zeroed host memory, freed by the test's teardown (so a failed assertion
 * leaks nothing); fails the test when out of memory. */
void *wt_calloc(size_t count, size_t size);
/* Creates a scheduler and fails the test unless it returns WS_OK. */
ws_scheduler *wt_scheduler(const ws_coroutine_desc *co, const ws_scheduler_config *cfg);
/* Creates a scheduler and returns the status, with the message the device's
 * log callback received in text (creation errors are reported there: the
 * scheduler is gone). Fails the test if the library wrote to stderr, and
 * unless *out is NULL exactly on failure. A scheduler it creates is
 * destroyed by the teardown. */
ws_status wt_scheduler_try(const ws_coroutine_desc *co, const ws_scheduler_config *cfg, char *text,
                           size_t cap);
/* The same, failing the test unless the status is `expect`; `what` names the
 * case. text may be NULL. */
#define wt_scheduler_expect(co, cfg, expect, text, cap, what)                                      \
  wt_scheduler_expect_((co), (cfg), (expect), (text), (cap), (what), __FILE__, __LINE__)
ws_status wt_scheduler_expect_(const ws_coroutine_desc *co, const ws_scheduler_config *cfg,
                               ws_status expect, char *text, size_t cap, const char *what,
                               const char *file, int line);

/* ---- environment ---- */
/* Sets (value != NULL) or unsets an environment variable until the test's
 * teardown restores it. */
void wt_setenv(const char *name, const char *value);
/* The latest message the device's log callback received ("" after
 * wt_clear_log). */
const char *wt_last_log(void);
void wt_clear_log(void);

/* ---- assertions with messages ---- */
/* Fails unless `st` equals `expect`, naming both codes and the scheduler's
 * last error (when s != NULL). */
#define WT_EXPECT_STATUS(st, expect, s, ctx)                                                       \
  wt_expect_status_((st), (expect), (s), (ctx), __FILE__, __LINE__)
#define WT_OK(st, s, ctx) WT_EXPECT_STATUS((st), WS_OK, (s), (ctx))
void wt_expect_status_(ws_status st, ws_status expect, const ws_scheduler *s, const char *ctx,
                       const char *file, int line);

/* Fails with a formatted message (cmocka's fail_msg, but usable with no
 * variadic arguments under -Wpedantic too). */
#define WT_FAIL(...) wt_fail_(__FILE__, __LINE__, __VA_ARGS__)
void wt_fail_(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4), noreturn));
/* Fails unless `cond`, with the formatted message. */
#define WT_CHECK(cond, ...)                                                                        \
  do {                                                                                             \
    if (!(cond))                                                                                   \
      wt_fail_(__FILE__, __LINE__, __VA_ARGS__);                                                   \
  } while (0)

/* The combination of a per-combo test's state. */
static inline const wt_combo *wt_state_combo(void **state) {
  return (const wt_combo *)*state;
}

#endif
