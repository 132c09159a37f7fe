/* SPDX-License-Identifier: MIT */
/* Vulkan: coroutine steps specialized per continuation (kernel.glsl
 * WS_SPEC_SRC, WS_VULKAN_SPECIALIZE; docs/vulkan.md, "Launches").
 *
 * Two devices on the same physical device: one with WS_VULKAN_SPECIALIZE=1,
 * one with 0 (the generic step). t_spec's continuations OR a probe into
 * seen[id] that reads WS_SPEC_SRC, so the specialized device must show
 * exactly the continuations each item ran (a pipeline specialized for each,
 * none for another), the generic one only the generic bit. Fails when
 * specialization is lost (no map entry, a wrong id or value, one pipeline
 * for every continuation) in the host loop or the device loop.
 *
 *   steps[<loop> <combo>]  host and device loop, three configurations: the
 *                          probe as above; hashes, float accumulators (bit
 *                          for bit) and every statistic equal on both
 *                          devices and to the host's reference
 *   megakernel             the megakernel stays generic on the specialized
 *                          device: the generic bit only, the same results
 *   default                WS_VULKAN_SPECIALIZE unset specializes (the
 *                          default on every device, docs/decisions.md)
 *   env                    WS_VULKAN_SPECIALIZE other than 0 or 1 fails
 *                          device creation, naming the variable
 */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "t_spec.h"
#include "ws_test.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const ws_module_set t_spec_modules;

static const ws_coroutine_desc t_spec_coroutine = {.name = "t_spec", .modules = &t_spec_modules};

#define N_ITEMS 3000u
#define RESIDENT 256u

/* wt_dev is the specialized device (main sets WS_VULKAN_SPECIALIZE=1 before
 * opening it); this one is opened with 0. */
static ws_device *generic_dev;

static char log_text[1024];
static void log_cb(void *user, ws_log_level level, const char *message) {
  (void)user;
  (void)level;
  snprintf(log_text, sizeof log_text, "%s", message);
}

static ws_status open_vulkan(const char *specialize, ws_device **out) {
  if (specialize)
    setenv("WS_VULKAN_SPECIALIZE", specialize, 1);
  else
    unsetenv("WS_VULKAN_SPECIALIZE");
  ws_device_config dc;
  memset(&dc, 0, sizeof dc);
  dc.backend = WS_BACKEND_VULKAN;
  dc.device_index = -1;
  dc.log = log_cb;
  log_text[0] = '\0';
  return ws_device_create(&dc, out);
}

/* One dispatch's results, read back before any check, so that a failed
 * check leaves nothing of the run alive. */
typedef struct outcome {
  ws_status status;
  char error[512];
  ws_dispatch_stats d;
  ws_node_stats node[4];
  uint32_t nodes;
  uint32_t out[N_ITEMS], seen[N_ITEMS];
  float acc[N_ITEMS];
} outcome;

static void run_on(ws_device *dev, const ws_scheduler_config *cfg, outcome *o) {
  memset(o, 0, sizeof *o);
  ws_buffer *out = NULL, *acc = NULL, *seen = NULL;
  ws_scheduler *s = NULL;
  const size_t bytes = 4u * (size_t)N_ITEMS;
  ws_status st = ws_buffer_create(dev, bytes, &out);
  if (st == WS_OK)
    st = ws_buffer_create(dev, bytes, &acc);
  if (st == WS_OK)
    st = ws_buffer_create(dev, bytes, &seen);
  if (st == WS_OK)
    st = ws_buffer_fill_u32(seen, 0, 0u, N_ITEMS);
  if (st == WS_OK)
    st = ws_scheduler_create(dev, &t_spec_coroutine, cfg, &s);
  if (st == WS_OK) {
    const t_spec_args a = {ws_buffer_address(out), ws_buffer_address(acc), ws_buffer_address(seen)};
    st = ws_scheduler_dispatch(s, N_ITEMS, &a, sizeof a);
    snprintf(o->error, sizeof o->error, "%s", ws_scheduler_last_error(s));
    ws_scheduler_dispatch_stats(s, &o->d);
    o->nodes = ws_scheduler_node_count(s);
    for (uint32_t j = 0; j < o->nodes && j < 4; ++j)
      (void)ws_scheduler_node_stats(s, j, &o->node[j]);
  } else {
    snprintf(o->error, sizeof o->error, "%s", ws_device_last_error(dev));
  }
  if (st == WS_OK)
    st = ws_buffer_read(out, 0, o->out, bytes);
  if (st == WS_OK)
    st = ws_buffer_read(acc, 0, o->acc, bytes);
  if (st == WS_OK)
    st = ws_buffer_read(seen, 0, o->seen, bytes);
  o->status = st;
  ws_scheduler_destroy(s);
  ws_buffer_destroy(seen);
  ws_buffer_destroy(acc);
  ws_buffer_destroy(out);
}

