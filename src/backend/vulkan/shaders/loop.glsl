/* SPDX-License-Identifier: MIT */
/* wavesched — Vulkan device loop: the words the decide shader (loop.comp)
 * writes for the launches of its iteration (vk_loop.c records them as
 * indirect dispatches). A queue shader whose push constants carry a
 * non-zero `dyn` address reads its sizes from these words instead of its
 * push constants: the command buffer is recorded once, the sizes change
 * every iteration. The indices are WS_VK_DL_* in vk_internal.h (asserted
 * there). */
#ifndef WAVESCHED_VK_LOOP_GLSL
#define WAVESCHED_VK_LOOP_GLSL

const uint WS_DL_HALT = 0u;         /* 1: the rest of this submission does nothing */
const uint WS_DL_OBS_SCAN = 1u;     /* count / gather_all / recount: slots [0, scan) */
const uint WS_DL_GATHER_TOKEN = 2u; /* gather */
const uint WS_DL_GATHER_SCAN = 3u;
const uint WS_DL_COMPACT_N = 4u; /* compaction: live count and scan bound */
const uint WS_DL_COMPACT_SCAN = 5u;
const uint WS_DL_PUB_N = 6u; /* publish: frames, continuation, dense base */
const uint WS_DL_PUB_SRC = 7u;
const uint WS_DL_PUB_SLOT_BASE = 8u;
const uint WS_DL_PUB_SLOTS = 10u; /* uint64_t at word 10: the slot list or 0 */
const uint WS_DL_RAN = 12u;       /* the submission's iterations that decided */
const uint WS_DL_CMD = 16u;       /* VkDispatchIndirectCommand[] (3 words each) */

uint ws_dl_word(uint64_t dyn, uint k) { return WS_PTR(uint32_t, dyn)[k]; }

#endif
