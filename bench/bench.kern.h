/* SPDX-License-Identifier: MIT */
/* Kernels of the benchmarks: one source for the CPU and CUDA backends
 * (ws_add_kernels compiles it as C and, when CUDA is built, as CUDA). */
#include "bench_kernels.h"

/* ---- baselines ---- */

WS_KERNEL(bench_empty, bench_empty_args, i, a) {
  (void)i;
  (void)a;
}

#if WS_KERNEL_GPU
typedef uint4 bench_vec4; /* one 16-byte load and store per thread */
#else
typedef struct bench_vec4 {
  uint32_t x, y, z, w;
} bench_vec4;
#endif

WS_KERNEL(bench_copy16, bench_copy_args, i, a) {
  WS_PTR(bench_vec4, a->dst)[i] = WS_PTR(const bench_vec4, a->src)[i];
}

WS_KERNEL(bench_copy4, bench_copy_args, i, a) {
  WS_PTR(uint32_t, a->dst)[i] = WS_PTR(const uint32_t, a->src)[i];
}

/* ---- bench_loop ---- */

WS_DEVICE static uint32_t bench_pp_entry(const ws_item *it, bench_pp_frame *f,
                                         const bench_pp_args *a) {
  f->left = a->bounces;
  f->acc = it->id;
  return BENCH_PP_PING;
}

WS_DEVICE static inline uint32_t bench_pp_bounce(const ws_item *it, bench_pp_frame *f,
                                                 const bench_pp_args *a, uint32_t other) {
  f->acc = bench_pp_step(f->acc);
  f->left -= 1u;
  if (f->left == 0u) {
    WS_PTR(uint32_t, a->out)[it->id] = f->acc;
    return WS_TERMINATE;
  }
  return other;
}

WS_DEVICE static uint32_t bench_pp_ping(const ws_item *it, bench_pp_frame *f,
                                        const bench_pp_args *a) {
  return bench_pp_bounce(it, f, a, BENCH_PP_PONG);
}

WS_DEVICE static uint32_t bench_pp_pong(const ws_item *it, bench_pp_frame *f,
                                        const bench_pp_args *a) {
  return bench_pp_bounce(it, f, a, BENCH_PP_PING);
}

WS_COROUTINE(bench_pingpong, bench_pp_frame, bench_pp_args, bench_pp_entry,
             BENCH_PP_CONTINUATIONS)

/* ---- bench_divergent ---- */

/* A fused multiply-add that rounds once on every backend, so the wavefront
 * and the megakernel (two different kernels) compute bit-identical results
 * whatever the compiler contracts. C: ISO mode does not contract a*b+c, and
 * x86-64 without -mfma has no FMA instruction to contract into. */
#if WS_KERNEL_GPU
#define BENCH_FMA(a, b, c) __fmaf_rn((a), (b), (c))
#else
#define BENCH_FMA(a, b, c) ((a) * (b) + (c))
#endif

WS_DEVICE static inline uint32_t bench_f32_bits(float x) {
  uint32_t u;
  memcpy(&u, &x, sizeof u);
  return u;
}

WS_DEVICE static inline uint32_t bench_dv_pick(uint32_t hash) {
  return (hash & 3u) == 0u ? (uint32_t)BENCH_DV_HEAVY : (uint32_t)BENCH_DV_LIGHT;
}

WS_DEVICE static uint32_t bench_dv_entry(const ws_item *it, bench_dv_frame *f,
                                         const bench_dv_args *a) {
  f->x = 0.0f;
  f->remaining = bench_dv_length(it->id, a->long_percent);
  f->hash = ws_hash32(it->id ^ 0x9e3779b9u);
  f->steps = 0u;
  return bench_dv_pick(f->hash);
}

/* Bookkeeping after a heavy or light run: terminate or pick the next. */
WS_DEVICE static inline uint32_t bench_dv_after(const ws_item *it, bench_dv_frame *f,
                                                const bench_dv_args *a) {
  f->steps += 1u;
  f->remaining -= 1u;
  if (f->remaining == 0u) {
    WS_PTR(uint32_t, a->out)[it->id] = f->hash ^ bench_f32_bits(f->x);
    WS_PTR(uint32_t, a->steps)[it->id] = f->steps;
    return WS_TERMINATE;
  }
  return bench_dv_pick(f->hash);
}

WS_DEVICE static uint32_t bench_dv_heavy(const ws_item *it, bench_dv_frame *f,
                                         const bench_dv_args *a) {
  /* A dependent chain: no iteration can start before the previous one. */
  float x = f->x;
  const float b = (float)(f->hash & 0xffu) * (1.0f / 256.0f);
  for (uint32_t k = 0; k < a->heavy_fmas; ++k)
    x = BENCH_FMA(x, 0.9990234375f, b);
  f->x = x;
  f->hash = ws_hash32(f->hash ^ bench_f32_bits(x));
  return bench_dv_after(it, f, a);
}

WS_DEVICE static uint32_t bench_dv_light(const ws_item *it, bench_dv_frame *f,
                                         const bench_dv_args *a) {
  f->hash = ws_hash32(f->hash + 1u);
  return bench_dv_after(it, f, a);
}

WS_COROUTINE(bench_divergent, bench_dv_frame, bench_dv_args, bench_dv_entry,
             BENCH_DV_CONTINUATIONS)

WS_MODULE_BEGIN(bench_kernels)
WS_MODULE_KERNEL(bench_empty)
WS_MODULE_KERNEL(bench_copy16)
WS_MODULE_KERNEL(bench_copy4)
WS_MODULE_COROUTINE(bench_pingpong)
WS_MODULE_COROUTINE(bench_divergent)
WS_MODULE_END(bench_kernels)
