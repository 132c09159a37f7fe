# The path tracer's kernels and host driver as a static library, shared by
# the CLI (examples/pathtracer) and tests/pathtracer. Included once per build
# tree: from examples/pathtracer, or from tests/pathtracer when the examples
# are not built.
set(WS_PT_DIR ${CMAKE_CURRENT_LIST_DIR})
add_library(wavesched_pathtracer STATIC ${WS_PT_DIR}/pt_render.c)
target_link_libraries(wavesched_pathtracer PUBLIC wavesched)
target_include_directories(wavesched_pathtracer PUBLIC ${WS_PT_DIR})
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
