/** @file
 * wavesched — kernel modules.
 *
 * A module is the set of kernels one source file defines, compiled for one
 * backend. The same kernel source (see kernel.h) yields a module per backend:
 * `<name>_module_cpu` from a C translation unit, `<name>_module_cuda` from a
 * CUDA one; Vulkan modules are built from GLSL with the same entry names.
 * A ws_module_set gathers the modules that were built, one slot per backend,
 * and the host picks the one that matches its device (ws_module_set_find).
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
  WS_BACKEND_CPU = 0,    /**< OpenMP on the host; always built (the reference) */
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

#ifdef __cplusplus
}
#endif
#endif
