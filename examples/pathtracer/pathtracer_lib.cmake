# SPDX-License-Identifier: MIT
# The path tracer's kernels and host driver as a static library, shared by
# the CLI (examples/pathtracer) and tests/pathtracer. Included once per build
# tree: from examples/pathtracer, or from tests/pathtracer when the examples
# are not built.
set(WS_PT_DIR ${CMAKE_CURRENT_LIST_DIR})
add_library(wavesched_pathtracer STATIC ${WS_PT_DIR}/pt_render.c ${WS_PT_DIR}/pt_scene.c)
target_link_libraries(wavesched_pathtracer PUBLIC wavesched m)
target_include_directories(wavesched_pathtracer PUBLIC ${WS_PT_DIR})
# Mesh files through assimp's C API, textures through stb_image (Debian:
# libassimp-dev, libstb-dev; scripts/deps installs them). Without them the
# path tracer renders only the built-in scene and says so for --scene.
find_package(assimp CONFIG QUIET)
find_package(PkgConfig QUIET)
if(PkgConfig_FOUND)
  pkg_check_modules(WS_PT_STB QUIET IMPORTED_TARGET stb)
endif()
if(assimp_FOUND AND WS_PT_STB_FOUND)
  target_link_libraries(wavesched_pathtracer PRIVATE assimp::assimp PkgConfig::WS_PT_STB)
  target_compile_definitions(wavesched_pathtracer PRIVATE PT_HAVE_ASSIMP=1)
  set(WS_PT_HAVE_ASSIMP ON)
else()
  message(WARNING "assimp or stb_image not found (install libassimp-dev libstb-dev): the path "
                  "tracer reads no mesh files")
  set(WS_PT_HAVE_ASSIMP OFF)
endif()
# No FMA contraction: the arithmetic of a path must not depend on which kernel
# (continuation, stage, megakernel) or which backend runs it (docs/pathtracer.md).
target_compile_options(wavesched_pathtracer PRIVATE
  $<$<COMPILE_LANGUAGE:C>:${WS_C_WARNINGS}>
  $<$<COMPILE_LANGUAGE:C>:-ffp-contract=off>
  $<$<COMPILE_LANGUAGE:CUDA>:--fmad=false>)
ws_add_kernels(wavesched_pathtracer NAME pathtracer SOURCE ${WS_PT_DIR}/pathtracer.kern.h
               GLSL ${WS_PT_DIR}/glsl)
if(WS_HAVE_CUDA AND TARGET CUDA::cudart)
  target_link_libraries(wavesched_pathtracer PUBLIC CUDA::cudart)
endif()
