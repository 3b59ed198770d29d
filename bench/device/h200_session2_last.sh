#!/usr/bin/env bash
# Session 2's last binaries on one H200: the gpu tests; bench/distill_cosine twice (automatic row
# kernel now two-pass; the cluster kernel beside it, alone and in the pass; naive in the first run);
# the seed's sweep end to end.
#   bench/device/h200_session2_last.sh BIN_DIR KIT_DIR OUT_DIR
set -uo pipefail
bin=$1 kit=$2 out=$3
mkdir -p /tmp/kit && tar xJf "$kit/kit.tar.xz" -C /tmp/kit && source /tmp/kit/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 CUDA_VISIBLE_DEVICES=0
nvidia-smi --query-gpu=index,name,uuid,driver_version,clocks.sm,temperature.gpu,power.draw --format=csv | tee "$out/gpu.txt"
"$bin/kernelsweep" --version
for t in "$bin"/gpu_*; do "$t" > "$out/$(basename "$t").txt" 2>&1; echo "$(basename "$t") exit $?"; done
grep -hE "^\[ +(OK|FAILED|SKIPPED|PASSED) |FAILED|Failure|median|GPU 0|GB held" "$out"/gpu_*.txt | head -30
grep -h "seed shape" "$out"/gpu_distill*.txt
for run in 1 2; do
  echo "== bench_distill_cosine, run $run"
  naive=--no-naive; [[ $run == 1 ]] && naive=
  "$bin/bench_distill_cosine" --variants c2048,c2048/cluster --row-kernels c2048/two-pass,c2048/cluster $naive \
    | tee "$out/distill_cosine_run$run.txt"
done
echo "== the seed's sweep"
mpirun -np 1 "$bin/kernelsweep" run configs/liger-distill-cosine.yaml --overwrite --output-dir /tmp/ks-liger \
  > /tmp/ks-liger.log 2>&1
echo "run exit code $?"
grep -v "^progress\|pmix\|Perhaps a missing\|dlopen" /tmp/ks-liger.log | tail -8
"$bin/kernelsweep" status /tmp/ks-liger/liger-distill-cosine.h5
echo "documents: $(ls /tmp/ks-liger/kernelindex | wc -l)"
tar czf "$out/liger-session2-last.tar.gz" -C /tmp ks-liger
nvidia-smi --query-gpu=index,clocks.sm,temperature.gpu,power.draw --format=csv
exit 0
