#!/usr/bin/env bash
# The unit and MPI tests again, in a second build under AddressSanitizer and
# UndefinedBehaviorSanitizer (build-sanitize/, without CUDA: the sanitizers do not follow device
# code). A report fails the test whose process made it. Leak reports are off: OpenMPI and HDF5 keep
# their allocations until exit by design.
#   scripts/test-sanitized.sh [CTEST ARGS]
# The library is optimised at -O1, as the sanitizers' authors advise: a third of -O3's compile time,
# and the reports name the lines as written; the test files at -O0, half of -O1's time under the
# sanitizers. Only what the unit and MPI tests run is built.
set -euo pipefail
cd "$(dirname "$0")/.."
sanitizers="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
cmake -S . -B build-sanitize -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_FLAGS_RELEASE="-O1 -DNDEBUG" -DCMAKE_C_FLAGS_RELEASE="-O1 -DNDEBUG" -DKERNELSWEEP_TESTS_OPTIMIZATION=-O0 \
  -DKERNELSWEEP_CUDA=OFF -DKERNELSWEEP_TESTS=ON -DKERNELSWEEP_BENCH=OFF \
  -DCMAKE_CXX_FLAGS="$sanitizers" -DCMAKE_C_FLAGS="$sanitizers" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" \
  -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=address,undefined" \
  -DCMAKE_MODULE_LINKER_FLAGS="-fsanitize=address,undefined"
cmake --build build-sanitize -j "$(nproc)" --target unit_tests mpi_tests
# Test kernels that crash on purpose must still die of their signal (a worker's death is what those
# tests check), so the sanitizers leave SIGSEGV, SIGBUS, SIGFPE and abort() alone.
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=0:handle_segv=0:handle_sigbus=0:handle_sigfpe=0:handle_abort=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Twice as many tests at once as cores, as ./test.sh runs them: most of them wait on processes.
ctest --test-dir build-sanitize -L 'unit|mpi' --output-on-failure -j "$(($(nproc) * 2))" "$@"
