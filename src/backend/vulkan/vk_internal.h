/* SPDX-License-Identifier: MIT */
/* wavesched — Vulkan backend internals (docs/vulkan.md).
 *
 * One VkDevice, one queue, one command buffer that collects everything the
 * core enqueues between two synchronizations. Every recorded operation is
 * separated from the previous one by a global memory barrier, which is what
 * makes the command buffer the in-order stream backend.h asks for
 * (compute->compute, compute->transfer, transfer->compute, transfer->transfer).
 * `synchronize` ends the command buffer, submits it and waits on one fence:
 * the one host synchronization per scheduler iteration.
 *
 * Device addresses are buffer device addresses (vkGetBufferDeviceAddress),
 * so the bytes the core and the user pass to kernels are the addresses GLSL
 * dereferences through GL_EXT_buffer_reference. Copies need the VkBuffer
 * behind an address: an address map (sorted by address) finds it.
 */
#ifndef WAVESCHED_BACKEND_VULKAN_INTERNAL_H
#define WAVESCHED_BACKEND_VULKAN_INTERNAL_H

#include "../../core/device.h"
#include "../../core/fault.h"

#include <stddef.h>
#include <vulkan/vulkan.h>

/* Push-constant bytes every pipeline layout provides: the 128 bytes Vulkan
 * guarantees, which is WS_MAX_KERNEL_ARGS (launch.h). */
#define WS_VK_PUSH_BYTES 128u
/* Workgroups per vkCmdDispatchBase call (specialization constant 1 of
 * kernel.glsl); clamped to the device's maxComputeWorkGroupCount[0]. */
#define WS_VK_CHUNK_GROUPS 32768u
/* The default cap on a slot-parallel queue dispatch's workgroups
 * (WS_VULKAN_QUEUE_GROUPS): above 2048 tiles (4 Mi slots) workgroups walk
 * tiles and load the next tile's tokens during this one's work. On an H100
 * at 2^24 slots (s13run2) a cap of 2112 took count from 47 to 59 % of copy,
 * gather_all from 34.5 to 37.5, materialize from 36 to 39, the others
 * unchanged; bench_loop's device loop unchanged (docs/decisions.md). */
#define WS_VK_QUEUE_GROUPS_DEFAULT 2048u
/* Bytes of host-visible staging memory for blocking writes (larger writes
 * go in chunks). */
#define WS_VK_STAGING_BYTES ((VkDeviceSize)4 << 20)

/* One VkBuffer with its own memory. Device buffers have a device address
 * and are in the address map; host buffers (readbacks, staging) are
 * persistently mapped host-visible, host-coherent memory. */
typedef struct ws_vk_buffer {
  VkBuffer buffer;
  VkDeviceMemory memory;
  uint64_t addr;                 /* buffer device address; 0 for host buffers */
  VkDeviceSize size;             /* bytes usable: the request rounded up to 4 */
  void *map;                     /* host buffers: the mapping */
  struct ws_vk_buffer *prev, *next; /* every live buffer, for destroy */
} ws_vk_buffer;

/* Queue-operation shaders (src/backend/vulkan/shaders), one pipeline each. */
typedef enum ws_vk_queue_shader {
  WS_VK_QS_COUNT = 0,
  WS_VK_QS_GATHER,
  WS_VK_QS_GATHER_ALL_PREFIX,
  WS_VK_QS_GATHER_ALL,
  WS_VK_QS_PUBLISH,
  WS_VK_QS_COMPACT_HOLES,
  WS_VK_QS_COMPACT_MOVE,
  WS_VK_QS_COMPACT_PAIRS,
  WS_VK_QS_N
} ws_vk_queue_shader;

/* kernel.glsl's WS_SPEC_SRC: its specialization constant id, and the value
 * (its default) of a pipeline not specialized for one continuation. */
#define WS_VK_SPEC_SRC_ID 2046u
#define WS_VK_NO_SRC 0xffffffffu

/* A user pipeline, created at the first launch of (entry, form, block,
 * invocations, src). */
typedef struct ws_vk_pipeline {
  const ws_module_entry *entry;
  ws_launch_form form;
  uint32_t block;
  uint32_t invocations; /* kernel.glsl WS_INVOCATIONS: 0, or an indirect launch's count */
  uint32_t src;         /* kernel.glsl WS_SPEC_SRC: a coroutine step's continuation, or
                           WS_VK_NO_SRC (every other pipeline, and every step when
                           vk->specialize is off) */
  VkPipeline pipeline;
} ws_vk_pipeline;

