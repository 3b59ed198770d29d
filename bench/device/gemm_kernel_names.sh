#!/usr/bin/env bash
# Which cuBLASLt kernel torch.matmul and kernelsweep's bf16 8192³ point launch (CUBLASLT_LOG_LEVEL=2
# logs each cublasLtMatmul with its algorithm); session 2's call 1 ran these lines:
#   bench/device/gemm_kernel_names.sh BIN_DIR KIT_DIR OUT_DIR
set -uo pipefail
bin=$1 kit=$2 out=$3
mkdir -p /tmp/kit && tar xJf "$kit/kit.tar.xz" -C /tmp/kit && source /tmp/kit/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 CUDA_VISIBLE_DEVICES=0
CUBLASLT_LOG_LEVEL=2 CUBLASLT_LOG_FILE=/tmp/lt-torch.log python3 -c '
import torch
a = torch.rand(8192, 8192, device="cuda").to(torch.bfloat16); b = torch.rand(8192, 8192, device="cuda").to(torch.bfloat16)
torch.matmul(a, b); torch.cuda.synchronize()'
CUBLASLT_LOG_LEVEL=2 CUBLASLT_LOG_FILE=/tmp/lt-ks-%i.log mpirun -np 1 -x CUBLASLT_LOG_LEVEL -x CUBLASLT_LOG_FILE \
  "$bin/kernelsweep" run bench/device/gemm-8192-cublas.yaml --overwrite --check none --output-dir /tmp/ks-log > /dev/null 2>&1
for f in /tmp/lt-torch.log /tmp/lt-ks-*.log; do
  echo "-- $f"; grep -o "algo=\[[^]]*\]" "$f" | sort | uniq -c
done
cp /tmp/lt-*.log "$out/"
