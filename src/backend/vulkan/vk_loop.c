/* SPDX-License-Identifier: MIT */
/* wavesched — the Vulkan backend's device loop (backend.h ws_loop_desc,
 * docs/loop.md, docs/vulkan.md).
 *
 * One secondary command buffer per scheduler, recorded once by loop_create
 * and executed by every loop_run inside the stream's command buffer, after
 * the prime (shaders/loop.comp, mode 1: the halt word and the first
 * observation grid), which loop_run records itself where a submission
 * needs it (a dispatch's first; each one of an interval; with timestamps):
 *
 *   [SoA compaction: the field sizes into the backend's state words]
 *   T times:
 *     [materialized] zero counts; count; gather_all prefix; gather_all
 *     [verification] zero recount; count into recount
 *     decide (loop.comp, mode 0, one workgroup whose first invocation
 *            decides; the others prefetch unless
 *            WS_VULKAN_LOOP_PREFETCH=off): decide.glsl's decisions,
 *            then the group counts of every launch below; it also zeroes
 *            the counters of the iteration's first compaction
 *     [append storages] each one's compaction over the range the decision
 *            chose (issue 18; compact_pairs, or compact_holes and
 *            compact_move: ws_vk_loop.pairs, WS_VULKAN_COMPACT)
 *     [compaction]   pairs (or lists: holes, then movers)
 *     gather (with the pairs or the movers, under compaction: never both in
 *            one plan; none in scan mode, whose launches find their own
 *            frames, unless a scan share gathers sparse queues)
 *     the steps of continuations 0..K (or, WS_VULKAN_LOOP_STEPS=one under
 *            the greedy policy, one step running the plan's continuation)
 *            and the auxiliary stage kernels
 *     [incremental]  publish
 *
 * Every launch after the decide shader is a vkCmdDispatchIndirect whose
 * group count the decide shader wrote this iteration: 0 for every launch the
 * plan does not run, so one recording serves every plan (the CUDA loop's
 * SWITCH node, as indirect dispatches). Queue shaders read their sizes from
 * the loop's words (loop.glsl) and the steps from the plan (kernel.glsl), one
 * invocation per frame, so
 * nothing on the host changes between iterations. Barriers separate the
 * phases, each with the masks it needs (loop_barrier); the steps and
 * stage kernels of one iteration share one barrier under the greedy
 * policy, where at most one of them has groups.
 *
 * T (iterations per submission): observe_interval when it is set and at
 * most WS_VK_LOOP_ITERATIONS, else WS_VK_LOOP_ITERATIONS (32; the
 * environment variable WS_VULKAN_LOOP_ITERATIONS overrides it). The
 * iteration that ends the run (the dispatch done or failed, or
 * observe_interval iterations) sets the halt word, and the recorded
 * iterations after it do nothing; a run that is still going at the end of
 * its submission ends it there and the host submits again after reading the
 * state (loop_device.c). With observe_interval set, a submission executes
 * the secondary buffer ceil(interval / T) times, at most
 * WS_VK_LOOP_REPEATS_MAX (a longer interval synchronizes every 8 T
 * iterations). Without, the loop is pipelined (loop_pipelined, the
 * default): each submission executes the buffer once, and from the second
 * on the host queues the next before it waits for the one before
 * (loop_device.c); with WS_VULKAN_LOOP_PIPELINE=off, 1, 2, then 4 times
 * (WS_VK_LOOP_GROWTH_MAX) in a dispatch's first, second and later
 * submissions, each waited for before the next is recorded.
 * docs/decisions.md has the reasons and the measurements. With WS_VULKAN_LOOP_TIMESTAMPS=1 each
 * recorded iteration also writes a timestamp at its start and after each
 * phase (stamp), and the buffer runs once per submission.
 *
 * Not supported (loop_create answers WS_ECONFIG_LOOP, and the scheduler
 * runs the host loop unless the device loop was asked for): the tail (GLSL
 * modules have no tail shader; ws_loop_init_state never enables it here),
 * a module without step SPIR-V, and grids the
 * device's maxComputeWorkGroupCount cannot hold in one indirect dispatch.
 */
#include "../../core/alloc.h"
#include "wavesched/detail/decide.h"
#include "vk_internal.h"
#include "vk_shaders.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Iterations recorded per submission when observe_interval does not say. */
#define WS_VK_LOOP_ITERATIONS 32u
#define WS_VK_LOOP_ITERATIONS_MAX 4096u
/* Executions of the recording per submission at most: an interval beyond
 * T times this synchronizes every T * WS_VK_LOOP_REPEATS_MAX iterations, so
 * that a dispatch never records more empty iterations than that. */
#define WS_VK_LOOP_REPEATS_MAX 8u
/* Without observe_interval, executions of the recording per submission:
 * 1 in a dispatch's first submission, then twice as many in each, at most
 * WS_VK_LOOP_GROWTH_MAX (docs/decisions.md: T = 32, so 32, 64, 128, 128,
 * ... iterations per host synchronization). */
#define WS_VK_LOOP_GROWTH_MAX 4u

/* Indirect commands (shaders/loop.comp) */
enum { CMD_OBS = 0, CMD_HOLES = 1, CMD_MOVE = 2, CMD_GATHER = 3, CMD_PUBLISH = 4, CMD_STEP = 5 };

/* decide.glsl spells out ws_dec_work's offsets; the state's follow from the
 * scalar layout of its members in order, which is C's for these types when
 * C inserts no padding: the sizes below leave no room for any. */
