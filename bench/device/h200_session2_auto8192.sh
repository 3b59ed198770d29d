#!/usr/bin/env bash
# Why the auto= line at 8192 tokens (the c2048 configuration, made last) measures 8-10 % slower than the
# c2048 line made earlier in the same run: the same configuration made several times in a row, and
# auto after one variant only.
#   bench/device/h200_session2_auto8192.sh BIN_DIR KIT_DIR OUT_DIR
set -uo pipefail
bin=$1 kit=$2 out=$3
mkdir -p /tmp/kit && tar xJf "$kit/kit.tar.xz" -C /tmp/kit && source /tmp/kit/env.sh
nvidia-smi --query-gpu=index,name,uuid,clocks.sm,temperature.gpu,power.draw --format=csv
echo "== the same configuration five times, then auto"
"$bin/bench_distill_cosine" --tokens 8192 --no-naive --variants c2048,c2048,c1024,c2048,c2048 | tee "$out/repeat.txt"
nvidia-smi --query-gpu=index,clocks.sm,temperature.gpu,power.draw --format=csv
echo "== auto right after one variant"
"$bin/bench_distill_cosine" --tokens 8192 --no-naive --variants c2048 | tee "$out/once.txt"
nvidia-smi --query-gpu=index,clocks.sm,temperature.gpu,power.draw --format=csv
exit 0
