/* SPDX-License-Identifier: MIT */
/* Compiled by tests/cuda/register_caps.sh with ptxas' resource report: the
 * register caps of kernel.h apply to the continuation and the plain kernel
 * they name and to nothing else. HEAVY and SAME run the same code; only
 * HEAVY is capped, so SAME shows what the code takes uncapped. */
#include "wavesched/kernel.h"

typedef struct rc_args {
  uint64_t data;
} rc_args;
#define RC_FIELDS(X) X(float, x) X(uint32_t, n)
WS_FRAME(rc_frame, RC_FIELDS)
enum { RC_HEAVY = 1, RC_SAME = 2 };

/* Many values live at once: far more registers than the cap when uncapped. */
WS_DEVICE static inline float rc_work(const float *d, float x) {
  float v[24];
  for (int i = 0; i < 24; ++i)
    v[i] = d[i] * x;
  for (int r = 0; r < 24; ++r)
    for (int i = 0; i < 24; ++i)
      v[i] = v[i] * v[(i + r) % 24] + d[24 + i];
  float s = 0.0f;
  for (int i = 0; i < 24; ++i)
    s += v[i];
  return s;
}
WS_DEVICE static uint32_t rc_entry(const ws_item *it, rc_frame *f, const rc_args *a) {
  (void)a;
  f->x = (float)it->id;
  return it->id % 2u ? RC_HEAVY : RC_SAME;
}
WS_DEVICE static uint32_t rc_heavy(const ws_item *it, rc_frame *f, const rc_args *a) {
  (void)it;
  f->x = rc_work(WS_PTR(const float, a->data), f->x);
  return WS_TERMINATE;
}
WS_DEVICE static uint32_t rc_same(const ws_item *it, rc_frame *f, const rc_args *a) {
  (void)it;
  f->x = rc_work(WS_PTR(const float, a->data), f->x);
  return WS_TERMINATE;
}
#define RC_CONTINUATIONS(X) X(RC_HEAVY, rc_heavy, "heavy") X(RC_SAME, rc_same, "same")
WS_CONTINUATION_MAX_REGISTERS(rc_frame, RC_HEAVY, 32)
WS_COROUTINE(rc, rc_frame, rc_args, rc_entry, RC_CONTINUATIONS)

WS_KERNEL_MAX_REGISTERS(rc_plain_capped, 32)
WS_KERNEL(rc_plain_capped, rc_args, i, a) {
  float *d = WS_PTR(float, a->data);
  d[64 + i] = rc_work(d, (float)i);
}
WS_KERNEL(rc_plain, rc_args, i, a) {
  float *d = WS_PTR(float, a->data);
  d[64 + i] = rc_work(d, (float)i);
}
WS_MODULE(rc, WS_MODULE_COROUTINE(rc) WS_MODULE_KERNEL(rc_plain_capped) WS_MODULE_KERNEL(rc_plain))
