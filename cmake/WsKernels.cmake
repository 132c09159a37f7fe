# SPDX-License-Identifier: MIT
# ws_add_kernels(<target> NAME <module> SOURCE <file.kern.h> [GLSL <dir>]
#                [BACKENDS <backend>...])
#
# One kernel source, every backend of the wavesched library in use: generates
# a C translation unit that includes SOURCE, a CUDA one when the library has
# the CUDA backend, the Vulkan module from GLSL <dir> when it has the Vulkan
# backend, and <module>_modules.c, which defines
# `const ws_module_set <module>_modules` with a slot per backend. The source
# must end with WS_MODULE_BEGIN(<module>) ... WS_MODULE_END(<module>); every
# <dir>/*.comp is compiled by glslc (docs/vulkan.md). <target> must link
# wavesched::wavesched (the kernels need its headers).
#
# The backends come from the library, never from what happens to be
# installed here: the wavesched::wavesched target's WS_BACKENDS property
# (set by the wavesched build, exported with the package). So
#   * CUDA: a library with CUDA needs the calling project to enable CUDA
#     (project(... LANGUAGES C CUDA) or enable_language(CUDA)); configuring
#     fails with a message saying so otherwise. With a shared library the
#     target links the shared CUDA runtime (CUDA_RUNTIME_LIBRARY Shared).
#   * Vulkan: a library with Vulkan compiles GLSL <dir>; without GLSL the
#     module has no Vulkan version (ws_kernel_find: WS_ENOKERNEL on a Vulkan
#     device), which a project outside wavesched is warned about.
#   * BACKENDS lists backends the project requires: one the library lacks
#     (or vulkan without GLSL) fails at configure time, naming it.
# Each call reports the backends it built for (a STATUS line).
include_guard(GLOBAL)
include(${CMAKE_CURRENT_LIST_DIR}/WsGlsl.cmake)

