# ks_cuda_stubs(OUTPUT FILE SOURCES a.cu b.cu ... [REASON text]): for a build without CUDA, writes
# FILE, a C++ source that registers every KS_IMPLEMENTATION(...) line of the given .cu files as
# unavailable (KS_UNAVAILABLE_IMPLEMENTATION), so that sweep files naming a CUDA implementation stay
# valid on machines that cannot build it, and making its instance says why: "kernelsweep was built
# without CUDA", or REASON when given (plugins name themselves). The file is rewritten only when its
# text changes. Installed with kernelsweep's CMake package, for kernelsweep_add_plugin.
function(ks_cuda_stubs)
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "OUTPUT;REASON" "SOURCES")
  set(text "// Written by cuda_stubs.cmake: the CUDA implementations of a build without CUDA.\n")
  string(APPEND text "#include \"kernels/kernel.h\"\n")
  foreach(source IN LISTS arg_SOURCES)
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${source})
    file(STRINGS ${source} registrations ENCODING UTF-8 REGEX "^KS_IMPLEMENTATION\\(")
    foreach(line IN LISTS registrations)
      if(DEFINED arg_REASON)
        string(REGEX REPLACE "^KS_IMPLEMENTATION\\((.*)\\)[ {]*$" "\\1" arguments "${line}")
        string(REPLACE "\\" "\\\\" reason "${arg_REASON}")
        string(REPLACE "\"" "\\\"" reason "${reason}")
        set(stub "KS_UNAVAILABLE_IMPLEMENTATION_BECAUSE(${arguments}, \"${reason}\");")
      else()
        string(REGEX REPLACE "^KS_IMPLEMENTATION\\((.*)\\)[ {]*$" "KS_UNAVAILABLE_IMPLEMENTATION(\\1);" stub "${line}")
      endif()
      string(APPEND text "${stub}\n")
    endforeach()
  endforeach()
  file(CONFIGURE OUTPUT ${arg_OUTPUT} CONTENT "${text}" @ONLY)
endfunction()
