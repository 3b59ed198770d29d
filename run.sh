#!/usr/bin/env bash
# ./run.sh [SWEEP_FILE] [-- RUN OPTIONS]: install what is missing, build, and run a sweep
# (default configs/quickstart.yaml) on this machine: on its GPU if it has one, else on the CPU.
# It installs and builds the product alone: the test suite's packages and programs are ./test.sh's.
set -euo pipefail
cd "$(dirname "$0")"
sweep=${1:-configs/quickstart.yaml}
shift || true
[[ ${1:-} == "--" ]] && shift
scripts/install-deps.sh
scripts/build.sh
# mpirun refuses root unless told; containers and CI machines often run as root.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
build/kernelsweep validate "$sweep"
mpirun -np 1 build/kernelsweep run "$sweep" --overwrite "$@"
