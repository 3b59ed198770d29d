#!/usr/bin/env bash
# ./test.sh: install what is missing, build, and run the whole test suite (ctest). Then, unless
# ctest arguments pick some tests, the unit and MPI tests again under AddressSanitizer and
# UndefinedBehaviorSanitizer (scripts/test-sanitized.sh) and a minute of fuzzing of the sweep-file
# parser and planner (scripts/fuzz.sh). Tests labelled gpu skip themselves where no GPU is present.
set -euo pipefail
cd "$(dirname "$0")"
scripts/install-deps.sh
scripts/build.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
ctest --test-dir build --output-on-failure -j "$(nproc)" "$@"
if (($# == 0)); then
  scripts/test-sanitized.sh
  scripts/fuzz.sh 60
fi