#define WS_VK_WORK_AT_(field, offset)                                                              \
  _Static_assert(offsetof(ws_dec_work, field) == (offset),                                         \
                 "decide.glsl declares ws_dec_work." #field " at " #offset)
WS_VK_WORK_AT_(bound, 0);
WS_VK_WORK_AT_(src_error, 40);
WS_VK_WORK_AT_(capacity, 48);
WS_VK_WORK_AT_(live_is_free, 72);
WS_VK_WORK_AT_(obs_status, 76);
WS_VK_WORK_AT_(has_avail, 96);
WS_VK_WORK_AT_(counters, 104);
WS_VK_WORK_AT_(src_extent, 112);
WS_VK_WORK_AT_(storage_counters, 120);
WS_VK_WORK_AT_(compact_live, 128);
WS_VK_WORK_AT_(compact_scan, 132);
_Static_assert(sizeof(ws_dec_work) == 136, "decide.glsl: WS_DEC_WORK_BYTES");
_Static_assert(offsetof(ws_dstate, N) == 64 && offsetof(ws_dstate, aux_live) == 168 &&
                   offsetof(ws_dstate, pass) == 176 && offsetof(ws_dstate, tail_items) == 248 &&
                   offsetof(ws_dstate, plan) == 256 && offsetof(ws_dstate, err) == 320,
               "decide.glsl's ws_dstate: members in C's order, no padding");
_Static_assert(offsetof(ws_dec_err, status) == 40 && offsetof(ws_dec_err, queue) == 60,
               "decide.glsl's ws_dec_err");
_Static_assert(WS_VK_DL_CMD == 16 && WS_VK_DL_PUB_SLOTS == 10 && WS_VK_DL_HALT == 0,
               "shaders/loop.glsl repeats the word indices");

/* shaders/loop.comp's push constants */
typedef struct loop_push {
  uint64_t state;
  uint64_t dyn;
  uint64_t slots;
  uint32_t mode; /* 0 decide, 1 prime, 2 decide and count for the timestamps */
  uint32_t K;
  uint32_t stages;
  uint32_t block;
  uint32_t queue_block;
  uint32_t max_groups;
  uint32_t stage_groups;  /* word index of uint32_t[stages] in the loop's words */
  uint32_t storage_words; /* word index of the append storages' blocks (8 words each) */
  uint32_t storages;
  uint32_t queue_groups; /* WS_VULKAN_QUEUE_GROUPS, 0 = one group per tile */
  uint64_t holes; /* the first compaction's WS_VK_STATE_HOLES words, or 0 */
  uint64_t counts;          /* the scheduler's counts (the prefetch's second range) */
  uint32_t prefetch_state;  /* bytes of the state block to prefetch; 0: WS_VULKAN_LOOP_PREFETCH=off */
  uint32_t prefetch_counts; /* likewise, of the counts */
  uint32_t compact_lists;   /* compactions in lists (ws_vk_loop.pairs false): two commands each */
  uint32_t one_step;        /* 1: one step dispatch (CMD_STEP) runs the plan's continuation */
} loop_push;
WS_VK_PUSH_CHECK_(loop_push, mode, 24);
WS_VK_PUSH_CHECK_(loop_push, stage_groups, 48);
WS_VK_PUSH_CHECK_(loop_push, storages, 56);
WS_VK_PUSH_CHECK_(loop_push, holes, 64);
WS_VK_PUSH_CHECK_(loop_push, prefetch_counts, 84);
WS_VK_PUSH_CHECK_(loop_push, compact_lists, 88);
WS_VK_PUSH_CHECK_(loop_push, one_step, 92);

/* kernel.glsl WS_PLAN_SRC_ANY: the step launch runs the plan's continuation */
#define WS_VK_PLAN_SRC_ANY 0xffffffffu

/* Per-phase timestamps (WS_VULKAN_LOOP_TIMESTAMPS=1, a measuring aid):
 * STAMP_PHASES + 1 timestamps per recorded iteration, at its start and
 * after each phase's barrier, so phase k's time is stamp k + 1 - stamp k,
 * its barrier included; a phase the recording does not have (no
 * compaction, no publication) spans no commands. Only the iterations
 * before the halt are added up (WS_VK_DL_RAN), and the sums go to the
 * device's log (WS_LOG_INFO) when the loop is destroyed. */
enum { STAMP_OBSERVE, STAMP_DECIDE, STAMP_HOLES, STAMP_MOVE, STAMP_STEPS, STAMP_PUBLISH, STAMP_PHASES };
#define STAMPS_PER_ITERATION (STAMP_PHASES + 1u)
static const char *const stamp_names[STAMP_PHASES] = {"observe", "decide",          "holes",
                                                      "movers+gather", "steps", "publish"};

typedef struct ws_vk_loop {
  VkCommandPool pool; /* its own: the stream's pool is reset at every synchronization */
  VkCommandBuffer cmd;
  ws_vk_buffer *words; /* loop.glsl's words, the commands, the stage grids */
  uint32_t iterations; /* T */
  uint32_t repeats;    /* executions of cmd per loop_run; 0: growing (WS_VK_LOOP_GROWTH_MAX) */
  bool barriers_full;  /* WS_VULKAN_LOOP_BARRIERS=full (loop_barrier) */
  bool pipelined;      /* loop_pipelined: WS_VULKAN_LOOP_PIPELINE, no interval, no stamps */
  bool compaction;     /* the stream checks the compaction error word */
  bool pairs;          /* its compactions run in pairs (compact_pairs.comp), not lists */
  /* compaction in pairs: the pair words of the frames' compaction and of
   * each append storage's, zeroed by each dispatch's first submission
   * (compact_pairs.comp keeps them 0 between its compactions; the fill
   * covers a first use and whatever ran between two dispatches) */
  struct pair_fill {
    uint64_t addr;
    uint32_t words;
  } *pair_fills;
  uint32_t pair_fill_count;
  loop_push push;      /* the decide shader's (mode 0) */
  /* WS_VULKAN_LOOP_TIMESTAMPS: T * STAMPS_PER_ITERATION queries, or none */
  VkQueryPool stamps;
  ws_vk_buffer *stamp_host; /* host copy of WS_VK_DL_RAN after a submission */
  bool stamp_pending;       /* a submitted run whose stamps are not added yet */
  uint64_t stamp_iterations;
  double stamp_ns[STAMP_PHASES];
  char stamp_label[96]; /* the coroutine and the accounting, for the log */
} ws_vk_loop;

static uint32_t env_iterations(void) {
  const char *v = getenv("WS_VULKAN_LOOP_ITERATIONS");
  if (v && v[0]) {
    char *end;
    const unsigned long n = strtoul(v, &end, 10);
    if (*end == '\0' && n >= 1 && n <= WS_VK_LOOP_ITERATIONS_MAX)
      return (uint32_t)n;
  }
  return WS_VK_LOOP_ITERATIONS;
}

/* WS_VULKAN_LOOP_BARRIERS: exact (the default: each barrier with the masks
 * its phase needs) or full (every barrier orders every shader, transfer and
 * indirect access, as before session 8: for comparisons, and for a driver
 * that would mishandle the exact masks). */
static ws_status env_barriers(ws_device *dev, bool *full) {
  return ws_vk_env_switch(dev, "device loop: ", "WS_VULKAN_LOOP_BARRIERS", "exact", "full", false,
                          full);
}

/* WS_VULKAN_LOOP_STEPS: each (the default: one step dispatch per
 * continuation, in the pipeline specialized for it) or one (under the greedy
 * policy, one dispatch of the generic step that runs whichever continuation
 * the plan names: K fewer empty indirect dispatches per iteration, but the
 * heaviest continuation's registers for every one; docs/decisions.md). */
static ws_status env_steps(ws_device *dev, bool *one) {
  return ws_vk_env_switch(dev, "device loop: ", "WS_VULKAN_LOOP_STEPS", "each", "one", false, one);
}

/* WS_VULKAN_LOOP_PIPELINE: on (the default) or off. On, a dispatch without
 * observe_interval and timestamps is pipelined (loop_device.c, backend.h
 * loop_pipelined): after its first submission, each one is queued before
 * the host waits for the one before it, and executes the recording once
 * (32 iterations) instead of growing. */
static ws_status env_pipeline(ws_device *dev, bool *on) {
  return ws_vk_env_switch(dev, "device loop: ", "WS_VULKAN_LOOP_PIPELINE", "off", "on", true, on);
}

/* WS_VULKAN_LOOP_TIMESTAMPS: 0 (the default) or 1 (per-phase timestamps). */
static ws_status env_timestamps(ws_device *dev, bool *on) {
  return ws_vk_env_switch(dev, "device loop: ", "WS_VULKAN_LOOP_TIMESTAMPS", "0", "1", false, on);
}

/* WS_VULKAN_LOOP_PREFETCH: on (the default: the decide shader's other
 * invocations load the state block and the counts first, loop.comp
 * prefetch; bench_loop fused 0.06-1.38 us faster in 6 of 6 pairs on an
 * H100, s11run1-3) or off. */
static ws_status env_prefetch(ws_device *dev, bool *on) {
  return ws_vk_env_switch(dev, "device loop: ", "WS_VULKAN_LOOP_PREFETCH", "off", "on", true, on);
}

/* The decide shader's workgroup: its first invocation decides, the others
 * prefetch (one subgroup on NVIDIA). */
#define WS_VK_LOOP_LANES 32u
/* The most bytes of the state block the prefetch loads (a few hundred with
 * the usual handful of works). */
#define WS_VK_LOOP_PREFETCH_MAX 4096u

static uint64_t groups_of(uint64_t n, uint32_t b) { return (n + b - 1u) / b; }

/* What one recording needs at hand. */
typedef struct rec {
  ws_device *dev;
  VkCommandBuffer cmd;
  VkBuffer words;
  VkPipeline bound;
  unsigned all; /* BAR_FULL: every barrier orders everything (WS_VULKAN_LOOP_BARRIERS=full) */
  VkQueryPool stamps; /* WS_VULKAN_LOOP_TIMESTAMPS, or VK_NULL_HANDLE */
} rec;

/* What a barrier of the loop orders. Every barrier orders the shader
 * writes before it against the shader reads and writes after it; the one
 * after a decision also makes its indirect commands visible to the
 * dispatches that read them (BAR_INDIRECT), and one next to a
 * vkCmdFillBuffer or vkCmdUpdateBuffer covers transfers (BAR_TRANSFER). A
 * barrier whose destination includes the indirect stage costs about 2 µs
 * more on the H200 than a compute-to-compute one (bench/probes/vk_phases.c:
 * 4.0–4.2 against 2.0 µs after a one-group dispatch, s8run2), so each
 * barrier asks for no more than it needs. A later decision overwrites the
 * commands this iteration's dispatches read: a write-after-read that the
 * compute stage in every source scope orders, the indirect read being
 * logically earlier than the compute shader of the same dispatch. */
enum { BAR_COMPUTE = 0u, BAR_INDIRECT = 1u, BAR_TRANSFER = 2u, BAR_FULL = 3u };

static void loop_barrier(const rec *r, unsigned what) {
  what |= r->all;
  const bool ind = (what & BAR_INDIRECT) != 0, tr = (what & BAR_TRANSFER) != 0;
  VkMemoryBarrier mb = {
      .sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
      .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | (tr ? VK_ACCESS_TRANSFER_WRITE_BIT : 0u),
      .dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                       (tr ? VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT : 0u) |
                       (ind ? VK_ACCESS_INDIRECT_COMMAND_READ_BIT : 0u)};
  const VkPipelineStageFlags transfer = tr ? VK_PIPELINE_STAGE_TRANSFER_BIT : 0u;
  vkCmdPipelineBarrier(r->cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | transfer,
                       VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | transfer |
                           (ind ? VK_PIPELINE_STAGE_DRAW_INDIRECT_BIT : 0u),
                       0, 1, &mb, 0, NULL, 0, NULL);
}

/* Timestamp k of recorded iteration t, when timestamps are on. */
static void stamp(const rec *r, uint32_t t, uint32_t k) {
  if (r->stamps)
    vkCmdWriteTimestamp(r->cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, r->stamps,
                        t * STAMPS_PER_ITERATION + k);
}

static void bind(rec *r, VkPipeline p, const void *push, uint32_t size) {
  ws_vk_impl *vk = ws_vk_of(r->dev);
  if (r->bound != p) {
    vkCmdBindPipeline(r->cmd, VK_PIPELINE_BIND_POINT_COMPUTE, p);
    r->bound = p;
  }
  uint32_t words[WS_VK_PUSH_BYTES / 4];
  memset(words, 0, sizeof words);
  memcpy(words, push, size);
  const uint32_t bytes = (size + 3u) & ~3u; /* whole words; none for a kernel without arguments */
  if (bytes)
    vkCmdPushConstants(r->cmd, vk->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, bytes, words);
}

static void indirect(rec *r, VkPipeline p, const void *push, uint32_t size, uint32_t c) {
  bind(r, p, push, size);
  vkCmdDispatchIndirect(r->cmd, r->words, 4u * (WS_VK_DL_CMD + 3u * (VkDeviceSize)c));
}

/* vkCmdFillBuffer of `count` zero words at a device address. */
static ws_status zero(rec *r, uint64_t addr, uint32_t count) {
  ws_vk_buffer *b;
  VkDeviceSize off;
  ws_status st = ws_vk_buffer_find(r->dev, addr, 4u * (VkDeviceSize)count, &b, &off);
  if (st != WS_OK)
    return st;
  vkCmdFillBuffer(r->cmd, b->buffer, off, 4u * (VkDeviceSize)count, 0u);
  loop_barrier(r, BAR_TRANSFER);
  return WS_OK;
}

static ws_status record(ws_device *dev, const ws_loop_desc *d, ws_vk_loop *l, uint32_t T) {
  ws_vk_impl *vk = ws_vk_of(dev);
  const ws_queue_args *q = &d->queue;
  const uint64_t dyn = l->words->addr;
  rec r = {dev, l->cmd, l->words->buffer, VK_NULL_HANDLE, l->barriers_full ? BAR_FULL : 0u,
           l->stamps};
  /* step[j]: the pipeline continuation j's dispatch runs in, the host
   * loop's for the same launch (ws_vk_step_pipeline: specialized for j, or
   * the generic step for every j), so that both loops compile the same
   * pipelines; stage_p[i]: stage kernel i's */
  VkPipeline *step = ws_calloc((size_t)d->K + 1u + d->stage_count, sizeof *step);
  if (!step)
    return ws_dev_fail(dev, WS_ENOMEM, "vulkan: device loop: out of host memory");
  VkPipeline *stage_p = step + d->K + 1u;
  ws_status st = WS_OK;
  /* one_step: step[0] is the generic step (a src past the continuation
   * count), which runs the plan's continuation */
  const uint32_t steps = l->push.one_step ? 1u : d->K + 1u;
  for (uint32_t j = 0; j < steps && st == WS_OK; ++j)
    st = ws_vk_step_pipeline(dev, d->entry, d->block, l->push.one_step ? WS_VK_PLAN_SRC_ANY : j,
                             d->launch.continuation_count, &step[j]);
  /* An indirect dispatch has no base group to carry the last group's pad
   * (kernel.glsl launch geometry), so a count that is not a whole number
   * of groups needs the specialization WS_INVOCATIONS = count; a whole
   * number (the usual pool capacity) does not, and shares the pipeline of
   * the host loop's launches instead of compiling one more. */
  for (uint32_t i = 0; i < d->stage_count && st == WS_OK; ++i)
    st = ws_vk_user_pipeline(dev, d->stages[i].entry, WS_FORM_STEP, d->block,
                             d->stages[i].count % d->block ? d->stages[i].count : 0u, WS_VK_NO_SRC,
                             &stage_p[i]);
  if (st != WS_OK) {
    ws_free(step);
    return st;
  }
  VkCommandBufferInheritanceInfo inh = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_INHERITANCE_INFO};
  /* Simultaneous use only where the buffer can be pending more than once:
   * one submission executes it several times, or a pipelined loop records
   * the next submission while the last one is pending (the cases the spec
   * requires it for); a driver may copy or patch such a buffer at each
   * execution instead of calling it. */
  VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                 .flags = l->repeats != 1u || l->pipelined
                                              ? VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT
                                              : 0u,
                                 .pInheritanceInfo = &inh};
  if ((st = WS_VK_CALL(dev, vkBeginCommandBuffer, l->cmd, &bi)) != WS_OK) {
    ws_free(step);
    return st;
  }
  const bool compaction = (d->flags & WS_DEC_COMPACTION) != 0;
  if (compaction && q->layout == WS_LAYOUT_SOA && q->field_count) {
    /* another scheduler's compaction may have left its own sizes there */
    vkCmdUpdateBuffer(l->cmd, vk->state->buffer, 4u * WS_VK_STATE_SIZES, 4u * q->field_count,
                      q->field_sizes);
    loop_barrier(&r, BAR_TRANSFER);
  }
  /* the prime that loop_run records before this buffer wrote the words */
  loop_barrier(&r, BAR_FULL);
  const loop_push lp = l->push;

  const count_push count = {q->tokens, q->counts, 0, q->queue_count, dyn};
  const count_push recount = {q->tokens, d->recount, 0, q->queue_count, dyn};
  const uint64_t cursors = ws_vk_queue_cursors(dev);
  const prefix_push prefix = {q->counts, q->offsets, q->queue_count, 0, cursors};
  const gather_all_push gather_all = {q->tokens,       q->offsets, q->slots, 0,
                                      q->queue_count, dyn,        cursors};
  const gather_push gather = {q->tokens, q->slots, q->counter, 0, 0, dyn};
  const publish_push publish = {q->tokens, q->slots, q->counts, 0, 0, 0, q->queue_count, dyn};
  const compact_push compact = {q->tokens,  q->ids,          q->frames,     q->field_offsets,
                                q->scratch, vk->state->addr, 0,             0,
                                q->layout,  q->frame_size,   q->field_count, 0,
                                dyn};
  const bool greedy = (d->flags & WS_DEC_GREEDY) != 0;
  /* scan mode without a share gathers nothing: its launches find their
   * frames; with a share a sparse queue's resume gathers (decide.h) */
  const bool scan = WS_DEC_SCAN_ONLY(d->flags);
  const bool publishes = (d->flags & WS_DEC_PUBLISH) != 0;
  /* the iteration's last barrier: the next one may begin with a fill */
  const unsigned last = d->flags & (WS_DEC_MATERIALIZED | WS_DEC_VERIFY) ? BAR_TRANSFER : BAR_COMPUTE;
  for (uint32_t t = 0; t < T && st == WS_OK; ++t) {
    stamp(&r, t, 0);
    if (d->flags & WS_DEC_MATERIALIZED) {
      if ((st = zero(&r, q->counts, d->K + 1u)) != WS_OK)
        break;
      indirect(&r, vk->queue_pipelines[WS_VK_QS_COUNT], &count, sizeof count, CMD_OBS);
      loop_barrier(&r, BAR_COMPUTE);
      bind(&r, vk->queue_pipelines[WS_VK_QS_GATHER_ALL_PREFIX], &prefix, sizeof prefix);
      vkCmdDispatch(l->cmd, 1, 1, 1);
      loop_barrier(&r, BAR_COMPUTE);
      indirect(&r, vk->queue_pipelines[WS_VK_QS_GATHER_ALL], &gather_all, sizeof gather_all,
               CMD_OBS);
      loop_barrier(&r, d->flags & WS_DEC_VERIFY ? BAR_TRANSFER : BAR_COMPUTE);
    }
    if (d->flags & WS_DEC_VERIFY) {
      if ((st = zero(&r, d->recount, d->K + 1u)) != WS_OK)
        break;
      indirect(&r, vk->queue_pipelines[WS_VK_QS_COUNT], &recount, sizeof recount, CMD_OBS);
      loop_barrier(&r, BAR_COMPUTE);
    }
    stamp(&r, t, 1 + STAMP_OBSERVE);
    bind(&r, vk->loop_pipeline, &lp, sizeof lp);
    vkCmdDispatch(l->cmd, 1, 1, 1);
    loop_barrier(&r, BAR_INDIRECT);
    stamp(&r, t, 1 + STAMP_DECIDE);
    /* append storages (issue 18): each one's compaction over the range the
     * decision chose (0 groups: none), before the plan's launches */
    for (uint32_t k = 0; k < d->storage_count && st == WS_OK; ++k) {
      const ws_queue_args *sq = &d->storage[k].q;
      const compact_push sp = {sq->tokens, sq->ids,          sq->frames, 0,
                               sq->scratch, vk->state->addr, 0,          0,
                               WS_LAYOUT_AOS, sq->frame_size, 0,         0,
                               dyn + 4u * (uint64_t)(lp.storage_words + 8u * k)};
      const uint32_t c = 6u + d->K + d->stage_count + 2u * k;
      /* the first compaction's counters are the decide shader's to zero */
      if (k > 0 && (st = zero(&r, vk->state->addr + 4u * WS_VK_STATE_HOLES,
                              WS_VK_COMPACT_WORDS)) != WS_OK)
        break;
      if (l->pairs) {
        indirect(&r, vk->queue_pipelines[WS_VK_QS_COMPACT_PAIRS], &sp, sizeof sp, c);
      } else {
        indirect(&r, vk->queue_pipelines[WS_VK_QS_COMPACT_HOLES], &sp, sizeof sp, c);
        loop_barrier(&r, BAR_COMPUTE);
        indirect(&r, vk->queue_pipelines[WS_VK_QS_COMPACT_MOVE], &sp, sizeof sp, c + 1u);
      }
      /* the next storage's compaction, or the frames', begins with a fill */
      loop_barrier(&r, k + 1u < d->storage_count || compaction ? BAR_TRANSFER : BAR_COMPUTE);
    }
    if (st != WS_OK)
      break;
    if (compaction) {
      if (d->storage_count && (st = zero(&r, vk->state->addr + 4u * WS_VK_STATE_HOLES,
                                         WS_VK_COMPACT_WORDS)) != WS_OK)
        break;
      if (l->pairs) {
        /* one pass: the holes phase is empty, the movers' phase has it */
        stamp(&r, t, 1 + STAMP_HOLES);
        indirect(&r, vk->queue_pipelines[WS_VK_QS_COMPACT_PAIRS], &compact, sizeof compact,
                 CMD_HOLES);
      } else {
        indirect(&r, vk->queue_pipelines[WS_VK_QS_COMPACT_HOLES], &compact, sizeof compact,
                 CMD_HOLES);
        loop_barrier(&r, BAR_COMPUTE);
        stamp(&r, t, 1 + STAMP_HOLES);
        indirect(&r, vk->queue_pipelines[WS_VK_QS_COMPACT_MOVE], &compact, sizeof compact,
                 CMD_MOVE);
      }
      /* The gather shares the compaction's last barrier: no plan has both
       * (decide.h ws_dec_commit: a refill under compaction takes the slots
       * behind the live ones and gathers nothing, a resume compacts
       * nothing), so at most one of the two has groups, and it runs alone. */
    } else {
      stamp(&r, t, 1 + STAMP_HOLES); /* the append storages' compactions, if any */
    }
    /* Scan mode has no gather: its launches find their frames (loop.comp),
     * so the steps follow the decision's barrier, or the movers' */
    if (!scan)
      indirect(&r, vk->queue_pipelines[WS_VK_QS_GATHER], &gather, sizeof gather, CMD_GATHER);
    if (!scan || compaction)
      loop_barrier(&r, BAR_COMPUTE);
    stamp(&r, t, 1 + STAMP_MOVE);
    /* One dispatch per continuation, src a push constant (and the
     * pipeline's specialization, when on), unless WS_VULKAN_LOOP_STEPS=one:
     * one dispatch under the greedy policy running the plan's continuation,
     * read from memory, which made the step 3.5 % slower on lavapipe
     * (docs/decisions.md). */
    for (uint32_t j = 0; j < steps; ++j) {
      ws_launch ln = d->launch;
      ln.src = l->push.one_step ? WS_VK_PLAN_SRC_ANY : j;
      indirect(&r, step[j], &ln, sizeof ln, CMD_STEP + j);
      if (!greedy) /* the all-queues policy runs them in order, as CUDA does */
        loop_barrier(&r, j == d->K && !publishes ? last : BAR_COMPUTE);
    }
    for (uint32_t i = 0; i < d->stage_count; ++i)
      indirect(&r, stage_p[i], d->stages[i].args, d->stages[i].args_size, CMD_STEP + d->K + 1u + i);
    if (greedy)
      loop_barrier(&r, publishes ? BAR_COMPUTE : last);
    stamp(&r, t, 1 + STAMP_STEPS);
    if (publishes) {
      indirect(&r, vk->queue_pipelines[WS_VK_QS_PUBLISH], &publish, sizeof publish, CMD_PUBLISH);
      loop_barrier(&r, last);
    }
    stamp(&r, t, 1 + STAMP_PUBLISH);
  }
  ws_free(step);
  const ws_status end = WS_VK_CALL(dev, vkEndCommandBuffer, l->cmd);
  return st != WS_OK ? st : end;
}

