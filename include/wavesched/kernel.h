/* SPDX-License-Identifier: MIT */
/** @file
 * wavesched — writing kernels in portable C (one source for CPU and CUDA).
 *
 * A kernel source file (conventionally `*.kern.h`) is included by one C
 * translation unit and, when CUDA is built, by one .cu translation unit; the
 * macros below expand to a loop over the CPU device's threads in C and to a
 * __global__ kernel plus a stream launcher in CUDA (and HIP). Kernel code sees only this header:
 * WS_DEVICE functions, ws_atomic_* helpers, WS_PTR for device addresses.
 *
 *   WS_FRAME(my_frame, MY_FIELDS)       frame struct from an X-macro list
 *   WS_COROUTINE(co, frame, args, entry, CONTS)
 *                                       step kernel + megakernel of a coroutine
 *   WS_KERNEL(name, args_t, i, a) {..}  plain kernel body over index i
 *   WS_MODULE_BEGIN(m) WS_MODULE_COROUTINE(co) WS_MODULE_KERNEL(k)
 *   WS_MODULE_END(m)                    exported table `m_module_<backend>`
 *   WS_MODULE(m, entries...)            the same in one line
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

#include "wavesched/export.h"
#include "wavesched/launch.h"
#include "wavesched/module.h"

#if defined(__CUDACC__) || defined(__HIPCC__)
#define WS_KERNEL_GPU 1
#if defined(__HIPCC__)
#include <hip/hip_runtime.h>
#define WS_GPU_STREAM hipStream_t
#define WS_GPU_LAST_ERROR() ((int)hipGetLastError())
#define WS_GPU_INVALID_VALUE hipErrorInvalidValue
#else
#include <cooperative_groups.h>
extern "C" {
#include "wavesched/detail/decide.h"
}
#define WS_GPU_STREAM cudaStream_t
#define WS_GPU_LAST_ERROR() ((int)cudaGetLastError())
#define WS_GPU_INVALID_VALUE cudaErrorInvalidValue
#endif
#define WS_DEVICE __device__
#define WS_HOST_DEVICE __host__ __device__
#define WS_FORCEINLINE_ __forceinline__
#define WS_EXTERN_C extern "C"
#define WS_MODULE_SUFFIX_ _module_cuda
#define WS_MODULE_BACKEND_ WS_BACKEND_CUDA
#else
/** 1 when the kernel source is compiled for a GPU (CUDA or HIP), 0 for the CPU backend. */
#define WS_KERNEL_GPU 0
/** Marks a function kernels call (`__device__` on the GPU, nothing in C). */
#define WS_DEVICE
/** Marks a function both the host and kernels call (`__host__ __device__` on the GPU). */
#define WS_HOST_DEVICE
#define WS_FORCEINLINE_ inline
/** `extern "C"` in the CUDA translation unit, nothing in C: the module tables' linkage. */
#define WS_EXTERN_C
#define WS_MODULE_SUFFIX_ _module_cpu
#define WS_MODULE_BACKEND_ WS_BACKEND_CPU
#endif

#ifdef __cplusplus
#define WS_ALIGNOF_(t) alignof(t)
#else
#define WS_ALIGNOF_(t) _Alignof(t)
#endif

/** What a continuation returns to end its item. */
#define WS_TERMINATE 0u
/** The device address `addr` (a uint64_t: ws_buffer_address, argument
 * fields) as a `type *`. */
#define WS_PTR(type, addr) ((type *)(uintptr_t)(addr))

/** lowbias32 (Wellons): a bijective 32-bit mixer, the same bits on every
 * backend and on the host (kernel.glsl has its twin) — for random numbers
 * that are a pure function of an item's coordinates. */
WS_HOST_DEVICE static inline uint32_t ws_hash32(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return x;
}

#define WS_CAT2_(a, b) a##b
#define WS_CAT_(a, b) WS_CAT2_(a, b)

/* ---- register caps ----
 * A kernel's registers set how many of its warps an SM holds. A latency-bound
 * continuation (a BVH traversal, a loop of dependent loads) may run faster
 * with fewer registers and more resident warps, even with some spilled to
 * local memory; a wavefront can give it that without touching the heavier
 * continuations, which a megakernel cannot. Measure before capping
 * (docs/decisions.md has the path tracer's numbers).
 *
 * WS_CONTINUATION_MAX_REGISTERS(frame_type, src, n): continuation `src` (its
 * index; 0 the entry) of the coroutine whose frame is `frame_type` compiles
 * with at most n registers per thread on CUDA. WS_KERNEL_MAX_REGISTERS(name,
 * n): the same for plain kernel `name`. Each must come BEFORE the
 * WS_COROUTINE / WS_KERNEL it caps (C++ sees the cap when the kernel is
 * instantiated); both are nothing on the CPU, in GLSL and on HIP, and n (0: no cap) is a
 * hint for the compiler (CUDA's __maxnreg__), never a change in results. */
#if WS_KERNEL_GPU
/* n == 0: no cap. A capped kernel is a second template, instantiated only
 * where a cap is set: any __maxnreg__, even the hardware's 255, changes what
 * ptxas allocates (measured: the path tracer's intersect kernel 71 -> 86
 * registers, a plain kernel 32 -> 70), so the default carries none. */
template <class Tag, uint32_t S> struct ws_max_registers_ {
  static constexpr uint32_t n = 0u;
};
#if defined(__HIPCC__) || (__CUDACC_VER_MAJOR__ * 100 + __CUDACC_VER_MINOR__ < 1204)
#define WS_MAXNREG_(n)
#else
#define WS_MAXNREG_(n) __maxnreg__(n)
#endif
#define WS_CONTINUATION_MAX_REGISTERS(frame_type, src, regs)                            \
  template <> struct ws_max_registers_<frame_type, (uint32_t)(src)> {                   \
    static constexpr uint32_t n = (regs);                                               \
  };
#define WS_KERNEL_TAG_(name) struct name##_ws_tag_;
#define WS_KERNEL_MAX_REGISTERS(name, regs)                                             \
  WS_KERNEL_TAG_(name)                                                                  \
  template <> struct ws_max_registers_<name##_ws_tag_, 0u> {                            \
    static constexpr uint32_t n = (regs);                                               \
  };
#else
#define WS_KERNEL_TAG_(name)
/** Caps continuation `src` of the coroutine whose frame is `frame_type` at
 * `regs` registers per thread on CUDA (0: no cap); before its WS_COROUTINE.
 * Nothing on the CPU, in GLSL and on HIP (see "register caps" above). */
#define WS_CONTINUATION_MAX_REGISTERS(frame_type, src, regs)
/** Caps plain kernel `name` at `regs` registers per thread on CUDA (0: no
 * cap); before its WS_KERNEL. Nothing on the CPU, in GLSL and on HIP. */
#define WS_KERNEL_MAX_REGISTERS(name, regs)
#endif

/* ---- stepped continuations ----
 * A continuation whose work is a loop of uneven length (a BVH traversal, a
 * root finder, a random walk) keeps a warp busy until its longest frame is
 * done, with the other lanes idle. WS_CONTINUATION_STEPS(fn, frame_type,
 * args_type, src, state_type, begin, step, end) defines continuation
 * function `fn` (index `src` >= 1) from three parts:
 *   void begin(const ws_item *, const frame_type *, const args_type *, state_type *)
 *   int step(state_type *, const args_type *)      nonzero: not done, call again
 *   uint32_t end(const ws_item *, frame_type *, const args_type *, state_type *)
 * (end returns the next continuation, as a continuation does). fn runs
 * begin, step until it returns 0, end: that is what the CPU, the megakernel,
 * the tail and HIP run. On CUDA the launches of continuation src run its
 * frames through the steps with lane refill: when at least WS_STEPS_REFILL
 * lanes of a warp are done (or all are), they begin new frames of the block's
 * share of the launch together, so the warp's lanes stay busy until the
 * share runs out ("replacing terminated rays", Aila and Laine 2009). A frame
 * does not stay in registers through its steps: it is read for begin and
 * read again for end, so begin must not change it (its parameter is const).
 * Each frame runs begin, the same steps and end as fn would, so the results
 * are fn's; only the order in which frames finish differs, as it does
 * between any two launches. GLSL has the same macro (kernel.glsl), a loop. */
#ifndef WS_STEPS_REFILL
/** How many idle lanes of a warp make a stepped CUDA launch begin new frames
 * (define before including kernel.h; 8 by default, docs/decisions.md). */
#define WS_STEPS_REFILL 8
#endif
#define WS_STEPS_FN_(fn, frame_type, args_type, state_type, begin, step, end)           \
  WS_DEVICE static uint32_t fn(const ws_item *it_, frame_type *f_, const args_type *a_) { \
    state_type s_;                                                                      \
    begin(it_, f_, a_, &s_);                                                            \
    while (step(&s_, a_)) {                                                             \
    }                                                                                   \
    return end(it_, f_, a_, &s_);                                                       \
  }
