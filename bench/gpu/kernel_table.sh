#!/usr/bin/env bash
# Every built-in kernel's GPU implementations against the floor of their work on this host's first
# GPU: the GPU calibrated, then bench/gpu/kernel-table.yaml (one large shape per kernel), shown with
# each point's rates and sol_pct. bench/results/kernels-sol.md records its output per card.
#   bench/gpu/kernel_table.sh [BUILD_DIR] [OUT_DIR]
export NCCL_NVLS_ENABLE=0
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
print_header
require_gpus
use_liger
calibrate_and_sweep bench/gpu/kernel-table.yaml
"$build/kernelsweep" show "$out/sweep/kernel-table.h5" --format md \
  --columns kernel,implementation,mode,op,dtype,tokens,status,median_ms,tflops,gbps,bandwidth_pct,compute_pct,sol_pct,flags
