/* SPDX-License-Identifier: MIT */
/* The module set that ws_add_kernels generates (CMake), written by hand for
 * the build without CMake (Makefile): the CPU module of collatz.kern.h, the
 * CUDA one with COLLATZ_CUDA, and with COLLATZ_VULKAN the Vulkan one, from
 * the SPIR-V that glslc wrote as comma-separated words (-mfmt=num). Entry
 * names must equal the C ones; a coroutine has a step and a mega shader. */
#include "collatz.h"
#include "wavesched/module.h"

extern const ws_module collatz_module_cpu;
#if COLLATZ_CUDA
extern const ws_module collatz_module_cuda;
#define COLLATZ_MODULE_CUDA &collatz_module_cuda
#else
#define COLLATZ_MODULE_CUDA NULL
#endif

#if COLLATZ_VULKAN
static const uint32_t step[] = {
#include "collatz.step.inc"
};
static const uint32_t mega[] = {
#include "collatz.mega.inc"
};
static const uint32_t store[] = {
#include "collatz_store.inc"
};
static const ws_module_entry vulkan_entries[] = {
    {.name = "collatz",
     .kind = WS_ENTRY_COROUTINE,
     .args_size = sizeof(ws_launch),
     .spirv = step,
     .spirv_size = sizeof step,
     .spirv_mega = mega,
     .spirv_mega_size = sizeof mega},
    {.name = "collatz_store",
     .kind = WS_ENTRY_KERNEL,
     .args_size = sizeof(collatz_args),
     .spirv = store,
     .spirv_size = sizeof store},
};
static const ws_module collatz_module_vulkan = {"collatz", WS_BACKEND_VULKAN, vulkan_entries, 2};
#define COLLATZ_MODULE_VULKAN &collatz_module_vulkan
#else
#define COLLATZ_MODULE_VULKAN NULL
#endif

extern const ws_module_set collatz_modules;
const ws_module_set collatz_modules = {
    {&collatz_module_cpu, COLLATZ_MODULE_CUDA, COLLATZ_MODULE_VULKAN}};