#if WS_KERNEL_GPU
template <class Frame, uint32_t S> struct ws_steps_ {
  static constexpr bool on = false;
};
#endif
#if WS_KERNEL_GPU && !defined(__HIPCC__)
#define WS_STEPS_TRAIT_(frame_type, args_type, src, state_type, begin, step, end)         \
  static_assert((src) >= 1, "a stepped continuation cannot be the entry (0)");          \
  template <> struct ws_steps_<frame_type, (uint32_t)(src)> {                           \
    static constexpr bool on = true;                                                    \
    typedef state_type state;                                                           \
    __device__ __forceinline__ static void b(const ws_item *i, const frame_type *f,     \
                                             const args_type *a, state_type *s) {       \
      begin(i, f, a, s);                                                                \
    }                                                                                   \
    __device__ __forceinline__ static int st(state_type *s, const args_type *a) {       \
      return step(s, a);                                                                \
    }                                                                                   \
    __device__ __forceinline__ static uint32_t e(const ws_item *i, frame_type *f,       \
                                                 const args_type *a, state_type *s) {   \
      return end(i, f, a, s);                                                           \
    }                                                                                   \
  };
#define WS_CONTINUATION_STEPS(fn, frame_type, args_type, src, state_type, begin, step, end) \
  WS_STEPS_FN_(fn, frame_type, args_type, state_type, begin, step, end)                 \
  WS_STEPS_TRAIT_(frame_type, args_type, src, state_type, begin, step, end)
#define WS_CONTINUATION_STEPS_OF(fn, frame_type, args_type, src, state_type, begin, step, end) \
  static_assert(sizeof(&fn) != 0, "WS_CONTINUATION_STEPS_OF: fn is declared before");   \
  WS_STEPS_TRAIT_(frame_type, args_type, src, state_type, begin, step, end)
#else
/** Defines continuation `fn` (index src >= 1 of the coroutine whose frame is
 * frame_type) as begin, steps, end; CUDA runs its launches with lane refill
 * (see "stepped continuations" above). Before the WS_COROUTINE that lists fn. */
#define WS_CONTINUATION_STEPS(fn, frame_type, args_type, src, state_type, begin, step, end) \
  WS_STEPS_FN_(fn, frame_type, args_type, state_type, begin, step, end)
/** Like WS_CONTINUATION_STEPS, but `fn` is the caller's own function, written
 * before, that does in one call what begin, the steps and end do (the same
 * result, bit for bit): the CPU, the megakernel, the tail and HIP run fn,
 * CUDA's refilled launches of src run the steps. For a walk whose state holds
 * an array indexed at run time (a traversal stack): nvcc then keeps the
 * whole state object in local memory, scalars included, where fn can keep
 * its scalars in registers and only the array in memory (the path tracer's
 * intersect, docs/decisions.md). A test comparing the CPU with CUDA checks
 * that the two forms agree. */
#define WS_CONTINUATION_STEPS_OF(fn, frame_type, args_type, src, state_type, begin, step, end)
#endif

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
/** *p += v, atomically (relaxed); returns the old value. */
static inline uint32_t ws_atomic_add_u32(uint32_t *p, uint32_t v) {
  return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}
/** *p -= v, atomically (relaxed); returns the old value. */
static inline uint32_t ws_atomic_sub_u32(uint32_t *p, uint32_t v) {
  return __atomic_fetch_sub(p, v, __ATOMIC_RELAXED);
}
/** *p += v on a signed word, atomically (relaxed); returns the old value. */
static inline int32_t ws_atomic_add_i32(int32_t *p, int32_t v) {
  return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}
/** *p = max(*p, v), atomically (relaxed); returns the old value. */
static inline uint32_t ws_atomic_max_u32(uint32_t *p, uint32_t v) {
  uint32_t old = __atomic_load_n(p, __ATOMIC_RELAXED);
  while (old < v && !__atomic_compare_exchange_n(p, &old, v, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
  }
  return old;
}
/** *p = v, atomically (relaxed); returns the old value. */
static inline uint32_t ws_atomic_exch_u32(uint32_t *p, uint32_t v) {
  return __atomic_exchange_n(p, v, __ATOMIC_RELAXED);
}
/** *p = v if *p == expect, atomically (relaxed); returns the old value. */
static inline uint32_t ws_atomic_cas_u32(uint32_t *p, uint32_t expect, uint32_t v) {
  __atomic_compare_exchange_n(p, &expect, v, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
  return expect;
}
/** *p += v on a float, atomically (relaxed; a compare-and-swap loop on the
 * CPU); returns the old value. */
static inline float ws_atomic_add_f32(float *p, float v) {
  float old, want;
  __atomic_load(p, &old, __ATOMIC_RELAXED);
  do {
    want = old + v;
  } while (!__atomic_compare_exchange(p, &old, &want, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
  return old;
}
#endif

/* ---- warp-aggregated atomics ----
 * ws_atomic_add_u32_agg(p, v) / ws_atomic_add_i32_agg(p, v): *p += v with
 * the same result as plain atomics taken in lane order, but on GPUs one
 * atomic per distinct address per warp: the lanes that arrive together and
 * name the same word combine (their values summed, each lane's old value
 * reconstructed from the leader's result and the lanes below it). Use them
 * where many lanes hit a few words — counters, a shared free list, queue
 * counts: per-lane atomics on one 32-byte sector serialize in L2 (on the
 * H200 the path tracer's shadow stages ran 3x slower with them,
 * docs/cuda.md). Plain atomics on the CPU. Every lane may pass its own p and
 * v; lanes that diverged combine in their own groups, each exact. */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 700 && !defined(__HIPCC__)
WS_DEVICE static inline uint32_t ws_atomic_add_u32_agg(uint32_t *p, uint32_t v) {
  const unsigned active = __activemask();
  const unsigned peers = __match_any_sync(active, (unsigned long long)(uintptr_t)p);
  unsigned lane;
  asm("mov.u32 %0, %%laneid;" : "=r"(lane));
  const int leader = __ffs((int)peers) - 1;
  /* inclusive sum of v over the peers, in lane order */
  uint32_t below = 0, total = 0;
  for (unsigned m = peers; m; m &= m - 1u) {
    const int l = __ffs((int)m) - 1;
    const uint32_t x = __shfl_sync(peers, v, l);
    total += x;
    if ((unsigned)l < lane)
      below += x;
  }
  uint32_t base = 0;
  if ((int)lane == leader)
    base = atomicAdd(p, total);
  base = __shfl_sync(peers, base, leader);
  return base + below;
}
#else
/** *p += v, warp-aggregated on GPUs (one atomic per distinct address per
 * warp), a plain atomic on the CPU; returns the old value as plain atomics
 * taken in lane order would. */
WS_DEVICE static inline uint32_t ws_atomic_add_u32_agg(uint32_t *p, uint32_t v) {
  return ws_atomic_add_u32(p, v);
}
#endif
/** ws_atomic_add_u32_agg on a signed word. */
WS_DEVICE static inline int32_t ws_atomic_add_i32_agg(int32_t *p, int32_t v) {
  return (int32_t)ws_atomic_add_u32_agg((uint32_t *)p, (uint32_t)v);
}

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
#define WS_FRAME_FIELD_REC_(type, name) {#name, (uint32_t)sizeof(type), (uint32_t)WS_ALIGNOF_(type)},
/** Declares the frame struct `tname` from the X-macro list FIELDS (X(type,
 * name) per field), its AoS/SoA load and store for the coroutine wrappers,
 * and its description as compiled, which WS_COROUTINE records in the module
 * (a host may describe the same frame itself with WS_FRAME_DESC). */
#define WS_FRAME(tname, FIELDS)                                                         \
  typedef struct tname {                                                                \
    FIELDS(WS_FRAME_DECL_)                                                              \
  } tname;                                                                              \
  static inline const ws_frame_desc *tname##_ws_frame_desc_(void) {                     \
    static const ws_frame_field fields_[] = {FIELDS(WS_FRAME_FIELD_REC_)};              \
    static const ws_frame_desc desc_ = {                                                \
        (uint32_t)sizeof(tname), (uint32_t)WS_ALIGNOF_(tname),                          \
        (uint32_t)(sizeof fields_ / sizeof fields_[0]), fields_};                       \
    return &desc_;                                                                      \
  }                                                                                     \
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
#define WS_CORO_NAME_(idx, fn, name) name,

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
  }                                                                                     \
  /* An item from continuation `src` (0: its entry) to its end, as the       \
   * megakernel and the tail run it: at most `limit` continuations (0 = no   \
   * limit); an item stopped there is counted in counts[WS_COUNTS_LIMIT]. */   \
  WS_DEVICE static inline void co##_ws_finish(const ws_launch *p, const ws_item *it_,   \
                                              tframe *f_, uint32_t src, uint64_t limit) { \
    uint32_t *counts_ = WS_PTR(uint32_t, p->counts);                                    \
    uint32_t next_ = src;                                                               \
    uint64_t runs_ = 0;                                                                 \
    do {                                                                                \
      if (limit && runs_ == limit) {                                                    \
        ws_atomic_add_u32(&counts_[WS_COUNTS_LIMIT(p->continuation_count)], 1u);        \
        return;                                                                         \
      }                                                                                 \
      next_ = co##_ws_resume(next_, it_, f_, WS_PTR(const targs, p->args),              \
                             &counts_[WS_COUNTS_BAD(p->continuation_count)],            \
                             p->continuation_count);                                    \
      ++runs_;                                                                          \
    } while (next_ != WS_TERMINATE);                                                    \
  }

/* One frame of continuation `src` (0: the entry, for the new item `id`) at
 * `slot`: load (or start) the frame, resume, store it when the item
 * suspends, write the token, and in fused mode update the counts. Inlined
 * into every launcher, so a launcher whose `src` is a compile-time constant
 * (the per-continuation GPU kernels below) carries that continuation's code
 * and registers only. */
