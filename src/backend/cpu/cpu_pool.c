/* SPDX-License-Identifier: MIT */
/* wavesched — the CPU backend's worker threads (cpu_pool.h).
 *
 * Why not OpenMP: libgomp's threads are process-wide (omp_set_num_threads
 * changed the user's own parallel regions too), they spin after every
 * region unless OMP_WAIT_POLICY=passive is set before the runtime loads
 * (on a loaded machine the spinning workers took the core the launching
 * thread needed: small launches ran 10-100x slower), and a failed thread
 * creation aborts the process ("libgomp: Thread creation failed"). This
 * pool belongs to one device, sleeps on a condition variable between
 * launches, and runs a launch on the caller alone when its workers cannot
 * be started. Measurements: docs/decisions.md.
 *
 * A launch is split into chunks that threads claim from one atomic ticket.
 * The caller claims chunks too, and waits only for chunks another thread
 * has claimed and not finished: a worker that is asleep or descheduled when
 * a launch starts never delays it (it finds the chunks gone and goes back to
 * sleep). Invariants:
 *   P1 ticket = (job << 32) | next claimed index; a chunk is claimed by one
 *      compare-exchange on it, so a worker still holding an older job's
 *      parameters can never claim (job numbers differ) a newer job's chunk;
 *   P2 done counts finished indices of the current job; the caller returns
 *      once done == n, after every body call of the job has returned, so
 *      the argument block the launcher passed may go away;
 *   P3 job parameters (body, args, n, chunk, job) are written under `mu`
 *      before the ticket opens, and read by workers under `mu`.
 */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */

#include "cpu_pool.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <unistd.h>

#include "../../core/alloc.h"
#include "wavesched/kernel.h"
#include "wavesched/wavesched.h"

/* Launches below this many indices run on the caller: waking a worker
 * costs more than a few thousand trivial items (the old OpenMP launcher
 * had the same threshold). */
#define WS_CPU_PARALLEL_MIN 4096u

typedef void (*ws_cpu_body)(const void *args, uint32_t begin, uint32_t end);

struct ws_cpu_pool {
  int threads;  /* in all, the caller's included */
  int started;  /* workers running; -1 once starting them failed */
  pthread_t *workers;
  pthread_mutex_t mu;
  pthread_cond_t wake; /* a new job, or stop */
  pthread_cond_t idle; /* the current job's last index finished */
  bool stop;
  /* the current job (P3) */
  uint32_t job;
  ws_cpu_body body;
  const void *args;
  uint32_t n, chunk;
  _Atomic uint64_t ticket; /* P1 */
  _Atomic uint32_t done;   /* P2 */
};

int ws_cpu_default_threads(void) {
  int n = 0;
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0)
    n = CPU_COUNT(&set);
  if (n <= 0) {
    const long online = sysconf(_SC_NPROCESSORS_ONLN);
    n = online > 0 ? (int)(online < WS_CPU_MAX_THREADS ? online : WS_CPU_MAX_THREADS) : 1;
  }
  return n < WS_CPU_MAX_THREADS ? n : WS_CPU_MAX_THREADS;
}

ws_cpu_pool *ws_cpu_pool_create(int threads) {
  ws_cpu_pool *p = ws_calloc(1, sizeof *p);
  if (!p)
    return NULL;
  p->threads = threads < 1 ? 1 : threads;
  /* the handles now, the threads at the first launch that needs them */
  p->workers = ws_calloc((size_t)p->threads, sizeof *p->workers);
  if (!p->workers) {
    ws_free(p);
    return NULL;
  }
  pthread_mutex_init(&p->mu, NULL);
  pthread_cond_init(&p->wake, NULL);
  pthread_cond_init(&p->idle, NULL);
  atomic_init(&p->ticket, 0);
  atomic_init(&p->done, 0);
  return p;
}

int ws_cpu_pool_threads(const ws_cpu_pool *p) { return p ? p->threads : 1; }

/* Claims the next chunk of job `job`: false when the job has no chunk left
 * or is no longer the current one (P1). */
