#!/usr/bin/env bash
# What reading the SM clock over every sample costs do_bench, on this host's first GPU.
#   bench/gpu/sample_clock_cost.sh [BUILD_DIR] [OUT_DIR]
# bf16 products through cuBLASLt at 256³, 1024³, 2048³ and 4096³ (a few µs to a few hundred),
# measured with sm_clock_per_sample true and false in alternating sweeps, ROUNDS times each
# (default 3). Printed per size and setting: the median of the rounds' medians, the per-sample clocks
# read, and the ratio of the medians with and without the reads. The reads run outside the timed
# events; what they could cost is the GPU's time between samples and the host's launches.
export NCCL_NVLS_ENABLE=0  # NVLink multicast off, as everywhere in bench/gpu
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
print_header
require_gpus

for setting in true false; do
  cat > "$out/clock-$setting.yaml" << EOF
name: clock-$setting
protocol: {name: do_bench, sm_clock_per_sample: $setting}
kernels:
  - kernel: gemm
    implementations: [cublaslt]
    fixed: {dtype: bf16}
    include: [{M: 256, N: 256, K: 256}, {M: 1024, N: 1024, K: 1024}, {M: 2048, N: 2048, K: 2048},
              {M: 4096, N: 4096, K: 4096}]
EOF
done
for round in $(seq 1 "${ROUNDS:-3}"); do
  for setting in true false; do
    ks_mpirun 1 run "$out/clock-$setting.yaml" --output-dir "$out/$setting-$round" --overwrite --check none > "$out/$setting-$round.txt" 2>&1 ||
      { echo "the sweep failed:"; tail -5 "$out/$setting-$round.txt"; }
  done
done
python3 - "$out" "${ROUNDS:-3}" << 'PY'
import glob, json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
medians = {}  # (M, setting) -> [median ns per round]
clocks = {}
for setting in ("true", "false"):
    for r in range(1, rounds + 1):
        for path in glob.glob(f"{out}/{setting}-{r}/kernelindex/*.json"):
            document = json.load(open(path))
            metrics = document["run"]["spec"]["sourceNative"]["metrics"]
            params = document["run"]["spec"]["sourceNative"]["externalId"].split("/")[4]  # the workload's slug
            medians.setdefault((params, setting), []).append(metrics["median_ns"])
            if "sample_sm_clock_median_mhz" in metrics:
                clocks.setdefault(params, []).append(metrics["sample_sm_clock_median_mhz"])
print("workload                                   with reads (ms)  without (ms)  ratio  per-sample clock median (MHz)")
for params in sorted({p for p, _ in medians}):
    on, off = statistics.median(medians[(params, "true")]), statistics.median(medians[(params, "false")])
    seen = clocks.get(params, [])
    print(f"{params[:42]:42} {on / 1e6:15.5f} {off / 1e6:13.5f} {on / off:6.3f}  "
          f"{(f'{min(seen):.0f}-{max(seen):.0f}') if seen else '-'}")
PY
