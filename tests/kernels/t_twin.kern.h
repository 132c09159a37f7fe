/* SPDX-License-Identifier: MIT */
/* Kernel of the decide.h / decide.glsl agreement test (t_twin.h). */
#include "t_twin.h"

#include "wavesched/detail/decide.h"

WS_KERNEL(t_twin, t_twin_args, i, a) {
  ws_dstate *d = WS_PTR(ws_dstate, a->states) + i;
  ws_dec_observe_works(d);
  ws_dec_decide(d);
  WS_PTR(uint32_t, a->again)[i] = ws_dec_loop_next(d);
}

WS_MODULE_BEGIN(t_twin)
WS_MODULE_KERNEL(t_twin)
WS_MODULE_END(t_twin)
