# kernelsweep_add_plugin([NAME] SOURCES a.cpp b.cu ... [VERSION x.y.z] [CUDA_ARCHITECTURES 80 90])
#
# Builds the kernelsweep plugin NAME (default: the project's name): a MODULE library, libNAME.so,
# that kernelsweep loads at run time (docs/plugins.md). Its sources declare kernels and
# implementations with kernels/kernel.h, as kernelsweep's own kernels do; one generated source adds
# the entry point kernelsweep looks for (kernels/plugin.h), naming the plugin NAME at VERSION
# (default: the project's version).
#
# .cu sources are compiled when the project has CUDA enabled, for CUDA_ARCHITECTURES (default: the
# target's CMAKE_CUDA_ARCHITECTURES, which kernelsweep's package sets to 80;90 when the project has
# not chosen before find_package(kernelsweep)), and the plugin links the CUDA runtime, and cuBLAS and
# cuBLASLt where found. Without CUDA their implementations stay registered as unavailable, so sweep
# files that name them stay valid, and making an instance says that the plugin was built without
# CUDA.
#
# The same file serves kernelsweep's CMake package (find_package(kernelsweep)) and kernelsweep's own
# build, where its tests build plugins; both provide the target kernelsweep::headers.
include_guard(GLOBAL)
include(${CMAKE_CURRENT_LIST_DIR}/cuda_stubs.cmake)

function(kernelsweep_add_plugin)
  set(name "${PROJECT_NAME}")
  set(arguments ${ARGN})
  if(ARGC GREATER 0 AND NOT ARGV0 MATCHES "^(SOURCES|VERSION|CUDA_ARCHITECTURES)$")
    set(name "${ARGV0}")
    list(POP_FRONT arguments)
  endif()
  cmake_parse_arguments(arg "" "VERSION" "SOURCES;CUDA_ARCHITECTURES" ${arguments})
  set(call "kernelsweep_add_plugin(${name})")
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "${call}: unknown arguments ${arg_UNPARSED_ARGUMENTS}: expected "
                        "kernelsweep_add_plugin([NAME] SOURCES files... [VERSION x.y.z] [CUDA_ARCHITECTURES ...])")
  endif()
  if(NOT name MATCHES "^[A-Za-z0-9_][A-Za-z0-9_.+-]*$")
    message(FATAL_ERROR "${call}: a plugin's name takes letters, digits, '_', '.', '+' and '-' only")
  endif()
  if(NOT arg_SOURCES)
    message(FATAL_ERROR "${call}: no SOURCES: name the files that declare its kernels and implementations")
  endif()
  set(version "${arg_VERSION}")
  if(version STREQUAL "")
    set(version "${PROJECT_VERSION}")
  endif()
  if(version STREQUAL "")
    message(FATAL_ERROR "${call}: no VERSION, and the project has none: give project(... VERSION x.y.z) or VERSION")
  endif()
  if(NOT version MATCHES "^[A-Za-z0-9_.+~-]+$")
    message(FATAL_ERROR "${call}: VERSION ${version}: letters, digits, '_', '.', '+', '~' and '-' only")
  endif()

  set(cuda_sources "")
  set(other_sources "")
  foreach(source IN LISTS arg_SOURCES)
    get_filename_component(source "${source}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    if(source MATCHES "\\.cu$")
      list(APPEND cuda_sources "${source}")
    else()
      list(APPEND other_sources "${source}")
    endif()
  endforeach()

  set(generated "${CMAKE_CURRENT_BINARY_DIR}/kernelsweep_plugin_${name}")
  set(KS_PLUGIN_NAME "${name}")
  set(KS_PLUGIN_VERSION "${version}")
  configure_file("${CMAKE_CURRENT_FUNCTION_LIST_DIR}/plugin_entry.cpp.in" "${generated}/entry.cpp" @ONLY)
  list(APPEND other_sources "${generated}/entry.cpp")

  get_property(languages GLOBAL PROPERTY ENABLED_LANGUAGES)
  set(with_cuda OFF)
  if(cuda_sources AND "CUDA" IN_LIST languages)
    set(with_cuda ON)
  elseif(cuda_sources)
    message(STATUS "${call}: CUDA is not enabled: the CUDA implementations are registered as unavailable")
    ks_cuda_stubs(OUTPUT "${generated}/cuda_stubs.cpp" SOURCES ${cuda_sources}
                  REASON "the plugin ${name} was built without CUDA: rebuild it where a CUDA compiler is found")
    list(APPEND other_sources "${generated}/cuda_stubs.cpp")
    set(cuda_sources "")
  endif()

  add_library(${name} MODULE ${other_sources} ${cuda_sources})
  target_link_libraries(${name} PRIVATE kernelsweep::headers)
  # Only the entry point is exported (kernels/plugin.h): the kernel API's inline code and each
  # plugin's registrations stay its own.
  set_target_properties(${name} PROPERTIES
    CXX_STANDARD 20 CXX_STANDARD_REQUIRED ON CXX_EXTENSIONS OFF
    POSITION_INDEPENDENT_CODE ON CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON
    INSTALL_RPATH_USE_LINK_PATH ON)
  if(with_cuda)
    if(NOT TARGET CUDA::cudart)
      find_package(CUDAToolkit REQUIRED)
    endif()
    target_link_libraries(${name} PRIVATE CUDA::cudart)
    foreach(library IN ITEMS cublas cublasLt)
      if(TARGET CUDA::${library})
        target_link_libraries(${name} PRIVATE CUDA::${library})
      endif()
    endforeach()
    # The shared CUDA runtime, the one kernelsweep runs with: streams and events pass between them.
    set_target_properties(${name} PROPERTIES
      CUDA_STANDARD 20 CUDA_STANDARD_REQUIRED ON CUDA_EXTENSIONS OFF
      CUDA_VISIBILITY_PRESET hidden CUDA_SEPARABLE_COMPILATION OFF CUDA_RUNTIME_LIBRARY Shared)
    if(arg_CUDA_ARCHITECTURES)
      set_target_properties(${name} PROPERTIES CUDA_ARCHITECTURES "${arg_CUDA_ARCHITECTURES}")
    endif()
    target_compile_options(${name} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:--expt-relaxed-constexpr>)
    # Run at the end of the calling directory, in its scope, where the target's flags are made.
    cmake_language(DEFER CALL _kernelsweep_teach_nvcc_cxx20)
  endif()
endfunction()

# CMake 3.25 knows no C++20 dialect for nvcc, though nvcc 12 and later take -std=c++20: teach it, so
# that .cu files get the same C++20 as the rest.
macro(_kernelsweep_teach_nvcc_cxx20)
  if(NOT CMAKE_CUDA20_STANDARD_COMPILE_OPTION)
    set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
    set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
    list(APPEND CMAKE_CUDA_COMPILE_FEATURES cuda_std_20)
  endif()
endmacro()
