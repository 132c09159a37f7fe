/* wavesched — writing kernels in portable C (one source for CPU and CUDA).
 *
 * A kernel source file (conventionally `*.kern.h`) is included by one C
 * translation unit and, when CUDA is built, by one .cu translation unit; the
 * macros below expand to an OpenMP loop in C and to a __global__ kernel plus a
 * stream launcher in CUDA (and HIP). Kernel code sees only this header:
 * WS_DEVICE functions, ws_atomic_* helpers, WS_PTR for device addresses.
 *
 *   WS_FRAME(my_frame, MY_FIELDS)       frame struct from an X-macro list
 *   WS_COROUTINE(co, frame, args, entry, CONTS)
 *                                       step kernel + megakernel of a coroutine
 *   WS_KERNEL(name, args_t, i, a) {..}  plain kernel body over index i
 *   WS_MODULE_BEGIN(m) WS_MODULE_COROUTINE(co) WS_MODULE_KERNEL(k)
 *   WS_MODULE_END(m)                    exported table `m_module_<backend>`
 *
 * A continuation is `WS_DEVICE uint32_t fn(const ws_item *it, frame *f,
 * const args *a)` and returns the index (1..K) of the continuation to suspend
 * to, or WS_TERMINATE. CONTS is an X-macro list `X(index, function, "name")`
 * in index order 1..K.
 */
#ifndef WAVESCHED_KERNEL_H
#define WAVESCHED_KERNEL_H

#include <stdint.h>
#include <string.h>

#include "wavesched/launch.h"
#include "wavesched/module.h"

#if defined(__CUDACC__) || defined(__HIPCC__)
#define WS_KERNEL_GPU 1
#if defined(__HIPCC__)
#include <hip/hip_runtime.h>
#define WS_GPU_STREAM hipStream_t
#define WS_GPU_LAST_ERROR() ((int)hipGetLastError())
#else
#define WS_GPU_STREAM cudaStream_t
#define WS_GPU_LAST_ERROR() ((int)cudaGetLastError())
#endif
#define WS_DEVICE __device__
#define WS_HOST_DEVICE __host__ __device__
#define WS_EXTERN_C extern "C"
#define WS_MODULE_SUFFIX_ _module_cuda
#define WS_MODULE_BACKEND_ WS_BACKEND_CUDA
#else
#define WS_KERNEL_GPU 0
#define WS_DEVICE
#define WS_HOST_DEVICE
#define WS_EXTERN_C
#define WS_MODULE_SUFFIX_ _module_cpu
#define WS_MODULE_BACKEND_ WS_BACKEND_CPU
#endif

#define WS_TERMINATE 0u
#define WS_PTR(type, addr) ((type *)(uintptr_t)(addr))

#define WS_CAT2_(a, b) a##b
#define WS_CAT_(a, b) WS_CAT2_(a, b)

/* ---- atomics (relaxed; kernels that need ordering across launches get it
 * from stream order, never from fences inside a launch) ---- */
#if WS_KERNEL_GPU
WS_DEVICE static inline uint32_t ws_atomic_add_u32(uint32_t *p, uint32_t v) { return atomicAdd(p, v); }
WS_DEVICE static inline uint32_t ws_atomic_sub_u32(uint32_t *p, uint32_t v) { return atomicSub(p, v); }
WS_DEVICE static inline int32_t ws_atomic_add_i32(int32_t *p, int32_t v) { return atomicAdd(p, v); }
WS_DEVICE static inline uint32_t ws_atomic_max_u32(uint32_t *p, uint32_t v) { return atomicMax(p, v); }
WS_DEVICE static inline uint32_t ws_atomic_exch_u32(uint32_t *p, uint32_t v) { return atomicExch(p, v); }
WS_DEVICE static inline uint32_t ws_atomic_cas_u32(uint32_t *p, uint32_t expect, uint32_t v) {
  return atomicCAS(p, expect, v);
}
WS_DEVICE static inline float ws_atomic_add_f32(float *p, float v) { return atomicAdd(p, v); }
#else
static inline uint32_t ws_atomic_add_u32(uint32_t *p, uint32_t v) {
  return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}
static inline uint32_t ws_atomic_sub_u32(uint32_t *p, uint32_t v) {
  return __atomic_fetch_sub(p, v, __ATOMIC_RELAXED);
}
static inline int32_t ws_atomic_add_i32(int32_t *p, int32_t v) {
  return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}
