# Writes build_info.h at every build (not only at configure time), so --version, the results file and
# the documents always name the commit the binary was built from. configure_file leaves the file
# untouched when nothing changed, so nothing recompiles then.
execute_process(COMMAND git rev-parse --short=12 HEAD WORKING_DIRECTORY ${SOURCE_DIR}
                OUTPUT_VARIABLE KS_GIT_COMMIT OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT KS_GIT_COMMIT)
  set(KS_GIT_COMMIT unknown)
else()
  execute_process(COMMAND git status --porcelain --untracked-files=no WORKING_DIRECTORY ${SOURCE_DIR}
                  OUTPUT_VARIABLE dirty OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(dirty)
    string(APPEND KS_GIT_COMMIT "-dirty")
  endif()
endif()
configure_file(${INPUT} ${OUTPUT} @ONLY)