/* Optional device features, enabled when the device has them; a shader that
 * needs one the device lacks is refused before pipeline creation. */
typedef struct ws_vk_features {
  bool int16, int8, float64, float16, storage16, storage8, int64_atomics, memory_model;
} ws_vk_features;

/* Slots per invocation of the slot-parallel queue shaders: queue.glsl's
 * WS_QUEUE_ITEMS, which must be the same number (a dispatch of fewer than
 * ceil(n / WS_QUEUE_ITEMS) invocations that does not walk tiles would skip
 * slots). */
#define WS_VK_QUEUE_ITEMS 8u

/* Words of the backend's own device buffer `state`. */
enum {
  WS_VK_STATE_HOLES = 0,  /* compaction: free slots found below the live count */
  WS_VK_STATE_MOVERS = 1, /* compaction: live frames found above it */
  WS_VK_STATE_DONE = 2,   /* compaction in pairs: tiles finished */
  WS_VK_STATE_ERROR = 3,  /* sticky error bits of the queue shaders */
  WS_VK_STATE_SIZES = 8,  /* compaction: SoA field sizes [WS_MAX_FRAME_FIELDS] */
  /* gather_all's padded cursors (WS_VULKAN_QUEUE_CURSORS=padded): token t's
   * at word WS_VK_STATE_CURSORS + t * WS_VK_CURSOR_STRIDE, t < 256
   * (shaders/queue.glsl WS_QUEUE_CURSOR_STRIDE, WS_QUEUE_SHARED_TOKENS);
   * 128-byte aligned */
  WS_VK_STATE_CURSORS = (WS_VK_STATE_SIZES + WS_MAX_FRAME_FIELDS + 31) / 32 * 32,
  WS_VK_CURSOR_STRIDE = 32,
  WS_VK_STATE_WORDS = WS_VK_STATE_CURSORS + 256 * WS_VK_CURSOR_STRIDE
};
/* WS_VK_STATE_ERROR bits */
#define WS_VK_STATE_ERR_COMPACT 1u /* more live frames above n than holes below */

/* One command buffer of the stream with its own pool (reset as a whole
 * after each submission) and fence, and the word of state_host its copy of
 * the queue shaders' error word lands in (0 or 1); `check` and `gen` are
 * set when it is submitted. */
typedef struct ws_vk_submission {
  VkCommandPool pool;
  VkCommandBuffer cmd;
  VkFence fence;
  uint32_t err_word;
  bool check;   /* it copies WS_VK_STATE_ERROR, to read once it is waited for */
  uint32_t gen; /* err_reports when it was submitted */
} ws_vk_submission;