/* NULL when this backend's loop can run the description, else why not. */
static const char *unsupported(ws_device *dev, const ws_loop_desc *d, char *why, size_t size) {
  ws_vk_impl *vk = ws_vk_of(dev);
  const uint32_t max_x = vk->props.limits.maxComputeWorkGroupCount[0];
  if (!d->entry->spirv) {
    snprintf(why, size, "coroutine '%s' has no step SPIR-V", d->entry->name);
    return why;
  }
  if (d->flags & WS_DEC_TAIL) {
    snprintf(why, size, "GLSL modules have no tail");
    return why;
  }
  if (groups_of(d->R, d->block) > max_x) {
    snprintf(why, size, "%u resident frames need %llu workgroups of %u in one indirect dispatch, "
             "the device allows %u",
             d->R, (unsigned long long)groups_of(d->R, d->block), d->block, max_x);
    return why;
  }
  /* the queue shaders' commands: one workgroup per tile (loop.comp) */
  const uint64_t tiles = groups_of(d->R, vk->queue_block * WS_VK_QUEUE_ITEMS);
  if (tiles > max_x) {
    snprintf(why, size, "%u resident frames need %llu workgroups of %u in one indirect dispatch, "
             "the device allows %u",
             d->R, (unsigned long long)tiles, vk->queue_block, max_x);
    return why;
  }
  for (uint32_t i = 0; i < d->stage_count; ++i) {
    const uint64_t g = groups_of(d->stages[i].count, d->block);
    if (g > max_x || g > vk->chunk_groups) {
      snprintf(why, size, "stage kernel '%s' over %u slots needs %llu workgroups of %u in one "
               "indirect dispatch, the device allows %u",
               d->stages[i].entry->name, d->stages[i].count, (unsigned long long)g, d->block,
               max_x < vk->chunk_groups ? max_x : vk->chunk_groups);
      return why;
    }
  }
  return NULL;
}