/* Results against the host's reference; probe bits as `specialized` says. */
static void check_items(const outcome *o, bool specialized, const char *ctx) {
  WT_CHECK(o->status == WS_OK, "%s: %s (%s)", ctx, ws_status_name(o->status), o->error);
  for (uint32_t id = 0; id < N_ITEMS; ++id) {
    uint32_t h, mask;
    float acc;
    t_spec_expect(id, &h, &acc, &mask);
    WT_CHECK(o->out[id] == h, "%s: item %u: hash 0x%08x, expected 0x%08x", ctx, id, o->out[id], h);
    WT_CHECK(memcmp(&o->acc[id], &acc, 4) == 0, "%s: item %u: accumulator %g, expected %g", ctx, id,
             (double)o->acc[id], (double)acc);
    const uint32_t want = specialized ? mask : T_SPEC_GENERIC_BIT;
    WT_CHECK(o->seen[id] == want,
             "%s: item %u: probe 0x%08x, expected 0x%08x (%s; bit 31: a generic step, bit 30: "
             "a pipeline specialized for another continuation)",
             ctx, id, o->seen[id], want,
             specialized ? "one pipeline per continuation it ran" : "the generic step");
  }
}

#define SAME(field)                                                                                \
  WT_CHECK(a->field == b->field, "%s: " #field ": specialized %" PRIu64 ", generic %" PRIu64, ctx, \
           (uint64_t)a->field, (uint64_t)b->field)

static void same_outcome(const outcome *a, const outcome *b, const char *ctx) {
  WT_CHECK(memcmp(a->out, b->out, sizeof a->out) == 0, "%s: hashes differ", ctx);
  WT_CHECK(memcmp(a->acc, b->acc, sizeof a->acc) == 0, "%s: accumulators differ", ctx);
  SAME(d.loop);
  SAME(d.iteration_count);
  SAME(d.generated_count);
  SAME(d.resumed_count);
  SAME(d.scanned_slot_count);
  SAME(d.max_active_count);
  SAME(nodes);
  for (uint32_t j = 0; j < a->nodes && j < 4; ++j) {
    SAME(node[j].dispatch_count);
    SAME(node[j].executed_count);
    SAME(node[j].peak_queued_count);
  }
}

typedef struct spec_case {
  const char *name;
  ws_loop_kind loop;
  uint32_t layout;
  ws_accounting accounting;
  bool greedy, compaction;
} spec_case;

static const spec_case cases[] = {
    {"steps[host incremental aos]", WS_LOOP_HOST, WS_LAYOUT_AOS, WS_ACCOUNTING_INCREMENTAL, true,
     true},
    {"steps[host all-queues soa]", WS_LOOP_HOST, WS_LAYOUT_SOA, WS_ACCOUNTING_MATERIALIZED, false,
     false},
    {"steps[host fused aos]", WS_LOOP_HOST, WS_LAYOUT_AOS, WS_ACCOUNTING_FUSED, true, false},
    {"steps[device incremental aos]", WS_LOOP_DEVICE, WS_LAYOUT_AOS, WS_ACCOUNTING_INCREMENTAL,
     true, true},
    {"steps[device all-queues soa]", WS_LOOP_DEVICE, WS_LAYOUT_SOA, WS_ACCOUNTING_MATERIALIZED,
     false, false},
    {"steps[device fused aos]", WS_LOOP_DEVICE, WS_LAYOUT_AOS, WS_ACCOUNTING_FUSED, true, false},
};

