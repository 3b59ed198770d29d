#!/usr/bin/env bash
# rms_norm against the memory floor on this host's first GPU: the GPU calibrated, then
# bench/gpu/rms-norm-floor.yaml (kernelsweep's cuda, Liger's liger and the benchmark's torch at
# 4096 x 4096 and larger, bf16 and fp32, forward, backward and full, beside plain copies), shown
# with each point's GB/s and sol_pct.
#   bench/gpu/rms_norm_floor.sh [BUILD_DIR] [OUT_DIR]
# Liger-Kernel in external/liger (or $LIGER_SRC), as bench/gpu/liger_benchmark.sh says; without it
# the liger points are recorded skipped.
export NCCL_NVLS_ENABLE=0
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
print_header
require_gpus

liger=${LIGER_SRC:-$ks_root/external/liger}
export PYTHONPATH=$liger/src:$liger${PYTHONPATH:+:$PYTHONPATH}
export KERNELSWEEP_PYTHON=${KERNELSWEEP_PYTHON:-python3} PYTHONUNBUFFERED=1
export KERNELSWEEP_CALIBRATION_DIR=$out/calibration

echo "== kernelsweep calibrate"
mpirun -np 1 "$build/kernelsweep" calibrate
echo "== bench/gpu/rms-norm-floor.yaml"
start=$(date +%s)
mpirun -np 1 "$build/kernelsweep" run bench/gpu/rms-norm-floor.yaml --output-dir "$out/sweep" --overwrite \
  > "$out/sweep.log" 2>&1
echo "exit $? in $(( $(date +%s) - start )) s"
"$build/kernelsweep" show "$out/sweep/rms-norm-floor.h5" --format md \
  --columns kernel,implementation,mode,op,mib,tokens,hidden,dtype,status,median_ms,gbps,sol_pct,flags
