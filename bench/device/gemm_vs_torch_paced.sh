#!/usr/bin/env bash
# bf16 8192³: kernelsweep's cublaslt against torch.matmul + triton do_bench, alternating, each after
# the same 10 s pause, so that both start from the same thermal and clock state:
#   bench/device/gemm_vs_torch_paced.sh BIN_DIR KIT_DIR
set -uo pipefail
bin=$1 kit=$2
mkdir -p /tmp/kit && tar xJf "$kit/kit.tar.xz" -C /tmp/kit && source /tmp/kit/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 CUDA_VISIBLE_DEVICES=0
for round in 1 2 3 4; do
  sleep 10
  python3 bench/device/torch_matmul_do_bench.py 8192 fp32-drawn | grep -o '"inputs".*"p80_ms": [0-9.]*'
  sleep 10
  mpirun -np 1 "$bin/kernelsweep" run bench/device/gemm-8192.yaml --overwrite --check none \
    --output-dir /tmp/ks-paced --kernelindex-format jsonl > /tmp/ks-paced.log 2>&1
  python3 -c '
import json
d = json.loads(open("/tmp/ks-paced/kernelindex/kernelindex.jsonl").readline())
m = d["run"]["spec"]["sourceNative"]["metrics"]
print("kernelsweep cublaslt", "median_ms", m["median_ns"] / 1e6, "p20_ms", m["p20_ns"] / 1e6, "p80_ms", m["p80_ns"] / 1e6)'
done