static void test_steps(void **state) {
  const spec_case *c = *state;
  ws_scheduler_config cfg = ws_scheduler_config_default();
  cfg.resident_frames = RESIDENT;
  cfg.layout = c->layout;
  cfg.accounting = c->accounting;
  cfg.largest_first = c->greedy;
  cfg.compaction = c->compaction;
  cfg.loop = c->loop;
  cfg.statistics = true;
  /* a few hundred iterations suffice; a continuation run in the wrong
   * pipeline may never finish its items, and must fail, not hang */
  cfg.iteration_limit = 4096;
  outcome *spec = wt_calloc(1, sizeof *spec), *gen = wt_calloc(1, sizeof *gen);
  char ctx[128];
  run_on(wt_dev, &cfg, spec);
  snprintf(ctx, sizeof ctx, "%s, specialized", c->name);
  check_items(spec, true, ctx);
  WT_CHECK(spec->d.loop == c->loop, "%s: ran in loop %d", ctx, (int)spec->d.loop);
  run_on(generic_dev, &cfg, gen);
  snprintf(ctx, sizeof ctx, "%s, generic", c->name);
  check_items(gen, false, ctx);
  same_outcome(spec, gen, c->name);
}

static void test_megakernel(void **state) {
  (void)state;
  ws_scheduler_config cfg = ws_scheduler_config_default();
  cfg.kind = WS_SCHEDULER_MEGAKERNEL;
  outcome *o = wt_calloc(1, sizeof *o);
  run_on(wt_dev, &cfg, o);
  check_items(o, false, "megakernel on the specialized device");
}

static void test_default(void **state) {
  (void)state;
  wt_setenv("WS_VULKAN_SPECIALIZE", NULL); /* restored by the teardown */
  ws_device *dev = NULL;
  const ws_status st = open_vulkan(NULL, &dev);
  WT_CHECK(st == WS_OK, "a Vulkan device without WS_VULKAN_SPECIALIZE: %s (%s)", ws_status_name(st),
           log_text);
  ws_scheduler_config cfg = ws_scheduler_config_default();
  cfg.resident_frames = RESIDENT;
  cfg.loop = WS_LOOP_HOST;
  cfg.iteration_limit = 4096;
  outcome *o = wt_calloc(1, sizeof *o);
  run_on(dev, &cfg, o);
  ws_device_destroy(dev);
  check_items(o, true, "WS_VULKAN_SPECIALIZE unset");
}

static void test_env(void **state) {
  (void)state;
  wt_setenv("WS_VULKAN_SPECIALIZE", NULL); /* restored by the teardown */
  ws_device *dev = NULL;
  const ws_status st = open_vulkan("yes", &dev);
  if (dev)
    ws_device_destroy(dev);
  WT_CHECK(st == WS_EINVAL, "WS_VULKAN_SPECIALIZE=yes: %s, expected WS_EINVAL", ws_status_name(st));
  WT_CHECK(strstr(log_text, "WS_VULKAN_SPECIALIZE='yes'") != NULL,
           "the message does not name the variable: '%s'", log_text);
}

int main(int argc, char **argv) {
  /* the specialized device is the harness's (wt_dev) */
  setenv("WS_VULKAN_SPECIALIZE", "1", 1);
  const wt_need needs[] = {{&t_spec_modules, "t_spec"}};
  wt_init(argc, argv, needs, 1);
  if (wt_backend != WS_BACKEND_VULKAN) {
    printf("SKIP: %s: specialization is Vulkan's\n", argv[0]);
    return WT_SKIP;
  }
  const ws_status st = open_vulkan("0", &generic_dev);
  unsetenv("WS_VULKAN_SPECIALIZE");
  if (st != WS_OK) {
    fprintf(stderr, "%s: the generic device: %s (%s)\n", argv[0], ws_status_name(st), log_text);
    return 1;
  }
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i)
    wt_add(cases[i].name, test_steps, (void *)&cases[i]);
  wt_add("megakernel", test_megakernel, NULL);
  wt_add("default", test_default, NULL);
  wt_add("env", test_env, NULL);
  const int rc = wt_run("specialize");
  ws_device_destroy(generic_dev);
  return rc;
}
