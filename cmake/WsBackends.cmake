# SPDX-License-Identifier: MIT
# ws_add_backend(<name> SOURCES <file>... [LINK <library>...])
# ws_add_backend(<name> ABSENT <file>)
#
# Adds backend <name> to the wavesched library: its SOURCES (relative to the
# calling directory) are compiled into the library and LINK is linked PUBLIC
# (a static library's users need it too), and <name> joins WS_BACKENDS, the
# backends this build has: the library's WS_BACKENDS property, which the
# package exports and ws_add_kernels builds users' kernels for. With ABSENT
# the backend is not built: <file> is compiled instead (it defines the
# registry's ws_backend_<name>_open, returning WS_ENODEV with a message that
# says how to build the backend, and ws_backend_<name>_built = false).
#
# Adding a backend is one call in its directory's CMakeLists.txt plus its
# row in src/backend/registry.c (and its ws_backend_kind in module.h).
# Backend-specific settings (compiler options, shaders, the backend's own
# tests) stay in that CMakeLists.txt, after the call.
include_guard(GLOBAL)

function(ws_add_backend name)
  cmake_parse_arguments(B "" "ABSENT" "SOURCES;LINK" ${ARGN})
  set(usage "ws_add_backend(<name> SOURCES <file>... [LINK <library>...]) or "
            "ws_add_backend(<name> ABSENT <file>)")
  if(B_UNPARSED_ARGUMENTS OR (B_ABSENT AND (B_SOURCES OR B_LINK)) OR
     (NOT B_ABSENT AND NOT B_SOURCES))
    message(FATAL_ERROR "ws_add_backend(${name} ${ARGN}): expected ${usage}")
  endif()
  if(NOT TARGET wavesched)
    message(FATAL_ERROR "ws_add_backend(${name}): the wavesched library target does not exist yet")
  endif()
  get_property(have TARGET wavesched PROPERTY WS_BACKENDS)
  if(name IN_LIST have)
    message(FATAL_ERROR "ws_add_backend(${name}): backend '${name}' was added twice")
  endif()
  if(B_ABSENT)
    target_sources(wavesched PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/${B_ABSENT})
    return()
  endif()
  list(TRANSFORM B_SOURCES PREPEND ${CMAKE_CURRENT_SOURCE_DIR}/)
  target_sources(wavesched PRIVATE ${B_SOURCES})
  if(B_LINK)
    target_link_libraries(wavesched PUBLIC ${B_LINK})
  endif()
  set_property(TARGET wavesched APPEND PROPERTY WS_BACKENDS ${name})
endfunction()