typedef struct ws_vk_impl {
  VkInstance instance;
  VkPhysicalDevice phys;
  VkDevice device;
  VkQueue queue;
  uint32_t family;
  bool external; /* instance, device and queue are the application's (embedding):
                    never destroyed here */
  VkPhysicalDeviceProperties props;
  VkPhysicalDeviceMemoryProperties memory;
  ws_vk_features features;
  bool memory_budget;     /* VK_EXT_memory_budget: heap budgets can be queried */
  VkDeviceSize max_alloc; /* maxMemoryAllocationSize (Vulkan 1.1) */

  /* the stream: the submission being recorded, and the one
   * ws_vk_op_flush left pending, which flush swaps */
  ws_vk_submission sub;
  ws_vk_submission sub2;
  bool pending2; /* sub2 is submitted and not waited for */
  uint32_t err_reports; /* errors of that word reported so far (vk_stream.c wait_submission) */
  bool recording;       /* cmd is begun and holds work not yet submitted */
  bool need_barrier;    /* an operation was recorded since the last barrier */
  bool broken;          /* a submission failed or timed out: nothing runs any more */
  char broken_msg[512]; /* the failure that broke it */
  bool check_state;     /* a compaction ran: read WS_VK_STATE_ERROR at the next sync */
  bool clear_state;     /* WS_VK_STATE_ERROR was reported: zero it before new work */
  VkPipeline bound;     /* pipeline bound in cmd */
  uint64_t timeout_ns;
  /* WS_VULKAN_WAIT=spin: a synchronization polls the fence instead of
   * sleeping in vkWaitForFences (vk_stream.c wait_fence) */
  bool wait_spin;

  /* device timer (statistics): two timestamp queries, start and end.
   * timer_pool is VK_NULL_HANDLE when the queue family cannot write
   * timestamps; the timer ops then report no device time. */
  VkQueryPool timer_pool;
  uint64_t timer_mask;     /* the family's timestampValidBits as a mask */
  double timer_ns_per_tick; /* VkPhysicalDeviceLimits.timestampPeriod */
  unsigned timer_marks;    /* bit 0: start recorded (after its reset), bit 1: end */

  /* pipelines */
  VkPipelineLayout layout;
  VkPipeline queue_pipelines[WS_VK_QS_N];
  VkPipeline loop_pipeline; /* shaders/loop.comp, made by the first device loop */
  uint32_t queue_block; /* workgroup size of the queue shaders */
  /* WS_VULKAN_QUEUE_GROUPS: the most workgroups of a slot-parallel queue
   * dispatch, each then walking several tiles (shaders/queue.glsl); 0 =
   * one per tile */
  uint32_t queue_groups;
  bool queue_cursors_padded; /* WS_VULKAN_QUEUE_CURSORS=padded (gather_all.comp) */
  int compact_mode;          /* WS_VULKAN_COMPACT: ws_vk_compact_mode */
  uint32_t chunk_groups;
  ws_vk_pipeline *pipelines;
  uint32_t pipeline_count, pipeline_cap;
  /* Coroutine steps get one pipeline per continuation (WS_SPEC_SRC), so that
   * the driver compiles each continuation alone: on unless
   * WS_VULKAN_SPECIALIZE=0 (docs/decisions.md, lavapipe included). */
  bool specialize;

  /* memory */
  ws_vk_buffer *live;     /* list of every buffer */
  ws_vk_buffer **by_addr; /* device buffers sorted by address */
  uint32_t addr_count, addr_cap;
  ws_vk_buffer *staging;    /* host: blocking writes */
  ws_vk_buffer *state;      /* device: WS_VK_STATE_* words */
  ws_vk_buffer *state_host; /* host: copy of WS_VK_STATE_ERROR */
} ws_vk_impl;

static inline ws_vk_impl *ws_vk_of(ws_device *dev) {
  return (ws_vk_impl *)dev->impl;
}

/* Words of a device loop's own buffer (shaders/loop.glsl WS_DL_*): what the
 * decide shader writes for its iteration's launches. */
enum {
  WS_VK_DL_HALT = 0,
  WS_VK_DL_OBS_SCAN = 1,
  WS_VK_DL_GATHER_TOKEN = 2,
  WS_VK_DL_GATHER_SCAN = 3,
  WS_VK_DL_COMPACT_N = 4,
  WS_VK_DL_COMPACT_SCAN = 5,
  WS_VK_DL_PUB_N = 6,
  WS_VK_DL_PUB_SRC = 7,
  WS_VK_DL_PUB_SLOT_BASE = 8,
  WS_VK_DL_PUB_SLOTS = 10, /* uint64_t */
  WS_VK_DL_RAN = 12,       /* iterations of this submission that decided (timestamps) */
  WS_VK_DL_CMD = 16        /* VkDispatchIndirectCommand[], see vk_loop.c */
};

/* ---- push constants of the queue shaders (the .comp files in shaders/ declare the
 * same offsets; the device loop sets `dyn` to its words, loop.glsl) ---- */