#define WS_CORO_RUN_(co, tframe, targs)                                                 \
  WS_DEVICE WS_FORCEINLINE_ static void co##_ws_run(const ws_launch *p, uint32_t src,   \
                                                    uint32_t slot, uint32_t id) {       \
    uint32_t *ids = WS_PTR(uint32_t, p->ids);                                           \
    uint32_t *tokens = WS_PTR(uint32_t, p->tokens);                                     \
    uint32_t *counts = WS_PTR(uint32_t, p->counts);                                     \
    tframe f;                                                                           \
    ws_item it;                                                                         \
    if (src == 0) {                                                                     \
      memset(&f, 0, sizeof f);                                                          \
      it.id = id;                                                                       \
      ids[slot] = it.id;                                                                \
    } else {                                                                            \
      it.id = ids[slot];                                                                \
      tframe##_ws_load(&f, p, slot);                                                    \
    }                                                                                   \
    const uint32_t next = co##_ws_resume(                                              \
        src, &it, &f, WS_PTR(const targs, p->args),                                     \
        &counts[WS_COUNTS_BAD(p->continuation_count)], p->continuation_count);          \
    if (next != WS_TERMINATE)                                                           \
      tframe##_ws_store(&f, p, slot);                                                   \
    tokens[slot] = next;                                                                \
    if (p->flags & WS_LAUNCH_FUSED)                                                     \
      ws_fused_count_(counts, src, next);                                               \
  }                                                                                     \
  /* Frame i of a launch driven by the host: slot and id from the record. */            \
  WS_DEVICE WS_FORCEINLINE_ static void co##_ws_step_at(const ws_launch *p, uint32_t src, \
                                                        uint32_t i) {                   \
    const uint32_t slot = p->slots ? WS_PTR(const uint32_t, p->slots)[i] : p->slot_base + i; \
    co##_ws_run(p, src, slot, p->first_id + i);                                         \
  }                                                                                     \
  /* Frame i of a launch driven by a device loop: slot and id from the plan    \
   * the loop wrote this iteration (launch.h ws_launch_plan). */                \
  WS_DEVICE WS_FORCEINLINE_ static uint32_t co##_ws_dev_slot(const ws_launch *p, uint32_t src, \
                                                             const ws_launch_plan *pl, uint32_t i) { \
    const uint32_t *sl = WS_PTR(const uint32_t, p->slots);                              \
    if (pl->action == WS_PLAN_RESUME_ALL) {                                             \
      /* all-queues: queue src's slots follow queues 1..src-1 in the sorted list */     \
      const uint32_t *c = WS_PTR(const uint32_t, p->counts);                            \
      uint32_t off = 0;                                                                 \
      for (uint32_t t = 1; t < src; ++t)                                                \
        off += c[t];                                                                    \
      return sl[off + i];                                                               \
    }                                                                                   \
    return pl->use_slots ? sl[pl->slot_offset + i] : pl->slot_base + i;                 \
  }                                                                                     \
  WS_DEVICE WS_FORCEINLINE_ static void co##_ws_dev_at(const ws_launch *p, uint32_t src, \
                                                       const ws_launch_plan *pl, uint32_t i) { \
    co##_ws_run(p, src, co##_ws_dev_slot(p, src, pl, i), pl->first_id + i);             \
  }                                                                                     \
  /* Frames a device-driven launch of continuation src runs: the plan's count, \
   * or under the all-queues policy the queue's own count; 0 when the plan    \
   * is for another continuation. */                                            \
  WS_DEVICE static inline uint32_t co##_ws_dev_count(const ws_launch *p, uint32_t src,  \
                                                     const ws_launch_plan *pl) {        \
    if (pl->action == WS_PLAN_RESUME_ALL)                                               \
      return src ? WS_PTR(const uint32_t, p->counts)[src] : 0u;                         \
    if (pl->action != WS_PLAN_REFILL && pl->action != WS_PLAN_RESUME)                   \
      return 0u;                                                                        \
    return pl->src == src ? pl->count : 0u;                                             \
  }                                                                                     \
  /* Scan mode (WS_LAUNCH_SCAN): the frame at `slot` if its token is src.      \
   * Each slot is read by exactly one thread before any frame of the launch   \
   * runs there, so a frame that suspends to src again (a self-loop) is not   \
   * run twice. */                                                              \
  WS_DEVICE WS_FORCEINLINE_ static int co##_ws_scan_match(const ws_launch *p,           \
                                                          uint32_t src, uint32_t slot,  \
                                                          uint32_t scan) {              \
    return slot < scan && WS_PTR(const uint32_t, p->tokens)[slot] == src;               \
  }                                                                                     \
  /* The tail (ws_scheduler_config.tail_frames): the suspended frame at `slot`  \
   * runs from its continuation to its end, as the megakernel runs an item,    \
   * at most `limit` continuations (0 = no limit; an item stopped there is     \
   * counted as the megakernel counts it). Its slot is freed and its queue's   \
   * count drops by one, whatever the accounting: the counts stay the tokens'. */ \
  WS_DEVICE WS_FORCEINLINE_ static void co##_ws_tail_run(const ws_launch *p, uint32_t slot, \
                                                         uint64_t limit) {              \
    uint32_t *tokens = WS_PTR(uint32_t, p->tokens);                                     \
    uint32_t *counts = WS_PTR(uint32_t, p->counts);                                     \
    const uint32_t src = tokens[slot];                                                  \
    tframe f;                                                                           \
    ws_item it;                                                                         \
    it.id = WS_PTR(const uint32_t, p->ids)[slot];                                       \
    tframe##_ws_load(&f, p, slot);                                                      \
    co##_ws_finish(p, &it, &f, src, limit);                                             \
    tokens[slot] = WS_TERMINATE;                                                        \
    /* a token outside 1..K was counted as a bad transition by the resume */            \
    if (src <= p->continuation_count)                                                   \
      ws_atomic_add_u32_agg(&counts[src], 0xffffffffu);                                 \
  }                                                                                     \
  /* The tail's scan bound and per-item limit: the launch's own, or when a     \
   * device loop drives it the plan's (0 slots unless the plan is a tail). */   \
  WS_DEVICE static inline uint32_t co##_ws_tail_bound(const ws_launch *p, uint64_t *limit) { \
    if (!p->plan) {                                                                     \
      *limit = p->limit;                                                                \
      return p->slot_base;                                                              \
    }                                                                                   \
    const ws_launch_plan *pl = WS_PTR(const ws_launch_plan, p->plan);                   \
    *limit = pl->first_id;                                                              \
    return pl->action == WS_PLAN_TAIL ? pl->slot_base : 0u;                             \
  }

/** Defines coroutine `co` with frame `tframe`, arguments `targs`, entry
 * function `entry_fn` and continuation list CONTS (X(index, function,
 * "name") in index order 1..K): its step kernel (one continuation over a
 * queue's frames), its device-loop launchers and its megakernel (every item
 * from entry to end), for WS_MODULE_COROUTINE(co). */
