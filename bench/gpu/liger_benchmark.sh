#!/usr/bin/env bash
# Liger-Kernel's own distill_cosine_loss kernel measured live beside ours on this host's first GPU,
# then held against Liger's own benchmark on the same GPU, minutes apart:
#   1. kernelsweep run configs/liger-distill-cosine.yaml: fused, naive, liger and torch in one results
#      file (the speed-ups over liger read from it), and the liger 1024-token full document;
#   2. Liger's benchmark/scripts/benchmark_distill_cosine_loss.py at commit 08906d3d, run with python3
#      as Liger runs it;
#   3. its full-pass medians against kernelsweep's for the same implementations on the same draw (the
#      `inputs: torch_rand` block of the sweep).
#   bench/gpu/liger_benchmark.sh [BUILD_DIR] [OUT_DIR]
# Liger-Kernel at commit 08906d3d must be in external/liger (or $LIGER_SRC), never committed:
#   git -C LIGER_CLONE archive 08906d3d src benchmark test/__init__.py test/utils.py test/chunked_loss \
#     | tar x -C external/liger
#   mkdir -p external/liger/src/liger_kernel-0.5.10.dist-info && printf 'Metadata-Version: 2.1\nName: liger-kernel\nVersion: 0.5.10\n' \
#     > external/liger/src/liger_kernel-0.5.10.dist-info/METADATA
export NCCL_NVLS_ENABLE=0  # NVLink multicast off, as everywhere in bench/gpu
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
print_header
require_gpus

use_liger
python=$KERNELSWEEP_PYTHON
"$python" -c 'import sys, torch, triton, liger_kernel; from importlib.metadata import version
print("python", sys.version.split()[0], "torch", torch.__version__, "triton", triton.__version__, "liger-kernel", version("liger-kernel"))'

echo "== kernelsweep run configs/liger-distill-cosine.yaml (one rank on GPU 0)"
sweep_out=$out/liger-distill-cosine
start=$(date +%s.%N)
"$build/kernelsweep" run configs/liger-distill-cosine.yaml --overwrite --output-dir "$sweep_out" > "$out/liger-distill-cosine.run.txt" 2>&1
rc=$?
end=$(date +%s.%N)
echo "run exit code $rc, wall $(awk "BEGIN {printf \"%.1f\", $end - $start}") s"
grep -vE "^progress|pmix|Perhaps a missing|dlopen" "$out/liger-distill-cosine.run.txt" | tail -8
"$build/kernelsweep" show "$sweep_out/liger-distill-cosine.h5" --where 'mode=full' \
  --columns implementation,inputs,tokens,median_ms,p20_ms,p80_ms,tflops,peak_bytes,status,message --format md
"$build/kernelsweep" show "$sweep_out/liger-distill-cosine.h5" --where 'status!=passed' --columns implementation,mode,tokens,inputs,status,message
"$build/kernelsweep" report "$sweep_out/liger-distill-cosine.h5" -o "$out/report" --baseline liger > /dev/null 2>&1 \
  && sed -n '/[Ss]peed-up/,/^$/p' "$out/report/report.md" | head -40
# The liger 1024-token full document, as the seed's: benchmark, title, label liger_version.
doc=$(grep -l '"title": "Chunked distillation cosine loss · liger · full"' "$sweep_out"/kernelindex/*.json 2> /dev/null \
      | xargs grep -l '"tokens": 1024' | xargs grep -l '"inputs": "counter"' | head -1)
[[ -n $doc ]] && cp "$doc" "$out/liger-1024-full.json" && echo "== the liger 1024-token full document: $(basename "$doc")" \
  && python3 -c 'import json, sys; d = json.load(open(sys.argv[1]))["run"]
print(json.dumps({"benchmark": d["spec"]["sourceNative"]["benchmark"], "title": d["metadata"]["title"],
                  "labels": d["metadata"]["labels"], "median_ns": d["spec"]["timing"]["latencyNs"]["median"]}))' "$doc"
((rc == 0)) || exit "$rc"

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
"$build/kernelsweep" show "$sweep_out/liger-distill-cosine.h5" --where 'mode=full,inputs=torch_rand' --columns implementation,tokens,median_ms \
  --format csv > "$out/kernelsweep_full.csv" || exit 2
"$python" - "$out/liger_all_benchmark_data.csv" "$out/kernelsweep_full.csv" <<'PY'
import csv, sys
import torch
# Liger's data file holds every GPU's rows; --overwrite replaced this GPU's.
gpu = torch.cuda.get_device_name(0)
theirs = {}
for row in csv.DictReader(open(sys.argv[1])):
    if (row["kernel_name"], row["metric_name"], row["kernel_operation_mode"], row["gpu_name"]) == \
            ("distill_cosine_loss", "speed", "full", gpu):
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
