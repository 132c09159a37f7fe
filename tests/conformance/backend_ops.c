/* SPDX-License-Identifier: MIT */
/* Backend-operations conformance (issue 11): the table every backend fills
 * (src/core/backend.h, ws_backend_ops) and each operation's contract on
 * small inputs, called directly on the device the harness opened
 * (--backend cpu|cuda|vulkan; 77 when the device is absent). The end-to-end
 * comparison of the backends is the `conformance` program next to this one.
 *
 *   table            every required operation is set; the optional ones come
 *                    in their documented groups (timer_mark + timer_elapsed;
 *                    loop_create + loop_run + loop_destroy; loop_pipelined +
 *                    flush); the test's list
 *                    covers the whole struct, and marks optional exactly what
 *                    backend.h marks "(optional)" (--backend-h PATH);
 *   memory           buffer_alloc gives 16-byte aligned, disjoint ranges;
 *                    host_alloc gives writable memory; write, enqueue_read
 *                    and enqueue_fill_u32 at offsets, in stream order, then
 *                    synchronize; a fill of 0 words changes nothing;
 *   launch           a kernel launch over 0 indices writes nothing, over n
 *                    exactly indices 0..n-1;
 *   queues           queue_count (counts[0..K], words after K untouched),
 *                    queue_gather (the slots of one token, its counter),
 *                    queue_gather_all (the live slots grouped by queue),
 *                    queue_publish (listed and dense slots), queue_compact
 *                    (live frames, ids and tokens moved below n), each also
 *                    on an empty scan;
 *   optional         timer: a marked interval has a non-negative length;
 *                    memory_available: a positive figure; flush: each
 *                    flush leaves the reads enqueued before the previous
 *                    one complete, synchronize the last;
 *   errors           an allocation that cannot succeed returns an error
 *                    status with a message on the device that names the
 *                    size: ws_buffer_create on every backend (the core
 *                    checks first); ws_readback_create (host_alloc, which the
 *                    core does not check) and buffer_alloc itself on the CPU
 *                    and CUDA only (a Vulkan buffer beyond maxBufferSize is
 *                    invalid usage); the device works afterwards.
 */
#include "../../src/core/device.h"
#include "ops.h"
#include "ws_test.h"

#include <cmocka.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const ws_module_set ops_modules;

static const char *backend_h_path; /* --backend-h: src/core/backend.h */

/* The errors case asks for allocations that cannot succeed, so that the
 * backend returns its status; under AddressSanitizer malloc must then return
 * NULL as it does without it, instead of ending the program. */
const char *__asan_default_options(void);
const char *__asan_default_options(void) {
  return "allocator_may_return_null=1";
}

/* ------------------------------------------------------------ the table */