#define WS_COROUTINE(co, tframe, targs, entry_fn, CONTS)                                \
  WS_CORO_RESUME_(co, tframe, targs, entry_fn, CONTS)                                   \
  WS_CORO_RUN_(co, tframe, targs)                                                       \
  typedef targs co##_ws_args_t_;                                                        \
  /* The megakernel counts each item's continuation runs (the entry's too)    \
   * against `limit`: an item that would run more stops and is counted, so a  \
   * coroutine that resumes itself forever cannot hang the launch. */          \
  WS_DEVICE static void co##_ws_mega(const ws_launch *p, uint32_t i) {                  \
    tframe f;                                                                           \
    ws_item it;                                                                         \
    memset(&f, 0, sizeof f);                                                            \
    it.id = p->first_id + i;                                                            \
    co##_ws_finish(p, &it, &f, 0u, p->limit);                                           \
  }                                                                                     \
  enum {                                                                                \
    co##_ws_K = 0 CONTS(WS_CORO_COUNT_),                                                \
    co##_ws_args_size = sizeof(targs),                                                  \
    co##_ws_frame_size = sizeof(tframe),                                                \
    co##_ws_frame_fields = tframe##_ws_field_count,                                     \
    co##_ws_frame_field_bytes = tframe##_ws_field_bytes                                 \
  };                                                                                    \
  /* What the module records for a host description that leaves it out. */  \
  static inline void co##_ws_describe(ws_coroutine_desc *d_) {                          \
    static const char *const names_[] = {CONTS(WS_CORO_NAME_)};                         \
    d_->frame = tframe##_ws_frame_desc_();                                              \
    d_->args_size = (uint32_t)sizeof(targs);                                            \
    d_->continuation_count = (uint32_t)(sizeof names_ / sizeof names_[0]);              \
    d_->continuation_names = names_;                                                    \
  }                                                                                     \
  WS_CORO_LAUNCHERS_(co, tframe)                                                        \
  WS_LAUNCHER_(co##_ws_mega_launch, co##_ws_mega, ws_launch)

/* ---- plain kernels ---- */
/** Defines plain kernel `name` over indices `ivar` < n, with a by-value
 * argument struct `targs` seen as `const targs *avar`; the function body
 * follows the macro. Launch it with ws_kernel_launch after
 * WS_MODULE_KERNEL(name). */
#define WS_KERNEL(name, targs, ivar, avar)                                              \
  WS_DEVICE static void name##_ws_body(uint32_t ivar, const targs *avar);                \
  WS_DEVICE static void name##_ws_call(const targs *a_, uint32_t i_) { name##_ws_body(i_, a_); } \
  WS_KERNEL_TAG_(name)                                                                  \
  WS_LAUNCHER_CAPPED_(name##_ws_launch, name##_ws_call, targs, name##_ws_tag_)         \
  enum { name##_ws_args_size = sizeof(targs) };                                         \
  WS_DEVICE static void name##_ws_body(uint32_t ivar, const targs *avar)

/** Defines plain kernel `name` over indices i < n in three parts (see
 * "stepped continuations" above), for a per-index loop of uneven length:
 *   int begin(uint32_t i, const targs *, tstate *)   0: nothing to do for i
 *   int step(tstate *, const targs *)                nonzero: call again
 *   void end(uint32_t i, const targs *, tstate *)
 * Index i runs begin and, when it returns nonzero, step until 0, then end.
 * CUDA runs the indices with lane refill (a grid of the blocks the device
 * holds at once); elsewhere each index is that loop. Launch it as a
 * WS_KERNEL, after WS_MODULE_KERNEL(name); WS_KERNEL_MAX_REGISTERS applies. */
#define WS_KERNEL_STEPS(name, targs, tstate, begin, step, end)                          \
  WS_DEVICE static inline void name##_ws_call(const targs *a_, uint32_t i_) {                  \
    tstate s_;                                                                          \
    if (begin(i_, a_, &s_)) {                                                           \
      while (step(&s_, a_)) {                                                           \
      }                                                                                 \
      end(i_, a_, &s_);                                                                 \
    }                                                                                   \
  }                                                                                     \
  WS_KERNEL_TAG_(name)                                                                  \
  WS_STEPS_LAUNCHER_(name##_ws_launch, name##_ws_call, targs, tstate, begin, step, end, \
                     name##_ws_tag_)                                                    \
  enum { name##_ws_args_size = sizeof(targs) };

/* ---- backend launchers: fn(const T *args, uint32_t i) over i < n ---- */
#if WS_KERNEL_GPU
/* Tag: the kernel's ws_max_registers_ tag (void: never capped) */
#define WS_LAUNCHER_(lname, fn, T) WS_LAUNCHER_CAPPED_(lname, fn, T, void)
#define WS_LAUNCHER_CAPPED_(lname, fn, T, Tag)                                          \
  __device__ __forceinline__ static void lname##_body_(const T &a_, uint32_t n_) {      \
    const uint32_t i_ = blockIdx.x * blockDim.x + threadIdx.x;                          \
    if (i_ < n_)                                                                        \
      fn(&a_, i_);                                                                      \
  }                                                                                     \
  WS_LAUNCHER_KERNELS_(lname, T, Tag, false)
/* The kernels of a launcher whose body is lname##_body_, its capped twin and
 * the host function; resident: the grid is capped at the blocks the device
 * holds at once (stepped kernels, ws_resident_grid_). */
#define WS_LAUNCHER_KERNELS_(lname, T, Tag, resident)                                   \
  __global__ void lname##_gpu(T a_, uint32_t n_) { lname##_body_(a_, n_); }             \
  template <uint32_t N_> __global__ void WS_MAXNREG_(N_) lname##_capped_gpu(T a_, uint32_t n_) { \
    lname##_body_(a_, n_);                                                              \
  }                                                                                     \
  template <uint32_t N_> struct lname##_k_ {                                            \
    static void go(const T &a_, uint32_t n, uint32_t grid, uint32_t block, WS_GPU_STREAM st) { \
      if constexpr (N_ != 0u) {                                                         \
        if constexpr (resident)                                                         \
          grid = ws_resident_grid_(lname##_capped_gpu<N_>, grid, block, 0);             \
        lname##_capped_gpu<N_><<<grid, block, 0, st>>>(a_, n);                          \
      } else {                                                                          \
        if constexpr (resident)                                                         \
          grid = ws_resident_grid_(lname##_gpu, grid, block, 0);                        \
        lname##_gpu<<<grid, block, 0, st>>>(a_, n);                                     \
      }                                                                                 \
    }                                                                                   \
  };                                                                                    \
  static int lname(uint32_t n, const void *args, uint32_t block, void *stream) {        \
    if (n == 0)                                                                         \
      return 0;                                                                         \
    const uint32_t grid = (n + block - 1u) / block;                                     \
    T a_;                                                                               \
    memcpy(&a_, args, sizeof a_);                                                       \
    lname##_k_<ws_max_registers_<Tag, 0u>::n>::go(a_, n, grid, block, (WS_GPU_STREAM)stream); \
    return WS_GPU_LAST_ERROR();                                                         \
  }
#else
/** Runs body(args, begin, end) over chunks of 0..n-1 on the CPU device's
 * threads (`stream` is the device's pool, which the CPU backend passes;
 * NULL runs everything on the caller). Launches of fewer than 4096 indices
 * run on the caller. Defined by the CPU backend (src/backend/cpu/cpu_pool.c);
 * exported, since the launchers kernel.h generates in users' modules call it.
 * Returns 0. */
WS_EXTERN_C WS_API int ws_cpu_parallel_for(void *stream, uint32_t n, const void *args,
                                           void (*body)(const void *args, uint32_t begin,
                                                        uint32_t end));
/* What a CPU device-loop launch hands its ranges: the launch, the
 * continuation, the plan read once at launch, and the scan bound. */
typedef struct ws_cpu_dev_args_ {
  ws_launch a;
  ws_launch_plan pl;
  uint32_t src;
  uint32_t scan;
  uint64_t limit; /* the tail's per-item limit */
} ws_cpu_dev_args_;
#define WS_LAUNCHER_CAPPED_(lname, fn, T, cap) WS_LAUNCHER_(lname, fn, T)
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
#define WS_STEPS_LAUNCHER_(lname, fn, T, tstate, begin, step, end, Tag) WS_LAUNCHER_(lname, fn, T)
#endif

/* ---- coroutine step launchers ----
 * co_ws_step_launch(n, args, block, stream): the host-driven step over n
 * frames of continuation args->src. co_ws_dev_launch(src, grid, args, block,
 * stream): the step of continuation src as a device loop launches it, over
 * the frame count the loop's plan holds at args->plan (read when the kernel
 * runs, so the launch can be recorded once and replayed: a fixed grid of
 * `grid` blocks strides over the frames). On GPUs each continuation is its
 * own kernel (a template instance per index, so a light continuation does
 * not carry the heaviest one's registers); the CPU runs one loop. */
#if WS_KERNEL_GPU
/* Calls F<src>::run(a...) for a runtime src in 0..N (continuation indices
 * are 1..K in order, 0 the entry). */
template <uint32_t N, template <uint32_t> class F> struct ws_src_dispatch_ {
  template <class... A> static int run(uint32_t src, A... a) {
    return src == N ? F<N>::run(a...) : ws_src_dispatch_<N - 1, F>::run(src, a...);
  }
};
template <template <uint32_t> class F> struct ws_src_dispatch_<0, F> {
  template <class... A> static int run(uint32_t src, A... a) {
    (void)src;
    return F<0>::run(a...);
  }
};
/* Scan mode on GPUs: each block streams tiles of blockDim slots, appends
 * the matching ones to a queue in shared memory (2 x blockDim entries,
 * dynamic) with warp ballots and a block scan, and runs a full block of
 * frames whenever the queue holds one, the rest at the end: every lane runs
 * a frame, however sparse the queue is in the pool. */
#if defined(__HIPCC__)
/* HIP (compiled, never run here: wave64 ballots differ): every thread runs
 * the frame of its own slot. */
template <class F>
__device__ static inline void ws_scan_run_(uint32_t scan, uint32_t *ran, F &&match_and_run) {
  for (uint64_t s = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; s < scan;
       s += (uint64_t)gridDim.x * blockDim.x)
    if (match_and_run((uint32_t)s, false)) {
      match_and_run((uint32_t)s, true);
      if (ran)
        ws_atomic_add_u32(ran, 1u);
    }
}
#else
/* This thread's rank among the threads of its block whose flag m is set
 * (in thread order), and the block's count of them in *total. The whole
 * block calls it, and passes a __syncthreads() before calling it again. */
__device__ static inline uint32_t ws_block_rank_(bool m, uint32_t *total) {
  __shared__ uint32_t ws_rank_w_[32];
  const uint32_t lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
  const unsigned bal = __ballot_sync(0xffffffffu, m);
  if (lane == 0)
    ws_rank_w_[warp] = (uint32_t)__popc(bal);
  __syncthreads();
  uint32_t before = 0, t = 0;
  for (uint32_t w = 0; w < (blockDim.x + 31u) / 32u; ++w) {
    before += w < warp ? ws_rank_w_[w] : 0u;
    t += ws_rank_w_[w];
  }
  *total = t;
  return before + (uint32_t)__popc(bal & ((1u << lane) - 1u));
}
template <class F>
__device__ static inline void ws_scan_run_(uint32_t scan, uint32_t *ran, F &&match_and_run) {
  extern __shared__ uint32_t ws_scan_q_[];
  __shared__ uint32_t ws_scan_n_, ws_scan_ran_;
  const uint32_t tid = threadIdx.x, B = blockDim.x;
  if (tid == 0) {
    ws_scan_n_ = 0;
    ws_scan_ran_ = 0;
  }
  __syncthreads();
  for (uint64_t base = (uint64_t)blockIdx.x * B; base < scan; base += (uint64_t)gridDim.x * B) {
    const uint32_t slot = (uint32_t)(base + tid);
    const bool m = match_and_run(slot, false);
    uint32_t total;
    const uint32_t rank = ws_block_rank_(m, &total);
    const uint32_t n0 = ws_scan_n_;
    if (m)
      ws_scan_q_[n0 + rank] = slot;
    __syncthreads();
    const uint32_t n = n0 + total;
    if (tid == 0)
      ws_scan_ran_ += total;
    if (n >= B) {
      match_and_run(ws_scan_q_[tid], true);
      __syncthreads();
      if (tid < n - B)
        ws_scan_q_[tid] = ws_scan_q_[B + tid];
    }
    if (tid == 0)
      ws_scan_n_ = n >= B ? n - B : n;
    __syncthreads();
  }
  if (tid < ws_scan_n_)
    match_and_run(ws_scan_q_[tid], true);
  /* the frames this block ran, for the loop's check against the count */
  if (tid == 0 && ws_scan_ran_ && ran)
    atomicAdd(ran, ws_scan_ran_);
}
#endif
/* A block's share of indices [0, n) for a stepped continuation: the tiles of
 * blockDim indices the grid strides over (tile t is block t mod gridDim's),
 * so a grid of resident blocks gives each block many frames to refill its
 * warps from. ws_block_share_: how many; ws_block_index_: the k-th, in tile
 * order (also where the scan keeps the k-th frame it found: below every
 * slot the block scanned, so it never writes past the scanned range). */
__device__ static inline uint32_t ws_block_share_(uint32_t n) {
  const uint64_t B = blockDim.x, G = gridDim.x, b = blockIdx.x;
  const uint64_t tiles = ((uint64_t)n + B - 1u) / B;
  if (tiles <= b)
    return 0u;
  const uint64_t mine = (tiles - 1u - b) / G + 1u, last = b + (mine - 1u) * G;
  const uint64_t rest = (uint64_t)n - last * B;
  return (uint32_t)((mine - 1u) * B + (rest < B ? rest : B));
}
__device__ static inline uint32_t ws_block_index_(uint32_t k) {
  return (uint32_t)(((uint64_t)blockIdx.x + (uint64_t)(k / blockDim.x) * gridDim.x) * blockDim.x +
                    k % blockDim.x);
}
#if defined(__HIPCC__)
template <class K> static inline uint32_t ws_resident_grid_(K, uint32_t grid, uint32_t, size_t) {
  return grid;
}
/* HIP has no lane refill (ws_steps_ is never on there): stepped kernels and
 * continuations run one index or frame per thread, as every launch on HIP. */
#define WS_STEPS_LAUNCHER_(lname, fn, T, tstate, begin, step, end, Tag)                 \
  WS_LAUNCHER_CAPPED_(lname, fn, T, Tag)
#define WS_CORO_STEPS_(co, tframe)                                                      \
  template <uint32_t SRC_, class SlotOf_>                                               \
  __device__ static void co##_ws_steps_(const ws_launch &a_, uint32_t nb_, SlotOf_ slot_of_) { \
    for (uint32_t k_ = threadIdx.x; k_ < nb_; k_ += blockDim.x)                         \
      co##_ws_run(&a_, SRC_, slot_of_(k_), 0);                                          \
  }                                                                                     \
  template <uint32_t SRC_>                                                              \
  __device__ static void co##_ws_steps_scan_(const ws_launch &a_, uint32_t scan_) {     \
    ws_scan_run_(scan_, &WS_PTR(uint32_t, a_.counts)[WS_COUNTS_SCANNED(a_.continuation_count)], \
                 [&](uint32_t slot, bool run) -> bool {                                 \
      if (run)                                                                          \
        co##_ws_run(&a_, SRC_, slot, 0);                                                \
      return !run && co##_ws_scan_match(&a_, SRC_, slot, scan_);                        \
    });                                                                                 \
  }
#else
/* A stepped launch's grid: at most WS_STEPS_GRID_WAVES times the blocks the
 * device holds at once, so that each block has a share of many frames to
 * refill its warps from, and blocks whose shares end early are replaced
 * (any grid is correct: the shares only change size). */
#ifndef WS_STEPS_GRID_WAVES
/** A stepped CUDA launch's grid, in multiples of the blocks the device holds at once. */
#define WS_STEPS_GRID_WAVES 1
#endif
template <class K>
static inline uint32_t ws_resident_grid_(K kernel, uint32_t grid, uint32_t block, size_t smem) {
  int dev = 0, sms = 0, per_sm = 0;
  if (cudaGetDevice(&dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess ||
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, (int)block, smem) !=
          cudaSuccess)
    return grid; /* the launch itself reports a broken context */
  const uint64_t cap = (uint64_t)(sms > 0 ? sms : 1) * (uint64_t)(per_sm > 0 ? per_sm : 1) *
                       (uint64_t)(WS_STEPS_GRID_WAVES);
  return grid < cap ? grid : (uint32_t)cap;
}
/* The lane-refill loop of stepped continuations and kernels: items k < nb of
 * this block's share through begin(k, &state) (false: nothing to do for k),
 * step(&state) until false, end(k, &state). The block takes items in order
 * through a cursor in shared memory, a warp's idle lanes together (one
 * shared atomic), once WS_STEPS_REFILL of them are idle or all are. The
 * loop is warp-uniform: its ballots name all 32 lanes (blockDim is a
 * multiple of 32, as scan mode needs too), and it ends when the share is
 * taken and no lane has an item. */
template <class State, class Begin, class Step, class End>
__device__ __forceinline__ static void ws_refill_run_(uint32_t nb, Begin begin, Step step, End end) {
  __shared__ uint32_t ws_refill_cur_;
  if (threadIdx.x == 0)
    ws_refill_cur_ = 0;
  __syncthreads();
  const uint32_t lane = threadIdx.x & 31u;
  State s;
  uint32_t k = 0;
  bool has = false, more = nb != 0u;
  for (;;) {
    const unsigned idle = __ballot_sync(0xffffffffu, !has);
    if (more && (idle == 0xffffffffu || __popc(idle) >= (WS_STEPS_REFILL))) {
      const int lead = __ffs((int)idle) - 1;
      uint32_t base = 0;
      if ((int)lane == lead)
        base = atomicAdd(&ws_refill_cur_, (uint32_t)__popc(idle));
      base = __shfl_sync(0xffffffffu, base, lead);
      more = (uint64_t)base + (uint32_t)__popc(idle) < nb;
      const uint32_t mine = base + (uint32_t)__popc(idle & ((1u << lane) - 1u));
      if (!has && mine < nb) {
        k = mine;
        has = begin(k, &s);
      }
    }
    if (__ballot_sync(0xffffffffu, has) == 0u) {
      if (!more)
        break;
      continue;
    }
    if (has && !step(&s)) {
      end(k, &s);
      has = false;
    }
  }
}
/* A stepped plain kernel (WS_KERNEL_STEPS): indices i < n through the block
 * shares with lane refill; grids of the blocks the device holds at once. */
#define WS_STEPS_LAUNCHER_(lname, fn, T, tstate, begin, step, end, Tag)                 \
  __device__ __forceinline__ static void lname##_body_(const T &a_, uint32_t n_) {      \
    ws_refill_run_<tstate>(                                                             \
        ws_block_share_(n_),                                                            \
        [&](uint32_t k_, tstate *s_) -> bool { return begin(ws_block_index_(k_), &a_, s_) != 0; }, \
        [&](tstate *s_) -> bool { return step(s_, &a_) != 0; },                         \
        [&](uint32_t k_, tstate *s_) { end(ws_block_index_(k_), &a_, s_); });           \
  }                                                                                     \
  WS_LAUNCHER_KERNELS_(lname, T, Tag, true)
