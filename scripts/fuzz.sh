#!/usr/bin/env bash
# Fuzzes the sweep-file parser and planner (tests/fuzz/sweep_file_fuzzer.cpp) for a bounded time:
#   scripts/fuzz.sh [SECONDS=60]
# A clang build in build-fuzz/, everything instrumented for libFuzzer and under AddressSanitizer and
# UndefinedBehaviorSanitizer, without CUDA. The seeds are tests/fuzz/corpus (real sweep files and
# every reproducer found); what the run adds goes to build-fuzz/corpus. A crash, a hang (10 s on
# one input) or a blow-up of memory (2 GB) fails the script, and its input is left in build-fuzz/
# to be added to the corpus once fixed. Only the parser, the planner and the built-in kernels are built.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
flags="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DKERNELSWEEP_CUDA=OFF -DKERNELSWEEP_TESTS=OFF -DKERNELSWEEP_BENCH=OFF -DKERNELSWEEP_FUZZ=ON \
  -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_C_FLAGS="$flags" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=address,undefined" >/dev/null
cmake --build build-fuzz --target sweep_file_fuzzer -j "$(nproc)"
mkdir -p build-fuzz/corpus
cd build-fuzz
UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 ASAN_OPTIONS=detect_leaks=0 \
  ./sweep_file_fuzzer -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
  corpus ../tests/fuzz/corpus