/* Adds the phase times of the iterations before the halt in the last
 * submission, which the caller has waited for (loop_device.c synchronizes
 * after every loop_run, and so does loop_destroy). */
static ws_status stamps_add(ws_device *dev, ws_vk_loop *l) {
  ws_vk_impl *vk = ws_vk_of(dev);
  if (!l->stamp_pending)
    return WS_OK;
  l->stamp_pending = false;
  uint32_t ran;
  memcpy(&ran, l->stamp_host->map, sizeof ran);
  if (ran > l->iterations) /* the halt word ends every submission by T */
    ran = l->iterations;
  if (!ran)
    return WS_OK;
  const uint32_t n = ran * STAMPS_PER_ITERATION;
  uint64_t *t = ws_calloc(n, sizeof *t);
  if (!t)
    return ws_dev_fail(dev, WS_ENOMEM, "vulkan: device loop: out of host memory");
  ws_status st = WS_VK_CALL(dev, vkGetQueryPoolResults, vk->device, l->stamps, 0, n,
                            (size_t)n * sizeof *t, t, sizeof *t,
                            VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT);
  for (uint32_t i = 0; st == WS_OK && i < ran; ++i)
    for (uint32_t k = 0; k < STAMP_PHASES; ++k) {
      const uint64_t *s = t + (size_t)i * STAMPS_PER_ITERATION + k;
      l->stamp_ns[k] += (double)((s[1] - s[0]) & vk->timer_mask) * vk->timer_ns_per_tick;
    }
  if (st == WS_OK)
    l->stamp_iterations += ran;
  ws_free(t);
  return st;
}

