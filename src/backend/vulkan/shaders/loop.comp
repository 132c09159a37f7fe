/* SPDX-License-Identifier: MIT */
#version 460
/* The Vulkan device loop's decide shader (vk_loop.c): one workgroup, whose
 * first invocation decides (the others only prefetch, below).
 *
 * mode 1 (prime), once at the start of each submission: the halt word
 * from the state's status, and the first iteration's observation grid.
 * mode 0 (decide), once per recorded iteration (mode 2: the same, and it
 * counts the iterations that decided for WS_VULKAN_LOOP_TIMESTAMPS in
 * WS_DL_RAN, which the prime zeroed): unless halted, the device
 * side observation of the auxiliary works and the decisions of decide.glsl
 * (the twin of decide.h) on the state, then the indirect dispatch commands
 * of this iteration's launches (0 groups for every launch the plan does not
 * run) and the sizes the queue shaders read in `dyn` mode (loop.glsl). The
 * iteration that ends the run (done, error, or observe_interval reached)
 * sets the halt word; every later iteration of the submission zeroes the
 * commands and returns, so nothing runs until the host has read the state.
 *
 * Commands (VkDispatchIndirectCommand at word WS_DL_CMD + 3 c):
 *   c = 0          observation (count, gather_all, recount) over [0, high)
 *   c = 1, 2       compaction: pairs over [0, scan) (c = 2 unused), or in
 *                  lists (vk_loop.c chose: compact_lists) holes over [0, n),
 *                  movers over [n, scan)
 *   c = 3          gather over [0, gather_scan) (in scan mode only with a
 *                  scan share: a resume of a sparse queue)
 *   c = 4          publish over the launch's frames
 *   c = 5 + j      the step of continuation j (0 = the entry), strided; in
 *                  scan mode over the slots below its scan bound; with
 *                  one_step (WS_VULKAN_LOOP_STEPS=one) c = 5 alone, the
 *                  plan's continuation (c = 6 .. 5 + K unused)
 *   c = 6 + K + i  auxiliary stage kernel i (statistics order)
 *   c = 6 + K + S + 2 k, + 1   append storage k's compaction (issue 18):
 *                  as c = 1, 2 over [0, live) and [live, scan), the range
 *                  decide.glsl's ws_dec_prepare_storage chose, in the words
 *                  of block k (compact.glsl reads them as WS_DL_COMPACT_*)
 */
#include "wavesched/kernel.glsl"
#include "loop.glsl"
#include "queue.glsl"
#include "decide.glsl"

layout(push_constant, scalar) uniform loop_pc {
  layout(offset = 0) uint64_t state; /* ws_dstate */
  layout(offset = 8) uint64_t dyn;   /* this loop's words (loop.glsl) */
  layout(offset = 16) uint64_t slots; /* the scheduler's slot list */
  layout(offset = 24) uint mode;
  layout(offset = 28) uint K;
  layout(offset = 32) uint stages;      /* S: auxiliary stage kernels */
  layout(offset = 36) uint block;       /* the coroutine's workgroup size */
  layout(offset = 40) uint queue_block; /* the queue shaders' */
  layout(offset = 44) uint max_groups;  /* the grid limit vk_loop.c checked R against */
  layout(offset = 48) uint stage_groups; /* word of uint[S]: each stage kernel's groups */
  layout(offset = 52) uint storage_words; /* word of the append storages' blocks, 8 words each */
  layout(offset = 56) uint storages;      /* works with append storage */
  layout(offset = 60) uint queue_groups;  /* WS_VULKAN_QUEUE_GROUPS: 0, or the cap */
  /* the compaction counters (vk_internal.h WS_VK_STATE_HOLES, _MOVERS) of the
   * iteration's first compaction, which this shader zeroes: no fill and no
   * barrier of their own */
  layout(offset = 64) uint64_t holes;
  /* the bytes of the state block and of the counts that the workgroup's
   * invocations load before the one that decides does; 0 with
   * WS_VULKAN_LOOP_PREFETCH=off (vk_loop.c) */
  layout(offset = 72) uint64_t counts;
  layout(offset = 80) uint prefetch_state;
  layout(offset = 84) uint prefetch_counts;
  layout(offset = 88) uint compact_lists; /* 1: this loop compacts in lists, not pairs */
  layout(offset = 92) uint one_step; /* 1: one step dispatch, c = 5, whichever continuation runs */
} P;

const uint CMD_OBS = 0u;
const uint CMD_HOLES = 1u;
const uint CMD_MOVE = 2u;
const uint CMD_GATHER = 3u;
const uint CMD_PUBLISH = 4u;
const uint CMD_STEP = 5u;

uint groups(uint n, uint b) { return n / b + (n % b != 0u ? 1u : 0u); }

/* A slot-parallel queue shader's groups over n slots: one per tile of
 * queue_block * WS_QUEUE_ITEMS (queue.glsl), or at most queue_groups, whose
 * groups then walk the tiles, at most WS_QUEUE_TILES_MAX each (vk_queue.c
 * dispatch_items, the host's same rule). */
