/* SPDX-License-Identifier: MIT */
/* Kernels of the demo workload: one source for the CPU and CUDA backends. */
#include "demo.h"

WS_DEVICE static uint32_t demo_entry(const ws_item *it, demo_frame *f, const demo_args *a) {
  f->remaining = demo_length(a->item_base + it->id);
  f->hash = a->item_base + it->id;
  f->acc = 0.0f;
  f->blends = 0;
  return DEMO_MIX;
}

WS_DEVICE static uint32_t demo_mix(const ws_item *it, demo_frame *f, const demo_args *a) {
  WS_PTR(uint32_t, a->steps)[it->id] += 1;
  f->hash = ws_hash32(f->hash);
  f->remaining -= 1;
  if (f->remaining == 0)
    return DEMO_FINISH;
  return (f->hash & 3u) == 0 ? DEMO_BLEND : DEMO_MIX;
}

WS_DEVICE static uint32_t demo_blend(const ws_item *it, demo_frame *f, const demo_args *a) {
  WS_PTR(uint32_t, a->steps)[it->id] += 1;
  f->acc = f->acc * 0.5f + (float)(f->hash & 0xffu);
  f->blends += 1;
  return DEMO_MIX;
}

WS_DEVICE static uint32_t demo_finish(const ws_item *it, demo_frame *f, const demo_args *a) {
  WS_PTR(uint32_t, a->steps)[it->id] += 1;
  WS_PTR(uint32_t, a->out)[it->id] = f->hash ^ ((uint32_t)f->blends << 24);
  return WS_TERMINATE;
}

WS_COROUTINE(demo, demo_frame, demo_args, demo_entry, DEMO_CONTINUATIONS)

WS_MODULE_BEGIN(demo_kernels)
WS_MODULE_COROUTINE(demo)
WS_MODULE_END(demo_kernels)
