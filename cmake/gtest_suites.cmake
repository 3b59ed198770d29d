# ks_add_gtest_suites(TARGET LABELS label... [PROPERTIES prop value...] [SERIAL suite...])
#
# One ctest test per GoogleTest test suite of TARGET, named after the suite, that runs the suite's
# cases in one process (--gtest_filter=Suite.*). gtest_discover_tests registers a test per case
# instead, each a process of its own: a suite whose SetUpTestSuite runs a sweep then runs it once per
# case, and 500 small cases pay 500 process starts. The suites are listed from the built executable
# after each build (--gtest_list_tests), as gtest_discover_tests does.
#
# A suite whose every case skips itself (a GPU test on a machine without a GPU) is reported as
# skipped: tests/support/gtest_main.cpp exits with kGtestAllSkipped (77) then. The SERIAL suites run
# alone (RUN_SERIAL): those that load the machine on purpose.
set(KS_GTEST_ALL_SKIPPED 77)

function(ks_add_gtest_suites target)
  cmake_parse_arguments(arg "" "" "LABELS;PROPERTIES;SERIAL" ${ARGN})
  set(list_file ${CMAKE_CURRENT_BINARY_DIR}/${target}_suites.cmake)
  set(include_file ${CMAKE_CURRENT_BINARY_DIR}/${target}_include.cmake)
  add_custom_command(TARGET ${target} POST_BUILD
    COMMAND ${CMAKE_COMMAND} -DEXECUTABLE=$<TARGET_FILE:${target}> -DOUTPUT=${list_file}
            "-DLABELS=${arg_LABELS}" "-DPROPERTIES=${arg_PROPERTIES}" "-DSERIAL=${arg_SERIAL}" -DSKIP_CODE=${KS_GTEST_ALL_SKIPPED}
            -DWORKING_DIRECTORY=${CMAKE_CURRENT_BINARY_DIR}
            -P ${PROJECT_SOURCE_DIR}/cmake/gtest_suites_list.cmake
    BYPRODUCTS ${list_file}
    VERBATIM)
  # Before the first build there is no list: one test that says so, as gtest_discover_tests does.
  file(WRITE ${include_file}
    "if(EXISTS \"${list_file}\")\n"
    "  include(\"${list_file}\")\n"
    "else()\n"
    "  add_test(${target}_NOT_BUILT ${target}_NOT_BUILT)\n"
    "endif()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${include_file})
endfunction()
