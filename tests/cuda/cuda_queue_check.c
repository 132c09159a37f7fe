/* SPDX-License-Identifier: MIT */
/* ws_cuda_queue_check — the CUDA backend's operations against the CPU
 * reference backend, op by op, on random inputs (ctest: cuda_queue_ops,
 * label cuda). Queue kernels have many paths — CUB or block-aggregated
 * selection, shared-memory or global histograms (K above 4096), AoS or SoA
 * compaction with fields of every width — and the scheduler's tests reach
 * only some of them, so this program drives each path directly through the
 * backend table (src/core/backend.h) and compares integer results exactly.
 * Where backend.h leaves the order of slots unspecified, lists are compared
 * per queue as sorted sets; compaction is checked by its invariant (every
 * live frame keeps its id, token and bytes, and lands below the live count).
 *
 *   ws_cuda_queue_check            checks; exit 0 all passed, 1 failures,
 *                                  77 no CUDA device (ctest skip)
 *   ws_cuda_queue_check --bench    instead times the queue operations over
 *                                  2^16, 2^20, 2^24 slots against the
 *                                  device-to-device copy bandwidth
 *
 * Every queue mode is exercised: WS_CUDA_QUEUES=auto, cub and portable are
 * three devices opened side by side, and a fourth (auto) has
 * WS_CUDA_GRID_LIMIT=3 and WS_CUDA_GATHER_CURSORS=padded; bad values of the
 * knobs must fail the device's creation.
 *
 *   ws_cuda_queue_check --backend vulkan [--quick]
 *                                  the same checks of the Vulkan backend's
 *                                  queue shaders (ctest vulkan_queue_ops, on
 *                                  lavapipe in CI): one device, no fill/copy
 *                                  case, no broken-precondition compaction
 *                                  (Vulkan reports it differently, SPEC'd in
 *                                  vk_queue.c); 77 without a Vulkan device.
 *                                  Two devices: the defaults, and
 *                                  WS_VULKAN_QUEUE_GROUPS=3 with padded
 *                                  cursors (every workgroup walks many
 *                                  tiles); bad values of both variables
 *                                  must fail the device's creation
 */
#define _POSIX_C_SOURCE 200809L /* setenv, clock_gettime */
#include "../../src/core/device.h"

#include <cuda_runtime_api.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static unsigned long checks, failures;

#define CHECK(cond, ...)                                                                           \
  do {                                                                                             \
    ++checks;                                                                                      \
    if (!(cond)) {                                                                                 \
      if (++failures <= 40) {                                                                      \
        fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                                       \
        fprintf(stderr, __VA_ARGS__);                                                              \
        fputc('\n', stderr);                                                                       \
      }                                                                                            \
    }                                                                                              \
  } while (0)

static void die(const char *what, ws_device *dev) {
  fprintf(stderr, "ws_cuda_queue_check: %s failed: %s\n", what,
          dev ? ws_device_last_error(dev) : "");
  exit(1);
}