static inline uint32_t ws_atomic_max_u32(uint32_t *p, uint32_t v) {
  uint32_t old = __atomic_load_n(p, __ATOMIC_RELAXED);
  while (old < v && !__atomic_compare_exchange_n(p, &old, v, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
  }
  return old;
}
static inline uint32_t ws_atomic_exch_u32(uint32_t *p, uint32_t v) {
  return __atomic_exchange_n(p, v, __ATOMIC_RELAXED);
}
static inline uint32_t ws_atomic_cas_u32(uint32_t *p, uint32_t expect, uint32_t v) {
  __atomic_compare_exchange_n(p, &expect, v, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
  return expect;
}
static inline float ws_atomic_add_f32(float *p, float v) {
  float old, want;
  __atomic_load(p, &old, __ATOMIC_RELAXED);
  do {
    want = old + v;
  } while (!__atomic_compare_exchange(p, &old, &want, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
  return old;
}
#endif

/* Fused accounting: a frame leaves queue `src` (0: the entry, whose count
 * the host keeps) and joins queue `next` (WS_TERMINATE: none). Every frame
 * of a launch has the same src, and next takes a handful of values, so on
 * CUDA (sm_70+) the warp combines its updates first: one atomic per distinct
 * queue per warp instead of two per frame. Per-frame atomics on K + 1 words
 * serialize in L2: on the H200 they made the path tracer's continuation
 * kernel 2.5x slower (docs/cuda.md). The lanes that arrive together
 * (__activemask) combine; a warp whose lanes diverged in the user's code
 * combines in groups, each exact. Elsewhere (CPU, HIP, older GPUs) each
 * frame updates the counts itself. */
WS_DEVICE static inline void ws_fused_count_(uint32_t *counts, uint32_t src, uint32_t next) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 700 && !defined(__HIPCC__)
  const unsigned active = __activemask();
  unsigned lane;
  asm("mov.u32 %0, %%laneid;" : "=r"(lane));
  const unsigned peers = __match_any_sync(active, next);
  if (src != 0 && lane == (unsigned)(__ffs((int)active) - 1))
    atomicSub(&counts[src], (uint32_t)__popc(active));
  if (next != WS_TERMINATE && lane == (unsigned)(__ffs((int)peers) - 1))
    atomicAdd(&counts[next], (uint32_t)__popc(peers));
#else
  if (src != 0)
    ws_atomic_sub_u32(&counts[src], 1u);
  if (next != WS_TERMINATE)
    ws_atomic_add_u32(&counts[next], 1u);
#endif
}

/* ---- frames ----
 * MY_FIELDS(X) lists X(type, name). SoA stores field k of slot s at
 * frames + field_offsets[k] + s * sizeof(type); the host orders the arrays
 * by decreasing alignment, so every typed access below is aligned for any R. */
#define WS_FRAME_DECL_(type, name) type name;
#define WS_FRAME_COUNT_(type, name) +1
#define WS_FRAME_BYTES_(type, name) +sizeof(type)
#define WS_FRAME(tname, FIELDS)                                                         \
  typedef struct tname {                                                                \
    FIELDS(WS_FRAME_DECL_)                                                              \
  } tname;                                                                              \
  enum {                                                                                \
    tname##_ws_field_count = 0 FIELDS(WS_FRAME_COUNT_),                                 \
    tname##_ws_field_bytes = 0 FIELDS(WS_FRAME_BYTES_)                                  \
  };                                                                                    \
  WS_DEVICE static inline void tname##_ws_load(tname *f, const ws_launch *p, uint32_t s) { \
    if (p->layout == WS_LAYOUT_AOS) {                                                   \
      *f = WS_PTR(const tname, p->frames)[s];                                           \
      return;                                                                           \
    }                                                                                   \
    const uint64_t *off_ = WS_PTR(const uint64_t, p->field_offsets);                    \
    uint32_t k_ = 0;                                                                    \
    (void)off_;                                                                         \
    (void)k_;                                                                           \
    FIELDS(WS_FRAME_LOAD_)                                                              \
  }                                                                                     \
  WS_DEVICE static inline void tname##_ws_store(const tname *f, const ws_launch *p, uint32_t s) { \
    if (p->layout == WS_LAYOUT_AOS) {                                                   \
      WS_PTR(tname, p->frames)[s] = *f;                                                 \
      return;                                                                           \
    }                                                                                   \
    const uint64_t *off_ = WS_PTR(const uint64_t, p->field_offsets);                    \
    uint32_t k_ = 0;                                                                    \
    (void)off_;                                                                         \
    (void)k_;                                                                           \
    FIELDS(WS_FRAME_STORE_)                                                             \
  }
#define WS_FRAME_LOAD_(type, name)                                                      \
  f->name = WS_PTR(const type, p->frames + off_[k_])[s];                                \
  ++k_;
#define WS_FRAME_STORE_(type, name)                                                     \
  WS_PTR(type, p->frames + off_[k_])[s] = f->name;                                      \
  ++k_;

/* ---- coroutines ---- */
#define WS_CORO_CASE_(idx, fn, name)                                                    \
  case (idx):                                                                           \
    next_ = fn(&it_, f_, a_);                                                           \
    break;
#define WS_CORO_COUNT_(idx, fn, name) +1

/* Runs continuation `src` (0 = entry) for one frame. An index outside 1..K is
 * an invalid transition: the item terminates and the error word counts it.
 * K is the smaller of the compiled list and the launch's continuation_count,
 * so a host description shorter than the kernels cannot index past counts[]. */
#define WS_CORO_RESUME_(co, tframe, targs, entry_fn, CONTS)                             \
  WS_DEVICE static inline uint32_t co##_ws_resume(uint32_t src, const ws_item *itp_,    \
                                                  tframe *f_, const targs *a_,          \
                                                  uint32_t *err_, uint32_t limit_) {    \
    const ws_item it_ = *itp_;                                                          \
    uint32_t next_ = WS_TERMINATE;                                                      \
    switch (src) {                                                                      \
    case 0:                                                                             \
      next_ = entry_fn(&it_, f_, a_);                                                   \
      break;                                                                            \
      CONTS(WS_CORO_CASE_)                                                              \
    default:                                                                            \
      break;                                                                            \
    }                                                                                   \
    if (next_ > (0 CONTS(WS_CORO_COUNT_)) || next_ > limit_) {                          \
      ws_atomic_add_u32(err_, 1u);                                                      \
      next_ = WS_TERMINATE;                                                             \
    }                                                                                   \
    return next_;                                                                       \
  }

