/* SPDX-License-Identifier: MIT */
/** @file
 * wavesched — kernel modules.
 *
 * A module is the set of kernels one source file defines, compiled for one
 * backend. The same kernel source (see kernel.h) yields a module per backend:
 * `<name>_module_cpu` from a C translation unit, `<name>_module_cuda` from a
 * CUDA one; Vulkan modules are built from GLSL with the same entry names.
 * A ws_module_set gathers the modules that were built, one slot per backend,
 * and ws_kernel_find / ws_scheduler_create pick the one that matches the
 * device's backend.
 */
#ifndef WAVESCHED_MODULE_H
#define WAVESCHED_MODULE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** A backend: where a device runs its kernels. */
typedef enum ws_backend_kind {
  WS_BACKEND_CPU = 0,    /**< the host's cores (the device's own threads); always built (the reference) */
  WS_BACKEND_CUDA = 1,   /**< an NVIDIA GPU through the CUDA runtime */
  WS_BACKEND_VULKAN = 2, /**< any Vulkan 1.2 device (compute queue) */
  WS_BACKEND_COUNT = 3   /**< the number of backends (not a backend) */
} ws_backend_kind;

/** What a module entry is. */
typedef enum ws_entry_kind {
  WS_ENTRY_KERNEL = 1,   /**< plain 1-D kernel over n indices, args by value */
  WS_ENTRY_COROUTINE = 2 /**< coroutine: step kernel + megakernel, args = ws_launch */
} ws_entry_kind;

/** Host launcher of a C or CUDA kernel: runs body(i, args) for i < n, in
 * stream order. `block` is the thread-block size (ignored on the CPU).
 * Returns 0 or a backend error number (cudaError_t on CUDA). */
typedef int (*ws_launch_fn)(uint32_t n, const void *args, uint32_t block, void *stream);
/** Device-loop launcher of a coroutine step: continuation `src` (0 = entry)
 * over the frames the loop's plan at ((ws_launch *)args)->plan names when the
 * kernel runs, with a fixed grid (GPUs stride over the frames). */
typedef int (*ws_dev_launch_fn)(uint32_t src, uint32_t grid, const void *args, uint32_t block,
                                void *stream);
/** Launcher of a coroutine's persistent device-loop kernel (CUDA): one
 * cooperative launch that decides and resumes iteration after iteration
 * (include/wavesched/detail/decide.h ws_dec_persist, what `persist` points
 * to; the launcher writes into it the grid and frame limit it launches
 * with), `args` being the device loop's ws_launch. */
typedef int (*ws_persist_launch_fn)(const void *args, void *persist, uint32_t block,
                                    void *stream);

/** One field of a frame, as the host sees it (WS_FRAME_DESC). */
typedef struct ws_frame_field {
  const char *name; /**< the field's name */
  uint32_t size;    /**< sizeof its type */
  uint32_t align;   /**< alignof its type */
} ws_frame_field;

/** A frame's layout for the host: the scheduler allocates and moves frames with it. */
typedef struct ws_frame_desc {
  uint32_t size;                /**< sizeof(frame struct) = AoS record size */
  uint32_t align;               /**< alignof(frame struct) */
  uint32_t field_count;         /**< number of fields (at most WS_MAX_FRAME_FIELDS) */
  const ws_frame_field *fields; /**< declaration order, as WS_FRAME lists them */
} ws_frame_desc;

struct ws_coroutine_desc;

/** One kernel or coroutine of a module, for one backend (WS_MODULE_BEGIN
 * and the GLSL build generate these tables). */
typedef struct ws_module_entry {
  const char *name;           /**< the name ws_kernel_find looks up */
  ws_entry_kind kind;         /**< kernel or coroutine */
  uint32_t args_size;         /**< by-value argument bytes (kernels) */
  ws_launch_fn launch;        /**< kernel, or coroutine step (CPU/CUDA) */
  ws_launch_fn launch_mega;   /**< coroutine megakernel (CPU/CUDA) */
  const uint32_t *spirv;      /**< Vulkan: kernel or step shader */
  size_t spirv_size;          /**< bytes */
  const uint32_t *spirv_mega; /**< Vulkan: the coroutine's megakernel shader */
  size_t spirv_mega_size;     /**< bytes */
  /* Coroutines: what the kernels were compiled for, so that a description
   * that disagrees is rejected at creation instead of corrupting memory:
   * sizeof the user's argument struct, sizeof the frame struct, its field
   * count and the sum of its field sizes. 0 = not recorded (Vulkan modules:
   * the scheduler then checks against the CPU module, which every build has). */
  uint32_t user_args_size;     /**< coroutines: sizeof the user's argument struct */
  uint32_t frame_size;         /**< coroutines: sizeof the frame struct */
  uint32_t frame_fields;       /**< coroutines: the frame's field count */
  uint32_t frame_field_bytes;  /**< coroutines: the sum of the frame's field sizes */
  ws_dev_launch_fn launch_dev; /**< coroutines (CPU/CUDA): the device-loop launcher */
  /** Coroutines (CPU/CUDA): the tail (ws_scheduler_config.tail_frames) — every
   * suspended frame in slots below the launch's scan bound, run from its
   * continuation to its end; NULL where the module has none (Vulkan). */
  ws_launch_fn launch_tail;
  /** Coroutines (CPU/CUDA): writes the frame, argument size and continuations
   * the kernels were compiled with (WS_COROUTINE) into *out, leaving its name
   * and modules alone; ws_scheduler_create takes them from here when the
   * host's description leaves them out. NULL where not recorded (Vulkan). */
  void (*describe)(struct ws_coroutine_desc *out);
  /** Coroutines (CUDA): the persistent device-loop kernel's launcher; NULL
   * where there is none (the device loop then launches every iteration). */
  ws_persist_launch_fn launch_persist;
} ws_module_entry;

/** The kernels one source file defines, compiled for one backend
 * (`<name>_module_cpu`, `_cuda`, `_vulkan`). */
typedef struct ws_module {
  const char *name;               /**< the module's name (WS_MODULE_BEGIN's) */
  ws_backend_kind backend;        /**< the backend it was compiled for */
  const ws_module_entry *entries; /**< its kernels and coroutines */
  uint32_t entry_count;           /**< number of entries */
} ws_module;

/** The modules of one kernel source, a slot per backend (NULL where it was
 * not built); ws_add_kernels generates `const ws_module_set <name>_modules`. */
typedef struct ws_module_set {
  const ws_module *by_backend[WS_BACKEND_COUNT]; /**< indexed by ws_backend_kind */
} ws_module_set;

/** A coroutine, as ws_scheduler_create needs it. `name` and `modules` are
 * required. The rest may be left zero (`{"name", &modules}`): the scheduler
 * then takes the frame, the argument size and the continuations from the
 * kernels as WS_COROUTINE compiled them (the device backend's module entry,
 * or for Vulkan the CPU one, which every build has), so the host cannot
 * disagree with them. Given explicitly (WS_FRAME_DESC,
 * WS_CONTINUATION_NAMES), they must match what the kernels recorded. */
typedef struct ws_coroutine_desc {
  const char *name;                      /**< module entry name (WS_MODULE_COROUTINE) */
  const ws_module_set *modules;          /**< where its kernels are */
  const ws_frame_desc *frame;            /**< its frame (WS_FRAME_DESC); NULL: the kernels' */
  uint32_t args_size;                    /**< bytes of the user argument struct */
  uint32_t continuation_count;           /**< K */
  const char *const *continuation_names; /**< [K]: continuation j is names[j-1] */
} ws_coroutine_desc;

#ifdef __cplusplus
}
#endif
#endif