typedef void (*any_fn)(void);
typedef struct op_row {
  const char *name;
  size_t offset;
  /* 0: required; optional: 1 timer, 2 device loop, 3 memory query, 4 pipelined loop */
  int group;
} op_row;
#define OP(name, group)                                                                            \
  { #name, offsetof(ws_backend_ops, name), group }
static const op_row ops_table[] = {
    OP(destroy, 0),          OP(buffer_alloc, 0),  OP(buffer_free, 0),   OP(host_alloc, 0),
    OP(host_free, 0),        OP(write, 0),         OP(enqueue_read, 0),  OP(enqueue_fill_u32, 0),
    OP(synchronize, 0),      OP(launch, 0),        OP(queue_count, 0),   OP(queue_gather, 0),
    OP(queue_gather_all, 0), OP(queue_publish, 0), OP(queue_compact, 0), OP(timer_mark, 1),
    OP(timer_elapsed, 1),    OP(loop_create, 2),   OP(loop_run, 2),      OP(loop_destroy, 2),
    OP(memory_available, 3), OP(loop_pipelined, 4), OP(flush, 4),
};
enum { OP_COUNT = sizeof ops_table / sizeof ops_table[0] };

static any_fn op_at(const ws_backend_ops *ops, size_t offset) {
  any_fn f;
  memcpy(&f, (const char *)ops + offset, sizeof f);
  return f;
}

/* backend.h: the operations a comment marked "(optional)" precedes (the
 * comment and the fields after it up to a blank line). */
static void check_backend_h(void) {
  FILE *f = fopen(backend_h_path, "r");
  WT_CHECK(f != NULL, "cannot open %s", backend_h_path);
  if (!f)
    return;
  char line[512];
  bool in_ops = false, optional = false;
  uint32_t seen = 0;
  while (fgets(line, sizeof line, f)) {
    if (strstr(line, "typedef struct ws_backend_ops"))
      in_ops = true;
    if (!in_ops)
      continue;
    if (strstr(line, "} ws_backend_ops;"))
      break;
    if (line[strspn(line, " \t")] == '\n')
      optional = false;
    if (strstr(line, "(optional)"))
      optional = true;
    const char *p = strstr(line, "(*");
    if (!p)
      continue;
    char name[64];
    int end = 0; /* a member `(*name)(`, not a `(*out)` in a comment */
    if (sscanf(p, "(*%63[a-z_0-9])(%n", name, &end) != 1 || end == 0)
      continue;
    ++seen;
    const op_row *row = NULL;
    for (uint32_t i = 0; i < OP_COUNT; ++i)
      if (strcmp(ops_table[i].name, name) == 0)
        row = &ops_table[i];
    WT_CHECK(row != NULL, "backend.h declares operation '%s', which this test does not list", name);
    if (row)
      WT_CHECK((row->group != 0) == optional, "backend.h marks '%s' %s, this test treats it as %s",
               name, optional ? "optional" : "required", row->group ? "optional" : "required");
  }
  fclose(f);
  WT_CHECK(seen == OP_COUNT, "backend.h declares %u operations, this test lists %u", seen,
           (unsigned)OP_COUNT);
}

static void test_table(void **state) {
  (void)state;
  const ws_backend_ops *ops = wt_dev->ops;
  WT_CHECK(ops->name && strcmp(ops->name, ws_backend_name(wt_backend)) == 0,
           "the table's name is '%s', the backend is '%s'", ops->name ? ops->name : "(null)",
           ws_backend_name(wt_backend));
  /* every member after the name is one of the listed operations */
  WT_CHECK(sizeof(ws_backend_ops) == sizeof(const char *) + OP_COUNT * sizeof(any_fn),
           "ws_backend_ops has %zu bytes, the name and %u operations make %zu: list the new "
           "operation here",
           sizeof(ws_backend_ops), (unsigned)OP_COUNT,
           sizeof(const char *) + OP_COUNT * sizeof(any_fn));
  uint32_t set[5] = {0}, size[5] = {0};
  char optional[256] = "";
  for (uint32_t i = 0; i < OP_COUNT; ++i) {
    const bool has = op_at(ops, ops_table[i].offset) != NULL;
    size[ops_table[i].group] += 1;
    set[ops_table[i].group] += has;
    if (ops_table[i].group == 0)
      WT_CHECK(has, "%s: required operation '%s' is NULL", ops->name, ops_table[i].name);
    else if (has)
      snprintf(optional + strlen(optional), sizeof optional - strlen(optional), " %s",
               ops_table[i].name);
  }
  for (int g = 1; g <= 4; ++g)
    WT_CHECK(g == 3 || set[g] == 0 || set[g] == size[g],
             "%s: %u of the %u operations of optional group %d are set (all or none)", ops->name,
             set[g], size[g], g);
  printf("  %s: %u required operations, optional:%s\n", ops->name, size[0],
         optional[0] ? optional : " none");
  if (backend_h_path)
    check_backend_h();
}

/* ------------------------------------------------------------ helpers */

typedef struct dmem {
  uint64_t addr;
  void *handle;
  size_t size;
} dmem;

static dmem dalloc(size_t size) {
  dmem m = {0, NULL, size};
  ws_status st = wt_dev->ops->buffer_alloc(wt_dev, size, &m.addr, &m.handle);
  WT_CHECK(st == WS_OK, "buffer_alloc(%zu): %s %s", size, ws_status_name(st),
           ws_device_last_error(wt_dev));
  return m;
}

static void dfree(dmem *m) {
  if (m->handle)
    wt_dev->ops->buffer_free(wt_dev, m->handle);
  m->handle = NULL;
}

/* host memory the stream reads into, and its handle */
typedef struct hmem {
  void *ptr;
  void *handle;
} hmem;

static hmem halloc(size_t size) {
  hmem h = {NULL, NULL};
  ws_status st = wt_dev->ops->host_alloc(wt_dev, size, &h.ptr, &h.handle);
  WT_CHECK(st == WS_OK && h.ptr, "host_alloc(%zu): %s %s", size, ws_status_name(st),
           ws_device_last_error(wt_dev));
  return h;
}

static void put(const dmem *m, size_t offset, const void *src, size_t size) {
  ws_status st = wt_dev->ops->write(wt_dev, m->addr + offset, src, size);
  WT_CHECK(st == WS_OK, "write of %zu bytes: %s %s", size, ws_status_name(st),
           ws_device_last_error(wt_dev));
}

/* enqueue_read of the whole of m, synchronize, copy to dst */
static void get(const dmem *m, void *dst) {
  hmem h = halloc(m->size);
  if (!h.ptr)
    return;
  ws_status st = wt_dev->ops->enqueue_read(wt_dev, h.handle, 0, m->addr, m->size);
  if (st == WS_OK)
    st = wt_dev->ops->synchronize(wt_dev);
  WT_CHECK(st == WS_OK, "enqueue_read + synchronize: %s %s", ws_status_name(st),
           ws_device_last_error(wt_dev));
  memcpy(dst, h.ptr, m->size);
  wt_dev->ops->host_free(wt_dev, h.handle);
}

/* ------------------------------------------------------------ memory */

static void test_memory(void **state) {
  (void)state;
  const ws_backend_ops *ops = wt_dev->ops;
  enum { W = 64 };
  dmem a = dalloc(W * 4), b = dalloc(W * 4);
  WT_CHECK(a.addr && b.addr && a.addr % 16 == 0 && b.addr % 16 == 0,
           "buffer_alloc addresses 0x%" PRIx64 ", 0x%" PRIx64 ": not 16-byte aligned", a.addr,
           b.addr);
  WT_CHECK(a.addr + a.size <= b.addr || b.addr + b.size <= a.addr,
           "buffer_alloc ranges overlap: [0x%" PRIx64 ", +%zu) and [0x%" PRIx64 ", +%zu)", a.addr,
           a.size, b.addr, b.size);
  uint32_t pattern[W], got[W];
  for (uint32_t i = 0; i < W; ++i)
    pattern[i] = 0x9e3779b9u * (i + 1);
  put(&a, 0, pattern, sizeof pattern);
  put(&b, 0, pattern, sizeof pattern);
  /* in stream order after the write: words 5..14 of a filled; b's words
   * 20..27 overwritten from the host */
  WT_CHECK(ops->enqueue_fill_u32(wt_dev, a.addr + 5 * 4, 0xdeadbeefu, 10) == WS_OK,
           "enqueue_fill_u32: %s", ws_device_last_error(wt_dev));
  WT_CHECK(ops->enqueue_fill_u32(wt_dev, a.addr + 40 * 4, 0x12345678u, 0) == WS_OK,
           "enqueue_fill_u32 of 0 words: %s", ws_device_last_error(wt_dev));
  const uint32_t eight[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  put(&b, 20 * 4, eight, sizeof eight);
  get(&a, got);
  for (uint32_t i = 0; i < W; ++i) {
    const uint32_t want = i >= 5 && i < 15 ? 0xdeadbeefu : pattern[i];
    WT_CHECK(got[i] == want, "%s: buffer a word %u = 0x%08x after the fill, expected 0x%08x",
             ops->name, i, got[i], want);
  }
  get(&b, got);
  for (uint32_t i = 0; i < W; ++i) {
    const uint32_t want = i >= 20 && i < 28 ? eight[i - 20] : pattern[i];
    WT_CHECK(got[i] == want,
             "%s: buffer b word %u = 0x%08x after the write at an offset, "
             "expected 0x%08x",
             ops->name, i, got[i], want);
  }
  /* enqueue_read at a host offset and from a device offset */
  hmem h = halloc(W * 4);
  if (h.ptr) {
    memset(h.ptr, 0xab, W * 4);
    WT_CHECK(ops->enqueue_read(wt_dev, h.handle, 8, b.addr + 20 * 4, 8 * 4) == WS_OK &&
                 ops->synchronize(wt_dev) == WS_OK,
             "enqueue_read at offsets: %s", ws_device_last_error(wt_dev));
    const unsigned char *p = h.ptr;
    WT_CHECK(p[0] == 0xab && p[7] == 0xab && memcmp(p + 8, eight, sizeof eight) == 0 &&
                 p[8 + sizeof eight] == 0xab,
             "%s: enqueue_read(host offset 8, device offset 80, 32 bytes) wrote elsewhere",
             ops->name);
    ops->host_free(wt_dev, h.handle);
  }
  dfree(&a);
  dfree(&b);
}

/* ------------------------------------------------------------ launch */

static void test_launch(void **state) {
  (void)state;
  const ws_backend_ops *ops = wt_dev->ops;
  ws_kernel k;
  ws_status st = ws_kernel_find(wt_dev, &ops_modules, "ops_fill", &k);
  WT_CHECK(st == WS_OK, "ws_kernel_find(ops_fill): %s", ws_device_last_error(wt_dev));
  if (st != WS_OK)
    return;
  enum { W = 300 };
  dmem m = dalloc(W * 4);
  uint32_t zero[W] = {0}, got[W];
  put(&m, 0, zero, sizeof zero);
  const ops_args a = {m.addr, 1000u, 0u};
  st = ops->launch(wt_dev, k.entry, WS_FORM_STEP, 0, &a, sizeof a, 128);
  WT_CHECK(st == WS_OK, "%s: launch over 0 indices: %s %s", ops->name, ws_status_name(st),
           ws_device_last_error(wt_dev));
  get(&m, got);
  for (uint32_t i = 0; i < W; ++i)
    WT_CHECK(got[i] == 0, "%s: a launch over 0 indices wrote word %u (0x%08x)", ops->name, i,
             got[i]);
  const uint32_t n = 259; /* not a multiple of the block */
  st = ops->launch(wt_dev, k.entry, WS_FORM_STEP, n, &a, sizeof a, 128);
  WT_CHECK(st == WS_OK, "%s: launch over %u indices: %s", ops->name, n,
           ws_device_last_error(wt_dev));
  get(&m, got);
  for (uint32_t i = 0; i < W; ++i) {
    const uint32_t want = i < n ? 1000u + i : 0u;
    WT_CHECK(got[i] == want, "%s: after a launch over %u indices word %u = %u, expected %u",
             ops->name, n, i, got[i], want);
  }
  dfree(&m);
}

/* ------------------------------------------------------------ queues */

enum { QK = 3, QR = 64, QWORDS = WS_COUNTS_WORDS(QK) };
#define SENTINEL 0x5a5a5a5au

typedef struct qbufs {
  dmem tokens, ids, counts, slots, offsets, scratch, counter, frames;
  ws_queue_args q;
} qbufs;

/* tokens of the test: a mix of the 3 queues and free slots */
static uint32_t token_at(uint32_t s) {
  return (s * 7u + 3u) % 5u < 2u ? 0u : 1u + s % QK;
}

static void qbufs_init(qbufs *b, uint32_t scan) {
  b->tokens = dalloc(QR * 4);
  b->ids = dalloc(QR * 4);
  b->counts = dalloc(QWORDS * 4);
  b->slots = dalloc(QR * 4);
  b->offsets = dalloc(QWORDS * 4);
  b->scratch = dalloc(QR * 4);
  b->counter = dalloc(4);
  b->frames = dalloc(QR * 8);
  uint32_t tokens[QR], ids[QR], frames[2 * QR], counts[QWORDS];
  for (uint32_t s = 0; s < QR; ++s) {
    tokens[s] = token_at(s);
    ids[s] = 100u + s;
    frames[2 * s] = 0xf0000000u | s;
    frames[2 * s + 1] = s * s;
  }
  for (uint32_t i = 0; i < QWORDS; ++i)
    counts[i] = SENTINEL;
  put(&b->tokens, 0, tokens, sizeof tokens);
  put(&b->ids, 0, ids, sizeof ids);
  put(&b->frames, 0, frames, sizeof frames);
  put(&b->counts, 0, counts, sizeof counts);
  memset(&b->q, 0, sizeof b->q);
  b->q.tokens = b->tokens.addr;
  b->q.ids = b->ids.addr;
  b->q.counts = b->counts.addr;
  b->q.slots = b->slots.addr;
  b->q.offsets = b->offsets.addr;
  b->q.scratch = b->scratch.addr;
  b->q.counter = b->counter.addr;
  b->q.scan = scan;
  b->q.queue_count = QK;
  b->q.frames = b->frames.addr;
  static const uint32_t field_sizes[2] = {4, 4};
  b->q.field_sizes = field_sizes;
  b->q.field_count = 2;
  b->q.frame_size = 8;
  b->q.layout = WS_LAYOUT_AOS;
  b->q.capacity = QR;
}

static void qbufs_free(qbufs *b) {
  dfree(&b->tokens);
  dfree(&b->ids);
  dfree(&b->counts);
  dfree(&b->slots);
  dfree(&b->offsets);
  dfree(&b->scratch);
  dfree(&b->counter);
  dfree(&b->frames);
}

static void expect_ok(ws_status st, const char *what) {
  WT_CHECK(st == WS_OK, "%s: %s: %s %s", wt_dev->ops->name, what, ws_status_name(st),
           ws_device_last_error(wt_dev));
}

static void queue_count_case(uint32_t scan) {
  qbufs b;
  qbufs_init(&b, scan);
  expect_ok(wt_dev->ops->queue_count(wt_dev, &b.q), "queue_count");
  uint32_t counts[QWORDS], want[QK + 1] = {0};
  for (uint32_t s = 0; s < scan; ++s)
    want[token_at(s)] += 1;
  get(&b.counts, counts);
  for (uint32_t t = 0; t <= QK; ++t)
    WT_CHECK(counts[t] == want[t], "%s: queue_count over %u slots: counts[%u] = %u, expected %u",
             wt_dev->ops->name, scan, t, counts[t], want[t]);
  for (uint32_t t = QK + 1; t < QWORDS; ++t)
    WT_CHECK(counts[t] == SENTINEL, "%s: queue_count changed counts[%u] (beyond K = %u)",
             wt_dev->ops->name, t, QK);

  /* gather of each token: exactly its slots below scan, and their number */
  for (uint32_t token = 0; token <= QK; ++token) {
    b.q.token = token;
    b.q.flags = 0;
    expect_ok(wt_dev->ops->queue_gather(wt_dev, &b.q), "queue_gather");
    uint32_t slots[QR], counter;
    get(&b.slots, slots);
    get(&b.counter, &counter);
    WT_CHECK(counter == want[token], "%s: queue_gather(token %u, scan %u) counted %u, expected %u",
             wt_dev->ops->name, token, scan, counter, want[token]);
    uint64_t seen = 0; /* a bit per slot */
    for (uint32_t i = 0; i < want[token] && i < QR; ++i) {
      const uint32_t s = slots[i];
      WT_CHECK(s < scan && token_at(s) == token && !(seen >> s & 1u),
               "%s: queue_gather(token %u) listed slot %u (token %u%s)", wt_dev->ops->name, token,
               s, s < QR ? token_at(s) : 0u, s < QR && (seen >> s & 1u) ? ", twice" : "");
      if (s < QR)
        seen |= UINT64_C(1) << s;
    }
  }

  /* gather_all, from the counts queue_count left: queue 1's slots, then 2's, ... */
  expect_ok(wt_dev->ops->queue_gather_all(wt_dev, &b.q), "queue_gather_all");
  uint32_t slots[QR];
  get(&b.slots, slots);
  uint32_t i = 0;
  for (uint32_t t = 1; t <= QK; ++t)
    for (uint32_t j = 0; j < want[t]; ++j, ++i)
      WT_CHECK(slots[i] < scan && token_at(slots[i]) == t,
               "%s: queue_gather_all: position %u holds slot %u (token %u), expected one of "
               "queue %u",
               wt_dev->ops->name, i, slots[i], slots[i] < QR ? token_at(slots[i]) : 0u, t);
  qbufs_free(&b);
}

static void queue_publish_case(bool listed) {
  qbufs b;
  qbufs_init(&b, QR);
  uint32_t counts[QWORDS];
  for (uint32_t t = 0; t < QWORDS; ++t)
    counts[t] = 50u + t;
  put(&b.counts, 0, counts, sizeof counts);
  /* n frames resumed from queue 2 now hold the tokens of their slots */
  const uint32_t n = 9, base = 17;
  uint32_t list[QR] = {0};
  for (uint32_t i = 0; i < n; ++i)
    list[i] = (i * 13u + 5u) % QR;
  put(&b.slots, 0, list, sizeof list);
  b.q.slots = listed ? b.slots.addr : 0;
  b.q.slot_base = base;
  b.q.n = n;
  b.q.src = 2;
  expect_ok(wt_dev->ops->queue_publish(wt_dev, &b.q), "queue_publish");
  uint32_t want[QWORDS], got[QWORDS];
  memcpy(want, counts, sizeof want);
  want[2] -= n;
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t t = token_at(listed ? list[i] : base + i);
    if (t)
      want[t] += 1;
  }
  get(&b.counts, got);
  for (uint32_t t = 0; t < QWORDS; ++t)
    WT_CHECK(got[t] == want[t], "%s: queue_publish (%s slots): counts[%u] = %u, expected %u",
             wt_dev->ops->name, listed ? "listed" : "dense", t, got[t], want[t]);
  qbufs_free(&b);
}

static void queue_compact_case(uint32_t scan) {
  qbufs b;
  qbufs_init(&b, scan);
  uint32_t live = 0;
  for (uint32_t s = 0; s < scan; ++s)
    live += token_at(s) != 0;
  b.q.n = live;
  expect_ok(wt_dev->ops->queue_compact(wt_dev, &b.q), "queue_compact");
  uint32_t tokens[QR], ids[QR], frames[2 * QR];
  get(&b.tokens, tokens);
  get(&b.ids, ids);
  get(&b.frames, frames);
  uint64_t found = 0; /* the original slot of every frame now below live */
  for (uint32_t s = 0; s < live; ++s) {
    const uint32_t from = ids[s] - 100u;
    const bool ok = from < scan && token_at(from) != 0 && tokens[s] == token_at(from) &&
                    frames[2 * s] == (0xf0000000u | from) && frames[2 * s + 1] == from * from &&
                    !(found >> from & 1u);
    WT_CHECK(ok,
             "%s: queue_compact (scan %u, %u live): slot %u holds id %u, token %u, frame "
             "0x%08x/%u: not one live frame moved whole",
             wt_dev->ops->name, scan, live, s, ids[s], tokens[s], frames[2 * s], frames[2 * s + 1]);
    if (ok)
      found |= UINT64_C(1) << from;
  }
  for (uint32_t s = live; s < scan; ++s)
    WT_CHECK(tokens[s] == 0, "%s: queue_compact left token %u at slot %u (>= live %u)",
             wt_dev->ops->name, tokens[s], s, live);
  for (uint32_t s = scan; s < QR; ++s)
    WT_CHECK(tokens[s] == token_at(s) && ids[s] == 100u + s,
             "%s: queue_compact (scan %u) changed slot %u beyond the scan", wt_dev->ops->name, scan,
             s);
  qbufs_free(&b);
}

static void test_queues(void **state) {
  (void)state;
  queue_count_case(QR);
  queue_count_case(37);
  queue_count_case(0);
  queue_publish_case(true);
  queue_publish_case(false);
  queue_compact_case(QR);
  queue_compact_case(29);
  queue_compact_case(0);
}

/* ------------------------------------------------------------ optional operations */

static void test_optional(void **state) {
  (void)state;
  const ws_backend_ops *ops = wt_dev->ops;
  if (ops->timer_mark) {
    dmem m = dalloc(4096);
    double ms = -1.0;
    ws_status st = ops->timer_mark(wt_dev, false);
    if (st == WS_OK)
      st = ops->enqueue_fill_u32(wt_dev, m.addr, 7u, 1024);
    if (st == WS_OK)
      st = ops->timer_mark(wt_dev, true);
    if (st == WS_OK)
      st = ops->synchronize(wt_dev);
    if (st == WS_OK)
      st = ops->timer_elapsed(wt_dev, &ms);
    expect_ok(st, "timer_mark, fill, timer_mark, synchronize, timer_elapsed");
    WT_CHECK(st != WS_OK || ms >= 0.0, "%s: timer_elapsed gave %f ms", ops->name, ms);
    dfree(&m);
  }
  if (ops->flush) {
    /* three submissions of a fill and a read of it: each flush waits for
     * the submission before it, so that submission's read has landed */
    dmem m = dalloc(16);
    hmem h = halloc(16);
    uint32_t *got = h.ptr;
    if (got)
      memset(got, 0, 16);
    for (uint32_t k = 0; got && k < 3; ++k) {
      ws_status st = ops->enqueue_fill_u32(wt_dev, m.addr + 4u * k, 100u + k, 1);
      if (st == WS_OK)
        st = ops->enqueue_read(wt_dev, h.handle, 4u * k, m.addr + 4u * k, 4);
      if (st == WS_OK)
        st = ops->flush(wt_dev);
      expect_ok(st, "fill, read, flush");
      if (k > 0)
        WT_CHECK(got[k - 1] == 100u + k - 1u,
                 "%s: after flush %u the read of submission %u gave %u, expected %u", ops->name, k,
                 k - 1u, got[k - 1], 100u + k - 1u);
    }
    expect_ok(ops->synchronize(wt_dev), "synchronize after flushes");
    WT_CHECK(!got || got[2] == 102u, "%s: after synchronize the last read gave %u, expected 102",
             ops->name, got ? got[2] : 0u);
    if (h.handle)
      ops->host_free(wt_dev, h.handle);
    dfree(&m);
  }
  if (ops->memory_available) {
    uint64_t available = 0, largest = 0;
    expect_ok(ops->memory_available(wt_dev, &available, &largest), "memory_available");
    WT_CHECK(available > 0 && largest > 0,
             "%s: memory_available says %" PRIu64 " bytes available, largest %" PRIu64, ops->name,
             available, largest);
  }
}

/* ------------------------------------------------------------ errors */

static void expect_size_error(ws_status st, uint64_t size, const char *what) {
  char digits[32];
  snprintf(digits, sizeof digits, "%" PRIu64, size);
  const char *msg = ws_device_last_error(wt_dev);
  WT_CHECK(st != WS_OK, "%s: %s of %" PRIu64 " bytes succeeded", wt_dev->ops->name, what, size);
  WT_CHECK(st == WS_OK || strstr(msg, digits) != NULL,
           "%s: %s of %" PRIu64 " bytes failed with %s, but the device's message does not name "
           "the size: '%s'",
           wt_dev->ops->name, what, size, ws_status_name(st), msg);
}

static void test_errors(void **state) {
  (void)state;
  /* through the API (the core checks before the backend allocates) */
  const uint64_t huge = UINT64_C(1) << 60;
  ws_buffer *buf = NULL;
  expect_size_error(ws_buffer_create(wt_dev, (size_t)huge, &buf), huge, "ws_buffer_create");
  WT_CHECK(buf == NULL, "a failed ws_buffer_create left a buffer");
  /* the operations themselves, where asking is defined behaviour: the core
   * passes a readback's size to host_alloc unchecked, and a Vulkan buffer
   * beyond maxBufferSize is invalid usage */
  if (wt_backend != WS_BACKEND_VULKAN) {
    ws_readback *rb = NULL;
    ws_status st = ws_readback_create(wt_dev, (size_t)huge, &rb);
    WT_CHECK(st != WS_OK && rb == NULL && ws_device_last_error(wt_dev)[0] != '\0',
             "%s: ws_readback_create of 2^60 bytes: %s, message '%s'", wt_dev->ops->name,
             ws_status_name(st), ws_device_last_error(wt_dev));
    if (rb)
      ws_readback_destroy(rb);
  }
  if (wt_backend != WS_BACKEND_VULKAN) {
    const uint64_t pib = UINT64_C(1) << 50;
    uint64_t addr = 0;
    void *handle = NULL;
    ws_status st = wt_dev->ops->buffer_alloc(wt_dev, (size_t)pib, &addr, &handle);
    expect_size_error(st, pib, "buffer_alloc");
    if (st == WS_OK)
      wt_dev->ops->buffer_free(wt_dev, handle);
  }
  /* the device still works */
  dmem m = dalloc(64);
  uint32_t v = 0x600d600du, got[16] = {0};
  put(&m, 0, &v, 4);
  get(&m, got);
  WT_CHECK(got[0] == v, "%s: the device does not work after the failed allocations",
           wt_dev->ops->name);
  dfree(&m);
}

int main(int argc, char **argv) {
  /* --backend-h PATH (ours) before the harness's options */
  for (int i = 1; i + 1 < argc; ++i)
    if (strcmp(argv[i], "--backend-h") == 0) {
      backend_h_path = argv[i + 1];
      for (int j = i; j + 2 <= argc; ++j)
        argv[j] = argv[j + 2];
      argc -= 2;
      break;
    }
  const wt_need needs[] = {{&ops_modules, "ops_fill"}};
  wt_init(argc, argv, needs, 1);
  wt_add("table", test_table, NULL);
  wt_add("memory", test_memory, NULL);
  wt_add("launch", test_launch, NULL);
  wt_add("queues", test_queues, NULL);
  wt_add("optional", test_optional, NULL);
  wt_add("errors", test_errors, NULL);
  return wt_run("backend_ops");
}