void ws_vk_loop_destroy(ws_device *dev, void *loop) {
  ws_vk_loop *l = loop;
  if (!l)
    return;
  ws_vk_impl *vk = ws_vk_of(dev);
  /* the stream may still hold an execution of the buffer */
  if (vk->recording && !vk->broken)
    (void)ws_vk_op_synchronize(dev);
  if (l->stamps && !vk->broken && stamps_add(dev, l) == WS_OK && l->stamp_iterations) {
    char line[512];
    int at = snprintf(line, sizeof line,
                      "vulkan device loop (%s): timestamps of %llu iterations, us per iteration:",
                      l->stamp_label, (unsigned long long)l->stamp_iterations);
    for (uint32_t k = 0; k < STAMP_PHASES && at > 0 && (size_t)at < sizeof line; ++k)
      at += snprintf(line + at, sizeof line - (size_t)at, " %s %.2f", stamp_names[k],
                     l->stamp_ns[k] * 1e-3 / (double)l->stamp_iterations);
    ws_dev_log(dev, WS_LOG_INFO, "%s", line);
  }
  if (l->stamps)
    vkDestroyQueryPool(vk->device, l->stamps, NULL);
  if (l->stamp_host)
    ws_vk_buffer_destroy(dev, l->stamp_host);
  if (l->pool)
    vkDestroyCommandPool(vk->device, l->pool, NULL); /* frees cmd */
  if (l->words)
    ws_vk_buffer_destroy(dev, l->words);
  ws_free(l->pair_fills);
  ws_free(l);
}

