/* SPDX-License-Identifier: MIT */
/* Kernels of the "t_spec" test coroutine (see t_spec.h): one source for the
 * CPU and CUDA backends; glsl/t_spec/ is the Vulkan one. */
#include "t_spec.h"

/* C has no specialization: the bit of the continuation that runs. */
WS_DEVICE static uint32_t t_spec_probe(uint32_t src) {
  return 1u << src;
}

WS_DEVICE static uint32_t t_spec_entry(const ws_item *it, t_spec_frame *f, const t_spec_args *a) {
  WS_PTR(uint32_t, a->seen)[it->id] |= t_spec_probe(0);
  f->h = ws_hash32(it->id);
  f->left = t_spec_len(it->id);
  f->acc = 0.0f;
  return t_spec_next(f->h, f->left);
}

WS_DEVICE static uint32_t t_spec_light(const ws_item *it, t_spec_frame *f, const t_spec_args *a) {
  WS_PTR(uint32_t, a->seen)[it->id] |= t_spec_probe(T_SPEC_LIGHT);
  f->h = t_spec_light_hash(f->h);
  f->acc += 1.0f;
  f->left -= 1u;
  return t_spec_next(f->h, f->left);
}

WS_DEVICE static uint32_t t_spec_heavy(const ws_item *it, t_spec_frame *f, const t_spec_args *a) {
  WS_PTR(uint32_t, a->seen)[it->id] |= t_spec_probe(T_SPEC_HEAVY);
  f->acc += (float)(f->h & 0xffu) * 0.5f;
  f->h = t_spec_heavy_hash(f->h);
  f->left -= 1u;
  return t_spec_next(f->h, f->left);
}

WS_DEVICE static uint32_t t_spec_finish(const ws_item *it, t_spec_frame *f, const t_spec_args *a) {
  WS_PTR(uint32_t, a->seen)[it->id] |= t_spec_probe(T_SPEC_FINISH);
  WS_PTR(uint32_t, a->out)[it->id] = f->h;
  WS_PTR(float, a->acc)[it->id] = f->acc;
  return WS_TERMINATE;
}

WS_COROUTINE(t_spec, t_spec_frame, t_spec_args, t_spec_entry, T_SPEC_CONTINUATIONS)

WS_MODULE_BEGIN(t_spec)
WS_MODULE_COROUTINE(t_spec)
WS_MODULE_END(t_spec)
