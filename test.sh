#!/usr/bin/env bash
# ./test.sh [CTEST ARGS]: install what is missing (the test dependencies too), check the sources'
# format (scripts/check-format.sh), build everything
# (product, tests, benchmarks) and run the whole test suite (ctest). Then, unless ctest arguments
# pick some tests, the unit and MPI tests again under AddressSanitizer and UndefinedBehaviorSanitizer
# (scripts/test-sanitized.sh) and a minute of fuzzing of the sweep-file parser and planner
# (scripts/fuzz.sh). Tests labelled gpu skip themselves where no GPU is present.
# Each stage prints how long it took, and the end a table of them all.
set -euo pipefail
cd "$(dirname "$0")"

stage_lines=()
started=$SECONDS
minutes() { printf '%d:%02d' $(($1 / 60)) $(($1 % 60)); }
summary() {
  local code=$?
  echo "test.sh: stage times (m:ss)"
  for line in "${stage_lines[@]}"; do echo "  $line"; done
  echo "  total      $(minutes $((SECONDS - started)))"
}
trap summary EXIT
# stage NAME COMMAND...: runs COMMAND, then says how long it took (a failure still ends the script).
stage() {
  local name=$1 start=$SECONDS code=0
  shift
  echo "test.sh: $name"
  "$@" || code=$?
  local line
  line=$(printf '%-10s %s' "$name" "$(minutes $((SECONDS - start)))")
  if ((code)); then line+="  failed (exit $code)"; fi
  stage_lines+=("$line")
  echo "test.sh: $name took $(minutes $((SECONDS - start)))"
  return "$code"
}

stage install scripts/install-deps.sh --tests
stage format scripts/check-format.sh
stage build scripts/build.sh -DKERNELSWEEP_TESTS=ON -DKERNELSWEEP_BENCH=ON
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Twice as many tests at once as cores: most of them wait on processes (mpirun, workers, Slurm jobs)
# far more than they compute.
stage ctest ctest --test-dir build --output-on-failure -j "$(($(nproc) * 2))" "$@"
if (($# == 0)); then
  stage sanitized scripts/test-sanitized.sh
  stage fuzz scripts/fuzz.sh 60
fi