ws_status ws_vk_loop_create(ws_device *dev, const ws_loop_desc *desc, void **out) {
  ws_vk_impl *vk = ws_vk_of(dev);
  char why[256];
  /* WS_LOOP_AUTO runs this loop (docs/decisions.md: on the H200, s4run4,
   * bench_loop fused 25.7 against the host loop's 69.2 us per iteration, the
   * path tracer 228.8 against 216.1 Mpaths/s once its pipelines are compiled;
   * the first render of a cold shader cache compiles the pipelines both loops
   * use, whichever loop it runs in) */
  if (unsupported(dev, desc, why, sizeof why))
    return ws_dev_fail(dev, WS_ECONFIG_LOOP, "vulkan: device loop: %s", why);
  bool full = false, stamps = false;
  bool prefetch = false, one_step = false, pipeline = false;
  ws_status st = env_barriers(dev, &full);
  if (st == WS_OK)
    st = env_steps(dev, &one_step);
  if (st == WS_OK)
    st = env_pipeline(dev, &pipeline);
  if (st == WS_OK)
    st = env_timestamps(dev, &stamps);
  if (st == WS_OK)
    st = env_prefetch(dev, &prefetch);
  if (st != WS_OK)
    return st;
  if (stamps && !vk->timer_pool) {
    ws_dev_log(dev, WS_LOG_WARNING,
               "vulkan: device loop: WS_VULKAN_LOOP_TIMESTAMPS=1, but the queue family writes "
               "no timestamps: none taken");
    stamps = false;
  }
  if (!vk->loop_pipeline && (st = ws_vk_pipeline_create(
                                 dev, ws_vk_shader_loop, ws_vk_shader_loop_size, WS_VK_LOOP_LANES,
                                 0, WS_VK_NO_SRC,
                                 "the device loop's decide shader", &vk->loop_pipeline)) != WS_OK)
    return st;
  ws_vk_loop *l = ws_calloc(1, sizeof *l);
  if (!l)
    return ws_dev_fail(dev, WS_ENOMEM, "vulkan: device loop: out of host memory");
  const uint32_t base = env_iterations();
  l->barriers_full = full;
  l->iterations = desc->interval && desc->interval < base ? desc->interval : base;
  l->repeats = desc->interval ? (desc->interval + l->iterations - 1u) / l->iterations : 0u;
  if (l->repeats > WS_VK_LOOP_REPEATS_MAX)
    l->repeats = WS_VK_LOOP_REPEATS_MAX;
  if (stamps) /* one execution per submission: each query is written once after its reset */
    l->repeats = 1u;
  /* The run after the one that ends a dispatch executes only halted
   * iterations (the ending iteration's halt word stays set: loop_run
   * records no prime after a dispatch's first submission), as backend.h
   * asks; a submission of the recording once bounds them to T. */
  l->pipelined = pipeline && !stamps && !desc->interval;
  if (l->pipelined)
    l->repeats = 1u;
  l->compaction = (desc->flags & WS_DEC_COMPACTION) != 0 || desc->storage_count != 0;
  /* pairs or lists for every compaction of the loop, by the largest range
   * one can have (vk_internal.h ws_vk_compact_pairs) */
  uint64_t widest = desc->flags & WS_DEC_COMPACTION ? desc->queue.capacity : 0u;
  for (uint32_t k = 0; k < desc->storage_count; ++k)
    if (desc->storage[k].q.capacity > widest)
      widest = desc->storage[k].q.capacity;
  l->pairs = l->compaction && ws_vk_compact_pairs(vk->compact_mode, widest);
  if (l->pairs) {
    /* a compaction of capacity C moves at most C / 2 frames (holes below
     * the live count, movers above it) */
    l->pair_fills = ws_calloc(1u + desc->storage_count, sizeof *l->pair_fills);
    if (!l->pair_fills) {
      ws_free(l);
      return ws_dev_fail(dev, WS_ENOMEM, "vulkan: device loop: out of host memory");
    }
    if (desc->flags & WS_DEC_COMPACTION)
      l->pair_fills[l->pair_fill_count++] =
          (struct pair_fill){desc->queue.scratch, desc->queue.capacity / 2u + 1u};
    for (uint32_t k = 0; k < desc->storage_count; ++k)
      l->pair_fills[l->pair_fill_count++] =
          (struct pair_fill){desc->storage[k].q.scratch, desc->storage[k].q.capacity / 2u + 1u};
  }
  /* the words: loop.glsl's, 3 per command, each stage kernel's groups, then
   * each append storage's block */
  const uint32_t ncmd = 6u + desc->K + desc->stage_count + 2u * desc->storage_count;
  const uint32_t stage_word = WS_VK_DL_CMD + 3u * ncmd;
  const uint32_t storage_word = stage_word + desc->stage_count;
  const uint32_t nwords = storage_word + 8u * desc->storage_count;
  l->push = (loop_push){desc->state,      0,
                        desc->queue.slots, 0u,
                        desc->K,          desc->stage_count,
                        desc->block,      vk->queue_block,
                        vk->props.limits.maxComputeWorkGroupCount[0], stage_word,
                        storage_word,     desc->storage_count,
                        vk->queue_groups,
                        desc->storage_count || (desc->flags & WS_DEC_COMPACTION)
                            ? vk->state->addr + 4u * WS_VK_STATE_HOLES
                            : 0u,
                        desc->queue.counts,
                        prefetch ? (desc->state_bytes < WS_VK_LOOP_PREFETCH_MAX
                                        ? desc->state_bytes
                                        : WS_VK_LOOP_PREFETCH_MAX)
                                 : 0u,
                        prefetch ? 4u * WS_COUNTS_WORDS(desc->K) : 0u,
                        l->pairs ? 0u : 1u,
                        one_step && (desc->flags & WS_DEC_GREEDY) ? 1u : 0u};
  uint32_t *init = ws_calloc(nwords, sizeof *init);
  if (!init) {
    ws_vk_loop_destroy(dev, l); /* what the loop holds so far, as every later failure */
    return ws_dev_fail(dev, WS_ENOMEM, "vulkan: device loop: out of host memory");
  }
  for (uint32_t c = 0; c < ncmd; ++c)
    init[WS_VK_DL_CMD + 3u * c + 1u] = init[WS_VK_DL_CMD + 3u * c + 2u] = 1u;
  init[WS_VK_DL_HALT] = 1u;
  for (uint32_t i = 0; i < desc->stage_count; ++i)
    init[stage_word + i] = (uint32_t)groups_of(desc->stages[i].count, desc->block);
  VkCommandPoolCreateInfo pi = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                .queueFamilyIndex = vk->family};
  VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                    .level = VK_COMMAND_BUFFER_LEVEL_SECONDARY,
                                    .commandBufferCount = 1};
  st = ws_vk_buffer_create(dev, 4u * (VkDeviceSize)nwords, false, &l->words);
  if (st == WS_OK) {
    l->push.dyn = l->words->addr;
    st = ws_vk_op_write(dev, l->words->addr, init, 4u * (size_t)nwords);
  }
  if (st == WS_OK)
    st = WS_VK_ALLOC_CALL(dev, vkCreateCommandPool, vk->device, &pi, NULL, &l->pool);
  if (st == WS_OK) {
    ai.commandPool = l->pool;
    st = WS_VK_ALLOC_CALL(dev, vkAllocateCommandBuffers, vk->device, &ai, &l->cmd);
  }
  if (st == WS_OK && stamps) {
    l->push.mode = 2u; /* the decide shader counts the iterations that ran */
    VkQueryPoolCreateInfo qi = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
                                .queryType = VK_QUERY_TYPE_TIMESTAMP,
                                .queryCount = l->iterations * STAMPS_PER_ITERATION};
    st = WS_VK_ALLOC_CALL(dev, vkCreateQueryPool, vk->device, &qi, NULL, &l->stamps);
    if (st == WS_OK)
      st = ws_vk_buffer_create(dev, 4, true, &l->stamp_host);
    snprintf(l->stamp_label, sizeof l->stamp_label, "coroutine '%s', %s accounting",
             desc->entry->name,
             desc->flags & WS_DEC_MATERIALIZED ? "materialized"
             : desc->flags & WS_DEC_PUBLISH    ? "incremental"
                                               : "fused");
  }
  if (st == WS_OK)
    st = record(dev, desc, l, l->iterations);
  ws_free(init);
  if (st != WS_OK) {
    ws_vk_loop_destroy(dev, l);
    return st;
  }
  *out = l;
  return WS_OK;
}

