# What `cmake --install` puts under PREFIX: the kernelsweep program (bin/), the kernel API headers
# that plugins include as in-tree kernels do (include/kernelsweep/kernels/...), and the CMake
# package (lib/cmake/kernelsweep/) that gives plugin projects kernelsweep_add_plugin. Plugins
# installed under PREFIX/lib/kernelsweep/plugins are found by name (src/plugins).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(KS_INSTALL_INCLUDEDIR ${CMAKE_INSTALL_INCLUDEDIR}/kernelsweep)
set(KS_INSTALL_PLUGINDIR ${CMAKE_INSTALL_LIBDIR}/kernelsweep/plugins)
set(KS_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/kernelsweep)
set(KS_INSTALL_PYTHONDIR ${CMAKE_INSTALL_LIBDIR}/kernelsweep/python)
set(KS_INSTALL_PROGRAM ${CMAKE_INSTALL_BINDIR}/kernelsweep)
set(KS_INSTALL_SLURMDIR ${CMAKE_INSTALL_DATADIR}/kernelsweep/slurm)

# The plugin loader: where the installed plugin folder is, and dlopen.
set_property(SOURCE ${PROJECT_SOURCE_DIR}/src/plugins/plugins.cpp TARGET_DIRECTORY ks APPEND PROPERTY
  COMPILE_DEFINITIONS KS_INSTALL_PREFIX="${CMAKE_INSTALL_PREFIX}" KS_INSTALL_BINDIR="${CMAKE_INSTALL_BINDIR}"
                      KS_INSTALL_PLUGINDIR="${KS_INSTALL_PLUGINDIR}" KS_INSTALL_PYTHONDIR="${KS_INSTALL_PYTHONDIR}"
                      KS_SOURCE_PYTHONDIR="${PROJECT_SOURCE_DIR}/python"
                      KS_INSTALL_SLURMDIR="${KS_INSTALL_SLURMDIR}" KS_SOURCE_SLURMDIR="${PROJECT_SOURCE_DIR}/slurm")
target_link_libraries(ks PUBLIC ${CMAKE_DL_LIBS})

# The kernel API as plugins see it: in this build tree the sources, once installed the copies under
# include/kernelsweep. kernelsweep_add_plugin links it.
add_library(ks_plugin_headers INTERFACE)
add_library(kernelsweep::headers ALIAS ks_plugin_headers)
set_target_properties(ks_plugin_headers PROPERTIES EXPORT_NAME headers)
target_include_directories(ks_plugin_headers INTERFACE
  $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}> $<INSTALL_INTERFACE:${KS_INSTALL_INCLUDEDIR}>)
target_link_libraries(ks_plugin_headers INTERFACE nlohmann_json::nlohmann_json)
target_compile_features(ks_plugin_headers INTERFACE cxx_std_20)
include(${PROJECT_SOURCE_DIR}/cmake/kernelsweep_plugin.cmake)

# The installed program finds the libraries it was linked with (CUDA's, say) where they were.
set_target_properties(kernelsweep PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)
install(TARGETS kernelsweep RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS ks_plugin_headers EXPORT kernelsweepTargets)
install(FILES ${PROJECT_SOURCE_DIR}/kernels/kernel.h ${PROJECT_SOURCE_DIR}/kernels/plugin.h
  DESTINATION ${KS_INSTALL_INCLUDEDIR}/kernels)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/kernels/common/ DESTINATION ${KS_INSTALL_INCLUDEDIR}/kernels/common
  FILES_MATCHING PATTERN "*.h")
install(DIRECTORY DESTINATION ${KS_INSTALL_PLUGINDIR})
# The Python package (the Python worker and the API for torch and Triton kernels): an installed
# kernelsweep puts PREFIX/lib/kernelsweep/python on its Python worker's path.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/python/kernelsweep DESTINATION ${KS_INSTALL_PYTHONDIR}
  FILES_MATCHING PATTERN "*.py" PATTERN "__pycache__" EXCLUDE)

# The Slurm batch script `kernelsweep submit` submits (docs/slurm.md).
install(PROGRAMS ${PROJECT_SOURCE_DIR}/slurm/sweep.sbatch DESTINATION ${KS_INSTALL_SLURMDIR})

# The kernel API version, read from kernels/kernel.h, for the package's kernelsweep_KERNEL_API_VERSION.
file(STRINGS ${PROJECT_SOURCE_DIR}/kernels/kernel.h KS_KERNEL_API_VERSION REGEX "kKernelApiVersion = [0-9]+")
string(REGEX MATCH "kKernelApiVersion = ([0-9]+)" KS_KERNEL_API_VERSION "${KS_KERNEL_API_VERSION}")
set(KS_KERNEL_API_VERSION "${CMAKE_MATCH_1}")
if(NOT KS_KERNEL_API_VERSION)
  message(FATAL_ERROR "kernels/kernel.h: no kKernelApiVersion = N found")
endif()
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/kernels/kernel.h)

install(EXPORT kernelsweepTargets NAMESPACE kernelsweep:: DESTINATION ${KS_INSTALL_CMAKEDIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/kernelsweepConfig.cmake.in
  ${PROJECT_BINARY_DIR}/package/kernelsweepConfig.cmake
  INSTALL_DESTINATION ${KS_INSTALL_CMAKEDIR}
  PATH_VARS KS_INSTALL_INCLUDEDIR KS_INSTALL_PLUGINDIR KS_INSTALL_PROGRAM)
# 0.x: a minor version may change the kernel API, so only the same minor version matches.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/package/kernelsweepConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES
  ${PROJECT_BINARY_DIR}/package/kernelsweepConfig.cmake
  ${PROJECT_BINARY_DIR}/package/kernelsweepConfigVersion.cmake
  ${PROJECT_SOURCE_DIR}/cmake/kernelsweep_plugin.cmake
  ${PROJECT_SOURCE_DIR}/cmake/cuda_stubs.cmake
  ${PROJECT_SOURCE_DIR}/cmake/plugin_entry.cpp.in
  DESTINATION ${KS_INSTALL_CMAKEDIR})
