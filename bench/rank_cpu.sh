#!/usr/bin/env bash
# What the ranks themselves take of the CPU while their workers time points, and what that costs the
# points' times. `mpirun -np 2` binds each rank, and the workers it starts, to one core: every look a
# rank takes at MPI while its worker times a CPU point (or a GPU pass whose pace the host sets) is
# time taken from that point. The sweep: 16 gemm points on the CPU (about 512 x 512 x 512, fp32) of
# about 3 s each; each process's CPU time is read from /proc over a window (6 s from the 5th second)
# while both ranks' workers time points.
#   bench/rank_cpu.sh [KERNELSWEEP ...]
# Each binary (default build/kernelsweep) runs in turn, ROUNDS times (default 3); OUT (default
# results/bench/rank_cpu) holds the runs. Prints, per run: each rank's and each worker's share of a
# core over the window, and the median of the points' medians.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
binaries=("${@:-build/kernelsweep}")
rounds=${ROUNDS:-3}
out=${OUT:-results/bench/rank_cpu}
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
sweep=$out/rank-cpu.yaml
cat > "$sweep" <<'YAML'
name: rank-cpu
protocol: {name: do_bench, warmup_ms: 25, rep_ms: 3000}
kernels:
  - kernel: gemm
    implementations: [cpu]
    grid: {M: [500, 501, 502, 503, 504, 505, 506, 507, 508, 509, 510, 511, 512, 513, 514, 515]}
    fixed: {N: 512, K: 512, dtype: fp32}
YAML

# "pid cpu_ticks command" for the processes of a run.
cpu_ticks() {
  local pid
  for pid in $(pgrep -f " (run $sweep|worker --local-rank)"); do
    [[ -r /proc/$pid/stat ]] || continue
    read -ra fields < <(cut -d')' -f2- "/proc/$pid/stat")
    echo "$pid $((fields[11] + fields[12])) $(tr '\0' ' ' < "/proc/$pid/cmdline" | cut -d' ' -f2,4)"
  done | sort
}

window=6
hz=$(getconf CLK_TCK)
echo "binary                      run  rank shares (% of a core)   worker shares       median of the medians (ms)"
for ((round = 1; round <= rounds; ++round)); do
  for binary in "${binaries[@]}"; do
    dir=$out/run-$round-$(basename "$(dirname "$binary")")-$(basename "$binary")
    mpirun -np 2 "$binary" run "$sweep" --overwrite --output-dir "$dir" > "$dir.log" 2>&1 &
    job=$!
    sleep 5
    before=$(cpu_ticks)
    sleep "$window"
    after=$(cpu_ticks)
    wait "$job" || { echo "$binary: run failed (see $dir.log)"; exit 1; }
    shares=$(join <(cut -d' ' -f1,2 <<< "$before") <(cat <<< "$after") \
      | awk -v hz="$hz" -v s="$window" '{printf "%s %.1f\n", $4, 100 * ($3 - $2) / hz / s}')
    ranks=$(awk '$1 == "run" {printf "%s ", $2}' <<< "$shares")
    workers=$(awk '$1 == "worker" {printf "%s ", $2}' <<< "$shares")
    median=$(python3 - "$dir/kernelindex" <<'PY'
import json, pathlib, statistics, sys
medians = []
for p in pathlib.Path(sys.argv[1]).glob("*.json"):
    document = json.loads(p.read_text())
    native = document.get("run", {}).get("spec", {}).get("sourceNative")
    if native and native.get("status") == "passed":
        medians.append(native["metrics"]["median_ns"] / 1e6)
print(f"{statistics.median(medians):.3f} ({len(medians)} points)")
PY
)
    printf "%-27s %3d  %-26s %-19s %s\n" "$binary" "$round" "$ranks" "$workers" "$median"
  done
done