bool ws_vk_loop_pipelined(ws_device *dev, void *loop) {
  (void)dev;
  return ((const ws_vk_loop *)loop)->pipelined;
}

ws_status ws_vk_loop_run(ws_device *dev, void *loop, uint32_t round) {
  ws_vk_loop *l = loop;
  ws_vk_impl *vk = ws_vk_of(dev);
  /* the prime: once per submission, so that a halt stays a halt through
   * the repeated executions below */
  loop_push prime = l->push;
  prime.mode = 1u;
  ws_status st = WS_OK;
  if (l->stamps && l->stamp_pending) {
    /* the previous submission's stamps: it was waited for, unless work is
     * still being recorded behind it */
    if (vk->recording)
      st = ws_vk_op_synchronize(dev);
    if (st == WS_OK)
      st = stamps_add(dev, l);
    if (st != WS_OK)
      return st;
  }
  /* the pair words, once per dispatch: a compaction in pairs leaves every
   * word it used 0 again (compact_pairs.comp), so only what ran between two
   * dispatches (the host loop's compactions in lists) can leave any set */
  for (uint32_t i = 0; round == 0 && i < l->pair_fill_count && st == WS_OK; ++i)
    st = ws_vk_record_fill(dev, l->pair_fills[i].addr, 0, l->pair_fills[i].words);
  /* The prime, at a dispatch's first submission and at every one of an
   * interval (whose last iteration halted a RUNNING state) or with the
   * timestamps (it zeroes WS_DL_RAN). Without either, a later submission
   * finds the words as the last iteration before it left them: the halt
   * word 0 while RUNNING (1 once not, which is what the prime would
   * write), the observation grid set for the next iteration. */
  const bool prime_it = round == 0 || !(l->pipelined || l->repeats == 0u);
  if (st == WS_OK && prime_it)
    st = ws_vk_record_dispatch(dev, vk->loop_pipeline, &prime, sizeof prime, WS_VK_LOOP_LANES,
                             WS_VK_LOOP_LANES, "the device loop's prime");
  if (st != WS_OK || (st = ws_vk_record_begin(dev)) != WS_OK)
    return st;
  if (l->stamps)
    vkCmdResetQueryPool(vk->sub.cmd, l->stamps, 0, l->iterations * STAMPS_PER_ITERATION);
  uint32_t runs = l->repeats;
  if (!runs) /* growing with the dispatch's rounds: 1, 2, 4, ... at most the cap */
    runs = round < 31u && (1u << round) < WS_VK_LOOP_GROWTH_MAX ? 1u << round
                                                                 : WS_VK_LOOP_GROWTH_MAX;
  for (uint32_t k = 0; k < runs; ++k)
    vkCmdExecuteCommands(vk->sub.cmd, 1, &l->cmd);
  if (l->stamps) {
    /* the decide shaders' count of iterations that ran, for stamps_add */
    VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                          .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT,
                          .dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT};
    vkCmdPipelineBarrier(vk->sub.cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                         VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &mb, 0, NULL, 0, NULL);
    VkBufferCopy region = {.srcOffset = 4u * WS_VK_DL_RAN, .dstOffset = 0, .size = 4};
    vkCmdCopyBuffer(vk->sub.cmd, l->words->buffer, l->stamp_host->buffer, 1, &region);
    l->stamp_pending = true;
  }
  /* a secondary buffer leaves the primary's pipeline binding undefined */
  vk->bound = VK_NULL_HANDLE;
  if (l->compaction)
    vk->check_state = true;
  ws_vk_record_end(dev);
  return WS_OK;
}
