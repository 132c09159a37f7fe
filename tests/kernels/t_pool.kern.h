/* SPDX-License-Identifier: MIT */
/* Test kernels "t_pool": typed pool records (pool_kernel.h).
 *   t_publish  index i publishes one record (WS_POOL_PUBLISH) holding i + 1
 *              and writes to where[i] the record it got, as a slot index:
 *              (record - payload) / stride, so C for the spare record past
 *              the C slots that a publication into a full pool yields;
 *   t_read     copies the record of slot i (WS_POOL_RECORD) to out[i];
 *   t_release  releases slot i from stage 0 where where[i] is not 0;
 *   t_state    copies state word i (free count, errors, stage counts,
 *              extent) to out[i]. */
#include "wavesched/pool_kernel.h"

typedef struct t_pool_args {
  ws_pool_view pool;
  uint64_t where; /* uint32_t[n]: t_publish's record index per index */
  uint64_t out;   /* uint64_t[C]: t_read's copy of each slot's record */
} t_pool_args;

WS_KERNEL(t_publish, t_pool_args, i, a) {
  uint64_t *rec = WS_POOL_PUBLISH(&a->pool, 0, uint64_t);
  *rec = (uint64_t)i + 1u;
  const uint64_t bytes = (uint64_t)((unsigned char *)rec - WS_PTR(unsigned char, a->pool.payload));
  WS_PTR(uint32_t, a->where)[i] = (uint32_t)(bytes / a->pool.stride);
}

WS_KERNEL(t_read, t_pool_args, i, a) {
  WS_PTR(uint64_t, a->out)[i] = *WS_POOL_RECORD(&a->pool, i, const uint64_t);
}

WS_KERNEL(t_release, t_pool_args, i, a) {
  if (WS_PTR(const uint32_t, a->where)[i] != 0u)
    ws_pool_release(&a->pool, i, 0);
}

WS_KERNEL(t_state, t_pool_args, i, a) {
  WS_PTR(uint64_t, a->out)[i] = WS_PTR(const uint32_t, a->pool.state)[i];
}

WS_MODULE(t_pool, WS_MODULE_KERNEL(t_publish) WS_MODULE_KERNEL(t_read) WS_MODULE_KERNEL(t_release)
                      WS_MODULE_KERNEL(t_state))
