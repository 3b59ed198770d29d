#!/usr/bin/env bash
# How much the same work's median moves from one measurement to the next under each protocol, and
# whether the GPU's recorded state explains the moves, on this host's first GPU.
#   bench/gpu/noise_study.sh [BUILD_DIR] [OUT_DIR]
# For each protocol one sweep on one rank measures the bf16 8192³ product (cuBLASLt) and the fused
# distillation loss's full pass at 1024 and 8192 tokens (hidden 4096, vocab 128256), 20 times each:
#   do_bench, cold, graph: seeds 0 to 19 (other inputs drawn alike, the same work), back to back;
#   repeated: do_bench with `repetitions: 20` at seed 0, the repetitions interleaved across the plan.
# Printed per protocol and workload: the spread (largest over smallest median), then every median
# more than 3% off the group's median beside the SM clock (NVML's at the end of the measurement,
# and the median of the per-sample clocks), what slowed the GPU, and cold's noise record.
# COLD_TIMEOUT_S (default 5) bounds each cold point; PROTOCOLS (default "do_bench repeated cold
# graph") picks the sweeps. Nothing here sets a GPU's clocks or limits.
export NCCL_NVLS_ENABLE=0  # NVLink multicast off, as everywhere in bench/gpu
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
print_header
require_gpus

protocols=${PROTOCOLS:-do_bench repeated cold graph}
declare -A protocol_of=(
  [do_bench]="{name: do_bench}"
  [repeated]="{name: do_bench, repetitions: 20}"
  [cold]="{name: cold, timeout_s: ${COLD_TIMEOUT_S:-5}}"
  [graph]="{name: graph}"
)
declare -A seeds_of=([do_bench]="{from: 0, to: 19, step: 1}" [repeated]="[0]" [cold]="{from: 0, to: 19, step: 1}"
  [graph]="{from: 0, to: 19, step: 1}")
for protocol in $protocols; do
  dir=$out/$protocol
  mkdir -p "$dir"
  cat > "$dir/noise-$protocol.yaml" << EOF
name: noise-$protocol
protocol: ${protocol_of[$protocol]}
kernels:
  - kernel: gemm
    implementations: [cublaslt]
    grid: {seed: ${seeds_of[$protocol]}}
    fixed: {M: 8192, N: 8192, K: 8192, dtype: bf16}
  - kernel: distill_cosine_loss
    implementations: [fused]
    modes: [full]
    grid: {tokens: [1024, 8192], seed: ${seeds_of[$protocol]}}
EOF
  echo "== $protocol: $(tr -d '\n' <<< "${protocol_of[$protocol]}")"
  start=$SECONDS
  ks_mpirun 1 run "$dir/noise-$protocol.yaml" --output-dir "$dir" --overwrite --check none > "$dir/run.txt" 2>&1 ||
    { echo "the sweep failed:"; tail -20 "$dir/run.txt"; }
  echo "sweep wall: $((SECONDS - start)) s"
  # Every run, each repetition of a point its own (show gives a point's latest row): from the
  # run's documents, which need no HDF5 reader.
  python3 - "$dir/kernelindex" "$dir/points.csv" << 'PY'
import csv, glob, json, sys
fields = ["kernel", "tokens", "seed", "repetition", "status", "median_ms", "n_repeat", "sm_clock_mhz", "power_w",
          "slowed_by", "noise", "noise_goal_met", "samples_dropped", "sample_sm_clock_min_mhz",
          "sample_sm_clock_median_mhz", "message"]
rows = []
for path in glob.glob(sys.argv[1] + "/*.json"):
    document = json.load(open(path))
    run, workload = document["run"]["spec"], document["workload"]["spec"]
    native, metrics = run["sourceNative"], run["sourceNative"]["metrics"]
    params = workload.get("parameters", workload.get("params", {}))
    measured = {(m["metric"], m["statistic"]): m["value"] for m in run["measurements"]}
    rows.append({"kernel": native["benchmark"].split("/")[0], "tokens": params.get("tokens", ""),
                 "seed": params.get("seed", ""), "repetition": native.get("repetition", 0), "status": native["status"],
                 "median_ms": metrics.get("median_ns", float("nan")) / 1e6, "n_repeat": metrics.get("n_repeat", ""),
                 "sm_clock_mhz": measured.get(("sm_clock", "end"), ""), "power_w": measured.get(("power", "end"), ""),
                 "slowed_by": ",".join(sorted(set(filter(None, ",".join(native.get("throttleReasons", {}).values()).split(","))) - {"gpu_idle"})),
                 "noise": metrics.get("noise", ""), "noise_goal_met": {1: "yes", 0: "no"}.get(metrics.get("noise_goal_met"), ""),
                 "samples_dropped": metrics.get("samples_dropped", ""),
                 "sample_sm_clock_min_mhz": metrics.get("sample_sm_clock_min_mhz", ""),
                 "sample_sm_clock_median_mhz": metrics.get("sample_sm_clock_median_mhz", ""),
                 "message": run.get("message", "") if native["status"] != "passed" else ""})
rows.sort(key=lambda r: (r["kernel"], str(r["tokens"]), r["seed"], r["repetition"]))
with open(sys.argv[2], "w", newline="") as out:
    writer = csv.DictWriter(out, fields)
    writer.writeheader()
    writer.writerows(rows)
PY
done

python3 - "$out" << 'PY'
import csv, statistics, sys
out = sys.argv[1]
import os
for protocol in ("do_bench", "repeated", "cold", "graph"):
    if not os.path.exists(f"{out}/{protocol}/points.csv"):
        continue
    rows = list(csv.DictReader(open(f"{out}/{protocol}/points.csv", newline="")))
    groups = {}
    for row in rows:
        name = "gemm bf16 8192^3" if row["kernel"] == "gemm" else f"distill full {row['tokens']} tokens"
        groups.setdefault(name, []).append(row)
    print(f"== {protocol}")
    for name, group in groups.items():
        timed = [r for r in group if r["status"] == "passed" and r["median_ms"]]
        if not timed:
            print(f"{name}: no point passed ({group[0]['status']}: {group[0]['message']})")
            continue
        medians = [float(r["median_ms"]) for r in timed]
        middle = statistics.median(medians)
        met = sum(r["noise_goal_met"] == "yes" for r in timed)
        print(f"{name}: {len(timed)} medians, {min(medians):.4f}-{max(medians):.4f} ms, median {middle:.4f}, "
              f"spread {max(medians) / min(medians):.4f}" + (f", noise goal met {met}/{len(timed)}" if protocol == "cold" else ""))
        for r in timed:
            off = float(r["median_ms"]) / middle - 1
            if abs(off) > 0.03:
                which = f"repetition {r['repetition']:>2}" if protocol == "repeated" else f"seed {r['seed']:>2}"
                print(f"   {which}: {float(r['median_ms']):.4f} ms ({off:+.1%}), SM clock at end {r['sm_clock_mhz']} MHz, "
                      f"per sample min/median {r['sample_sm_clock_min_mhz'] or '-'}/{r['sample_sm_clock_median_mhz'] or '-'} MHz, "
                      f"power {r['power_w']} W, slowed by {r['slowed_by'] or 'nothing'}, noise {r['noise'] or '-'}, "
                      f"dropped {r['samples_dropped'] or '-'}")
PY
echo "== per point (CSV): $out/*/points.csv"
for protocol in $protocols; do
  echo "-- $protocol"
  cat "$out/$protocol/points.csv"
done