#define WS_COROUTINE(co, tframe, targs, entry_fn, CONTS)                                \
  WS_CORO_RESUME_(co, tframe, targs, entry_fn, CONTS)                                   \
  WS_DEVICE static void co##_ws_step(const ws_launch *p, uint32_t i) {                  \
    const uint32_t slot = p->slots ? WS_PTR(const uint32_t, p->slots)[i] : p->slot_base + i; \
    uint32_t *ids = WS_PTR(uint32_t, p->ids);                                           \
    uint32_t *tokens = WS_PTR(uint32_t, p->tokens);                                     \
    uint32_t *counts = WS_PTR(uint32_t, p->counts);                                     \
    tframe f;                                                                           \
    ws_item it;                                                                         \
    if (p->src == 0) {                                                                  \
      memset(&f, 0, sizeof f);                                                          \
      it.id = p->first_id + i;                                                          \
      ids[slot] = it.id;                                                                \
    } else {                                                                            \
      it.id = ids[slot];                                                                \
      tframe##_ws_load(&f, p, slot);                                                    \
    }                                                                                   \
    const uint32_t next = co##_ws_resume(                                              \
        p->src, &it, &f, WS_PTR(const targs, p->args),                                  \
        &counts[WS_COUNTS_BAD(p->continuation_count)], p->continuation_count);          \
    if (next != WS_TERMINATE)                                                           \
      tframe##_ws_store(&f, p, slot);                                                   \
    tokens[slot] = next;                                                                \
    if (p->flags & WS_LAUNCH_FUSED)                                                     \
      ws_fused_count_(counts, p->src, next);                                            \
  }                                                                                     \
  /* The megakernel counts each item's continuation runs (the entry's too)    \
   * against `limit`: an item that would run more stops and is counted, so a  \
   * coroutine that resumes itself forever cannot hang the launch. */          \
  WS_DEVICE static void co##_ws_mega(const ws_launch *p, uint32_t i) {                  \
    uint32_t *counts = WS_PTR(uint32_t, p->counts);                                     \
    tframe f;                                                                           \
    ws_item it;                                                                         \
    memset(&f, 0, sizeof f);                                                            \
    it.id = p->first_id + i;                                                            \
    uint32_t next = 0;                                                                  \
    uint64_t runs = 0;                                                                  \
    do {                                                                                \
      if (p->limit && runs == p->limit) {                                               \
        ws_atomic_add_u32(&counts[WS_COUNTS_LIMIT(p->continuation_count)], 1u);         \
        break;                                                                          \
      }                                                                                 \
      next = co##_ws_resume(next, &it, &f, WS_PTR(const targs, p->args),                \
                            &counts[WS_COUNTS_BAD(p->continuation_count)],              \
                            p->continuation_count);                                     \
      ++runs;                                                                           \
    } while (next != WS_TERMINATE);                                                     \
  }                                                                                     \
  enum {                                                                                \
    co##_ws_args_size = sizeof(targs),                                                  \
    co##_ws_frame_size = sizeof(tframe),                                                \
    co##_ws_frame_fields = tframe##_ws_field_count,                                     \
    co##_ws_frame_field_bytes = tframe##_ws_field_bytes                                 \
  };                                                                                    \
  WS_LAUNCHER_(co##_ws_step_launch, co##_ws_step, ws_launch)                            \
  WS_LAUNCHER_(co##_ws_mega_launch, co##_ws_mega, ws_launch)

/* ---- plain kernels ---- */
#define WS_KERNEL(name, targs, ivar, avar)                                              \
  WS_DEVICE static void name##_ws_body(uint32_t ivar, const targs *avar);                \
  WS_DEVICE static void name##_ws_call(const targs *a_, uint32_t i_) { name##_ws_body(i_, a_); } \
  WS_LAUNCHER_(name##_ws_launch, name##_ws_call, targs)                                 \
  enum { name##_ws_args_size = sizeof(targs) };                                         \
  WS_DEVICE static void name##_ws_body(uint32_t ivar, const targs *avar)

/* ---- backend launchers: fn(const T *args, uint32_t i) over i < n ---- */
#if WS_KERNEL_GPU
#define WS_LAUNCHER_(lname, fn, T)                                                      \
  __global__ void lname##_gpu(T a_, uint32_t n_) {                                      \
    const uint32_t i_ = blockIdx.x * blockDim.x + threadIdx.x;                          \
    if (i_ < n_)                                                                        \
      fn(&a_, i_);                                                                      \
  }                                                                                     \
  static int lname(uint32_t n, const void *args, uint32_t block, void *stream) {        \
    if (n == 0)                                                                         \
      return 0;                                                                         \
    const uint32_t grid = (n + block - 1u) / block;                                     \
    T a_;                                                                               \
    memcpy(&a_, args, sizeof a_);                                                       \
    lname##_gpu<<<grid, block, 0, (WS_GPU_STREAM)stream>>>(a_, n);                      \
    return WS_GPU_LAST_ERROR();                                                         \
  }
#else
/* Runs body(args, begin, end) over chunks of 0..n-1 on the CPU device's
 * threads (`stream` is the device's pool, which the CPU backend passes;
 * NULL runs everything on the caller). Launches of fewer than 4096 indices
 * run on the caller. Defined by the CPU backend (src/backend/cpu/cpu_pool.c). */
int ws_cpu_parallel_for(void *stream, uint32_t n, const void *args,
                        void (*body)(const void *args, uint32_t begin, uint32_t end));
#define WS_LAUNCHER_(lname, fn, T)                                                      \
  static void lname##_range(const void *args, uint32_t begin, uint32_t end) {           \
    const T *a_ = (const T *)args;                                                      \
    for (uint32_t i_ = begin; i_ < end; ++i_)                                           \
      fn(a_, i_);                                                                       \
  }                                                                                     \
  static int lname(uint32_t n, const void *args, uint32_t block, void *stream) {        \
    (void)block;                                                                        \
    return ws_cpu_parallel_for(stream, n, args, lname##_range);                         \
  }
#endif

/* ---- module tables ---- */
/* hip-clang also emits namespace-scope const tables in its device pass,
 * where the host launchers they name do not exist (undefined symbols at the
 * device link); a non-const table stays host-only. */
#if defined(__HIPCC__)
#define WS_MODULE_TABLE_CONST_
#else
#define WS_MODULE_TABLE_CONST_ const
#endif
#define WS_MODULE_BEGIN(m) static WS_MODULE_TABLE_CONST_ ws_module_entry m##_ws_entries_[] = {
#define WS_MODULE_COROUTINE(co)                                                         \
  {#co,                                                                                 \
   WS_ENTRY_COROUTINE,                                                                  \
   (uint32_t)sizeof(ws_launch),                                                         \
   co##_ws_step_launch,                                                                 \
   co##_ws_mega_launch,                                                                 \
   0,                                                                                   \
   0,                                                                                   \
   0,                                                                                   \
   0,                                                                                   \
   (uint32_t)co##_ws_args_size,                                                         \
   (uint32_t)co##_ws_frame_size,                                                        \
   (uint32_t)co##_ws_frame_fields,                                                      \
   (uint32_t)co##_ws_frame_field_bytes},
#define WS_MODULE_KERNEL(k)                                                             \
  {#k, WS_ENTRY_KERNEL, (uint32_t)k##_ws_args_size, k##_ws_launch, 0, 0, 0, 0, 0, 0, 0, 0, 0},
#define WS_MODULE_END(m)                                                                \
  }                                                                                     \
  ;                                                                                     \
  WS_EXTERN_C const ws_module WS_CAT_(m, WS_MODULE_SUFFIX_);                            \
  const ws_module WS_CAT_(m, WS_MODULE_SUFFIX_) = {                                     \
      #m, WS_MODULE_BACKEND_, m##_ws_entries_,                                          \
      (uint32_t)(sizeof m##_ws_entries_ / sizeof m##_ws_entries_[0])};

#endif
