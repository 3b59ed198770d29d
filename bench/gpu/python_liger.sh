#!/usr/bin/env bash
# Python implementations on this host's first GPU: Liger-Kernel's own distill_cosine_loss kernel
# (`liger`) and the torch provider of its benchmark (`torch`) measured live beside our fused and naive
# CUDA implementations, in one results file (configs/liger-distill-cosine.yaml); the Python worker's
# do_bench against triton.testing.do_bench; and the Python worker's cost per point on the GPU.
#   bench/gpu/python_liger.sh [BUILD_DIR] [OUT_DIR]
# Liger-Kernel at commit 08906d3d must be in external/liger (or $LIGER_SRC), never committed:
#   git -C LIGER_CLONE archive 08906d3d src benchmark test/__init__.py test/utils.py test/chunked_loss \
#     | tar x -C external/liger
#   mkdir -p external/liger/src/liger_kernel-0.5.10.dist-info && printf 'Metadata-Version: 2.1\nName: liger-kernel\nVersion: 0.5.10\n' \
#     > external/liger/src/liger_kernel-0.5.10.dist-info/METADATA
# bench/gpu/liger_benchmark.sh then runs Liger's own benchmark script on the same GPU, and compares.
export NCCL_NVLS_ENABLE=0  # NVLink multicast off, as everywhere in bench/gpu
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
print_header
require_gpus

liger=${LIGER_SRC:-$ks_root/external/liger}
export PYTHONPATH=$liger/src:$liger${PYTHONPATH:+:$PYTHONPATH}
export KERNELSWEEP_PYTHON=${KERNELSWEEP_PYTHON:-python3} PYTHONUNBUFFERED=1
"$KERNELSWEEP_PYTHON" -c 'import sys, torch, triton, liger_kernel; from importlib.metadata import version
print("python", sys.version.split()[0], "torch", torch.__version__, "triton", triton.__version__, "liger-kernel", version("liger-kernel"))'

echo "== the Python worker's do_bench against triton.testing.do_bench"
PYTHONPATH=$ks_root/python:$PYTHONPATH "$KERNELSWEEP_PYTHON" bench/gpu/do_bench_vs_triton.py 3

echo "== the Python worker's cost per point on the GPU: noop (cpu: C++ worker, python: bench/python/noop_python.py), 1 rank, 2000 points against 1"
for implementation in cpu python; do
  for points in 1 2000; do
    dir=$out/overhead-$implementation-$points
    mkdir -p "$dir"
    printf 'name: overhead\npython: {modules: [noop_python], path: [%s]}\nprotocol: {warmup_ms: 0, rep_ms: 0, max_repeat: 1, flush_bytes: 0}\nkernels:\n  - kernel: noop\n    implementations: [%s]\n    grid:\n      id: {from: 1, to: %d, step: 1}\n' \
      "$ks_root/bench/python" "$implementation" "$points" > "$dir/sweep.yaml"
    start=$(date +%s.%N)
    "$build/kernelsweep" run "$dir/sweep.yaml" --output-dir "$dir" --kernelindex-format jsonl --check none > "$dir/run.txt" 2>&1 \
      || { echo "noop $implementation failed:"; tail -5 "$dir/run.txt"; }
    end=$(date +%s.%N)
    echo "$implementation $points $(awk "BEGIN {print $end - $start}")"
  done
done | awk '{wall[$1" "$2] = $3} END {
  for (w in wall) if (w ~ / 2000$/) { split(w, p, " "); i = p[1];
    printf "%-7s 2000 points %.2f s, 1 point %.2f s: %.3f ms per point\n", i, wall[i" 2000"], wall[i" 1"], (wall[i" 2000"] - wall[i" 1"]) / 1999 * 1000 } }'

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
gpu_state
exit "$rc"
