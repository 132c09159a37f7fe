# SPDX-License-Identifier: MIT
# GLSL compute shaders for the Vulkan backend, compiled by glslc at build time
# and embedded in C (docs/vulkan.md). Needs WS_GLSLC (the glslc program, found
# by the top-level CMakeLists.txt, or by the installed package's config).
#
# ws_add_glsl_module(<target> <module> <dir>)
#   Compiles every <dir>/*.comp into the Vulkan module of <module>: a generated
#   C file added to <target> that defines `const ws_module <module>_module_vulkan`
#   (ws_add_kernels declares it in <module>_modules). File names give the
#   entries, with the names the C/CUDA module uses:
#     <name>.coro.comp  coroutine <name>; compiled twice, with
#                       -DWS_COROUTINE_STEP (spirv) and -DWS_COROUTINE_MEGA
#                       (spirv_mega); args_size = sizeof(ws_launch)
#     <name>.comp       plain kernel <name>; the file must contain a line
#                       `// ws:args_size N`, N = sizeof the C argument struct
#                       (ws_kernel_launch checks the two agree)
#   Include path: the wavesched include directory (for
#   "wavesched/kernel.glsl") and <dir>. Target environment: Vulkan 1.2.
#
# ws_glsl_embed(<target> <prefix> <dir>)
#   Compiles every <dir>/*.comp (no entry conventions) and adds a C file to
#   <target> defining, for each <name>.comp,
#     const uint32_t <prefix>_<name>[];  const size_t <prefix>_<name>_size;
#   The backend's own queue shaders use it.

include_guard(GLOBAL)

# Where "wavesched/kernel.glsl" is: the source tree's include directory, or
# the installed headers (waveschedConfig.cmake sets the property first). A
# global property, so that every directory that calls the functions sees it.
get_property(_ws_glsl_include_set GLOBAL PROPERTY WS_GLSL_INCLUDE_DIR SET)
if(NOT _ws_glsl_include_set)
  get_filename_component(_ws_glsl_include ${CMAKE_CURRENT_LIST_DIR}/../include ABSOLUTE)
  set_property(GLOBAL PROPERTY WS_GLSL_INCLUDE_DIR ${_ws_glsl_include})
endif()

# Adds the command that compiles `src` into `out`, a comma-separated list of
# SPIR-V words (glslc -mfmt=num) that a C array initializer #includes.
function(_ws_glsl_compile src out)
  set(flags --target-env=vulkan1.2 -O -mfmt=num)
  if(WS_WERROR)
    list(APPEND flags -Werror)
  endif()
  get_filename_component(dir ${src} DIRECTORY)
  get_property(include_dir GLOBAL PROPERTY WS_GLSL_INCLUDE_DIR)
  add_custom_command(
    OUTPUT ${out}
    COMMAND ${WS_GLSLC} ${flags} ${ARGN} -I ${include_dir} -I ${dir}
            -MD -MF ${out}.d -o ${out} ${src}
    DEPENDS ${src}
    DEPFILE ${out}.d
    COMMENT "glslc ${src} ${ARGN}"
    VERBATIM)
endfunction()

# Adds the generated C file and the shader outputs to `target`. The custom
# target orders the shader compilation before the C compilation even when
# `target` lives in another directory; OBJECT_DEPENDS recompiles the C file
# when a shader changes.
function(_ws_glsl_attach target tag c_file)
  set(outputs ${ARGN})
  add_custom_target(${target}_${tag}_glsl DEPENDS ${outputs})
  add_dependencies(${target} ${target}_${tag}_glsl)
  target_sources(${target} PRIVATE ${c_file})
  set_source_files_properties(${c_file} TARGET_DIRECTORY ${target}
                              PROPERTIES OBJECT_DEPENDS "${outputs}")
endfunction()

# Writes `content` to `file` only when it changed (no needless rebuilds).
function(_ws_glsl_write file content)
  file(WRITE ${file}.in "${content}")
  configure_file(${file}.in ${file} COPYONLY)
endfunction()