#define WS_CORO_STEPS_(co, tframe)                                                      \
  /* A stepped continuation's frames k < nb_ of this block's share (slot_of_(k)) \
   * through begin, steps and end with lane refill (kernel.h "stepped          \
   * continuations"); the frame is read for begin and again for end. */        \
  template <uint32_t SRC_, class SlotOf_>                                               \
  __device__ __forceinline__ static void co##_ws_steps_(const ws_launch &a_, uint32_t nb_, \
                                                        SlotOf_ slot_of_) {             \
    typedef ws_steps_<tframe, SRC_> S_;                                                 \
    const co##_ws_args_t_ *args_ = WS_PTR(const co##_ws_args_t_, a_.args);              \
    const uint32_t *ids_ = WS_PTR(const uint32_t, a_.ids);                              \
    uint32_t *tokens_ = WS_PTR(uint32_t, a_.tokens);                                    \
    uint32_t *counts_ = WS_PTR(uint32_t, a_.counts);                                    \
    uint32_t slot_ = 0;                                                                 \
    ws_refill_run_<typename S_::state>(                                                 \
        nb_,                                                                            \
        [&](uint32_t k_, typename S_::state *s_) -> bool {                              \
          slot_ = slot_of_(k_);                                                         \
          tframe f_;                                                                    \
          ws_item it_;                                                                  \
          it_.id = ids_[slot_];                                                         \
          tframe##_ws_load(&f_, &a_, slot_);                                            \
          S_::b(&it_, &f_, args_, s_);                                                  \
          return true;                                                                  \
        },                                                                              \
        [&](typename S_::state *s_) -> bool { return S_::st(s_, args_) != 0; },         \
        [&](uint32_t, typename S_::state *s_) {                                         \
          /* the frame again (begin left it as it was), end, and what co_ws_run \
           * does after a resume */                                               \
          tframe f_;                                                                    \
          ws_item it_;                                                                  \
          it_.id = ids_[slot_];                                                         \
          tframe##_ws_load(&f_, &a_, slot_);                                            \
          uint32_t next_ = S_::e(&it_, &f_, args_, s_);                                 \
          if (next_ > (uint32_t)co##_ws_K || next_ > a_.continuation_count) {           \
            ws_atomic_add_u32(&counts_[WS_COUNTS_BAD(a_.continuation_count)], 1u);      \
            next_ = WS_TERMINATE;                                                       \
          }                                                                             \
          if (next_ != WS_TERMINATE)                                                    \
            tframe##_ws_store(&f_, &a_, slot_);                                         \
          tokens_[slot_] = next_;                                                       \
          if (a_.flags & WS_LAUNCH_FUSED)                                               \
            ws_fused_count_(counts_, SRC_, next_);                                      \
        });                                                                             \
  }                                                                                     \
  /* Scan mode for a stepped continuation: the block first finds its frames \
   * (token SRC_ below scan_) and keeps them in the launch's slot list at    \
   * ws_block_index_ order, then runs them with lane refill. */               \
  template <uint32_t SRC_>                                                              \
  __device__ __forceinline__ static void co##_ws_steps_scan_(const ws_launch &a_,      \
                                                             uint32_t scan_) {          \
    uint32_t *list_ = WS_PTR(uint32_t, a_.slots);                                       \
    __shared__ uint32_t found_;                                                         \
    if (threadIdx.x == 0)                                                               \
      found_ = 0;                                                                       \
    __syncthreads();                                                                    \
    for (uint64_t base_ = (uint64_t)blockIdx.x * blockDim.x; base_ < scan_;            \
         base_ += (uint64_t)gridDim.x * blockDim.x) {                                   \
      const uint32_t slot_ = (uint32_t)(base_ + threadIdx.x);                           \
      const bool m_ = co##_ws_scan_match(&a_, SRC_, slot_, scan_);                      \
      uint32_t total_;                                                                  \
      const uint32_t r_ = ws_block_rank_(m_, &total_);                                  \
      if (m_)                                                                           \
        list_[ws_block_index_(found_ + r_)] = slot_;                                    \
      __syncthreads();                                                                  \
      if (threadIdx.x == 0)                                                             \
        found_ += total_;                                                               \
      __syncthreads();                                                                  \
    }                                                                                   \
    const uint32_t nb_ = found_;                                                        \
    /* the frames this block runs, for the loop's check against the count */ \
    if (threadIdx.x == 0 && nb_)                                                        \
      atomicAdd(&WS_PTR(uint32_t, a_.counts)[WS_COUNTS_SCANNED(a_.continuation_count)], nb_); \
    co##_ws_steps_<SRC_>(a_, nb_, [&](uint32_t k) { return list_[ws_block_index_(k)]; }); \
  }
