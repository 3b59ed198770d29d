#!/usr/bin/env bash
# The final binaries on one H200: the gpu tests, then the seed's sweep end to end.
#   bench/device/h200_final.sh BIN_DIR KIT_DIR OUT_DIR
set -uo pipefail
bin=$1 kit=$2 out=$3
mkdir -p /tmp/kit && tar xJf "$kit/kit.tar.xz" -C /tmp/kit && source /tmp/kit/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
nvidia-smi --query-gpu=index,name,uuid,driver_version,clocks.sm,temperature.gpu --format=csv
for t in "$bin"/gpu_*; do "$t" 2>&1 | grep -E "^\[ +(OK|FAILED|SKIPPED|PASSED) |tests ran|PASSED|FAILED|median|GPU 0"; done
mpirun -np 1 "$bin/kernelsweep" run configs/liger-distill-cosine.yaml --overwrite --output-dir /tmp/ks-liger \
  > /tmp/ks-liger.log 2>&1
echo "run exit code $?"
grep -v "^progress\|pmix\|Perhaps a missing\|dlopen" /tmp/ks-liger.log | tail -8
"$bin/kernelsweep" status /tmp/ks-liger/liger-distill-cosine.h5
tar czf "$out/liger-final.tar.gz" -C /tmp ks-liger
