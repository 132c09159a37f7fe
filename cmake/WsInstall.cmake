# SPDX-License-Identifier: MIT
# Install rules and the package files (docs/install.md):
#   <prefix>/include/wavesched/*.h, *.glsl      the public headers (GLSL ones too:
#                                                users' shaders include kernel.glsl)
#   <libdir>/libwavesched.a | .so.MAJOR.MINOR    the library
#   <libdir>/cmake/wavesched/                    find_package(wavesched CONFIG):
#       waveschedConfig.cmake, ...ConfigVersion.cmake, waveschedTargets*.cmake
#       (wavesched::wavesched), WsKernels.cmake + WsGlsl.cmake (ws_add_kernels)
#   <libdir>/pkgconfig/wavesched.pc              pkg-config
#   <datadir>/doc/wavesched/LICENSE
# Included from the top-level CMakeLists.txt after the library target is
# complete (its backends' sources and link libraries added).
include(CMakePackageConfigHelpers)

set(WS_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/wavesched CACHE STRING
    "Where the CMake package files go, relative to the prefix")

install(TARGETS wavesched EXPORT waveschedTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/wavesched
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.h" PATTERN "*.glsl")
install(EXPORT waveschedTargets NAMESPACE wavesched:: DESTINATION ${WS_INSTALL_CMAKEDIR})

# What the package config needs to know about this build.
set(WS_PACKAGE_CUDA_ARCHITECTURES "")
set(WS_PACKAGE_CUDA_ROOT "")
set(WS_PACKAGE_GLSLC_DIR "")
if(WS_HAVE_CUDA)
  get_target_property(WS_PACKAGE_CUDA_ARCHITECTURES wavesched CUDA_ARCHITECTURES)
  get_filename_component(WS_PACKAGE_CUDA_ROOT "${CUDAToolkit_BIN_DIR}" DIRECTORY)
endif()
if(WS_HAVE_VULKAN)
  get_filename_component(WS_PACKAGE_GLSLC_DIR "${WS_GLSLC}" DIRECTORY)
endif()
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/waveschedConfig.cmake.in
  ${PROJECT_BINARY_DIR}/package/waveschedConfig.cmake
  INSTALL_DESTINATION ${WS_INSTALL_CMAKEDIR}
  PATH_VARS CMAKE_INSTALL_INCLUDEDIR)
# 0.x: a minor version may break the API, so only the same MAJOR.MINOR
# satisfies a request (find_package(wavesched 0.3) accepts 0.3.x).
write_basic_package_version_file(${PROJECT_BINARY_DIR}/package/waveschedConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES
  ${PROJECT_BINARY_DIR}/package/waveschedConfig.cmake
  ${PROJECT_BINARY_DIR}/package/waveschedConfigVersion.cmake
  ${PROJECT_SOURCE_DIR}/cmake/WsKernels.cmake
  ${PROJECT_SOURCE_DIR}/cmake/WsGlsl.cmake
  DESTINATION ${WS_INSTALL_CMAKEDIR})

# ---- pkg-config ----
# The CUDA and C++ runtimes are in
# Libs when CUDA is built: the users' .cu kernels need them as much as the
# library. A static library also needs what it links itself (libm, the
# CPU backend's threads, the Vulkan loader); these are in Libs and Requires, not
# the .private fields, so that a plain `pkg-config --libs wavesched` links
# the default (static) build without --static.
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(WS_PC_LIBDIR "${CMAKE_INSTALL_LIBDIR}")
else()
  set(WS_PC_LIBDIR "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
endif()
if(IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  set(WS_PC_INCLUDEDIR "${CMAKE_INSTALL_INCLUDEDIR}")
else()
  set(WS_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
endif()
string(REPLACE ";" " " WS_PC_BACKENDS "${WS_BACKENDS}")
set(WS_PC_LIBS "")
set(WS_PC_REQUIRES "")
set(WS_PC_GLSLC "")
set(WS_PC_NVCC "")
set(WS_PC_CUDA_ARCHITECTURES "")
if(WS_HAVE_CUDA)
  # the CUDA and C++ runtimes: nvcc's host code (the library's and the users'
  # .cu kernels) calls both, and a C linker adds neither
  string(APPEND WS_PC_LIBS " -L${CUDAToolkit_LIBRARY_DIR} -lcudart -lstdc++")
  set(WS_PC_NVCC "${CMAKE_CUDA_COMPILER}")
  # "90-real;80" -> "90 80": the numbers, for nvcc -arch=sm_<n>
  string(REGEX REPLACE "-(real|virtual)" "" WS_PC_CUDA_ARCHITECTURES
         "${WS_PACKAGE_CUDA_ARCHITECTURES}")
  string(REPLACE ";" " " WS_PC_CUDA_ARCHITECTURES "${WS_PC_CUDA_ARCHITECTURES}")
endif()
if(WS_HAVE_VULKAN)
  set(WS_PC_GLSLC "${WS_GLSLC}")
endif()
if(NOT BUILD_SHARED_LIBS)
  string(APPEND WS_PC_LIBS " -pthread -lm")
  if(WS_HAVE_VULKAN)
    set(WS_PC_REQUIRES "vulkan")
  endif()
endif()
configure_file(${PROJECT_SOURCE_DIR}/cmake/wavesched.pc.in ${PROJECT_BINARY_DIR}/package/wavesched.pc
               @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/package/wavesched.pc
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
install(FILES ${PROJECT_SOURCE_DIR}/LICENSE DESTINATION ${CMAKE_INSTALL_DOCDIR})
