# The installed package: libgraphc.so (every graphc library but the cpu and
# cuda backends linked whole into one shared object, as libtorch is one
# library), the backend modules it loads on first use under lib/graphc/
# (codegen/Backends.cpp), the public headers
# under include/graphc/, and graphcConfig.cmake so that
# find_package(graphc) + target_link_libraries(app PRIVATE graphc::graphc)
# works. `cmake --install build --prefix DIR` installs it.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(graphc_members graphc_ir graphc_runtime graphc_reference graphc_runtime_cpu graphc_parser graphc_passes
  graphc_kernel graphc_plan graphc_disk_cache graphc_backends graphc_cpu_executable graphc_deploy graphc_deploy_writer
  graphc_api)
set(GRAPHC_PACKAGE_HAS_CPU OFF)
set(GRAPHC_PACKAGE_HAS_CUDA OFF)
if(TARGET graphc_cpu)
  set(GRAPHC_PACKAGE_HAS_CPU ON)
endif()
if(TARGET graphc_onnx)
  list(APPEND graphc_members graphc_onnx)
endif()
if(TARGET graphc_cuda)
  set(GRAPHC_PACKAGE_HAS_CUDA ON)
endif()

add_library(graphc_shared SHARED frontend/api/Version.cpp)
# Whole archives, so that every symbol of the public headers is in the .so;
# then the members themselves, for their own dependencies. (CMake's
# WHOLE_ARCHIVE feature refuses members that depend on each other.)
set(graphc_member_files)
foreach(member IN LISTS graphc_members)
  list(APPEND graphc_member_files $<TARGET_FILE:${member}>)
endforeach()
target_link_libraries(graphc_shared PRIVATE
  -Wl,--whole-archive ${graphc_member_files} -Wl,--no-whole-archive ${graphc_members})
add_dependencies(graphc_shared ${graphc_members})
set_target_properties(graphc_shared PROPERTIES
  OUTPUT_NAME graphc
  EXPORT_NAME graphc
  VERSION ${PROJECT_VERSION}
  SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR}
  LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/lib
  # A program finds libLLVM and the other dependencies where they were found here.
  INSTALL_RPATH_USE_LINK_PATH ON)
target_include_directories(graphc_shared INTERFACE
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}/graphc>)
target_compile_features(graphc_shared INTERFACE cxx_std_20)
add_library(graphc::graphc ALIAS graphc_shared)

# The public headers: the umbrella and what it includes, at their source
# paths under include/graphc/ (so their own includes resolve).
set(graphc_public_headers
  frontend/api/Api.h frontend/api/Tracer.h frontend/api/Compiled.h codegen/Backend.h
  ir/Attribute.h ir/Diagnostics.h ir/DType.h ir/Graph.h ir/Half.h ir/Mx.h ir/Ops.h ir/ops.def ir/Type.h
  runtime/Executable.h runtime/Tensor.h)
foreach(header IN LISTS graphc_public_headers)
  get_filename_component(folder ${header} DIRECTORY)
  install(FILES ${header} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/graphc/${folder})
endforeach()
install(FILES frontend/api/graphc.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/graphc)

install(TARGETS graphc_shared EXPORT graphcTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
# The compiler-free runtime (deploy/): libgraphc-runtime.so, graphc::runtime,
# and its C header, for programs that only run exported packages.
install(TARGETS graphc_runtime_shared EXPORT graphcTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(FILES deploy/graphc_runtime.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/graphc)
install(EXPORT graphcTargets NAMESPACE graphc:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/graphc)
configure_package_config_file(cmake/graphcConfig.cmake.in ${PROJECT_BINARY_DIR}/graphcConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/graphc)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/graphcConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/graphcConfig.cmake ${PROJECT_BINARY_DIR}/graphcConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/graphc)
if(TARGET graphc)
  install(TARGETS graphc RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
foreach(module graphc-cpu graphc-cuda graphc-runtime-cuda)
  if(TARGET ${module})
    install(TARGETS ${module} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/graphc)
  endif()
endforeach()
target_compile_definitions(graphc_shared PRIVATE GRAPHC_VERSION="${PROJECT_VERSION}")
