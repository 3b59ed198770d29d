#!/usr/bin/env bash
# Configures and builds kernelsweep into ./build (Release, Ninja):
#   scripts/build.sh [CMAKE ARGS...]
# A plain configure builds the product alone (the kernelsweep program, its kernels, what
# `cmake --install` installs); ./test.sh adds -DKERNELSWEEP_TESTS=ON -DKERNELSWEEP_BENCH=ON.
# KERNELSWEEP_CMAKE_ARGS, if set, is added to the configure step as well.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck disable=SC2086
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release ${KERNELSWEEP_CMAKE_ARGS:-} "$@"
cmake --build build -j "$(nproc)"
