#!/usr/bin/env bash
# The GPU tests (ctest label `gpu`) on this host, with their full output, then a summary: each
# test's result and the figures the tests print (do_bench's median of a bf16 2048³ product, the
# device read, the distillation kernels' errors against the CPU reference and the memory held).
#   bench/gpu/gpu_tests.sh [BUILD_DIR] [OUT_DIR]
# Without ctest on the host, or when the build folder was made elsewhere (ctest's files name the
# paths of the machine that configured it), the gpu_tests binary is run directly.
export NCCL_NVLS_ENABLE=0  # NVLink multicast off, as everywhere in bench/gpu
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
print_header
require_gpus

rc=0
if command -v ctest > /dev/null && grep -q "$build" "$build/CTestTestfile.cmake" 2> /dev/null; then
  ctest --test-dir "$build" -L gpu --output-on-failure -V > "$out/gpu_tests.txt" 2>&1 || rc=$?
else
  : > "$out/gpu_tests.txt"
  found=0
  for test in "$build"/tests/gpu_*; do
    [[ -x $test ]] || continue
    found=1
    echo "== $(basename "$test")" >> "$out/gpu_tests.txt"
    "$test" >> "$out/gpu_tests.txt" 2>&1 || rc=$?
  done
  ((found)) || { echo "no gpu_tests binary in $build/tests (a build with CUDA and tests?)"; exit 2; }
fi

echo "== results (full output: $out/gpu_tests.txt)"
grep -E "\[ +(OK|FAILED|SKIPPED) +\]|tests? (passed|failed)|PASSED|FAILED" "$out/gpu_tests.txt" | sed -E 's/^[0-9]+: //'
echo "== figures the tests print"
grep -E "median|GPU [0-9]+:|seed shape|default shape|GB held|vs the naive" "$out/gpu_tests.txt" | grep -v "^\[fused .* vs the CPU" | sed -E 's/^[0-9]+: //'
echo "== worst relative errors against the CPU reference"
grep -oE "(loss|grad [A-Za-z]+) rel\.err [0-9.e+-]+" "$out/gpu_tests.txt" |
  awk '{name = ($2 == "rel.err") ? $1 : $1 " " $2; if (!(name in worst) || $NF + 0 > worst[name] + 0) worst[name] = $NF}
       END {for (n in worst) printf "%-8s %s\n", n, worst[n]}' | sort
gpu_state
echo "exit $rc"
exit "$rc"