function(ws_add_kernels target)
  cmake_parse_arguments(K "" "NAME;SOURCE;GLSL" "BACKENDS" ${ARGN})
  set(usage "ws_add_kernels(<target> NAME <module> SOURCE <file.kern.h> [GLSL <dir>] "
            "[BACKENDS cpu|cuda|vulkan ...])")
  if(K_UNPARSED_ARGUMENTS OR NOT K_NAME OR NOT K_SOURCE)
    message(FATAL_ERROR "ws_add_kernels(${target} ${ARGN}): expected ${usage}")
  endif()
  if(NOT TARGET ${target})
    message(FATAL_ERROR "ws_add_kernels(${K_NAME}): '${target}' is not a target")
  endif()
  if(NOT TARGET wavesched::wavesched)
    message(FATAL_ERROR "ws_add_kernels(${K_NAME}): no wavesched::wavesched target: call "
                        "find_package(wavesched CONFIG REQUIRED) (or add_subdirectory of "
                        "wavesched) before ws_add_kernels")
  endif()
  get_target_property(have wavesched::wavesched WS_BACKENDS)
  if(NOT have)
    set(have cpu)
  endif()
  string(REPLACE ";" " " have_text "${have}")
  set(lib "the wavesched library")
  if(wavesched_DIR)
    set(lib "the wavesched package at ${wavesched_DIR}")
  endif()
  foreach(b IN LISTS K_BACKENDS)
    if(NOT b MATCHES "^(cpu|cuda|vulkan)$")
      message(FATAL_ERROR "ws_add_kernels(${K_NAME}): unknown backend '${b}' in BACKENDS "
                          "(the backends are cpu, cuda and vulkan)")
    endif()
    if(NOT b IN_LIST have)
      string(TOUPPER ${b} option)
      message(FATAL_ERROR "ws_add_kernels(${K_NAME}): BACKENDS requires ${b}, but ${lib} was "
                          "built without the ${b} backend (its backends: ${have_text}). Use a "
                          "wavesched built with -DWS_${option}=ON, or drop ${b} from BACKENDS.")
    endif()
    if(b STREQUAL "vulkan" AND NOT K_GLSL)
      message(FATAL_ERROR "ws_add_kernels(${K_NAME}): BACKENDS requires vulkan, but no GLSL <dir> "
                          "was given: Vulkan kernels are GLSL compute shaders (docs/vulkan.md)")
    endif()
  endforeach()
  get_filename_component(source ${K_SOURCE} ABSOLUTE)
  if(NOT EXISTS ${source})
    message(FATAL_ERROR "ws_add_kernels(${K_NAME}): SOURCE ${source} does not exist")
  endif()

  set(gen ${CMAKE_CURRENT_BINARY_DIR}/ws_kernels/${K_NAME})
  file(MAKE_DIRECTORY ${gen})
  file(WRITE ${gen}/${K_NAME}_cpu.c.in "#include \"${source}\"\n")
  configure_file(${gen}/${K_NAME}_cpu.c.in ${gen}/${K_NAME}_cpu.c COPYONLY)
  target_sources(${target} PRIVATE ${gen}/${K_NAME}_cpu.c)
  set_source_files_properties(${gen}/${K_NAME}_cpu.c PROPERTIES OBJECT_DEPENDS ${source})
  set(built cpu)
  set(cuda_decl "#define WS_MODULE_CUDA_ 0")
  set(vk_decl "#define WS_MODULE_VULKAN_ 0")
  if("cuda" IN_LIST have)
    get_property(languages GLOBAL PROPERTY ENABLED_LANGUAGES)
    if(NOT "CUDA" IN_LIST languages)
      message(FATAL_ERROR "ws_add_kernels(${K_NAME}): ${lib} has the CUDA backend, so the "
                          "kernels must be built for CUDA too, but this project has not enabled "
                          "CUDA. Add enable_language(CUDA) after find_package(wavesched) (or "
                          "LANGUAGES C CUDA in project()); see docs/install.md.")
    endif()
    file(WRITE ${gen}/${K_NAME}_cuda.cu.in "#include \"${source}\"\n")
    configure_file(${gen}/${K_NAME}_cuda.cu.in ${gen}/${K_NAME}_cuda.cu COPYONLY)
    target_sources(${target} PRIVATE ${gen}/${K_NAME}_cuda.cu)
    set_source_files_properties(${gen}/${K_NAME}_cuda.cu PROPERTIES OBJECT_DEPENDS ${source})
    set(cuda_decl "extern const ws_module ${K_NAME}_module_cuda;\n#define WS_MODULE_CUDA_ &${K_NAME}_module_cuda")
    list(APPEND built cuda)
    # One CUDA runtime per process: a shared libwavesched uses the shared
    # runtime, so the program that holds these kernels must too (CMake's
    # default for CUDA targets is the static one). Has effect where the
    # target is linked (an executable or shared library).
    get_target_property(library_type wavesched::wavesched TYPE)
    if(library_type STREQUAL "SHARED_LIBRARY")
      set_property(TARGET ${target} PROPERTY CUDA_RUNTIME_LIBRARY Shared)
    endif()
  endif()
  set(note "")
  if("vulkan" IN_LIST have)
    if(K_GLSL)
      ws_add_glsl_module(${target} ${K_NAME} ${K_GLSL})
      set(vk_decl "extern const ws_module ${K_NAME}_module_vulkan;\n#define WS_MODULE_VULKAN_ &${K_NAME}_module_vulkan")
      list(APPEND built vulkan)
    else()
      set(note " (no GLSL <dir>: no Vulkan version)")
      # The library's own tests and examples have modules without GLSL on
      # purpose; a user's project is told.
      if(K_BACKENDS STREQUAL "" AND NOT PROJECT_NAME STREQUAL "wavesched")
        message(WARNING "ws_add_kernels(${K_NAME}): ${lib} has the Vulkan backend, but no GLSL "
                        "<dir> was given, so ${K_NAME} has no Vulkan kernels (ws_kernel_find "
                        "returns WS_ENOKERNEL on a Vulkan device). Pass GLSL <dir>, or BACKENDS "
                        "without vulkan to say that it is not wanted.")
      endif()
    endif()
  endif()
  string(REPLACE ";" " " built_text "${built}")
  message(STATUS "ws_add_kernels(${K_NAME}): ${built_text}${note}")
  file(WRITE ${gen}/${K_NAME}_modules.c.in
"/* generated by ws_add_kernels: the modules built for ${K_NAME} */
#include \"wavesched/module.h\"
extern const ws_module ${K_NAME}_module_cpu;
${cuda_decl}
${vk_decl}
extern const ws_module_set ${K_NAME}_modules;
const ws_module_set ${K_NAME}_modules = {{&${K_NAME}_module_cpu, WS_MODULE_CUDA_, WS_MODULE_VULKAN_}};
")
  configure_file(${gen}/${K_NAME}_modules.c.in ${gen}/${K_NAME}_modules.c COPYONLY)
  target_sources(${target} PRIVATE ${gen}/${K_NAME}_modules.c)
  target_include_directories(${target} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
endfunction()
