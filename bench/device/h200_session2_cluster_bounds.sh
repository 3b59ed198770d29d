#!/usr/bin/env bash
# Session 2, last call on one H200: the cluster row kernel with __launch_bounds__(256, 3) (80
# registers) against the two-pass kernel, alone and in the pass; the distill gpu tests first.
#   bench/device/h200_session2_cluster_bounds.sh BIN_DIR KIT_DIR OUT_DIR
set -uo pipefail
bin=$1 kit=$2 out=$3
mkdir -p /tmp/kit && tar xJf "$kit/kit.tar.xz" -C /tmp/kit && source /tmp/kit/env.sh
nvidia-smi --query-gpu=index,name,uuid,driver_version,clocks.sm,temperature.gpu,power.draw --format=csv | tee "$out/gpu.txt"
"$bin/gpu_distill_cosine_gpu_test" > "$out/gpu_distill_cosine_gpu_test.txt" 2>&1
echo "gpu test exit $?"
grep -E "^\[ +(OK|FAILED|SKIPPED|PASSED) |FAILED|Failure" "$out/gpu_distill_cosine_gpu_test.txt" | head -20
for run in 1 2; do
  echo "== bench_distill_cosine, run $run"
  "$bin/bench_distill_cosine" --variants c2048,c2048/cluster --row-kernels c2048/two-pass,c2048/cluster --no-naive \
    | tee "$out/distill_cosine_run$run.txt"
done
nvidia-smi --query-gpu=index,clocks.sm,temperature.gpu,power.draw --format=csv
exit 0
