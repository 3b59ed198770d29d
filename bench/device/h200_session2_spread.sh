#!/usr/bin/env bash
# How often the automatic configuration meets the 4096- and 8192-token goals on one H200: four runs of
# bench/distill_cosine, each making the configuration twice per token count (the c2048 and auto lines
# are the same configuration), with the floor of each run.
#   bench/device/h200_session2_spread.sh BIN_DIR KIT_DIR OUT_DIR
set -uo pipefail
bin=$1 kit=$2 out=$3
mkdir -p /tmp/kit && tar xJf "$kit/kit.tar.xz" -C /tmp/kit && source /tmp/kit/env.sh
nvidia-smi --query-gpu=index,name,uuid,clocks.sm,temperature.gpu,power.draw --format=csv | tee "$out/gpu.txt"
for run in 1 2 3 4; do
  "$bin/bench_distill_cosine" --tokens 4096,8192 --no-naive --variants c2048 > "$out/run$run.txt" 2>&1
  grep -E "^ +[0-9]+ +(gemm-floor|c2048|auto)" "$out/run$run.txt" | sed "s/^/run $run /"
done
nvidia-smi --query-gpu=index,clocks.sm,temperature.gpu,power.draw --format=csv
