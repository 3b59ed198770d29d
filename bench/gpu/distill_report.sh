#!/usr/bin/env bash
# distill_cosine_loss with its GEMM floor on this host's GPUs (bench/gpu/distill-cosine-floor.yaml,
# one rank per GPU): the results file and documents that docs/report.md's report is made from,
# beside Liger-Kernel's published A100 figures:
#   bench/gpu/distill_report.sh [BUILD_DIR] [OUT_DIR]
# then, on any machine with the results (OUT_DIR/distill-cosine-floor/distill-cosine-floor.h5):
#   kernelsweep import liger liger_all_benchmark_data.csv -o liger/liger.h5
#   kernelsweep report OUT_DIR/distill-cosine-floor/distill-cosine-floor.h5 liger/liger.h5 -o report \
#     --where 'kernel=distill_cosine_loss'
export NCCL_NVLS_ENABLE=0  # NVLink multicast off, as everywhere in bench/gpu
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
print_header
require_gpus

sweep_out=$out/distill-cosine-floor
echo "== mpirun -np $gpus kernelsweep run bench/gpu/distill-cosine-floor.yaml"
start=$(date +%s.%N)
ks_mpirun "$gpus" run bench/gpu/distill-cosine-floor.yaml --overwrite --output-dir "$sweep_out" \
  > "$out/distill-cosine-floor.run.txt" 2>&1
rc=$?
end=$(date +%s.%N)
echo "run exit code $rc, wall $(awk "BEGIN {printf \"%.2f\", $end - $start}") s"
grep -vE "^progress|pmix|Perhaps a missing|dlopen" "$out/distill-cosine-floor.run.txt" | tail -8
"$build/kernelsweep" status "$sweep_out/distill-cosine-floor.h5"
"$build/kernelsweep" show "$sweep_out/distill-cosine-floor.h5" --where mode=full \
  --columns implementation,tokens,median_ms,p20_ms,p80_ms,tflops,peak_bytes,status
gpu_state
exit "$rc"
