# Run after each build of a test executable (cmake/gtest_suites.cmake): lists its GoogleTest suites
# and writes OUTPUT, the ctest file with one test per suite.
#   cmake -DEXECUTABLE=... -DOUTPUT=... -DLABELS=... -DPROPERTIES=... -DSERIAL=... -DSKIP_CODE=... -DWORKING_DIRECTORY=... -P
execute_process(COMMAND "${EXECUTABLE}" --gtest_list_tests
  WORKING_DIRECTORY "${WORKING_DIRECTORY}"
  TIMEOUT 60
  OUTPUT_VARIABLE listing
  ERROR_VARIABLE errors
  RESULT_VARIABLE result)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "${EXECUTABLE} --gtest_list_tests failed (${result}):\n${listing}${errors}")
endif()

# Suite lines start in the first column and end in '.', perhaps followed by a comment
# ("Typed/0.  # TypeParam = int"); case lines are indented.
string(REPLACE ";" "\\;" listing "${listing}")
string(REPLACE "\n" ";" lines "${listing}")
set(suites "")
foreach(line IN LISTS lines)
  if(line MATCHES "^([^ #][^ ]*)\\.( +#.*)?$")
    set(suite "${CMAKE_MATCH_1}")
    if(NOT suite MATCHES "(^|/)DISABLED_")
      list(APPEND suites "${suite}")
    endif()
  endif()
endforeach()

set(script "")
foreach(suite IN LISTS suites)
  string(APPEND script "add_test([==[${suite}]==] [==[${EXECUTABLE}]==] [==[--gtest_filter=${suite}.*]==])\n")
  string(APPEND script "set_tests_properties([==[${suite}]==] PROPERTIES WORKING_DIRECTORY [==[${WORKING_DIRECTORY}]==]"
                       " LABELS [==[${LABELS}]==] SKIP_RETURN_CODE ${SKIP_CODE}")
  foreach(item IN LISTS PROPERTIES)
    string(APPEND script " [==[${item}]==]")
  endforeach()
  list(FIND SERIAL "${suite}" serial_at)
  if(serial_at GREATER -1)
    string(APPEND script " RUN_SERIAL TRUE")
  endif()
  string(APPEND script ")\n")
endforeach()
file(WRITE "${OUTPUT}" "${script}")