#define TRY(dev, expr)                                                                             \
  do {                                                                                             \
    if ((expr) != WS_OK)                                                                           \
      die(#expr, dev);                                                                             \
  } while (0)

/* xorshift64*: deterministic inputs */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint32_t rnd(void) {
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return (uint32_t)((rng_state * 2685821657736338717ull) >> 32);
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static int cmp_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? -1 : x > y;
}

/* ---- one device's buffers for a case ---- */
typedef struct side {
  ws_device *dev;
  ws_buffer *tokens, *ids, *counts, *slots, *offsets, *scratch, *counter, *frames, *fieldoff;
} side;

static ws_buffer *mkbuf(ws_device *dev, size_t bytes) {
  ws_buffer *b = NULL;
  if (ws_buffer_create(dev, bytes ? bytes : 4, &b) != WS_OK)
    die("ws_buffer_create", dev);
  return b;
}

static void side_open(side *s, ws_device *dev, uint32_t capacity, uint32_t K, size_t frame_bytes) {
  memset(s, 0, sizeof *s);
  s->dev = dev;
  s->tokens = mkbuf(dev, (size_t)capacity * 4);
  s->ids = mkbuf(dev, (size_t)capacity * 4);
  s->counts = mkbuf(dev, ((size_t)K + 2) * 4);
  s->slots = mkbuf(dev, (size_t)capacity * 4);
  s->offsets = mkbuf(dev, ((size_t)K + 2) * 4);
  s->scratch = mkbuf(dev, (size_t)capacity * 4);
  s->counter = mkbuf(dev, 16);
  s->frames = mkbuf(dev, frame_bytes);
  s->fieldoff = mkbuf(dev, WS_MAX_FRAME_FIELDS * 8);
}

static void side_close(side *s) {
  ws_buffer_destroy(s->tokens);
  ws_buffer_destroy(s->ids);
  ws_buffer_destroy(s->counts);
  ws_buffer_destroy(s->slots);
  ws_buffer_destroy(s->offsets);
  ws_buffer_destroy(s->scratch);
  ws_buffer_destroy(s->counter);
  ws_buffer_destroy(s->frames);
  ws_buffer_destroy(s->fieldoff);
}

static ws_queue_args side_args(const side *s, uint32_t scan, uint32_t K, uint32_t capacity) {
  ws_queue_args q;
  memset(&q, 0, sizeof q);
  q.tokens = ws_buffer_address(s->tokens);
  q.ids = ws_buffer_address(s->ids);
  q.counts = ws_buffer_address(s->counts);
  q.slots = ws_buffer_address(s->slots);
  q.offsets = ws_buffer_address(s->offsets);
  q.scratch = ws_buffer_address(s->scratch);
  q.counter = ws_buffer_address(s->counter);
  q.frames = ws_buffer_address(s->frames);
  q.field_offsets = ws_buffer_address(s->fieldoff);
  q.scan = scan;
  q.queue_count = K;
  q.capacity = capacity;
  return q;
}

static void put(side *s, ws_buffer *b, const void *src, size_t bytes) {
  if (bytes)
    TRY(s->dev, ws_buffer_write(b, 0, src, bytes));
}
static void get(side *s, ws_buffer *b, void *dst, size_t bytes) {
  if (bytes)
    TRY(s->dev, ws_buffer_read(b, 0, dst, bytes));
}

/* Token distributions: 0 uniform over 0..K plus rare out-of-range values,
 * 1 skewed (most slots in queue 1), 2 all free, 3 all in queue K. */
static void fill_tokens(uint32_t *t, uint32_t n, uint32_t K, int dist) {
  for (uint32_t i = 0; i < n; ++i) {
    uint32_t r = rnd();
    switch (dist) {
    case 0:
      t[i] = r % 1000 == 0 ? (r & 1 ? K + 1 : 0xffffffffu) : r % (K + 1);
      break;
    case 1:
      t[i] = r % 100 < 90 ? 1 : r % (K + 1);
      break;
    case 2:
      t[i] = 0;
      break;
    default:
      t[i] = K;
      break;
    }
  }
}

/* ---- the cases ---- */
/* The CUDA devices every case runs on: the three queue modes, and auto with
 * queue kernels limited to 3 blocks, so that modest inputs already take the
 * many-tiles-per-block paths of every grid-stride loop. */
#define NDEV 4
typedef struct env {
  ws_device *cpu;
  ws_device *cuda[NDEV];
} env;
static const char *mode_names[NDEV] = {"auto", "cub", "portable", "auto/3 blocks, padded"};
static const char *const mode_env[NDEV] = {"auto", "cub", "portable", "auto"};
/* The backend under test and how many of env.cuda[] are open: 4 CUDA queue
 * modes, or 1 Vulkan device (its slot 0, named "vulkan"). */
static ws_backend_kind gpu_kind = WS_BACKEND_CUDA;
static int ndev = NDEV;

static void case_count_gather(env *e, uint32_t scan, uint32_t K, int dist) {
  const uint32_t cap = scan + 5;
  uint32_t *tok = malloc((size_t)cap * 4), *want = malloc(((size_t)K + 2) * 4),
           *got = malloc(((size_t)K + 2) * 4), *ls = malloc((size_t)cap * 4),
           *lg = malloc((size_t)cap * 4);
  if (!tok || !want || !got || !ls || !lg)
    die("malloc", NULL);
  fill_tokens(tok, cap, K, dist);
  side c;
  side_open(&c, e->cpu, cap, K, 4);
  put(&c, c.tokens, tok, (size_t)cap * 4);
  for (int m = 0; m < ndev; ++m) {
    side g;
    side_open(&g, e->cuda[m], cap, K, 4);
    put(&g, g.tokens, tok, (size_t)cap * 4);
    /* count: counts[K+1] must survive */
    for (uint32_t t = 0; t < K + 2; ++t)
      want[t] = 0xa5a5a5a5u;
    put(&c, c.counts, want, ((size_t)K + 2) * 4);
    put(&g, g.counts, want, ((size_t)K + 2) * 4);
    ws_queue_args qc = side_args(&c, scan, K, cap), qg = side_args(&g, scan, K, cap);
    TRY(c.dev, c.dev->ops->queue_count(c.dev, &qc));
    TRY(g.dev, g.dev->ops->queue_count(g.dev, &qg));
    TRY(g.dev, g.dev->ops->synchronize(g.dev));
    get(&c, c.counts, want, ((size_t)K + 2) * 4);
    get(&g, g.counts, got, ((size_t)K + 2) * 4);
    uint32_t bad = 0;
    for (uint32_t t = 0; t < K + 2; ++t)
      bad += want[t] != got[t];
    CHECK(bad == 0, "count scan %u K %u dist %d mode %s: %u of %u words differ (e.g. [0] %u vs %u)",
          scan, K, dist, mode_names[m], bad, K + 2, want[0], got[0]);

    /* sorted gather over those counts */
    uint64_t live = 0;
    for (uint32_t t = 1; t <= K; ++t)
      live += want[t];
    TRY(c.dev, c.dev->ops->queue_gather_all(c.dev, &qc));
    TRY(g.dev, g.dev->ops->queue_gather_all(g.dev, &qg));
    TRY(g.dev, g.dev->ops->synchronize(g.dev));
    get(&c, c.slots, ls, (size_t)live * 4);
    get(&g, g.slots, lg, (size_t)live * 4);
    uint64_t pos = 0;
    bad = 0;
    for (uint32_t t = 1; t <= K; ++t) {
      qsort(lg + pos, want[t], 4, cmp_u32); /* CPU lists are ascending already */
      for (uint32_t k = 0; k < want[t]; ++k)
        bad += ls[pos + k] != lg[pos + k];
      pos += want[t];
    }
    CHECK(bad == 0, "gather_all scan %u K %u dist %d mode %s: %u of %" PRIu64 " slots differ", scan,
          K, dist, mode_names[m], bad, live);

    /* selected gathers: token 0 (free slots), 1, K, and an absent token */
    const uint32_t sel[4] = {0, 1, K, K + 7};
    for (int k = 0; k < 4; ++k) {
      qc.token = qg.token = sel[k];
      uint32_t nc = 0, ng = 0;
      TRY(c.dev, c.dev->ops->queue_gather(c.dev, &qc));
      TRY(g.dev, g.dev->ops->queue_gather(g.dev, &qg));
      TRY(g.dev, g.dev->ops->synchronize(g.dev));
      get(&c, c.counter, &nc, 4);
      get(&g, g.counter, &ng, 4);
      CHECK(nc == ng, "gather token %u scan %u K %u mode %s: counter %u, cpu %u", sel[k], scan, K,
            mode_names[m], ng, nc);
      if (nc == ng) {
        get(&c, c.slots, ls, (size_t)nc * 4);
        get(&g, g.slots, lg, (size_t)ng * 4);
        qsort(lg, ng, 4, cmp_u32);
        CHECK(memcmp(ls, lg, (size_t)nc * 4) == 0,
              "gather token %u scan %u K %u mode %s: slot lists differ", sel[k], scan, K,
              mode_names[m]);
        /* the loop's gather (count unread): both accumulators of the pair,
         * each time the same list, and the counted gathers after it still
         * right (the next token's check) */
        qg.flags = WS_QUEUE_COUNTER_UNUSED;
        for (int rep = 0; rep < 2; ++rep) {
          /* a stale list must not pass for a new one */
          TRY(g.dev, ws_buffer_fill_u32(g.slots, 0, 0xffffffffu, cap));
          TRY(g.dev, g.dev->ops->queue_gather(g.dev, &qg));
          TRY(g.dev, g.dev->ops->synchronize(g.dev));
          get(&g, g.slots, lg, (size_t)nc * 4);
          qsort(lg, nc, 4, cmp_u32);
          CHECK(memcmp(ls, lg, (size_t)nc * 4) == 0,
                "gather (count unread, pass %d) token %u scan %u K %u mode %s: slot lists differ",
                rep, sel[k], scan, K, mode_names[m]);
        }
        qg.flags = 0;
      }
    }
    side_close(&g);
  }
  side_close(&c);
  free(tok);
  free(want);
  free(got);
  free(ls);
  free(lg);
}

/* One publish on `dev` from the same inputs: the counts it leaves, into out[K + 2]. */
static void publish_counts(ws_device *dev, uint32_t cap, uint32_t K, const uint32_t *tok,
                           const uint32_t *slots, const uint32_t *c0, uint32_t n, uint32_t src,
                           uint32_t base, bool list, uint32_t *out) {
  side s;
  side_open(&s, dev, cap, K, 4);
  put(&s, s.tokens, tok, (size_t)cap * 4);
  put(&s, s.slots, slots, (size_t)cap * 4);
  put(&s, s.counts, c0, ((size_t)K + 2) * 4);
  ws_queue_args q = side_args(&s, 0, K, cap);
  q.n = n;
  q.src = src;
  q.slot_base = base;
  q.slots = list ? q.slots : 0;
  TRY(s.dev, s.dev->ops->queue_publish(s.dev, &q));
  TRY(s.dev, s.dev->ops->synchronize(s.dev));
  get(&s, s.counts, out, ((size_t)K + 2) * 4);
  side_close(&s);
}

static void case_publish(env *e, uint32_t cap, uint32_t n, uint32_t K, bool list) {
  uint32_t *tok = malloc((size_t)cap * 4), *slots = malloc((size_t)cap * 4),
           *c0 = malloc(((size_t)K + 2) * 4), *want = malloc(((size_t)K + 2) * 4),
           *got = malloc(((size_t)K + 2) * 4);
  if (!tok || !slots || !c0 || !want || !got)
    die("malloc", NULL);
  fill_tokens(tok, cap, K, 0);
  for (uint32_t i = 0; i < cap; ++i)
    slots[i] = i;
  for (uint32_t i = cap; i > 1; --i) { /* a random permutation: distinct slots */
    uint32_t j = rnd() % i, t = slots[i - 1];
    slots[i - 1] = slots[j];
    slots[j] = t;
  }
  for (uint32_t t = 0; t < K + 2; ++t)
    c0[t] = rnd() % 1000000u;
  const uint32_t src = rnd() % (K + 1), base = list ? 0 : (cap - n) / 2;
  publish_counts(e->cpu, cap, K, tok, slots, c0, n, src, base, list, want);
  for (int m = 0; m < ndev; ++m) {
    if (m == 1)
      continue; /* publish has no CUB path */
    publish_counts(e->cuda[m], cap, K, tok, slots, c0, n, src, base, list, got);
    uint32_t bad = 0;
    for (uint32_t t = 0; t < K + 2; ++t)
      bad += want[t] != got[t];
    CHECK(bad == 0, "publish n %u K %u src %u %s mode %s: %u count words differ", n, K, src,
          list ? "list" : "dense", mode_names[m], bad);
  }
  free(tok);
  free(slots);
  free(c0);
  free(want);
  free(got);
}

/* Frame descriptions for compaction: AoS record sizes and SoA field lists
 * (size, alignment), ordered by decreasing alignment as the scheduler lays
 * them out. */
typedef struct frame_case {
  uint32_t layout;
  uint32_t aos_size;
  uint32_t field_count;
  uint32_t size[6], align[6];
} frame_case;

static uint64_t frame_layout(const frame_case *f, uint32_t cap, uint64_t *off) {
  if (f->layout == WS_LAYOUT_AOS)
    return (uint64_t)cap * f->aos_size;
  uint64_t o = 0;
  for (uint32_t i = 0; i < f->field_count; ++i) {
    o = (o + f->align[i] - 1) / f->align[i] * f->align[i];
    off[i] = o;
    o += (uint64_t)cap * f->size[i];
  }
  return o;
}

/* Bytes of the frame in `slot`, concatenated field by field. */
static void frame_bytes(const frame_case *f, const unsigned char *mem, const uint64_t *off,
                        uint32_t slot, unsigned char *out) {
  if (f->layout == WS_LAYOUT_AOS) {
    memcpy(out, mem + (uint64_t)slot * f->aos_size, f->aos_size);
    return;
  }
  for (uint32_t i = 0; i < f->field_count; ++i) {
    memcpy(out, mem + off[i] + (uint64_t)slot * f->size[i], f->size[i]);
    out += f->size[i];
  }
}

static uint32_t frame_len(const frame_case *f) {
  if (f->layout == WS_LAYOUT_AOS)
    return f->aos_size;
  uint32_t n = 0;
  for (uint32_t i = 0; i < f->field_count; ++i)
    n += f->size[i];
  return n;
}

/* Compaction on `dev` of `scan` slots of which exactly `live` are live
 * (`n_arg` is the live count passed; n_arg != live breaks the precondition
 * on purpose: the CPU backend fails when n_arg < live, the CUDA backend in
 * both directions, at the next synchronize, having moved nothing). */
static void case_compact(env *e, ws_device *dev, const char *mode, const frame_case *f,
                         uint32_t scan, uint32_t live, uint32_t n_arg) {
  const uint32_t cap = scan + 3, K = 5;
  uint64_t off[6] = {0};
  const uint64_t fb = frame_layout(f, cap, off);
  const uint32_t flen = frame_len(f);
  uint32_t *tok = calloc(cap, 4), *ids = calloc(cap, 4), *tok2 = calloc(cap, 4),
           *ids2 = calloc(cap, 4), *orig = calloc(cap, 4);
  unsigned char *mem = malloc(fb ? fb : 1), *mem2 = malloc(fb ? fb : 1), *a = malloc(flen + 1),
                *b = malloc(flen + 1);
  if (!tok || !ids || !tok2 || !ids2 || !orig || !mem || !mem2 || !a || !b)
    die("malloc", NULL);
  /* exactly `live` live slots among [0, scan), chosen at random */
  for (uint32_t i = 0; i < scan; ++i)
    orig[i] = i;
  for (uint32_t i = scan; i > 1; --i) {
    uint32_t j = rnd() % i, t = orig[i - 1];
    orig[i - 1] = orig[j];
    orig[j] = t;
  }
  for (uint32_t i = 0; i < live; ++i)
    tok[orig[i]] = 1 + rnd() % K;
  for (uint32_t s = 0; s < cap; ++s)
    ids[s] = s * 7u + 3u; /* unique; id -> original slot is (id - 3) / 7 */
  for (uint32_t s = scan; s < cap; ++s)
    tok[s] = 4; /* beyond scan: must not be touched */
  for (uint64_t i = 0; i < fb; ++i)
    mem[i] = (unsigned char)rnd();

  side g;
  side_open(&g, dev, cap, K, fb);
  put(&g, g.tokens, tok, (size_t)cap * 4);
  put(&g, g.ids, ids, (size_t)cap * 4);
  put(&g, g.frames, mem, fb);
  /* the SoA array offsets on the device too (the Vulkan shaders read them
   * there; CUDA takes q.host_field_offsets) */
  if (f->layout != WS_LAYOUT_AOS)
    put(&g, g.fieldoff, off, (size_t)f->field_count * 8);
  ws_queue_args q = side_args(&g, scan, K, cap);
  uint32_t sizes[6];
  for (uint32_t i = 0; i < f->field_count; ++i)
    sizes[i] = f->size[i];
  q.n = n_arg;
  q.layout = f->layout;
  q.frame_size = f->aos_size;
  q.field_count = f->layout == WS_LAYOUT_AOS ? 0 : f->field_count;
  q.field_sizes = sizes;
  q.host_field_offsets = off;
  ws_status st = dev->ops->queue_compact(dev, &q);
  if (st == WS_OK)
    st = dev->ops->synchronize(dev);
  get(&g, g.tokens, tok2, (size_t)cap * 4);
  get(&g, g.ids, ids2, (size_t)cap * 4);
  get(&g, g.frames, mem2, fb);
  const char *lay = f->layout == WS_LAYOUT_AOS ? "aos" : "soa";
  if (n_arg != live) {
    /* CPU: the op fails; CUDA: the next synchronize fails and nothing moved */
    CHECK(st == WS_EPROTO_INTERNAL, "compact (%s, %s) with a wrong live count: status %d", lay,
          mode, (int)st);
    if (dev->kind == WS_BACKEND_CUDA) {
      CHECK(memcmp(tok, tok2, (size_t)cap * 4) == 0 && memcmp(mem, mem2, fb) == 0,
            "compact (%s, %s) with a wrong live count moved frames", lay, mode);
      CHECK(dev->ops->synchronize(dev) == WS_OK, "the compaction error was reported twice");
    }
  } else {
    CHECK(st == WS_OK, "compact (%s, %s, scan %u, live %u): status %d: %s", lay, mode, scan, live,
          (int)st, ws_device_last_error(dev));
    uint32_t bad = 0;
    char *seen = calloc(cap, 1);
    if (!seen)
      die("calloc", NULL);
    for (uint32_t s = 0; s < live; ++s) {
      const uint32_t o = (ids2[s] - 3u) / 7u;
      if (tok2[s] == 0 || o >= scan || seen[o] || tok[o] != tok2[s]) {
        ++bad;
        continue;
      }
      seen[o] = 1;
      frame_bytes(f, mem, off, o, a);
      frame_bytes(f, mem2, off, s, b);
      bad += memcmp(a, b, flen) != 0;
    }
    for (uint32_t s = live; s < scan; ++s)
      bad += tok2[s] != 0;
    for (uint32_t s = scan; s < cap; ++s)
      bad += tok2[s] != 4 || ids2[s] != ids[s];
    CHECK(bad == 0, "compact (%s, %s, scan %u, live %u): %u slots wrong", lay, mode, scan, live,
          bad);
    free(seen);
  }
  side_close(&g);
  free(tok);
  free(ids);
  free(tok2);
  free(ids2);
  free(orig);
  free(mem);
  free(mem2);
  free(a);
  free(b);
  (void)e;
}

static void case_fill_copy(ws_device *dev) {
  const size_t n = (1u << 20) + 11;
  uint32_t *h = malloc(n * 4), *r = malloc(n * 4);
  if (!h || !r)
    die("malloc", NULL);
  for (size_t i = 0; i < n; ++i)
    h[i] = (uint32_t)i ^ 0x5a5a5a5au;
  ws_buffer *b = mkbuf(dev, n * 4);
  TRY(dev, ws_buffer_write(b, 0, h, n * 4));
  TRY(dev, ws_buffer_read(b, 0, r, n * 4));
  CHECK(memcmp(h, r, n * 4) == 0, "write/read round trip of %zu words differs", n);
  const size_t counts[4] = {1, 5, 4099, n - 2};
  for (int k = 0; k < 4; ++k) {
    TRY(dev, ws_buffer_fill_u32(b, 4, 0xc0ffee00u + (uint32_t)k, counts[k]));
    TRY(dev, ws_buffer_read(b, 0, r, n * 4));
    uint32_t bad = 0;
    for (size_t i = 0; i < n; ++i) {
      const uint32_t want = i >= 1 && i <= counts[k] ? 0xc0ffee00u + (uint32_t)k : h[i];
      bad += r[i] != want;
    }
    CHECK(bad == 0, "fill of %zu words at offset 4: %u words wrong", counts[k], bad);
    TRY(dev, ws_buffer_write(b, 0, h, n * 4));
  }
  ws_buffer_destroy(b);
  free(h);
  free(r);
}

/* ---- --bench ---- */

/* Seconds per operation: `reps` enqueued back to back, one sync. */
typedef ws_status (*queue_op)(ws_device *, const ws_queue_args *);
static double time_op(ws_device *dev, queue_op op, const ws_queue_args *q, int reps) {
  TRY(dev, op(dev, q)); /* warm-up: CUB storage, caches */
  TRY(dev, dev->ops->synchronize(dev));
  const double t0 = now_s();
  for (int r = 0; r < reps; ++r)
    TRY(dev, op(dev, q));
  TRY(dev, dev->ops->synchronize(dev));
  return (now_s() - t0) / reps;
}

static void bench(env *e) {
  /* copy bandwidth: device-to-device copies of 512 MiB, bytes read + written */
  const size_t cb = (size_t)512 << 20;
  void *x = NULL, *y = NULL;
  if (cudaMalloc(&x, cb) != cudaSuccess || cudaMalloc(&y, cb) != cudaSuccess)
    die("cudaMalloc (bench)", NULL);
  cudaMemcpy(y, x, cb, cudaMemcpyDeviceToDevice);
  cudaDeviceSynchronize();
  double t0 = now_s();
  for (int r = 0; r < 10; ++r)
    cudaMemcpyAsync(y, x, cb, cudaMemcpyDeviceToDevice, 0);
  cudaDeviceSynchronize();
  const double copy_bw = 2.0 * (double)cb * 10 / (now_s() - t0);
  cudaFree(x);
  cudaFree(y);
  printf("bench: device-to-device copy %.0f GB/s (read + write)\n", copy_bw * 1e-9);

  ws_device *dev = e->cuda[0];
  /* floor: a tiny kernel + 64-byte readback + sync, one host iteration */
  {
    ws_buffer *b = mkbuf(dev, 64);
    ws_readback *rb = NULL;
    TRY(dev, ws_readback_create(dev, 64, &rb));
    double best[21];
    for (int r = 0; r < 21; ++r) {
      const double s0 = now_s();
      TRY(dev, ws_buffer_fill_u32(b, 0, (uint32_t)r, 1));
      TRY(dev, ws_readback_enqueue(rb, 0, b, 0, 64));
      TRY(dev, dev->ops->synchronize(dev));
      best[r] = now_s() - s0;
    }
    qsort(best, 21, sizeof best[0], cmp_double);
    const double med = best[10];
    printf("bench: fill kernel + 64-byte readback + sync: %.2f us (median of 21)\n", med * 1e6);
    ws_readback_destroy(rb);
    ws_buffer_destroy(b);
  }

  printf("\n%-28s %10s %10s %10s %8s\n", "operation (K = 3)", "slots", "us/op", "GB/s", "of copy");
  const uint32_t K = 3;
  const uint32_t sizes[3] = {1u << 16, 1u << 20, 1u << 24};
  for (int m = 0; m < 3; ++m) {
    if (m == 2)
      continue; /* portable is what auto runs */
    dev = e->cuda[m];
    for (int si = 0; si < 3; ++si) {
      const uint32_t n = sizes[si];
      uint32_t *tok = malloc((size_t)n * 4);
      if (!tok)
        die("malloc", NULL);
      fill_tokens(tok, n, K, 0);
      uint32_t q1 = 0, live = 0;
      for (uint32_t i = 0; i < n; ++i) {
        q1 += tok[i] == 1;
        live += tok[i] >= 1 && tok[i] <= K;
      }
      side g;
      side_open(&g, dev, n, K, (size_t)n * 16);
      put(&g, g.tokens, tok, (size_t)n * 4);
      ws_queue_args q = side_args(&g, n, K, n);
      const int reps = n >= (1u << 24) ? 20 : 100;
      struct {
        const char *name;
        queue_op op;
        double bytes;
      } ops[4] = {
          {"count", dev->ops->queue_count, 4.0 * n},
          {"gather (queue 1)", dev->ops->queue_gather, 4.0 * n + 4.0 * q1},
          {"count + sorted gather", NULL, 8.0 * n + 4.0 * live},
          {"publish (dense)", dev->ops->queue_publish, 4.0 * n},
      };
      q.token = 1;
      for (int k = 0; k < 4; ++k) {
        double t;
        if (k == 2) {
          TRY(dev, dev->ops->queue_count(dev, &q));
          TRY(dev, dev->ops->queue_gather_all(dev, &q));
          TRY(dev, dev->ops->synchronize(dev));
          const double s0 = now_s();
          for (int r = 0; r < reps; ++r) {
            TRY(dev, dev->ops->queue_count(dev, &q));
            TRY(dev, dev->ops->queue_gather_all(dev, &q));
          }
          TRY(dev, dev->ops->synchronize(dev));
          t = (now_s() - s0) / reps;
        } else {
          ws_queue_args qq = q;
          if (k == 3) {
            qq.slots = 0;
            qq.n = n;
            qq.src = 1;
          }
          t = time_op(dev, ops[k].op, &qq, reps);
        }
        const double bw = ops[k].bytes / t;
        printf("%-20s %-7s %10u %10.1f %10.0f %7.0f%%\n", ops[k].name, mode_names[m], n, t * 1e6,
               bw * 1e-9, 100.0 * bw / copy_bw);
      }
      /* compaction: half the slots live at random, 16-byte AoS frames; the
       * timing includes one host synchronization (about 10 us) */
      {
        uint32_t *ct = calloc(n, 4);
        if (!ct)
          die("calloc", NULL);
        uint32_t nlive = 0;
        for (uint32_t i = 0; i < n; ++i)
          if (rnd() & 1) {
            ct[i] = 1 + rnd() % K;
            ++nlive;
          }
        uint32_t movers = 0;
        for (uint32_t i = nlive; i < n; ++i)
          movers += ct[i] != 0;
        ws_queue_args qc = q;
        qc.n = nlive;
        qc.layout = WS_LAYOUT_AOS;
        qc.frame_size = 16;
        double best = 1e9;
        for (int r = 0; r < 5; ++r) {
          put(&g, g.tokens, ct, (size_t)n * 4);
          const double s0 = now_s();
          TRY(dev, dev->ops->queue_compact(dev, &qc));
          TRY(dev, dev->ops->synchronize(dev));
          const double t = now_s() - s0;
          best = t < best ? t : best;
        }
        /* tokens read once, lists written and read, frames + ids + tokens moved */
        const double bytes = 4.0 * n + 2.0 * 4.0 * (2.0 * movers) + (double)movers * (2 * 16 + 12);
        printf("%-20s %-7s %10u %10.1f %10.0f %7.0f%%\n", "compact (50% live)", mode_names[m], n,
               best * 1e6, bytes / best * 1e-9, 100.0 * bytes / best / copy_bw);
        free(ct);
      }
      side_close(&g);
      free(tok);
    }
  }
}

/* The queue knobs' bad values: the device is not created, and the message
 * names the variable and the value. 0 when every one was refused so (or
 * there is no such device: the caller skips), 1 otherwise. */
static char knob_log[1024];
static void knob_log_cb(void *user, ws_log_level level, const char *message) {
  (void)user;
  (void)level;
  snprintf(knob_log, sizeof knob_log, "%s", message);
}

static int knobs_refused(const ws_device_config *config) {
  static const char *const vulkan_bad[][2] = {{"WS_VULKAN_QUEUE_GROUPS", "some"},
                                              {"WS_VULKAN_QUEUE_GROUPS", "-1"},
                                              {"WS_VULKAN_QUEUE_GROUPS", "4000000000"},
                                              {"WS_VULKAN_QUEUE_CURSORS", "spread"},
                                              {"WS_VULKAN_COMPACT", "both"},
                                              {"WS_VULKAN_QUEUE_BLOCK", "64"},
                                              {"WS_VULKAN_WAIT", "busy"}};
  static const char *const cuda_bad[][2] = {{"WS_CUDA_GATHER_CURSORS", "spread"},
                                            {"WS_CUDA_QUEUES", "fast"}};
  const bool vk = config->backend == WS_BACKEND_VULKAN;
  const char *const(*bad)[2] = vk ? vulkan_bad : cuda_bad;
  const size_t n = vk ? sizeof vulkan_bad / sizeof vulkan_bad[0] : sizeof cuda_bad / sizeof cuda_bad[0];
  ws_device_config cfg = *config;
  cfg.log = knob_log_cb;
  int rc = 0;
  for (size_t i = 0; i < n; ++i) {
    setenv(bad[i][0], bad[i][1], 1);
    ws_device *dev = NULL;
    knob_log[0] = '\0';
    const ws_status st = ws_device_create(&cfg, &dev);
    unsetenv(bad[i][0]);
    if (st == WS_ENODEV)
      return 0;
    char want[96];
    snprintf(want, sizeof want, "%s='%s'", bad[i][0], bad[i][1]);
    ++checks;
    if (st != WS_EINVAL || !strstr(knob_log, want)) {
      ++failures;
      rc = 1;
      printf("FAIL: %s: device creation returned %s (%s), expected WS_EINVAL naming it\n", want,
             ws_status_name(st), knob_log);
    }
    if (dev)
      ws_device_destroy(dev);
  }
  return rc;
}

int main(int argc, char **argv) {
  bool do_bench = false, quick = false;
  for (int a = 1; a < argc; ++a) {
    if (strcmp(argv[a], "--bench") == 0)
      do_bench = true;
    /* --quick: inputs up to 100k slots (for the sanitizers, which run the
     * kernels 10-100x slower, and lavapipe) */
    else if (strcmp(argv[a], "--quick") == 0)
      quick = true;
    else if (strcmp(argv[a], "--backend") == 0 && a + 1 < argc &&
             strcmp(argv[a + 1], "vulkan") == 0) {
      gpu_kind = WS_BACKEND_VULKAN;
      ndev = 2;
      ++a;
    } else {
      fprintf(stderr, "usage: %s [--bench] [--quick] [--backend vulkan]\n", argv[0]);
      return 2;
    }
  }
  if (gpu_kind == WS_BACKEND_VULKAN && do_bench) {
    fprintf(stderr, "ws_cuda_queue_check: --bench times CUDA only\n");
    return 2;
  }
  const uint32_t limit = quick ? 100003u : UINT32_MAX;
  env e;
  memset(&e, 0, sizeof e);
  ws_device_config cfg;
  memset(&cfg, 0, sizeof cfg);
  cfg.backend = WS_BACKEND_CPU;
  if (ws_device_create(&cfg, &e.cpu) != WS_OK)
    die("cpu device", NULL);
  cfg.backend = gpu_kind;
  if (gpu_kind == WS_BACKEND_VULKAN) {
    mode_names[0] = "vulkan/compaction pairs";
    mode_names[1] = "vulkan/3 groups of 128, padded, compaction lists";
  }
  if (knobs_refused(&cfg) != 0)
    return 1;
  for (int m = 0; m < ndev; ++m) {
    setenv("WS_CUDA_QUEUES", mode_env[m], 1);
    if (m == 3) {
      setenv("WS_CUDA_GRID_LIMIT", "3", 1);
      setenv("WS_CUDA_GATHER_CURSORS", "padded", 1);
    }
    /* both Vulkan compactions at every size (the default, auto, picks by
     * size: vk_internal.h ws_vk_compact_pairs) */
    if (gpu_kind == WS_BACKEND_VULKAN && m == 0)
      setenv("WS_VULKAN_COMPACT", "pairs", 1);
    if (gpu_kind == WS_BACKEND_VULKAN && m == 1) {
      setenv("WS_VULKAN_QUEUE_GROUPS", "3", 1);
      setenv("WS_VULKAN_QUEUE_BLOCK", "128", 1);
      setenv("WS_VULKAN_QUEUE_CURSORS", "padded", 1);
      setenv("WS_VULKAN_COMPACT", "lists", 1);
    }
    ws_status st = ws_device_create(&cfg, &e.cuda[m]);
    if (st == WS_ENODEV) {
      printf("ws_cuda_queue_check: no %s device: skipped\n", ws_backend_name(gpu_kind));
      return 77;
    }
    if (st != WS_OK)
      die("gpu device", NULL);
  }
  unsetenv("WS_CUDA_QUEUES");
  unsetenv("WS_CUDA_GRID_LIMIT");
  unsetenv("WS_CUDA_GATHER_CURSORS");
  unsetenv("WS_VULKAN_QUEUE_GROUPS");
  unsetenv("WS_VULKAN_QUEUE_BLOCK");
  unsetenv("WS_VULKAN_QUEUE_CURSORS");
  unsetenv("WS_VULKAN_COMPACT");
  printf("ws_cuda_queue_check on %s\n", ws_device_name(e.cuda[0]));
  if (do_bench) {
    bench(&e);
    for (int m = 0; m < ndev; ++m)
      ws_device_destroy(e.cuda[m]);
    ws_device_destroy(e.cpu);
    return 0;
  }

  if (gpu_kind == WS_BACKEND_CUDA)
    case_fill_copy(e.cuda[0]);

  const uint32_t scans[] = {0, 1, 33, 2047, 2048, 2049, 100003, 1u << 20, 3000017};
  const uint32_t Ks[] = {1, 3, 7, 8, 17};
  for (size_t si = 0; si < sizeof scans / sizeof scans[0]; ++si)
    for (size_t ki = 0; ki < sizeof Ks / sizeof Ks[0]; ++ki)
      if (scans[si] <= limit)
        case_count_gather(&e, scans[si], Ks[ki], (int)((si + ki) % 4));
  /* the benchmark's size (bench_queue: 2^24 slots, K = 4): grids far below
   * the tile count, so every block strides over many tiles with the next
   * tile's loads in flight and the shared words double-buffered */
  if (!quick) {
    case_count_gather(&e, 1u << 24, 4, 0);
    case_count_gather(&e, (1u << 24) - 1, 7, 1);
  }
  /* large K: the shared-memory limits (Vulkan 256 bins, CUDA 4096) and the
   * global fallbacks */
  const uint32_t bigK[] = {255, 256, 4095, 4096, 6000};
  for (size_t ki = 0; ki < sizeof bigK / sizeof bigK[0]; ++ki) {
    case_count_gather(&e, 50000, bigK[ki], 0);
    if (!quick)
      case_count_gather(&e, 1u << 20, bigK[ki], 1);
  }

  const uint32_t pubn[] = {1, 31, 2048, 5000, 1u << 20};
  for (size_t i = 0; i < sizeof pubn / sizeof pubn[0]; ++i) {
    if (pubn[i] > limit)
      continue;
    case_publish(&e, pubn[i] + 17, pubn[i], 3, true);
    case_publish(&e, pubn[i] + 17, pubn[i], 3, false);
    case_publish(&e, pubn[i] + 17, pubn[i], 5000, i % 2 == 0);
    case_publish(&e, pubn[i] + 17, pubn[i], 17, i % 2 == 1); /* shared-memory histogram */
  }

  const frame_case frames[] = {
      {WS_LAYOUT_AOS, 16, 0, {0}, {0}},
      {WS_LAYOUT_AOS, 12, 0, {0}, {0}},
      {WS_LAYOUT_AOS, 6, 0, {0}, {0}},
      {WS_LAYOUT_AOS, 1, 0, {0}, {0}},
      {WS_LAYOUT_AOS, 72, 0, {0}, {0}},
      {WS_LAYOUT_SOA, 0, 5, {8, 12, 4, 2, 1}, {8, 4, 4, 2, 1}},
      {WS_LAYOUT_SOA, 0, 4, {16, 4, 4, 2}, {16, 4, 4, 2}},
      {WS_LAYOUT_SOA, 0, 1, {1}, {1}},
  };
  const uint32_t cscan[] = {1, 8, 67, 4096, 100000, 1u << 20};
  for (size_t fi = 0; fi < sizeof frames / sizeof frames[0]; ++fi) {
    for (size_t si = 0; si < sizeof cscan / sizeof cscan[0]; ++si) {
      const uint32_t scan = cscan[si];
      if (scan > limit)
        continue;
      const uint32_t live = si % 3 == 0 ? scan / 2 : si % 3 == 1 ? scan - scan / 8 : scan / 9;
      case_compact(&e, e.cpu, "cpu", &frames[fi], scan, live, live);
      for (int m = 0; m < ndev; ++m)
        case_compact(&e, e.cuda[m], mode_names[m], &frames[fi], scan, live, live);
    }
  }
  /* the precondition broken on purpose: an error, no move */
  case_compact(&e, e.cpu, "cpu", &frames[0], 1000, 400, 399);
  if (gpu_kind == WS_BACKEND_CUDA) {
    case_compact(&e, e.cuda[0], "auto", &frames[0], 1000, 400, 401);
    case_compact(&e, e.cuda[2], "portable", &frames[5], 1000, 400, 399);
  }

  for (int m = 0; m < ndev; ++m)
    ws_device_destroy(e.cuda[m]);
  ws_device_destroy(e.cpu);
  printf("ws_cuda_queue_check: %lu passed, %lu failed\n", checks - failures, failures);
  return failures ? 1 : 0;
}