#endif
#ifndef WS_PERSISTENT_LOOP
/** 1 (the default): each CUDA coroutine also gets the persistent device-loop
 * kernel (docs/loop.md), which holds every continuation; 0 before including
 * this header leaves it out (the device loop then launches every
 * iteration), saving its compile time. HIP has none. */
#define WS_PERSISTENT_LOOP 1
#endif
#if defined(__HIPCC__) || !WS_PERSISTENT_LOOP
#define WS_CORO_PERSIST_(co, tframe)
#define WS_PERSIST_LAUNCHER_(co) 0
#else
/* Calls F<src>::run(a) on the device for a runtime src in 1..N. */
template <uint32_t N, template <uint32_t> class F> struct ws_src_run_dev_ {
  template <class A> __device__ static void run(uint32_t src, const A &a) {
    if (src == N)
      F<N>::run(a);
    else
      ws_src_run_dev_<N - 1, F>::run(src, a);
  }
};
template <template <uint32_t> class F> struct ws_src_run_dev_<0, F> {
  template <class A> __device__ static void run(uint32_t, const A &) {}
};
/* The persistent device loop (decide.h ws_dec_persist, cuda_loop.cu): one
 * cooperative kernel. Block 0 decides (its first thread, on the state it
 * keeps in shared memory past the scan queue); at a grid barrier every
 * block learns whether the decision is the kernel's (a scan-mode resume),
 * runs that continuation's device-loop step body as the continuation's own
 * kernel would (the plan holds the scan bound, the counts are fused), and
 * meets the others at a second barrier before the next decision, so a
 * decision sees every count the launch before it left. The grid is at most
 * the blocks the device holds at once, which the cooperative launch
 * requires; every body strides; it runs resumes of at most one frame per
 * thread of the grid. */
__device__ static inline uint32_t ws_persist_decide_(const ws_dec_persist &p, uint64_t *sh) {
  __shared__ uint32_t ws_persist_go_;
  uint64_t *g = WS_PTR(uint64_t, p.state);
  ws_dstate *d = (ws_dstate *)sh;
  if (threadIdx.x == 0) {
    ws_persist_go_ = ws_dec_persist_decide(&p, d);
    if (!ws_persist_go_)
      ws_dec_rebase(d, (uint64_t)(uintptr_t)sh, p.state, p.size);
  }
  __syncthreads();
  const uint32_t go = ws_persist_go_;
  /* the plan for the other blocks, or the whole state for the graph */
  const uint32_t from = go ? (uint32_t)(offsetof(ws_dstate, plan) / 8u) : 0u;
  const uint32_t to = go ? from + (uint32_t)(sizeof(ws_dec_plan) / 8u) : p.size / 8u;
  for (uint32_t i = from + threadIdx.x; i < to; i += blockDim.x)
    g[i] = sh[i];
  return go;
}
#define WS_CORO_PERSIST_(co, tframe)                                                    \
  template <uint32_t SRC_> struct co##_ws_persist_k_ {                                  \
    __device__ static void run(const ws_launch &a_) { co##_ws_dev_body_<SRC_>(a_); }    \
  };                                                                                    \
  __global__ void co##_ws_persist_gpu(ws_launch a_, ws_dec_persist p_) {                \
    extern __shared__ unsigned long long ws_persist_sh_[];                              \
    cooperative_groups::grid_group g_ = cooperative_groups::this_grid();                \
    const volatile uint32_t *w_ = WS_PTR(const volatile uint32_t, p_.words);            \
    const volatile ws_launch_plan *pl_ = WS_PTR(const volatile ws_launch_plan, a_.plan); \
    /* past the scan queue (2 x blockDim words) */                                      \
    uint64_t *sh_ = (uint64_t *)ws_persist_sh_ + blockDim.x;                            \
    if (blockIdx.x == 0) {                                                              \
      const uint64_t *g0_ = WS_PTR(const uint64_t, p_.state);                           \
      for (uint32_t i_ = threadIdx.x; i_ < p_.size / 8u; i_ += blockDim.x)              \
        sh_[i_] = g0_[i_];                                                              \
      __syncthreads();                                                                  \
      if (threadIdx.x == 0)                                                             \
        ws_dec_rebase((ws_dstate *)sh_, p_.state, (uint64_t)(uintptr_t)sh_, p_.size);   \
    }                                                                                   \
    for (;;) {                                                                          \
      if (blockIdx.x == 0)                                                              \
        (void)ws_persist_decide_(p_, sh_);                                              \
      g_.sync();                                                                        \
      if (!w_[WS_PERSIST_GO])                                                           \
        return;                                                                         \
      ws_src_run_dev_<co##_ws_K, co##_ws_persist_k_>::run(pl_->src, a_);               \
      g_.sync();                                                                        \
    }                                                                                   \
  }                                                                                     \
  static int co##_ws_persist_launch(const void *args, void *persist, uint32_t block,     \
                                    void *stream) {                                     \
    ws_launch a_;                                                                       \
    ws_dec_persist p_;                                                                  \
    memcpy(&a_, args, sizeof a_);                                                       \
    memcpy(&p_, persist, sizeof p_);                                                    \
    ((ws_dec_persist *)persist)->grid = 0u;                                             \
    const size_t smem_ = 2u * block * 4u + p_.size;                                     \
    int dev_ = 0, sms_ = 0, per_sm_ = 0;                                                \
    cudaError_t e_ = cudaGetDevice(&dev_);                                              \
    if (e_ == cudaSuccess)                                                              \
      e_ = cudaDeviceGetAttribute(&sms_, cudaDevAttrMultiProcessorCount, dev_);         \
    if (e_ == cudaSuccess && smem_ > 48u * 1024u)                                       \
      e_ = cudaFuncSetAttribute(co##_ws_persist_gpu,                                    \
                                cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem_); \
    if (e_ == cudaSuccess)                                                              \
      e_ = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm_, co##_ws_persist_gpu, \
                                                         (int)block, smem_);            \
    if (e_ != cudaSuccess)                                                              \
      return (int)e_;                                                                   \
    if (per_sm_ <= 0 || sms_ <= 0)                                                      \
      return p_.dry_run ? 0 : (int)cudaErrorCooperativeLaunchTooLarge;                  \
    uint64_t grid_ = (uint64_t)sms_ * (uint64_t)per_sm_;                                \
    if (p_.grid != 0u && p_.grid < grid_)                                               \
      grid_ = p_.grid;                                                                  \
    if (p_.max_frames == 0u || p_.max_frames > grid_ * block)                           \
      p_.max_frames = (uint32_t)(grid_ * block);                                        \
    ((ws_dec_persist *)persist)->grid = (uint32_t)grid_;                                \
    ((ws_dec_persist *)persist)->max_frames = p_.max_frames;                            \
    if (p_.dry_run)                                                                     \
      return 0;                                                                         \
    cudaLaunchAttribute at_[1];                                                         \
    at_[0].id = cudaLaunchAttributeCooperative;                                         \
    at_[0].val.cooperative = 1;                                                         \
    cudaLaunchConfig_t cf_ = {};                                                        \
    cf_.gridDim = dim3((unsigned)grid_);                                                \
    cf_.blockDim = dim3(block);                                                         \
    cf_.dynamicSmemBytes = smem_;                                                       \
    cf_.stream = (cudaStream_t)stream;                                                  \
    cf_.attrs = at_;                                                                    \
    cf_.numAttrs = 1;                                                                   \
    return (int)cudaLaunchKernelEx(&cf_, co##_ws_persist_gpu, a_, p_);                  \
  }