uint queue_groups(uint n) {
  const uint tiles = groups(n, P.queue_block * WS_QUEUE_ITEMS);
  if (P.queue_groups == 0u)
    return tiles;
  return min(tiles, max(P.queue_groups, groups(tiles, WS_QUEUE_TILES_MAX)));
}

/* A command's group count x; its y and z are 1 from the loop's creation
 * (vk_loop.c) and nothing writes them. */
void set_cmd(uint c, uint x) { ws_dec_u32s(P.dyn).v[WS_DL_CMD + 3u * c] = x; }

/* Every command's x = 0, by the workgroup's invocations side by side (the
 * deciding one then sets those its plan runs, after the barrier in main). */
void clear_cmds() {
  const uint n = 6u + P.K + P.stages + 2u * P.storages;
  for (uint c = gl_LocalInvocationID.x; c < n; c += gl_WorkGroupSize.x)
    set_cmd(c, 0u);
}

/* A compaction of [0, scan) with `live` live frames: commands c and c + 1
 * (compact_pairs.comp over every slot, or compact_holes.comp and
 * compact_move.comp over their two ranges) */
void compact_cmds(uint c, uint live, uint scan) {
  if (P.compact_lists == 0u) {
    set_cmd(c, queue_groups(scan));
  } else {
    set_cmd(c, queue_groups(live));
    set_cmd(c + 1u, queue_groups(scan - live));
  }
}

/* one invocation per frame (kernel.glsl's step has no loop: vk_loop.c
 * refuses pools whose grid exceeds max_groups); with one_step (the greedy
 * policy's plans name at most one continuation) the one step dispatch */
void step_cmd(uint src, uint n) {
  set_cmd(CMD_STEP + (P.one_step != 0u ? 0u : src), groups(n, P.block));
}

/* The decisions are one invocation's chain of dependent loads (the halt
 * word, the state, each count, each statistic it compares), each a round
 * trip to L2 when it misses. Unless WS_VULKAN_LOOP_PREFETCH=off, the
 * workgroup's other invocations first load one word of every 32-byte
 * sector of the state block (the works, their arrays and the statistics
 * follow the state: loop_device.c) and of the counts, and the subgroup
 * waits for them, so that the deciding invocation's loads may hit the SM's
 * L1 instead. A hint only: whatever it loads is discarded, and nothing
 * depends on it but time (H100, bench_loop fused: 0.06-1.38 us less per
 * iteration in 6 of 6 pairs, s11run1-3). */
void prefetch() {
  const uint stride = 32u * gl_WorkGroupSize.x;
  uint seen = 0u;
  for (uint off = 32u * gl_LocalInvocationID.x; off < P.prefetch_state; off += stride)
    seen |= ws_dec_u32s(P.state + off).v[0];
  for (uint off = 32u * gl_LocalInvocationID.x; off < P.prefetch_counts; off += stride)
    seen |= ws_dec_u32s(P.counts + off).v[0];
  /* a use the compiler cannot drop, which waits for every load of the
   * subgroup; its store never happens (mode is 0..2) */
  seen = subgroupOr(seen);
  if (P.mode == 0xffffffffu)
    ws_dec_u32s(P.dyn).v[WS_DL_RAN] = seen;
}

