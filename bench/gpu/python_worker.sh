#!/usr/bin/env bash
# The Python worker on this host's first GPU: its do_bench against triton.testing.do_bench on the same
# callables, and its cost per point on a no-op kernel against the C++ worker's.
#   bench/gpu/python_worker.sh [BUILD_DIR] [OUT_DIR]
# Needs torch and triton. Liger's kernel beside ours, against Liger's own script: liger_benchmark.sh.
export NCCL_NVLS_ENABLE=0  # NVLink multicast off, as everywhere in bench/gpu
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
print_header
require_gpus

export KERNELSWEEP_PYTHON=${KERNELSWEEP_PYTHON:-python3} PYTHONUNBUFFERED=1
"$KERNELSWEEP_PYTHON" -c 'import sys, torch, triton
print("python", sys.version.split()[0], "torch", torch.__version__, "triton", triton.__version__)'

echo "== the Python worker's do_bench against triton.testing.do_bench"
PYTHONPATH=$ks_root/python${PYTHONPATH:+:$PYTHONPATH} "$KERNELSWEEP_PYTHON" bench/gpu/do_bench_vs_triton.py 3

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

gpu_state
