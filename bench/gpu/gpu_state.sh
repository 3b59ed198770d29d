#!/usr/bin/env bash
# The GPU's state recorded with every point, on this host's first GPU: what one read of it costs a
# point, and medians of the same work told apart by it.
#   bench/gpu/gpu_state.sh [BUILD_DIR] [OUT_DIR]
# 1. bench_gpu_state_read (GPU_STATE_READ: its path, default BUILD_DIR/bench/bench_gpu_state_read):
#    the cost of one read of the clocks, power, temperature and throttle reasons through NVML
#    (READS=20000 reads); a point reads twice, outside its timed repetitions.
# 2. bench/gpu/gpu-state.yaml on one rank (no checks): every point's median beside the SM clock, power and
#    temperature before and after its timed repetitions and what slowed the GPU (show's columns),
#    then the GPU-state part of the first point's document.
# Needs python3 with torch for the torch points (they are recorded skipped without it).
export NCCL_NVLS_ENABLE=0  # NVLink multicast off, as everywhere in bench/gpu
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
print_header
require_gpus
export KERNELSWEEP_PYTHON=${KERNELSWEEP_PYTHON:-python3}

echo "== one read of the GPU's state (NVML)"
uuid=$(nvidia-smi --query-gpu=uuid --format=csv,noheader -i 0)
"${GPU_STATE_READ:-$build/bench/bench_gpu_state_read}" "$uuid" "${READS:-20000}"

echo "== bench/gpu/gpu-state.yaml, one rank"
dir=$out/gpu-state
ks_mpirun 1 run bench/gpu/gpu-state.yaml --output-dir "$dir" --overwrite --check none > "$dir.run.txt" 2>&1 || { echo "the sweep failed:"; tail -20 "$dir.run.txt"; }
grep -i "nvml\|not recorded" "$dir.run.txt"
"$build/kernelsweep" show "$dir/gpu-state.h5" --columns kernel,implementation,seed,status,median_ms,p20_ms,p80_ms,n_repeat,sm_clock_mhz,power_w,temperature_c,slowed_by
python3 - "$dir/gpu-state.h5" << 'PY'
import sys
try:
    import h5py
except ImportError:
    sys.exit("(h5py not available: the start-of-measurement columns are left out)")
with h5py.File(sys.argv[1], "r") as f:
    print("implementation seed  median_ms  sm_start sm_end  power_start power_end  temp_start temp_end  reasons_start reasons_end")
    for run in f["runs"][:]:
        params = run["params"].decode()
        seed = params.split('"seed":')[1].split(",")[0].split("}")[0]
        print(f'{run["implementation"].decode():14} {seed:>4} {run["median_ns"] / 1e6:10.3f}  {run["sm_clock_mhz_start"]:8.0f} {run["sm_clock_mhz_end"]:6.0f}'
              f'  {run["power_w_start"]:11.1f} {run["power_w_end"]:9.1f}  {run["temperature_c_start"]:10.0f} {run["temperature_c_end"]:8.0f}'
              f'  {run["throttle_reasons_start"]:#13x} {run["throttle_reasons_end"]:#11x}')
PY
first=$(ls "$dir/kernelindex" | grep -v index | head -1)
python3 - "$dir/kernelindex/$first" << 'PY'
import json, sys
document = json.load(open(sys.argv[1]))
spec = document["spec"] if "spec" in document else document["run"]["spec"]
print(json.dumps([m for m in spec["measurements"] if m["metric"] != "latency"], indent=None))
print("throttleReasons:", spec["sourceNative"].get("throttleReasons"))
PY
