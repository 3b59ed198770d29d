#!/usr/bin/env bash
# After the review commit: the gpu tests, the row kernels alone and one bench pass at 2048 tokens,
# and the seed's sweep end to end, on one H200.
#   bench/device/h200_session2_review.sh BIN_DIR KIT_DIR OUT_DIR
set -uo pipefail
bin=$1 kit=$2 out=$3
mkdir -p /tmp/kit && tar xJf "$kit/kit.tar.xz" -C /tmp/kit && source /tmp/kit/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 CUDA_VISIBLE_DEVICES=0
nvidia-smi --query-gpu=index,name,uuid,driver_version --format=csv,noheader
"$bin/kernelsweep" --version
for t in "$bin"/gpu_*; do "$t" > "$out/$(basename "$t").txt" 2>&1; echo "$(basename "$t") exit $?"; done
grep -hE "^\[ +(OK|FAILED|SKIPPED|PASSED) |FAILED|Failure|median|GPU 0" "$out"/gpu_*.txt | head -30
grep -h "seed shape" "$out"/gpu_distill*.txt
"$bin/bench_distill_cosine" --tokens 2048 --no-naive --variants c2048 --row-kernels c2048/two-pass,c2048/cluster \
  | tee "$out/distill_cosine.txt"
mpirun -np 1 "$bin/kernelsweep" run configs/liger-distill-cosine.yaml --overwrite --output-dir /tmp/ks-liger \
  --kernelindex-format jsonl > /tmp/ks-liger.log 2>&1
echo "run exit code $?"
grep -v "^progress\|pmix\|Perhaps a missing\|dlopen" /tmp/ks-liger.log | tail -6
"$bin/kernelsweep" status /tmp/ks-liger/liger-distill-cosine.h5
echo "jsonl lines: $(wc -l < /tmp/ks-liger/kernelindex/kernelindex.jsonl)"