#define WS_PERSIST_LAUNCHER_(co) co##_ws_persist_launch
#endif
/* Continuation SRC's kernels: name<SRC>, or name##_capped<SRC> where a
 * register cap is set (the launch structs pick by ws_max_registers_) */
#define WS_CORO_KERNELS_(tframe, name, params, call)                                    \
  template <uint32_t SRC_> __global__ void name params { call; }                        \
  template <uint32_t SRC_>                                                              \
  __global__ void WS_MAXNREG_((ws_max_registers_<tframe, SRC_>::n)) name##_capped params { \
    call;                                                                               \
  }
#define WS_CORO_LAUNCHERS_(co, tframe)                                                  \
  WS_CORO_STEPS_(co, tframe)                                                            \
  template <uint32_t SRC_>                                                              \
  __device__ __forceinline__ static void co##_ws_step_body_(const ws_launch &a_,       \
                                                           uint32_t n_) {               \
    const uint32_t src_ = SRC_;                                                         \
    if constexpr (ws_steps_<tframe, SRC_>::on) {                                        \
      if (a_.flags & WS_LAUNCH_SCAN) {                                                  \
        co##_ws_steps_scan_<SRC_>(a_, a_.slot_base);                                    \
      } else {                                                                          \
        const uint32_t *sl_ = WS_PTR(const uint32_t, a_.slots);                         \
        co##_ws_steps_<SRC_>(a_, ws_block_share_(n_), [&](uint32_t k) {                  \
          const uint32_t i_ = ws_block_index_(k);                                       \
          return sl_ ? sl_[i_] : a_.slot_base + i_;                                     \
        });                                                                             \
      }                                                                                 \
      return;                                                                           \
    }                                                                                   \
    if (a_.flags & WS_LAUNCH_SCAN) {                                                    \
      ws_scan_run_(a_.slot_base,                                                        \
                   &WS_PTR(uint32_t, a_.counts)[WS_COUNTS_SCANNED(a_.continuation_count)], \
                   [&](uint32_t slot, bool run) -> bool {                               \
        if (run)                                                                        \
          co##_ws_run(&a_, src_, slot, 0);                                              \
        return !run && co##_ws_scan_match(&a_, src_, slot, a_.slot_base);              \
      });                                                                               \
      return;                                                                           \
    }                                                                                   \
    const uint32_t i_ = blockIdx.x * blockDim.x + threadIdx.x;                          \
    if (i_ < n_)                                                                        \
      co##_ws_step_at(&a_, src_, i_);                                                   \
  }                                                                                     \
  WS_CORO_KERNELS_(tframe, co##_ws_step_gpu, (ws_launch a_, uint32_t n_),               \
                   co##_ws_step_body_<SRC_>(a_, n_))                                    \
  /* the device-loop step of continuation src (a constant in each kernel) */      \
  template <uint32_t SRC_>                                                              \
  __device__ __forceinline__ static void co##_ws_dev_body_(const ws_launch &a_) {      \
    const uint32_t src_ = SRC_;                                                         \
    const ws_launch_plan pl_ = *WS_PTR(const ws_launch_plan, a_.plan);                  \
    const uint32_t n_ = co##_ws_dev_count(&a_, src_, &pl_);                             \
    if constexpr (ws_steps_<tframe, SRC_>::on) {                                        \
      if (n_ == 0)                                                                      \
        return;                                                                         \
      if (pl_.use_slots == 2u && pl_.action != WS_PLAN_RESUME_ALL)                      \
        co##_ws_steps_scan_<SRC_>(a_, pl_.slot_base);                                   \
      else                                                                              \
        co##_ws_steps_<SRC_>(a_, ws_block_share_(n_), [&](uint32_t k) {                  \
          return co##_ws_dev_slot(&a_, src_, &pl_, ws_block_index_(k));                 \
        });                                                                             \
      return;                                                                           \
    }                                                                                   \
    if (pl_.use_slots == 2u && pl_.action != WS_PLAN_RESUME_ALL) {                      \
      if (n_ == 0)                                                                      \
        return;                                                                         \
      ws_scan_run_(pl_.slot_base,                                                       \
                   &WS_PTR(uint32_t, a_.counts)[WS_COUNTS_SCANNED(a_.continuation_count)], \
                   [&](uint32_t slot, bool run) -> bool {                               \
        if (run)                                                                        \
          co##_ws_run(&a_, src_, slot, 0);                                              \
        return !run && co##_ws_scan_match(&a_, src_, slot, pl_.slot_base);             \
      });                                                                               \
      return;                                                                           \
    }                                                                                   \
    for (uint32_t i_ = blockIdx.x * blockDim.x + threadIdx.x; i_ < n_;                  \
         i_ += gridDim.x * blockDim.x)                                                  \
      co##_ws_dev_at(&a_, src_, &pl_, i_);                                              \
  }                                                                                     \
  WS_CORO_KERNELS_(tframe, co##_ws_dev_gpu, (ws_launch a_), co##_ws_dev_body_<SRC_>(a_)) \
  /* the tail: the suspended frames packed into full warps block by block, so \
   * that few live frames among many slots do not run one per warp */           \
  __global__ void co##_ws_tail_gpu(ws_launch a_) {                                      \
    uint64_t limit_;                                                                    \
    const uint32_t scan_ = co##_ws_tail_bound(&a_, &limit_);                            \
    const uint32_t *tok_ = WS_PTR(const uint32_t, a_.tokens);                           \
    ws_scan_run_(scan_, (uint32_t *)0, [&](uint32_t slot, bool run) -> bool {           \
      if (run)                                                                          \
        co##_ws_tail_run(&a_, slot, limit_);                                            \
      return !run && slot < scan_ && tok_[slot] != WS_TERMINATE;                        \
    });                                                                                 \
  }                                                                                     \
  static int co##_ws_tail_launch(uint32_t n, const void *args, uint32_t block,          \
                                 void *stream) {                                        \
    if (n == 0)                                                                         \
      return 0;                                                                         \
    ws_launch a_;                                                                       \
    memcpy(&a_, args, sizeof a_);                                                       \
    uint64_t grid = ((uint64_t)n + block - 1u) / block;                                 \
    if (grid > 65535u)                                                                  \
      grid = 65535u;                                                                    \
    co##_ws_tail_gpu<<<(uint32_t)grid, block, 2u * block * 4u, (WS_GPU_STREAM)stream>>>(a_); \
    return WS_GPU_LAST_ERROR();                                                         \
  }                                                                                     \
  template <uint32_t SRC_> struct co##_ws_step_k_ {                                     \
    static int run(const ws_launch *a, uint32_t n, uint32_t grid, uint32_t block,       \
                   WS_GPU_STREAM st) {                                                  \
      const size_t smem_ = 2u * block * 4u;                                             \
      if constexpr (ws_max_registers_<tframe, SRC_>::n != 0u) {                         \
        if constexpr (ws_steps_<tframe, SRC_>::on)                                      \
          grid = ws_resident_grid_(co##_ws_step_gpu_capped<SRC_>, grid, block, smem_);  \
        co##_ws_step_gpu_capped<SRC_><<<grid, block, smem_, st>>>(*a, n);               \
      } else {                                                                          \
        if constexpr (ws_steps_<tframe, SRC_>::on)                                      \
          grid = ws_resident_grid_(co##_ws_step_gpu<SRC_>, grid, block, smem_);         \
        co##_ws_step_gpu<SRC_><<<grid, block, smem_, st>>>(*a, n);                      \
      }                                                                                 \
      return WS_GPU_LAST_ERROR();                                                       \
    }                                                                                   \
  };                                                                                    \
  template <uint32_t SRC_> struct co##_ws_dev_k_ {                                      \
    static int run(const ws_launch *a, uint32_t grid, uint32_t block, WS_GPU_STREAM st) { \
      const size_t smem_ = 2u * block * 4u;                                             \
      if constexpr (ws_max_registers_<tframe, SRC_>::n != 0u) {                         \
        if constexpr (ws_steps_<tframe, SRC_>::on)                                      \
          grid = ws_resident_grid_(co##_ws_dev_gpu_capped<SRC_>, grid, block, smem_);   \
        co##_ws_dev_gpu_capped<SRC_><<<grid, block, smem_, st>>>(*a);                   \
      } else {                                                                          \
        if constexpr (ws_steps_<tframe, SRC_>::on)                                      \
          grid = ws_resident_grid_(co##_ws_dev_gpu<SRC_>, grid, block, smem_);          \
        co##_ws_dev_gpu<SRC_><<<grid, block, smem_, st>>>(*a);                          \
      }                                                                                 \
      return WS_GPU_LAST_ERROR();                                                       \
    }                                                                                   \
  };                                                                                    \
  static int co##_ws_step_launch(uint32_t n, const void *args, uint32_t block,          \
                                 void *stream) {                                        \
    if (n == 0)                                                                         \
      return 0;                                                                         \
    ws_launch a_;                                                                       \
    memcpy(&a_, args, sizeof a_);                                                       \
    if (a_.src > (uint32_t)co##_ws_K || ((a_.flags & WS_LAUNCH_SCAN) && a_.src == 0))   \
      return (int)WS_GPU_INVALID_VALUE;                                                 \
    /* scan mode: a grid over the scanned slots, at most what the device holds */      \
    const uint64_t items = (a_.flags & WS_LAUNCH_SCAN) ? a_.slot_base : n;              \
    uint64_t grid = (items + block - 1u) / block;                                       \
    if ((a_.flags & WS_LAUNCH_SCAN) && grid > 65535u)                                   \
      grid = 65535u;                                                                    \
    return ws_src_dispatch_<co##_ws_K, co##_ws_step_k_>::run(                           \
        a_.src, (const ws_launch *)&a_, n, (uint32_t)(grid ? grid : 1u), block,         \
        (WS_GPU_STREAM)stream);                                                         \
  }                                                                                     \
  static int co##_ws_dev_launch(uint32_t src, uint32_t grid, const void *args,          \
                                uint32_t block, void *stream) {                         \
    ws_launch a_;                                                                       \
    memcpy(&a_, args, sizeof a_);                                                       \
    if (src > (uint32_t)co##_ws_K || grid == 0)                                         \
      return (int)WS_GPU_INVALID_VALUE;                                                 \
    return ws_src_dispatch_<co##_ws_K, co##_ws_dev_k_>::run(                            \
        src, (const ws_launch *)&a_, grid, block, (WS_GPU_STREAM)stream);               \
  }                                                                                     \
  WS_CORO_PERSIST_(co, tframe)