static bool claim(ws_cpu_pool *p, uint32_t job, uint32_t n, uint32_t chunk, uint32_t *begin,
                  uint32_t *end) {
  uint64_t t = atomic_load(&p->ticket);
  for (;;) {
    const uint32_t next = (uint32_t)t;
    if ((uint32_t)(t >> 32) != job || next >= n)
      return false;
    const uint32_t stop = n - next < chunk ? n : next + chunk;
    if (atomic_compare_exchange_weak(&p->ticket, &t, ((uint64_t)job << 32) | stop)) {
      *begin = next;
      *end = stop;
      return true;
    }
  }
}

/* Runs claimed chunks until none is left; the thread that finishes the
 * job's last index wakes the caller (P2). */
static void work(ws_cpu_pool *p, uint32_t job, ws_cpu_body body, const void *args, uint32_t n,
                 uint32_t chunk) {
  uint32_t b, e;
  while (claim(p, job, n, chunk, &b, &e)) {
    body(args, b, e);
    if (atomic_fetch_add(&p->done, e - b) + (e - b) == n) {
      pthread_mutex_lock(&p->mu);
      pthread_cond_signal(&p->idle);
      pthread_mutex_unlock(&p->mu);
    }
  }
}

static void *worker_main(void *arg) {
  ws_cpu_pool *p = arg;
  uint32_t seen = 0;
  pthread_mutex_lock(&p->mu);
  for (;;) {
    while (!p->stop && p->job == seen)
      pthread_cond_wait(&p->wake, &p->mu);
    if (p->stop)
      break;
    /* P3: a consistent copy of the job, whichever one is current now */
    seen = p->job;
    const ws_cpu_body body = p->body;
    const void *args = p->args;
    const uint32_t n = p->n, chunk = p->chunk;
    pthread_mutex_unlock(&p->mu);
    work(p, seen, body, args, n, chunk);
    pthread_mutex_lock(&p->mu);
  }
  pthread_mutex_unlock(&p->mu);
  return NULL;
}

/* Starts the workers once. A thread that cannot be created leaves the
 * pool with fewer workers (or none: every launch then runs on the caller),
 * never an error: the results are the same. */
static void start_workers(ws_cpu_pool *p) {
  const int want = p->threads - 1;
  int made = 0;
  while (made < want && pthread_create(&p->workers[made], NULL, worker_main, p) == 0)
    ++made;
  p->started = made > 0 ? made : -1;
}

void ws_cpu_pool_destroy(ws_cpu_pool *p) {
  if (!p)
    return;
  if (p->started > 0) {
    pthread_mutex_lock(&p->mu);
    p->stop = true;
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < p->started; ++i)
      pthread_join(p->workers[i], NULL);
  }
  ws_free(p->workers);
  pthread_cond_destroy(&p->idle);
  pthread_cond_destroy(&p->wake);
  pthread_mutex_destroy(&p->mu);
  ws_free(p);
}

int ws_cpu_parallel_for(void *stream, uint32_t n, const void *args, ws_cpu_body body) {
  ws_cpu_pool *p = stream;
  if (!p || p->threads <= 1 || n < WS_CPU_PARALLEL_MIN) {
    body(args, 0, n);
    return 0;
  }
  if (p->started == 0)
    start_workers(p);
  if (p->started < 0) {
    body(args, 0, n);
    return 0;
  }
  /* Sixteen chunks per thread (at least 256 indices each): an uneven
   * kernel still spreads, and a thread descheduled mid-chunk (a loaded
   * machine) holds the launch up by a sixteenth of its share at most. */
  const uint32_t parts = 16u * (uint32_t)(p->started + 1);
  uint32_t chunk = (n + parts - 1u) / parts;
  if (chunk < 256u)
    chunk = 256u;
  pthread_mutex_lock(&p->mu);
  const uint32_t job = p->job + 1u == 0 ? 1u : p->job + 1u; /* 0 is "none seen" */
  p->job = job;
  p->body = body;
  p->args = args;
  p->n = n;
  p->chunk = chunk;
  atomic_store(&p->done, 0);
  atomic_store(&p->ticket, (uint64_t)job << 32);
  pthread_cond_broadcast(&p->wake);
  pthread_mutex_unlock(&p->mu);
  work(p, job, body, args, n, chunk);
  /* P2: only chunks other threads claimed and still run are waited for */
  if (atomic_load(&p->done) != n) {
    pthread_mutex_lock(&p->mu);
    while (atomic_load(&p->done) != n)
      pthread_cond_wait(&p->idle, &p->mu);
    pthread_mutex_unlock(&p->mu);
  }
  return 0;
}