void main() {
  ws_dec_u32s w = ws_dec_u32s(P.dyn);
  /* uniform in the workgroup, so that the subgroup's invocations prefetch
   * together; an iteration after the halt decides nothing worth loading for */
  const bool halted = w.v[WS_DL_HALT] != 0u; /* the prime (mode 1) does not read it */
  clear_cmds();
  if (P.mode != 1u && (P.prefetch_state | P.prefetch_counts) != 0u && !halted)
    prefetch();
  /* the zeroes before the deciding invocation's counts: one value per
   * command when the indirect dispatches read them */
  memoryBarrierBuffer();
  barrier();
  if (gl_LocalInvocationID.x != 0u)
    return;
  if (P.mode == 1u) {
    ws_dstate_ref r = ws_dstate_ref(P.state);
    const bool running = r.v.status == WS_DEC_RUNNING;
    w.v[WS_DL_HALT] = running ? 0u : 1u;
    w.v[WS_DL_RAN] = 0u;
    if (running) {
      w.v[WS_DL_OBS_SCAN] = r.v.high;
      set_cmd(CMD_OBS, queue_groups(r.v.high));
    }
    return;
  }
  if (halted)
    return;
  /* iterations before the halt: the ones whose timestamps vk_loop.c adds
   * up (WS_VULKAN_LOOP_TIMESTAMPS); no store in the loop's usual path */
  if (P.mode == 2u)
    w.v[WS_DL_RAN] += 1u;
  if (P.holes != 0ul) { /* the tickets and the tiles finished (compact.glsl) */
    WS_PTR(uint32_t, P.holes)[0] = 0u;
    WS_PTR(uint32_t, P.holes)[1] = 0u;
    WS_PTR(uint32_t, P.holes)[2] = 0u;
  }
  ws_dstate d = ws_dstate_ref(P.state).v;
  ws_dec_observe_works(d);
  ws_dec_decide(d);
  if ((d.flags & WS_DEC_SCAN) != 0u && d.status == WS_DEC_RUNNING && d.plan.gather != 0u &&
      (d.plan.action == WS_ACT_REFILL || (d.flags >> WS_DEC_SCAN_SHARE_SHIFT) == 0u)) {
    /* Scan mode records no gather (vk_loop.c) unless it has a scan share:
     * a refill's entry launch scans the free slots itself and draws tickets
     * (kernel.glsl), zeroed here before the barrier that orders them for
     * the launch. Without a share a resume would gather only a part of its
     * queue, which scan mode excludes (partial admission): were one
     * planned, it fails here rather than run wrong. With a share, a sparse
     * queue's resume gathers (decide.glsl), and the recording has that
     * gather. */
    if (d.plan.action == WS_ACT_REFILL) {
      d.plan.gather = 0u;
      d.plan.use_slots = 2u;
      d.plan.slot_base = d.plan.gather_scan;
      ws_dec_u32s(d.counts).v[WS_COUNTS_TICKETS(d.K)] = 0u;
    } else {
      ws_dec_fail(d, WS_DEC_S_EPROTO_INTERNAL, WS_DERR_SCAN, WS_DEC_NONE, 0u, d.plan.queue,
                  ws_dec_u32s(d.counts).v[d.plan.queue], d.plan.count, 0ul, 0ul);
      d.plan.action = WS_ACT_NONE;
    }
  }
  const ws_dec_plan p = d.plan;
  const uint more = ws_dec_loop_next(d);
  ws_dstate_ref(P.state).v = d;
  /* append storages, in registration order (loop_device.c lists them so):
   * compacted before the plan's launches, whatever the plan */
  uint k = 0u;
  for (uint i = 0u; i < d.aux_count && P.storages != 0u; ++i) {
    ws_dec_work_ref aw = ws_dec_work_at(d, i);
    if (aw.src_extent == 0ul)
      continue;
    const uint live = aw.compact_live, scan = aw.compact_scan;
    const uint block = P.storage_words + 8u * k;
    w.v[block + WS_DL_COMPACT_N] = live;
    w.v[block + WS_DL_COMPACT_SCAN] = scan;
    if (scan > live)
      compact_cmds(6u + P.K + P.stages + 2u * k, live, scan);
    k += 1u;
  }
  switch (p.action) {
  case WS_ACT_REFILL:
  case WS_ACT_RESUME:
    if (p.compact != 0u) {
      w.v[WS_DL_COMPACT_N] = p.compact_live;
      w.v[WS_DL_COMPACT_SCAN] = p.compact_scan;
      compact_cmds(CMD_HOLES, p.compact_live, p.compact_scan);
    }
    if (p.gather != 0u) {
      /* the gather appends from 0; verification reads the word at the next
       * boundary (decide.h expect_gather) */
      ws_dec_u32s(d.gather_count).v[0] = 0u;
      w.v[WS_DL_GATHER_TOKEN] = p.gather_token;
      w.v[WS_DL_GATHER_SCAN] = p.gather_scan;
      set_cmd(CMD_GATHER, queue_groups(p.gather_scan));
    }
    /* a scanning launch: one invocation per slot below its scan bound */
    step_cmd(p.action == WS_ACT_REFILL ? 0u : p.queue, p.use_slots == 2u ? p.slot_base : p.count);
    if ((d.flags & WS_DEC_PUBLISH) != 0u) {
      w.v[WS_DL_PUB_N] = p.count;
      w.v[WS_DL_PUB_SRC] = p.queue;
      w.v[WS_DL_PUB_SLOT_BASE] = p.slot_base;
      ws_dec_u64s(P.dyn).v[WS_DL_PUB_SLOTS / 2u] =
          p.use_slots == 1u ? P.slots + 4ul * p.slot_offset : 0ul;
      set_cmd(CMD_PUBLISH, queue_groups(p.count));
    }
    break;
  case WS_ACT_RESUME_ALL:
    for (uint j = 1u; j <= P.K; ++j)
      step_cmd(j, ws_dec_u32s(d.counts).v[j]);
    break;
  case WS_ACT_STAGE: {
    const uint stat = ws_dec_work_at(d, p.work).first_stat + p.stage;
    set_cmd(CMD_STEP + P.K + 1u + stat, w.v[P.stage_groups + stat]);
    break;
  }
  default:
    break;
  }
  if (more != 0u) {
    w.v[WS_DL_OBS_SCAN] = d.high;
    set_cmd(CMD_OBS, queue_groups(d.high));
  }
  w.v[WS_DL_HALT] = more != 0u ? 0u : 1u;
}