#else
#define WS_CORO_LAUNCHERS_(co, tframe)                                                  \
  WS_DEVICE static void co##_ws_step(const ws_launch *p, uint32_t i) {                  \
    co##_ws_step_at(p, p->src, i);                                                      \
  }                                                                                     \
  WS_DEVICE static void co##_ws_scan(const ws_launch *p, uint32_t slot) {               \
    if (co##_ws_scan_match(p, p->src, slot, p->slot_base)) {                            \
      co##_ws_run(p, p->src, slot, 0);                                                  \
      ws_atomic_add_u32(                                                                \
          &WS_PTR(uint32_t, p->counts)[WS_COUNTS_SCANNED(p->continuation_count)], 1u);  \
    }                                                                                   \
  }                                                                                     \
  WS_LAUNCHER_(co##_ws_step_launch_, co##_ws_step, ws_launch)                           \
  WS_LAUNCHER_(co##_ws_scan_launch_, co##_ws_scan, ws_launch)                           \
  static int co##_ws_step_launch(uint32_t n, const void *args, uint32_t block,          \
                                 void *stream) {                                        \
    const ws_launch *a_ = (const ws_launch *)args;                                      \
    if (a_->flags & WS_LAUNCH_SCAN)                                                     \
      return a_->src ? co##_ws_scan_launch_(a_->slot_base, args, block, stream) : -1;   \
    return co##_ws_step_launch_(n, args, block, stream);                                \
  }                                                                                     \
  WS_DEVICE static void co##_ws_dev_range_(const void *args, uint32_t b_, uint32_t e_) {  \
    const ws_cpu_dev_args_ *d_ = (const ws_cpu_dev_args_ *)args;                        \
    for (uint32_t i_ = b_; i_ < e_; ++i_)                                               \
      co##_ws_dev_at(&d_->a, d_->src, &d_->pl, i_);                                     \
  }                                                                                     \
  WS_DEVICE static void co##_ws_dev_scan_range_(const void *args, uint32_t b_,          \
                                                uint32_t e_) {                          \
    const ws_cpu_dev_args_ *d_ = (const ws_cpu_dev_args_ *)args;                        \
    for (uint32_t s_ = b_; s_ < e_; ++s_)                                               \
      if (co##_ws_scan_match(&d_->a, d_->src, s_, d_->scan)) {                          \
        co##_ws_run(&d_->a, d_->src, s_, 0);                                            \
        ws_atomic_add_u32(&WS_PTR(uint32_t, d_->a.counts)[WS_COUNTS_SCANNED(            \
                              d_->a.continuation_count)],                               \
                          1u);                                                          \
      }                                                                                 \
  }                                                                                     \
  WS_DEVICE static void co##_ws_tail_range_(const void *args, uint32_t b_, uint32_t e_) { \
    const ws_cpu_dev_args_ *d_ = (const ws_cpu_dev_args_ *)args;                        \
    for (uint32_t s_ = b_; s_ < e_; ++s_)                                               \
      if (WS_PTR(const uint32_t, d_->a.tokens)[s_] != WS_TERMINATE)                     \
        co##_ws_tail_run(&d_->a, s_, d_->limit);                                        \
  }                                                                                     \
  static int co##_ws_tail_launch(uint32_t n, const void *args, uint32_t block,          \
                                 void *stream) {                                        \
    (void)n;                                                                            \
    (void)block;                                                                        \
    ws_cpu_dev_args_ d_;                                                                \
    memset(&d_, 0, sizeof d_);                                                          \
    d_.a = *(const ws_launch *)args;                                                    \
    d_.scan = co##_ws_tail_bound(&d_.a, &d_.limit);                                     \
    return ws_cpu_parallel_for(stream, d_.scan, &d_, co##_ws_tail_range_);              \
  }                                                                                     \
  static int co##_ws_dev_launch(uint32_t src, uint32_t grid, const void *args,          \
                                uint32_t block, void *stream) {                         \
    (void)grid;                                                                         \
    (void)block;                                                                        \
    ws_cpu_dev_args_ d_;                                                                \
    d_.a = *(const ws_launch *)args;                                                    \
    d_.src = src;                                                                       \
    d_.pl = *WS_PTR(const ws_launch_plan, d_.a.plan);                                   \
    const uint32_t n = co##_ws_dev_count(&d_.a, src, &d_.pl);                           \
    if (d_.pl.use_slots == 2u && d_.pl.action != WS_PLAN_RESUME_ALL) {                  \
      d_.scan = n ? d_.pl.slot_base : 0u;                                               \
      return ws_cpu_parallel_for(stream, d_.scan, &d_, co##_ws_dev_scan_range_);        \
    }                                                                                   \
    return ws_cpu_parallel_for(stream, n, &d_, co##_ws_dev_range_);                     \
  }
#endif

/* ---- module tables ---- */
#ifndef WS_PERSIST_LAUNCHER_
/* the CPU: no persistent device loop */
#define WS_PERSIST_LAUNCHER_(co) 0
#endif
/* hip-clang also emits namespace-scope const tables in its device pass,
 * where the host launchers they name do not exist (undefined symbols at the
 * device link); a non-const table stays host-only. */
#if defined(__HIPCC__)
#define WS_MODULE_TABLE_CONST_
#else
#define WS_MODULE_TABLE_CONST_ const
#endif
/** Starts module `m`'s table: WS_MODULE_COROUTINE and WS_MODULE_KERNEL
 * entries follow, WS_MODULE_END closes it. */
#define WS_MODULE_BEGIN(m) static WS_MODULE_TABLE_CONST_ ws_module_entry m##_ws_entries_[] = {
/** The module entry of coroutine `co` (WS_COROUTINE). */
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
   (uint32_t)co##_ws_frame_field_bytes,                                                 \
   co##_ws_dev_launch,                                                                  \
   co##_ws_tail_launch,                                                                 \
   co##_ws_describe,                                                                    \
   WS_PERSIST_LAUNCHER_(co)},
/** The module entry of plain kernel `k` (WS_KERNEL). */
#define WS_MODULE_KERNEL(k)                                                             \
  {#k, WS_ENTRY_KERNEL, (uint32_t)k##_ws_args_size, k##_ws_launch, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
/** Ends module `m`'s table and defines `const ws_module m_module_cpu` (C) or
 * `m_module_cuda` (CUDA), which the generated `m_modules` set lists. */
#define WS_MODULE_END(m)                                                                \
  }                                                                                     \
  ;                                                                                     \
  WS_EXTERN_C const ws_module WS_CAT_(m, WS_MODULE_SUFFIX_);                            \
  const ws_module WS_CAT_(m, WS_MODULE_SUFFIX_) = {                                     \
      #m, WS_MODULE_BACKEND_, m##_ws_entries_,                                          \
      (uint32_t)(sizeof m##_ws_entries_ / sizeof m##_ws_entries_[0])};
/** Module `m` in one line: WS_MODULE(m, WS_MODULE_COROUTINE(co) WS_MODULE_KERNEL(k) ...)
 * is WS_MODULE_BEGIN(m), the entries, WS_MODULE_END(m). */
#define WS_MODULE(m, ...) WS_MODULE_BEGIN(m) __VA_ARGS__ WS_MODULE_END(m)

#endif
