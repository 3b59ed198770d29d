#!/usr/bin/env bash
# Every built-in kernel's GPU implementations against the floor of their work on this host's first
# GPU: the GPU calibrated, then bench/gpu/kernel-table.yaml (one large shape per kernel), shown with
# each point's rates and sol_pct. bench/results/kernels-sol.md records its output per card.
#   bench/gpu/kernel_table.sh [BUILD_DIR] [OUT_DIR]
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
echo "== bench/gpu/kernel-table.yaml"
start=$(date +%s)
mpirun -np 1 "$build/kernelsweep" run bench/gpu/kernel-table.yaml --output-dir "$out/sweep" --overwrite \
  > "$out/sweep.log" 2>&1
echo "exit $? in $(( $(date +%s) - start )) s"
"$build/kernelsweep" show "$out/sweep/kernel-table.h5" --format md \
  --columns kernel,implementation,mode,op,dtype,tokens,status,median_ms,tflops,gbps,bandwidth_pct,compute_pct,sol_pct,flags