#define WS_VK_PUSH_CHECK_(type, field, offset)                                                     \
  _Static_assert(offsetof(type, field) == (offset), #type "." #field " is at " #offset " in GLSL")

/* shaders/count.comp */
typedef struct count_push {
  uint64_t tokens;
  uint64_t counts;
  uint32_t scan;
  uint32_t queue_count;
  uint64_t dyn; /* device loop: the words of shaders/loop.glsl, 0 = the fields above */
} count_push;
WS_VK_PUSH_CHECK_(count_push, counts, 8);
WS_VK_PUSH_CHECK_(count_push, scan, 16);
WS_VK_PUSH_CHECK_(count_push, queue_count, 20);
WS_VK_PUSH_CHECK_(count_push, dyn, 24);

/* shaders/gather.comp */
typedef struct gather_push {
  uint64_t tokens;
  uint64_t slots;
  uint64_t counter;
  uint32_t scan;
  uint32_t token;
  uint64_t dyn;
} gather_push;
WS_VK_PUSH_CHECK_(gather_push, slots, 8);
WS_VK_PUSH_CHECK_(gather_push, counter, 16);
WS_VK_PUSH_CHECK_(gather_push, scan, 24);
WS_VK_PUSH_CHECK_(gather_push, token, 28);
WS_VK_PUSH_CHECK_(gather_push, dyn, 32);

/* shaders/gather_all_prefix.comp */
typedef struct prefix_push {
  uint64_t counts;
  uint64_t offsets;
  uint32_t queue_count;
  uint32_t reserved;
  uint64_t cursors; /* gather_all's padded cursors to zero, or 0 */
} prefix_push;
WS_VK_PUSH_CHECK_(prefix_push, offsets, 8);
WS_VK_PUSH_CHECK_(prefix_push, queue_count, 16);
WS_VK_PUSH_CHECK_(prefix_push, cursors, 24);

/* shaders/gather_all.comp */
typedef struct gather_all_push {
  uint64_t tokens;
  uint64_t offsets;
  uint64_t slots;
  uint32_t scan;
  uint32_t queue_count;
  uint64_t dyn;
  uint64_t cursors; /* WS_VK_STATE_CURSORS' address (padded cursors), or 0 */
} gather_all_push;
WS_VK_PUSH_CHECK_(gather_all_push, offsets, 8);
WS_VK_PUSH_CHECK_(gather_all_push, slots, 16);
WS_VK_PUSH_CHECK_(gather_all_push, scan, 24);
WS_VK_PUSH_CHECK_(gather_all_push, queue_count, 28);
WS_VK_PUSH_CHECK_(gather_all_push, dyn, 32);
WS_VK_PUSH_CHECK_(gather_all_push, cursors, 40);

/* shaders/publish.comp */
typedef struct publish_push {
  uint64_t tokens;
  uint64_t slots;
  uint64_t counts;
  uint32_t n;
  uint32_t src;
  uint32_t slot_base;
  uint32_t queue_count;
  uint64_t dyn;
} publish_push;
WS_VK_PUSH_CHECK_(publish_push, slots, 8);
WS_VK_PUSH_CHECK_(publish_push, counts, 16);
WS_VK_PUSH_CHECK_(publish_push, n, 24);
WS_VK_PUSH_CHECK_(publish_push, src, 28);
WS_VK_PUSH_CHECK_(publish_push, slot_base, 32);
WS_VK_PUSH_CHECK_(publish_push, queue_count, 36);
WS_VK_PUSH_CHECK_(publish_push, dyn, 40);

/* shaders/compact.glsl (compact_pairs.comp; compact_holes.comp and
 * compact_move.comp) */
typedef struct compact_push {
  uint64_t tokens;
  uint64_t ids;
  uint64_t frames;
  uint64_t field_offsets;
  uint64_t scratch;
  uint64_t state; /* ws_vk_impl.state: WS_VK_STATE_* words */
  uint32_t n;
  uint32_t scan;
  uint32_t layout;
  uint32_t frame_size;
  uint32_t field_count;
  uint32_t reserved;
  uint64_t dyn;
} compact_push;
WS_VK_PUSH_CHECK_(compact_push, ids, 8);
WS_VK_PUSH_CHECK_(compact_push, frames, 16);
WS_VK_PUSH_CHECK_(compact_push, field_offsets, 24);
WS_VK_PUSH_CHECK_(compact_push, scratch, 32);
WS_VK_PUSH_CHECK_(compact_push, state, 40);
WS_VK_PUSH_CHECK_(compact_push, n, 48);
WS_VK_PUSH_CHECK_(compact_push, scan, 52);
WS_VK_PUSH_CHECK_(compact_push, layout, 56);
WS_VK_PUSH_CHECK_(compact_push, frame_size, 60);
WS_VK_PUSH_CHECK_(compact_push, field_count, 64);
WS_VK_PUSH_CHECK_(compact_push, dyn, 72);
_Static_assert(WS_VK_STATE_SIZES == 8, "compact.glsl reads the field sizes at state + 32 bytes");
_Static_assert(WS_VK_STATE_ERR_COMPACT == 1u, "the compaction shaders set error bit 1");
_Static_assert(WS_VK_STATE_HOLES == 0 && WS_VK_STATE_MOVERS == 1 && WS_VK_STATE_DONE == 2 &&
                   WS_VK_STATE_ERROR == 3,
               "compact.glsl's STATE_* words; a compaction zeroes the first WS_VK_COMPACT_WORDS");
/* How a compaction runs (WS_VULKAN_COMPACT): in one pass of pairs
 * (compact_pairs.comp), in two passes of lists (compact_holes.comp, a
 * barrier, compact_move.comp), or pairs up to WS_VK_COMPACT_PAIRS_MAX
 * slots and lists above (auto, the default). On the H100 (s12run2) the
 * pairs saved the device loop a barrier (bench_loop fused 17.2 / 18.0
 * against 18.6 / 18.4 us) but compacted 2^24 slots in 481-487 against
 * 302-306 us: about 11 ps per slot more against about 2 us less per
 * compaction, even near 2^17.5 slots. */
enum ws_vk_compact_mode { WS_VK_COMPACT_AUTO = 0, WS_VK_COMPACT_PAIRS, WS_VK_COMPACT_LISTS };
#define WS_VK_COMPACT_PAIRS_MAX (1u << 17)
/* Whether a compaction over at most `slots` slots runs in pairs. */
static inline bool ws_vk_compact_pairs(int mode, uint64_t slots) {
  return mode == WS_VK_COMPACT_PAIRS ||
         (mode == WS_VK_COMPACT_AUTO && slots <= WS_VK_COMPACT_PAIRS_MAX);
}

/* The words a compaction starts from zero: the two tickets and the tiles
 * finished (not the sticky error word after them). */
#define WS_VK_COMPACT_WORDS 3u

/* vk_result.c: errors. ws_vk_check returns WS_OK for VK_SUCCESS, otherwise
 * records "vulkan: <call> failed: <VkResult name> (<value>)" on the device
 * and maps the result to a status (out of host/device memory, device lost
 * -> WS_EBACKEND, ...). WS_VK_CALL names the called function itself. */
const char *ws_vk_result_name(VkResult r);
ws_status ws_vk_status_of(VkResult r);
ws_status ws_vk_check(ws_device *dev, VkResult r, const char *call);
#define WS_VK_CALL(dev, fn, ...) ws_vk_check((dev), fn(__VA_ARGS__), #fn)
/* WS_VK_CALL for a call that allocates: under fault injection (src/core/fault.h)
 * it may fail as the driver would, with VK_ERROR_OUT_OF_DEVICE_MEMORY. */
#define WS_VK_ALLOC_CALL(dev, fn, ...)                                                                \
  ws_vk_check((dev), ws_fault_backend_alloc((dev), #fn) ? VK_ERROR_OUT_OF_DEVICE_MEMORY : fn(__VA_ARGS__), \
           #fn)

/* vk_memory.c */
ws_status ws_vk_buffer_create(ws_device *dev, VkDeviceSize size, bool host, ws_vk_buffer **out);
void ws_vk_buffer_destroy(ws_device *dev, ws_vk_buffer *b);
/* The device buffer holding [addr, addr + size), and the offset of addr. */
ws_status ws_vk_buffer_find(ws_device *dev, uint64_t addr, VkDeviceSize size, ws_vk_buffer **out,
                         VkDeviceSize *offset);
ws_status ws_vk_op_buffer_alloc(ws_device *dev, size_t size, uint64_t *addr, void **handle);
void ws_vk_op_buffer_free(ws_device *dev, void *handle);
ws_status ws_vk_op_host_alloc(ws_device *dev, size_t size, void **ptr, void **handle);
void ws_vk_op_host_free(ws_device *dev, void *handle);
/* The largest device-local heap's budget minus its usage (VK_EXT_memory_budget),
 * else its size; the largest single allocation. */
ws_status ws_vk_op_memory_available(ws_device *dev, uint64_t *available, uint64_t *largest);

/* vk_stream.c: recording. ws_vk_record_begin opens the command buffer if
 * needed and puts the barrier that orders the next operation after the
 * previous one; ws_vk_record_end marks that an operation was recorded. */
ws_status ws_vk_record_begin(ws_device *dev);
void ws_vk_record_end(ws_device *dev);
/* Records a dispatch of n invocations in groups of `block` (kernel.glsl's
 * launch geometry) with `push_size` bytes of push constants. */
ws_status ws_vk_record_dispatch(ws_device *dev, VkPipeline pipeline, const void *push,
                             uint32_t push_size, uint32_t n, uint32_t block, const char *what);
ws_status ws_vk_record_fill(ws_device *dev, uint64_t dst, uint32_t value, size_t count);
ws_status ws_vk_op_write(ws_device *dev, uint64_t dst, const void *src, size_t size);
ws_status ws_vk_op_enqueue_read(ws_device *dev, void *host_handle, size_t host_offset, uint64_t src,
                             size_t size);
ws_status ws_vk_op_fill_u32(ws_device *dev, uint64_t dst, uint32_t value, size_t count);
ws_status ws_vk_op_synchronize(ws_device *dev);
ws_status ws_vk_op_flush(ws_device *dev);
/* Device timer (backend.h timer_mark/timer_elapsed) over vk->timer_pool;
 * ws_vk_timer_init creates the pool at device open when the queue family
 * supports timestamps. */
ws_status ws_vk_timer_init(ws_device *dev);
ws_status ws_vk_op_timer_mark(ws_device *dev, bool end);
ws_status ws_vk_op_timer_elapsed(ws_device *dev, double *ms);

/* vk_pipeline.c */
/* invocations: kernel.glsl's WS_INVOCATIONS (0 but for indirect launches);
 * src: kernel.glsl's WS_SPEC_SRC (WS_VK_NO_SRC: not specialized) */
ws_status ws_vk_pipeline_create(ws_device *dev, const uint32_t *code, size_t size, uint32_t block,
                                uint32_t invocations, uint32_t src, const char *what,
                                VkPipeline *out);
ws_status ws_vk_user_pipeline(ws_device *dev, const ws_module_entry *entry, ws_launch_form form,
                              uint32_t block, uint32_t invocations, uint32_t src, VkPipeline *out);
/* The pipeline a coroutine's step for continuation src (0 = entry) runs in:
 * the one specialized for src when vk->specialize is on, else the generic
 * step. src above the launch's continuation count (an invalid launch, which
 * the step reports) takes the generic step. */
ws_status ws_vk_step_pipeline(ws_device *dev, const ws_module_entry *entry, uint32_t block,
                              uint32_t src, uint32_t continuation_count, VkPipeline *out);
ws_status ws_vk_pipelines_init(ws_device *dev);
void ws_vk_pipelines_destroy(ws_device *dev);
ws_status ws_vk_op_launch(ws_device *dev, const ws_module_entry *entry, ws_launch_form form, uint32_t n,
                       const void *args, size_t args_size, uint32_t block);

/* vk_loop.c: the device loop (backend.h loop_create / loop_run / loop_destroy) */
ws_status ws_vk_loop_create(ws_device *dev, const ws_loop_desc *desc, void **loop);
ws_status ws_vk_loop_run(ws_device *dev, void *loop, uint32_t round);
bool ws_vk_loop_pipelined(ws_device *dev, void *loop);
void ws_vk_loop_destroy(ws_device *dev, void *loop);

/* A knob in the environment with the n >= 2 values `values`: *out = the
 * index of the variable's value, `unset` when it is unset or empty; any
 * other value fails with WS_EINVAL and "vulkan: <where>NAME='value' is
 * neither A nor B" (n = 2) or "... is none of A, B, C, ..." (n > 2). */
ws_status ws_vk_env_choice(ws_device *dev, const char *where, const char *name,
                           const char *const *values, unsigned n, unsigned unset, unsigned *out);
/* ws_vk_env_choice over {off, on}: *out = false for `off`, true for `on`. */
ws_status ws_vk_env_switch(ws_device *dev, const char *where, const char *name, const char *off,
                           const char *on, bool unset, bool *out);

/* vk_queue.c */
ws_status ws_vk_op_queue_count(ws_device *dev, const ws_queue_args *q);
ws_status ws_vk_op_queue_gather(ws_device *dev, const ws_queue_args *q);
ws_status ws_vk_op_queue_gather_all(ws_device *dev, const ws_queue_args *q);
uint64_t ws_vk_queue_cursors(ws_device *dev);
ws_status ws_vk_op_queue_publish(ws_device *dev, const ws_queue_args *q);
ws_status ws_vk_op_queue_compact(ws_device *dev, const ws_queue_args *q);

#endif
