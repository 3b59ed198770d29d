#!/usr/bin/env bash
# kernelsweep's gemm (implementations cublaslt and cublas) against torch.matmul timed by
# triton.testing.do_bench, bf16, on one GPU at a time, interleaved so that neither side alone gets a
# cold or a warm GPU. Needs python3 with torch and triton (h5py too for the first- and last-quarter
# medians of kernelsweep's samples; without it those two columns are left out).
#   bench/gpu/gemm_vs_torch.sh [BUILD_DIR] [OUT_DIR]
# Three parts, for each GPU chosen:
#   1. Which kernel each side launches: CUBLASLT_LOG_LEVEL=2 logs every cublasLtMatmul with its
#      algorithm, for torch.matmul and for kernelsweep's two implementations at 8192³.
#   2. Interleaved rounds at 4096³ and 8192³: torch.matmul (inputs drawn in fp32 then rounded to
#      bf16, as kernelsweep's gemm draws them, and drawn in bf16 directly), then kernelsweep's
#      configs/gemm-torch-compare.yaml (both implementations, both sizes) in one run.
#   3. Rounds from the same GPU state at 8192³: IDLE seconds of rest before each of: torch's do_bench
#      twice in one process (do_bench 1 of 2, 2 of 2), kernelsweep's cublaslt point
#      (gemm-8192-cublaslt.yaml), its cublas point (gemm-8192-cublas.yaml). Then the median of each
#      column over the rounds.
# Each measurement prints the median, p20 and p80 in ms, the repetitions timed (n), and the
# medians of the first and the last quarter of the repetitions in the order they ran (a GPU that
# lowers its clock under a power-bound product shows a first quarter faster than the last).
# Settings (environment): GPUS=0 (GPU indices among the visible ones, comma-separated, or "all"),
# INTERLEAVED_ROUNDS=3, ROUNDS=4, IDLE=5 (seconds).
export NCCL_NVLS_ENABLE=0  # NVLink multicast off, as everywhere in bench/gpu
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
print_header
require_gpus
python3 -c 'import torch, triton' || { echo "gemm_vs_torch: python3 with torch and triton is needed"; exit 2; }

interleaved_rounds=${INTERLEAVED_ROUNDS:-3} rounds=${ROUNDS:-4} idle=${IDLE:-5}
if [[ ${GPUS:-0} == all ]]; then chosen=$(seq 0 $((gpus - 1))); else chosen=${GPUS:-0}; fi
IFS=, read -r -a visible <<< "${CUDA_VISIBLE_DEVICES:-$(seq -s, 0 $((gpus - 1)))}"

# python3 -c "$torch_py" SIZE DRAWS CALLS: torch.matmul of bf16 SIZE³ timed by do_bench CALLS times
# in this process for each way of drawing the inputs (fp32-drawn, bf16-drawn).
read -r -d '' torch_py << 'PY'
import json, sys
import numpy as np
import torch
from triton.testing import do_bench

