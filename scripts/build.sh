#!/usr/bin/env bash
# Configures and builds kernelsweep into ./build (Release, Ninja).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release ${KERNELSWEEP_CMAKE_ARGS:-}
cmake --build build -j "$(nproc)"
