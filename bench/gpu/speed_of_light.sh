#!/usr/bin/env bash
# Speed of light on this host's first GPU: `kernelsweep calibrate` twice (measured, then measured
# again: its time per rank and how much its figures move), the figures it is held to measured apart
# with torch (a plain copy, large matmuls: speed_of_light_reference.py), then bench/gpu/speed-of-light.yaml
# on the calibrated rank with each point's sol_pct and flags (a copy near 100%, no point implausible).
#   bench/gpu/speed_of_light.sh [BUILD_DIR] [OUT_DIR]
export NCCL_NVLS_ENABLE=0
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
print_header
require_gpus
export KERNELSWEEP_CALIBRATION_DIR=$out/calibration
rm -rf "$KERNELSWEEP_CALIBRATION_DIR"

echo "== kernelsweep calibrate (first: measured and kept)"
start=$(date +%s%N)
mpirun -np 1 "$build/kernelsweep" calibrate
echo "wall $(( ($(date +%s%N) - start) / 1000000 )) ms"
echo "== kernelsweep calibrate --fresh --json"
mpirun -np 1 "$build/kernelsweep" calibrate --fresh --json | tee "$out/calibration.json"
echo "== kernelsweep calibrate (kept: reused)"
start=$(date +%s%N)
mpirun -np 1 "$build/kernelsweep" calibrate > /dev/null
echo "wall $(( ($(date +%s%N) - start) / 1000000 )) ms"

echo "== torch reference: a plain copy and large matmuls"
python3 "$ks_root/bench/gpu/speed_of_light_reference.py" | tee "$out/reference.json"
python3 - "$out/calibration.json" "$out/reference.json" <<'PY'
import json, sys
cal = json.loads(open(sys.argv[1]).readline())
ref = json.load(open(sys.argv[2]))
rows = [("memory_gbps vs copy", cal["memory_gbps"], ref["copy_gbps"])]
for key, data in (("matmul_tflops", "signed"), ("matmul_tflops_unsigned", "[0,1)")):
    for dtype in ("fp32", "tf32", "bf16", "fp16"):
        rows.append((f"{dtype} vs matmul {data}", cal["tflops"].get(dtype), ref[key].get(dtype)))
print(f"{'figure':28} {'calibrate':>10} {'torch':>10} {'difference':>10}")
for name, mine, theirs in rows:
    diff = f"{100 * (mine - theirs) / theirs:+.1f}%" if mine and theirs else "-"
    print(f"{name:28} {mine or float('nan'):10.1f} {theirs or float('nan'):10.1f} {diff:>10}")
PY

echo "== bench/gpu/speed-of-light.yaml"
mpirun -np 1 "$build/kernelsweep" run bench/gpu/speed-of-light.yaml --output-dir "$out/sweep" --overwrite \
  > "$out/sweep.log" 2>&1
echo "exit $?"
"$build/kernelsweep" show "$out/sweep/speed-of-light.h5" \
  --columns kernel,implementation,mode,op,mib,M,dtype,tokens,status,median_ms,tflops,gbps,bandwidth_pct,compute_pct,sol_pct,flags
echo "implausible points: $("$build/kernelsweep" show "$out/sweep/speed-of-light.h5" --format csv --columns flags | grep -c implausible)"
