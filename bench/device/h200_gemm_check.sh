#!/usr/bin/env bash
# After a change to the gemm implementations: the gpu tests, then both cuBLAS paths through a sweep.
#   bench/device/h200_gemm_check.sh BIN_DIR KIT_DIR
set -uo pipefail
bin=$1 kit=$2
mkdir -p /tmp/kit && tar xJf "$kit/kit.tar.xz" -C /tmp/kit && source /tmp/kit/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
for t in "$bin"/gpu_*; do "$t" 2>&1 | grep -E "^\[ +(OK|FAILED|SKIPPED|PASSED) |PASSED|FAILED|median|GPU 0"; done
mpirun -np 1 "$bin/kernelsweep" run configs/gemm-torch-compare.yaml --overwrite --output-dir /tmp/ks-gemm > /tmp/ks-gemm.log 2>&1
echo "run exit code $?"
grep -v "^progress\|pmix\|Perhaps a missing\|dlopen" /tmp/ks-gemm.log | tail -6
