#!/usr/bin/env bash
# The final binaries of session 2 on one H200, in one call: the gpu tests; bench/distill_cosine twice
# (the row kernels alone, full passes beside the floor, naive once); one full pass at 4096 tokens
# under ncu (each kernel's time); the seed's sweep end to end; and the bf16 8192³ product against
# torch.matmul timed by triton's do_bench, interleaved, each after the same idle pause.
#   bench/device/h200_session2_final.sh BIN_DIR KIT_DIR OUT_DIR
set -uo pipefail
bin=$1 kit=$2 out=$3
mkdir -p /tmp/kit && tar xJf "$kit/kit.tar.xz" -C /tmp/kit && source /tmp/kit/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 CUDA_VISIBLE_DEVICES=0
nvidia-smi --query-gpu=index,name,uuid,driver_version,clocks.sm,temperature.gpu,power.draw --format=csv | tee "$out/gpu.txt"
echo "== gpu tests"
for t in "$bin"/gpu_*; do "$t" > "$out/$(basename "$t").txt" 2>&1; echo "$(basename "$t") exit $?"; done
grep -hE "^\[ +(OK|FAILED|SKIPPED|PASSED) |FAILED|Failure|median|GPU 0|seed shape|GB held" "$out"/gpu_*.txt | grep -v "^\[fused" | head -40
grep -h "FusedMatchesNaive\|fused vs naive" "$out"/gpu_distill*.txt | head -4
echo "== bench_distill_cosine, run 1"
"$bin/bench_distill_cosine" --variants c2048,c2048/cluster --row-kernels c2048/two-pass,c2048/cluster \
  | tee "$out/distill_cosine_run1.txt"
echo "== bench_distill_cosine, run 2"
"$bin/bench_distill_cosine" --variants c2048,c2048/cluster --no-naive | tee "$out/distill_cosine_run2.txt"
echo "== ncu: one full pass at 4096 tokens, each kernel's time"
timeout 120 ncu --clock-control none --metrics gpu__time_duration.sum --csv -c 260 \
  "$bin/bench_distill_cosine" --tokens 4096 --variants c2048 --no-naive > "$out/ncu_pass_4096.csv" 2>&1
echo "ncu exit $? ($(wc -l < "$out/ncu_pass_4096.csv") lines)"
echo "== the seed's sweep"
mpirun -np 1 "$bin/kernelsweep" run configs/liger-distill-cosine.yaml --overwrite --output-dir /tmp/ks-liger \
  > /tmp/ks-liger.log 2>&1
echo "run exit code $?"
grep -v "^progress\|pmix\|Perhaps a missing\|dlopen" /tmp/ks-liger.log | tail -12
"$bin/kernelsweep" status /tmp/ks-liger/liger-distill-cosine.h5
ls /tmp/ks-liger/kernelindex | wc -l
tar czf "$out/liger-session2.tar.gz" -C /tmp ks-liger
ks_point() {  # CONFIG LABEL
  mpirun -np 1 "$bin/kernelsweep" run "$1" --overwrite --check none --output-dir /tmp/ks-$2 > /tmp/ks-$2.log 2>&1 \
    || tail -5 /tmp/ks-$2.log
  python3 bench/device/gemm_ramp.py h5 /tmp/ks-$2/*.h5 "$2"
}
echo "== gemm 8192^3 bf16 against torch, 5 s idle before each"
for round in 1 2 3 4; do
  sleep 5; python3 bench/device/gemm_ramp.py torch 8192
  sleep 5; ks_point bench/device/gemm-8192.yaml cublaslt
  sleep 5; ks_point bench/device/gemm-8192-cublas.yaml cublas
done 2>&1 | tee "$out/gemm_vs_torch.txt"
nvidia-smi --query-gpu=index,clocks.sm,temperature.gpu,power.draw --format=csv
exit 0
