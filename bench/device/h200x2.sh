#!/usr/bin/env bash
# The device run for the distributed-run and scale issues, on a host with one or two H200s:
#   bench/device/h200x2.sh BIN_DIR KIT_DIR OUT_DIR
# BIN_DIR holds kernelsweep and the gpu_* test binaries built here (CUDA on); KIT_DIR the runtime
# kit (shared/gpu-host/make-kit). Writes logs and results under OUT_DIR.
set -uo pipefail
bin=$1 kit=$2 out=$3
work=/tmp/ks-work
mkdir -p /tmp/kit "$work" && tar xJf "$kit/kit.tar.xz" -C /tmp/kit && source /tmp/kit/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0
gpus=$(nvidia-smi -L | wc -l)
{
  nvidia-smi -L
  nvidia-smi --query-gpu=index,name,uuid,pci.bus_id,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv
} 2>&1 | tee "$out/gpus.txt"

echo "== gpu tests" | tee "$out/gpu-tests.txt"
for t in "$bin"/gpu_*; do "$t" 2>&1 | tee -a "$out/gpu-tests.txt"; done

sweep() {  # name ranks config [options]: run one sweep, print its wall time
  local name=$1 ranks=$2 config=$3; shift 3
  local start end
  start=$(date +%s.%N)
  mkdir -p "$work/$name"
  mpirun -np "$ranks" "$bin/kernelsweep" run "$config" --overwrite --output-dir "$work/$name" "$@" \
    > "$work/$name/run.log" 2>&1
  local rc=$?
  end=$(date +%s.%N)
  printf "%-28s ranks %d  rc %d  wall %.2f s\n" "$name" "$ranks" "$rc" "$(awk "BEGIN {print $end - $start}")" | tee -a "$out/walls.txt"
  tail -n 12 "$work/$name/run.log"
  tar czf "$out/results.tar.gz" -C "$work" .  # after every sweep: a time limit keeps what was done
}

echo "== gemm-h200 on all GPUs, then torch on each GPU"
sweep gemm-h200-np$gpus "$gpus" configs/gemm-h200.yaml
"$bin/kernelsweep" status "$work/gemm-h200-np$gpus/gemm-h200.h5" | tee "$out/gemm-h200-status.txt"
python3 bench/device/torch_matmul_do_bench.py 8192 2>&1 | tee "$out/torch-matmul.txt"
python3 bench/device/torch_matmul_do_bench.py 4096 2>&1 | tee -a "$out/torch-matmul.txt"

sweep liger-distill-cosine-np$gpus "$gpus" configs/liger-distill-cosine.yaml
[[ $gpus -gt 1 ]] && sweep liger-distill-cosine-np1 1 configs/liger-distill-cosine.yaml
for ranks in $(seq 1 "$gpus"); do
  sweep gemm-scale-np$ranks "$ranks" configs/gemm-scale.yaml --kernelindex-format jsonl
done
ls -la "$out"
