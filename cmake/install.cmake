# cmake/install.cmake: what `cmake --install build --prefix P` puts under P, and how other
# projects find it there:
#   P/include/gpusolve.h, P/include/gpusolve/*.h (version.h generated)
#   P/lib/libgpusolve.so, P/lib/libgpusolve.a, P/bin/gpusolve (the host-only front) and
#   P/libexec/gpusolve/gpusolve-gpu (the GPU commands, which the front runs)
#   P/lib/cmake/gpusolve/  find_package(gpusolve CONFIG): gpusolve::gpusolve, gpusolve::gpusolve_static
#   P/lib/pkgconfig/       gpusolve.pc (shared; --static adds the private libraries) and
#                          gpusolve-static.pc (links libgpusolve.a and everything it needs)
# Every file is relocatable: nothing records P, so the prefix may be chosen at install time.
include(CMakePackageConfigHelpers)

set(GS_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/gpusolve)

# The installed CLI and libraries find the CUDA libraries where they were linked from.
set_target_properties(gpusolve gpusolve_static gpusolve_cli PROPERTIES
  INSTALL_RPATH_USE_LINK_PATH ON)

install(TARGETS gpusolve gpusolve_static EXPORT gpusolve-targets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS gpusolve_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  PATTERN "*.in" EXCLUDE)
install(FILES ${PROJECT_BINARY_DIR}/include/gpusolve/version.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/gpusolve)

# CMake package. The config looks for zlib only when this build linked it.
if(GS_HAVE_ZLIB)
  set(GS_FIND_ZLIB "find_dependency(ZLIB)")
else()
  set(GS_FIND_ZLIB "# built without zlib: no dependency on it (.gz files are refused)")
endif()
install(EXPORT gpusolve-targets NAMESPACE gpusolve:: DESTINATION ${GS_CMAKE_DIR})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/gpusolve-config.cmake.in
  ${PROJECT_BINARY_DIR}/gpusolve-config.cmake INSTALL_DESTINATION ${GS_CMAKE_DIR})
# 0.x: a minor release may change the interface, so only the same MAJOR.MINOR is compatible.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/gpusolve-config-version.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/gpusolve-config.cmake
  ${PROJECT_BINARY_DIR}/gpusolve-config-version.cmake DESTINATION ${GS_CMAKE_DIR})

# pkg-config: the prefix is found from the .pc file's own place (${pcfiledir}).
file(RELATIVE_PATH GS_PC_TO_PREFIX "/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/")
string(REGEX REPLACE "/$" "" GS_PC_TO_PREFIX "${GS_PC_TO_PREFIX}")
# What libgpusolve.a needs besides itself: the CUDA libraries, zlib (when the build has it), the
# C++ runtime (nvcc compiles the host side of .cu files as C++), threads and libm.
if(GS_HAVE_ZLIB)
  set(GS_PC_ZLIB " -lz")
else()
  set(GS_PC_ZLIB "")
endif()
set(GS_PC_PRIVATE_LIBS "-L\${cudalibdir} -lcudart -lcublas -lcusparse${GS_PC_ZLIB} -lstdc++ -lpthread -lm")
foreach(pc gpusolve gpusolve-static)
  configure_file(${CMAKE_CURRENT_LIST_DIR}/${pc}.pc.in ${PROJECT_BINARY_DIR}/${pc}.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/${pc}.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endforeach()
