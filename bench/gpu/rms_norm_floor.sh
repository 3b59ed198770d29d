#!/usr/bin/env bash
# rms_norm against the memory floor on this host's first GPU: the GPU calibrated, then
# bench/gpu/rms-norm-floor.yaml (kernelsweep's cuda, Liger's liger and the benchmark's torch at
# 4096 x 4096 and larger, bf16 and fp32, forward, backward and full, beside plain copies), shown
# with each point's GB/s and sol_pct.
#   bench/gpu/rms_norm_floor.sh [BUILD_DIR] [OUT_DIR]
export NCCL_NVLS_ENABLE=0
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
print_header
require_gpus
use_liger
calibrate_and_sweep bench/gpu/rms-norm-floor.yaml
"$build/kernelsweep" show "$out/sweep/rms-norm-floor.h5" --format md \
  --columns kernel,implementation,mode,op,mib,tokens,hidden,dtype,status,median_ms,gbps,sol_pct,flags
