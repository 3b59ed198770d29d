#!/usr/bin/env bash
# Liger-Kernel's own benchmark (benchmark/scripts/benchmark_distill_cosine_loss.py at commit 08906d3d,
# run with python3 as Liger runs it) on this host's first GPU, then its full-pass medians held against
# those kernelsweep measured for the same implementations on the same draw (the `inputs: torch_rand`
# block of configs/liger-distill-cosine.yaml) in a results file made on the same GPU:
#   bench/gpu/liger_benchmark.sh [BUILD_DIR] [OUT_DIR] [RESULTS_FILE]
# RESULTS_FILE defaults to OUT_DIR/../python_liger/liger-distill-cosine/liger-distill-cosine.h5, where
# bench/gpu/python_liger.sh run with the same parent OUT_DIR leaves it. Liger's source: see
# python_liger.sh.
export NCCL_NVLS_ENABLE=0  # NVLink multicast off, as everywhere in bench/gpu
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
print_header
require_gpus

liger=${LIGER_SRC:-$ks_root/external/liger}
results=${3:-$out/../python_liger/liger-distill-cosine/liger-distill-cosine.h5}
python=${KERNELSWEEP_PYTHON:-python3}

echo "== Liger's benchmark_distill_cosine_loss.py (forward and full, liger and torch, 1024-8192 tokens)"
start=$(date +%s.%N)
(cd "$liger/benchmark/scripts" && PYTHONPATH=$liger/src:$liger PYTHONUNBUFFERED=1 "$python" benchmark_distill_cosine_loss.py --overwrite) \
  > "$out/liger_benchmark.txt" 2>&1
rc=$?
end=$(date +%s.%N)
echo "exit code $rc, wall $(awk "BEGIN {printf \"%.1f\", $end - $start}") s"
((rc == 0)) || { tail -20 "$out/liger_benchmark.txt"; exit "$rc"; }
cp "$liger/benchmark/data/all_benchmark_data.csv" "$out/liger_all_benchmark_data.csv"

echo "== full pass, median ms: Liger's script against kernelsweep (inputs: torch_rand) on this GPU"
"$build/kernelsweep" show "$results" --where 'mode=full,inputs=torch_rand' --columns implementation,tokens,median_ms \
  --format csv > "$out/kernelsweep_full.csv" || exit 2
"$python" - "$out/liger_all_benchmark_data.csv" "$out/kernelsweep_full.csv" <<'PY'
import csv, sys
theirs = {}
for row in csv.DictReader(open(sys.argv[1])):
    if (row["kernel_name"], row["metric_name"], row["kernel_operation_mode"]) == ("distill_cosine_loss", "speed", "full"):
        theirs[(row["kernel_provider"], int(float(row["x_value"])))] = float(row["y_value_50"])
ours = {(r["implementation"], int(r["tokens"])): float(r["median_ms"]) for r in csv.DictReader(open(sys.argv[2]))}
print(f"{'implementation':<15} {'tokens':>6} {'Liger script':>13} {'kernelsweep':>12} {'difference':>11}")
worst = 0.0
for key in sorted(theirs):
    if key not in ours:
        print(f"{key[0]:<15} {key[1]:>6} {theirs[key]:>13.3f} {'-':>12}")
        continue
    difference = (ours[key] - theirs[key]) / theirs[key] * 100
    worst = max(worst, abs(difference)) if key[0] == "liger" else worst
    print(f"{key[0]:<15} {key[1]:>6} {theirs[key]:>13.3f} {ours[key]:>12.3f} {difference:>+10.2f}%")
print(f"liger: largest difference {worst:.2f}% (goal: within 2% at every size)")
PY
gpu_state
