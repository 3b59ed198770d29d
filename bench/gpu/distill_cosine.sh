#!/usr/bin/env bash
# distill_cosine_loss on this host's GPUs: bench_distill_cosine at 1024, 2048, 4096 and 8192 tokens
# (hidden 4096, vocab 128256, bf16: the fused implementation's variants, the naive one and the
# floor of the four matrix products, on the first GPU), RUNS times; then configs/liger-distill-cosine.yaml
# end to end with one rank per GPU (32 points: fused and naive, four modes, the same token counts),
# its status, and the full-pass medians and peak memory from its results file.
#   bench/gpu/distill_cosine.sh [BUILD_DIR] [OUT_DIR]
# Settings (environment):
#   RUNS=2         how many times bench_distill_cosine runs (the naive implementation in the first only; 0: none)
#   BENCH_ARGS=... replaces the variant options below, e.g. "--tokens 4096,8192 --no-naive --variants c2048"
#   SWEEP=0        leaves the sweep out
# On sm_90 the variants are the serial chunk-2048 configuration with the two-pass row kernel (what
# chunk_size auto picks) and with the cluster row kernel, and each row kernel alone; on older GPUs
# the cluster kernel is left out (it needs thread-block clusters).
export NCCL_NVLS_ENABLE=0  # NVLink multicast off, as everywhere in bench/gpu
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
print_header
require_gpus

runs=${RUNS:-2}
bench=$build/bench/bench_distill_cosine
((runs == 0)) || [[ -x $bench ]] || { echo "no $bench (a build with CUDA?)"; exit 2; }
if [[ -n ${BENCH_ARGS:-} ]]; then
  read -r -a variant_args <<< "$BENCH_ARGS"
elif (($(compute_capability) >= 90)); then
  variant_args=(--variants c2048,c2048/cluster --row-kernels c2048/two-pass,c2048/cluster)
else
  variant_args=(--variants c2048 --row-kernels c2048/two-pass)
fi

rc=0
for ((run = 1; run <= runs; ++run)); do
  naive=(--no-naive)
  [[ $run == 1 && -z ${BENCH_ARGS:-} ]] && naive=()
  echo "== bench_distill_cosine ${variant_args[*]} ${naive[*]} (run $run of $runs)"
  "$bench" "${variant_args[@]}" "${naive[@]}" | tee "$out/bench_run$run.txt" || rc=1
  gpu_state
done

if [[ ${SWEEP:-1} != 0 ]]; then
  sweep_out=$out/liger-distill-cosine
  echo "== mpirun -np $gpus kernelsweep run configs/liger-distill-cosine.yaml"
  start=$(date +%s.%N)
  ks_mpirun "$gpus" run configs/liger-distill-cosine.yaml --overwrite --output-dir "$sweep_out" \
    > "$out/liger-distill-cosine.run.txt" 2>&1
  sweep_rc=$?
  end=$(date +%s.%N)
  echo "run exit code $sweep_rc, wall $(awk "BEGIN {printf \"%.2f\", $end - $start}") s"
  ((sweep_rc == 0)) || rc=1
  grep -vE "^progress|pmix|Perhaps a missing|dlopen" "$out/liger-distill-cosine.run.txt" | tail -8
  "$build/kernelsweep" status "$sweep_out/liger-distill-cosine.h5"
  echo "documents: $(find "$sweep_out/kernelindex" -type f | wc -l) files"
  echo "== full pass: median and peak memory per point"
  "$build/kernelsweep" show "$sweep_out/liger-distill-cosine.h5" --where mode=full
  gpu_state
fi
exit "$rc"