function(ws_add_glsl_module target module dir)
  if(NOT WS_GLSLC)
    message(FATAL_ERROR "ws_add_glsl_module(${module}): glslc was not found, and the wavesched "
                        "library has the Vulkan backend, whose kernels it compiles: install "
                        "glslc (Debian: glslc) or set WS_GLSLC to its path")
  endif()
  get_filename_component(dir ${dir} ABSOLUTE)
  file(GLOB sources CONFIGURE_DEPENDS ${dir}/*.comp)
  list(SORT sources)
  if(NOT sources)
    message(FATAL_ERROR "ws_add_glsl_module(${module}): no .comp files in ${dir}")
  endif()
  set(gen ${CMAKE_CURRENT_BINARY_DIR}/ws_glsl/${module})
  file(MAKE_DIRECTORY ${gen})
  set(arrays "")
  set(entries "")
  set(outputs "")
  set(names "")
  set(index 0)
  foreach(src IN LISTS sources)
    get_filename_component(file ${src} NAME)
    # the args_size marker is read at configure time: re-run on edits
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${src})
    if(file MATCHES "^(.+)\\.coro\\.comp$")
      set(name ${CMAKE_MATCH_1})
      set(step ${gen}/${name}.step.spv.inc)
      set(mega ${gen}/${name}.mega.spv.inc)
      _ws_glsl_compile(${src} ${step} -DWS_COROUTINE_STEP=1)
      _ws_glsl_compile(${src} ${mega} -DWS_COROUTINE_MEGA=1)
      list(APPEND outputs ${step} ${mega})
      string(APPEND arrays
        "static const uint32_t ws_vk_${index}_step[] = {\n#include \"${step}\"\n};\n"
        "static const uint32_t ws_vk_${index}_mega[] = {\n#include \"${mega}\"\n};\n")
      string(APPEND entries
        "    {\"${name}\", WS_ENTRY_COROUTINE, (uint32_t)sizeof(ws_launch), 0, 0,\n"
        "     ws_vk_${index}_step, sizeof ws_vk_${index}_step,\n"
        "     ws_vk_${index}_mega, sizeof ws_vk_${index}_mega, 0, 0, 0, 0, 0, 0, 0, 0},\n")
    elseif(file MATCHES "^(.+)\\.comp$")
      set(name ${CMAKE_MATCH_1})
      file(STRINGS ${src} marker REGEX "ws:args_size[ \t]+[0-9]+")
      if(NOT marker MATCHES "ws:args_size[ \t]+([0-9]+)")
        message(FATAL_ERROR "${src}: a kernel needs a `// ws:args_size N` line "
                            "(N = sizeof its C argument struct; see docs/vulkan.md)")
      endif()
      set(args_size ${CMAKE_MATCH_1})
      if(args_size GREATER 128)
        message(FATAL_ERROR "${src}: ws:args_size ${args_size} exceeds the 128 bytes of push "
                            "constants (WS_MAX_KERNEL_ARGS)")
      endif()
      set(spv ${gen}/${name}.spv.inc)
      _ws_glsl_compile(${src} ${spv})
      list(APPEND outputs ${spv})
      string(APPEND arrays
        "static const uint32_t ws_vk_${index}[] = {\n#include \"${spv}\"\n};\n")
      string(APPEND entries
        "    {\"${name}\", WS_ENTRY_KERNEL, ${args_size}u, 0, 0,\n"
        "     ws_vk_${index}, sizeof ws_vk_${index}, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},\n")
    endif()
    if(name IN_LIST names)
      message(FATAL_ERROR "ws_add_glsl_module(${module}): entry '${name}' is defined twice in ${dir}")
    endif()
    list(APPEND names ${name})
    math(EXPR index "${index} + 1")
  endforeach()
  _ws_glsl_write(${gen}/${module}_vulkan.c
"/* generated by ws_add_glsl_module: the Vulkan module ${module} from ${dir} */
#include <stddef.h>
#include <stdint.h>

#include \"wavesched/launch.h\"
#include \"wavesched/module.h\"

${arrays}
static const ws_module_entry ws_vk_entries_[] = {
${entries}};

extern const ws_module ${module}_module_vulkan;
const ws_module ${module}_module_vulkan = {
    \"${module}\", WS_BACKEND_VULKAN, ws_vk_entries_,
    (uint32_t)(sizeof ws_vk_entries_ / sizeof ws_vk_entries_[0])};
")
  _ws_glsl_attach(${target} ${module} ${gen}/${module}_vulkan.c ${outputs})
endfunction()

function(ws_glsl_embed target prefix dir)
  if(NOT WS_GLSLC)
    message(FATAL_ERROR "ws_glsl_embed: glslc was not found")
  endif()
  get_filename_component(dir ${dir} ABSOLUTE)
  file(GLOB sources CONFIGURE_DEPENDS ${dir}/*.comp)
  list(SORT sources)
  set(gen ${CMAKE_CURRENT_BINARY_DIR}/ws_glsl/${prefix})
  file(MAKE_DIRECTORY ${gen})
  set(body "")
  set(outputs "")
  foreach(src IN LISTS sources)
    get_filename_component(name ${src} NAME_WE)
    set(spv ${gen}/${name}.spv.inc)
    _ws_glsl_compile(${src} ${spv})
    list(APPEND outputs ${spv})
    string(APPEND body
      "extern const uint32_t ${prefix}_${name}[];\n"
      "const uint32_t ${prefix}_${name}[] = {\n#include \"${spv}\"\n};\n"
      "extern const size_t ${prefix}_${name}_size;\n"
      "const size_t ${prefix}_${name}_size = sizeof ${prefix}_${name};\n")
  endforeach()
  _ws_glsl_write(${gen}/${prefix}.c
"/* generated by ws_glsl_embed: SPIR-V of the .comp files in ${dir} */
#include <stddef.h>
#include <stdint.h>

${body}")
  _ws_glsl_attach(${target} ${prefix} ${gen}/${prefix}.c ${outputs})
endfunction()