size, draws, calls = int(sys.argv[1]), sys.argv[2].split(","), int(sys.argv[3])
for inputs in draws:
    draw = torch.float32 if inputs == "fp32-drawn" else torch.bfloat16
    a = (torch.rand(size, size, device="cuda", dtype=draw) * 2 - 1).to(torch.bfloat16)
    b = (torch.rand(size, size, device="cuda", dtype=draw) * 2 - 1).to(torch.bfloat16)
    for call in range(1, calls + 1):
        s = np.asarray(do_bench(lambda: torch.matmul(a, b), warmup=25, rep=100, return_mode="all"), dtype=float)
        q = max(1, len(s) // 4)
        print(json.dumps({"what": f"torch.matmul {size}^3 {inputs}" + (f", do_bench {call} of {calls}" if calls > 1 else ""),
                          "median_ms": round(float(np.median(s)), 4), "p20_ms": round(float(np.quantile(s, 0.2)), 4),
                          "p80_ms": round(float(np.quantile(s, 0.8)), 4), "n": len(s),
                          "first_quarter_ms": round(float(np.median(s[:q])), 4),
                          "last_quarter_ms": round(float(np.median(s[-q:])), 4),
                          "gpu": torch.cuda.get_device_name(), "torch": torch.__version__}), flush=True)
PY

# kernelsweep documents OUTPUT_DIR/kernelindex | python3 -c "$ks_py" OUTPUT_DIR: every passed run of a
# kernelsweep output folder, from its samples (h5py) or, without h5py, from its documents (stdin).
read -r -d '' ks_py << 'PY'
import glob, json, sys
out = sys.argv[1]
try:
    import h5py
    import numpy as np
    for path in glob.glob(f"{out}/*.h5"):
        with h5py.File(path, "r") as f:
            samples = f["samples"]
            for run in f["runs"][:]:
                if run["status"].decode() != "passed":
                    continue
                p = json.loads(run["params"])
                start, count = int(run["samples_offset"]), int(run["samples_count"])
                s = samples[start:start + count] / 1e6
                q = max(1, len(s) // 4)
                print(json.dumps({"what": f"kernelsweep {run['implementation'].decode()} {p['M']}x{p['N']}x{p['K']}",
                                  "median_ms": round(float(np.median(s)), 4), "p20_ms": round(float(np.quantile(s, 0.2)), 4),
                                  "p80_ms": round(float(np.quantile(s, 0.8)), 4), "n": len(s),
                                  "first_quarter_ms": round(float(np.median(s[:q])), 4),
                                  "last_quarter_ms": round(float(np.median(s[-q:])), 4)}), flush=True)
except ImportError:
    for line in sys.stdin:
        d = json.loads(line)
        m, p = d["run"]["spec"]["sourceNative"]["metrics"], d["workload"]["spec"]["parameters"]
        if d["run"]["spec"]["status"] != "passed":
            continue
        print(json.dumps({"what": f"kernelsweep {d['implementation']['spec']['implementation']} {p['M']}x{p['N']}x{p['K']}",
                          "median_ms": round(m["median_ns"] / 1e6, 4), "p20_ms": round(m["p20_ns"] / 1e6, 4),
                          "p80_ms": round(m["p80_ns"] / 1e6, 4), "n": m["n_repeat"]}), flush=True)
PY

# python3 -c "$summary_py" < same-state lines: the median of each column over the rounds.
read -r -d '' summary_py << 'PY'
import json, sys, statistics
columns = {}
for line in sys.stdin:
    if line.startswith("{"):
        d = json.loads(line)
        columns.setdefault(d["what"], []).append(d["median_ms"])
for what, medians in columns.items():
    print(f"{what:<48} median of {len(medians)} medians {statistics.median(medians):.3f} ms "
          f"(range {min(medians):.3f}-{max(medians):.3f})")
PY

ks_point() {  # SWEEP_FILE LABEL: one kernelsweep run on one rank, then its figures
  local dir=$work/$2
  ks_mpirun 1 run "$1" --overwrite --check none --kernelindex-format jsonl --output-dir "$dir" > "$dir.log" 2>&1 ||
    { echo "kernelsweep run $1 failed:"; tail -5 "$dir.log"; }
  "$build/kernelsweep" documents "$dir/kernelindex" | python3 -c "$ks_py" "$dir"
}

rc=0
for index in $chosen; do
  export CUDA_VISIBLE_DEVICES=${visible[$index]}
  work=$out/gpu$index
  mkdir -p "$work"
  echo "== GPU $index (CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES)"
  gpu_state "${visible[$index]}"

  echo "== which kernel: CUBLASLT_LOG_LEVEL=2, bf16 8192³"
  CUBLASLT_LOG_LEVEL=2 CUBLASLT_LOG_FILE=$work/cublaslt-torch.log \
    python3 -c 'import torch
a = torch.rand(8192, 8192, device="cuda").to(torch.bfloat16); b = torch.rand(8192, 8192, device="cuda").to(torch.bfloat16)
torch.matmul(a, b); torch.cuda.synchronize()'
  for impl in cublaslt cublas; do
    CUBLASLT_LOG_LEVEL=2 CUBLASLT_LOG_FILE=$work/cublaslt-kernelsweep-$impl-%i.log \
      mpirun -np 1 -x CUBLASLT_LOG_LEVEL -x CUBLASLT_LOG_FILE "$build/kernelsweep" run "bench/gpu/gemm-8192-$impl.yaml" \
      --overwrite --check none --output-dir "$work/names-$impl" > /dev/null 2>&1
  done
  for log in "$work"/cublaslt-*.log; do
    echo "-- $(basename "$log")"
    grep -o "algo=\[[^]]*\]" "$log" | sort | uniq -c
  done

  echo "== interleaved rounds, 4096³ and 8192³: torch.matmul, then kernelsweep configs/gemm-torch-compare.yaml"
  for ((round = 1; round <= interleaved_rounds; ++round)); do
    echo "-- round $round"
    for size in 8192 4096; do python3 -c "$torch_py" "$size" fp32-drawn,bf16-drawn 1 || rc=1; done
    ks_point configs/gemm-torch-compare.yaml "interleaved-$round"
  done

  echo "== rounds from the same state, 8192³: $idle s idle before each measurement"
  : > "$work/same_state.txt"
  for ((round = 1; round <= rounds; ++round)); do
    echo "-- round $round"
    sleep "$idle"; python3 -c "$torch_py" 8192 fp32-drawn 2 | tee -a "$work/same_state.txt" || rc=1
    for impl in cublaslt cublas; do
      sleep "$idle"; ks_point "bench/gpu/gemm-8192-$impl.yaml" "same-state-$round-$impl" | tee -a "$work/same_state.txt"
    done
  done
  echo "== same state, over the $rounds rounds"
  python3 -c "$summary_py" < "$work/same_state.txt"
  gpu_state "${visible[$index]}"
done
exit "$rc"
