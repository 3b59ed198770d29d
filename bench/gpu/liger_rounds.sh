#!/usr/bin/env bash
# Liger-Kernel's distill_cosine_loss full pass on this host's first GPU, kernelsweep against Liger's
# own benchmark code, in alternating rounds compared by their medians across rounds. One run of each
# (liger_benchmark.sh) is not enough at 1024 and 2048 tokens: there the pass is bound by the host CPU,
# which enqueues it more slowly than the GPU runs it (liger_host_bound.py), and a median follows the
# host's speed of the moment (7.0 to 9.5 ms at 1024 tokens on an H200 host) whoever times it.
# Each of ROUNDS rounds (default 4, 80-135 s each on an H200 host at the four sizes), in a fresh
# process each:
#   1. kernelsweep run configs/liger-distill-cosine.yaml --where 'implementation=liger,inputs=torch_rand'
#      (the `liger` implementation on the draw of Liger's benchmark, full pass, 1024-8192 tokens);
#   2. Liger's bench_speed_cosine_similarity_loss (benchmark/scripts/benchmark_distill_cosine_loss.py
#      at 08906d3d), called for provider liger, mode full, at the same sizes, as its run_benchmarks
#      calls it (triton.testing.do_bench, rep 100 ms).
# The order turns by one side each round (of two sides: kernelsweep first in odd rounds, Liger first
# in even ones), so that none always runs on a GPU another warmed.
# TOKENS (default "1024 2048 4096 8192") picks the sizes. CPUS (a taskset list, such as the GPU's
# NUMA-local cores that `nvidia-smi topo -m` names) runs both sides on those cores alone; each round
# prints the cores each side was allowed, since a pass bound by the host runs as fast as its core.
# MEASURES (default 1) measures each size that many times in a row in each process: kernelsweep with
# the protocol's `repetitions`, Liger by calling its function again. Where the host's speed moves from
# process to process and from second to second, more measurements a process sample more of its
# moments; the summary then also compares the medians of every measurement of each side. On an H200
# host at 1024 tokens a kernelsweep process took 20 s to start and 1.6 s a repetition; Liger's
# function 11-13 s a call, since it builds its models anew each time: MEASURES=12 makes a round of
# 190-290 s.
# LIGER_CLOSURE=1 calls Liger's function once a size and has it time its closure MEASURES times: its
# triton.testing.do_bench is called MEASURES times in a row on the same closure, as kernelsweep's
# repetitions time the same instance again, instead of building the models anew for each measurement.
# KS_ARGS adds arguments to the kernelsweep side's `run` (such as `--check none`, which leaves out the
# check at a reduced shape and the compiler reset after it), to tell which part of its process moves
# its time.
# SIDES (default "kernelsweep liger") picks what each round times, each in a fresh process, in an
# order that turns by one each round; besides the two ends, the layers between them (liger_sides.py):
#   worker    the Python worker alone, handed the point over its pipes as a rank hands it (no rank,
#             no MPI, no C++ worker; the check after the first measurement unless KS_ARGS has
#             `--check none`);
#   worker_native  the same with the C++ worker started beside it and left idle, as a rank kept it
#             before it stopped its C++ worker for the Python one's points (KERNELSWEEP_BIN names
#             the kernelsweep whose C++ worker it starts; default BUILD_DIR's);
#   instance  kernelsweep's liger implementation in a plain process, its pass timed by
#             triton.testing.do_bench as Liger's script times its closure (no worker, no protocol).
# SIDES="kernelsweep worker instance liger" places a difference between the ends in one layer. Each
# side is compared with Liger's. PAIRED_TURNS (below) compares the callables within one process.
#   bench/gpu/liger_rounds.sh [BUILD_DIR] [OUT_DIR]
# Liger-Kernel at 08906d3d in external/liger (or $LIGER_SRC), never committed: see liger_benchmark.sh.
export NCCL_NVLS_ENABLE=0  # NVLink multicast off, as everywhere in bench/gpu
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
print_header
require_gpus

rounds=${ROUNDS:-4}
tokens=${TOKENS:-1024 2048 4096 8192}
measures=${MEASURES:-1}
read -ra sides <<< "${SIDES:-kernelsweep liger}"
for side in "${sides[@]}"; do
  [[ $side =~ ^(kernelsweep|worker|worker_native|instance|liger)$ ]] || { echo "SIDES: unknown side '$side' (kernelsweep, worker, worker_native, instance, liger)"; exit 2; }
done
[[ " ${sides[*]} " == *" liger "* && ${#sides[@]} -ge 2 ]] || { echo "SIDES must hold liger and another side"; exit 2; }
pin=()
[[ -n ${CPUS:-} ]] && pin=(taskset -c "$CPUS")
liger=${LIGER_SRC:-$ks_root/external/liger}
export KERNELSWEEP_PYTHON=${KERNELSWEEP_PYTHON:-python3} PYTHONUNBUFFERED=1
export PYTHONPATH=$liger/src:$liger${PYTHONPATH:+:$PYTHONPATH}
python=$KERNELSWEEP_PYTHON
"$python" -c 'import sys, torch, triton, liger_kernel; from importlib.metadata import version
print("python", sys.version.split()[0], "torch", torch.__version__, "triton", triton.__version__, "liger-kernel", version("liger-kernel"))' \
  || exit 2

# The sweep file of the kernelsweep side: configs/liger-distill-cosine.yaml measuring each point
# MEASURES times (the protocol's `repetitions`).
sweep=$out/liger-distill-cosine.yaml
sed "s/^  name: do_bench$/  name: do_bench\n  repetitions: $measures/" configs/liger-distill-cosine.yaml > "$sweep"
grep -q "^  repetitions: $measures$" "$sweep" || { echo "no protocol name: do_bench in configs/liger-distill-cosine.yaml"; exit 2; }

# One round of kernelsweep: "tokens median_ms" lines into $1, one a measurement (the documents of
# the run: one a repetition), each followed by what the document holds of its moment: the seconds
# since the round's first measurement started, and NVML's SM clock (MHz) before the first timed call
# and after the last, and the temperature (C) after it ("-" where not read). A pass whose time drifts
# within a process can so be told from one whose GPU clock moved.
kernelsweep_round() {
  local dir=$out/round-$2/kernelsweep
  local sizes
  sizes=$(tr -s ' ' '|' <<< "$tokens")
  "${pin[@]}" "$build/kernelsweep" run "$sweep" --where "implementation=liger,inputs=torch_rand,tokens=$sizes" \
    --overwrite --output-dir "$dir" ${KS_ARGS:-} > "$dir.run.txt" 2>&1 || { tail -5 "$dir.run.txt"; return 1; }
  "$python" - "$dir/kernelindex" > "$1" <<'PY'
import datetime, json, pathlib, sys
runs = []
for path in pathlib.Path(sys.argv[1]).glob("*.json"):
    document = json.loads(path.read_text())
    native = document["run"]["spec"]["sourceNative"]
    if native["status"] == "passed":
        started = datetime.datetime.fromisoformat(native["startedAt"].replace("Z", "+00:00")).timestamp()
        state = [native["metrics"].get(name, "-") for name in ("sm_clock_mhz_start", "sm_clock_mhz_end", "temperature_c_end")]
        runs.append((document["workload"]["spec"]["parameters"]["tokens"], native["repetition"],
                     native["metrics"]["median_ns"] / 1e6, started, state))
first = min((run[3] for run in runs), default=0.0)
for tokens, _, median_ms, started, state in sorted(runs):
    print(tokens, median_ms, f"{started - first:.2f}", *state)
PY
  [[ -s $1 ]] || { echo "no passed measurement in $dir/kernelindex:"; tail -5 "$dir.run.txt"; return 1; }
}

# The sweep's liger point of $1 tokens on Liger's draw, as `kernelsweep plan --json` prints it.
planned_point() {
  "$build/kernelsweep" plan --json "$sweep" --where "implementation=liger,inputs=torch_rand,tokens=$1" \
    | "$python" -c 'import json, sys; points = json.load(sys.stdin); assert len(points) == 1, points; print(json.dumps(points[0]))' \
    || { echo "no single liger point of $1 tokens in $sweep" >&2; return 1; }
}

# One round of a layer between the two ends (liger_sides.py $3): "tokens median_ms" lines into $1.
layer_round() {
  local size planned check=--check
  [[ " ${KS_ARGS:-} " == *" --check none "* ]] && check=
  : > "$1"
  for size in $tokens; do
    planned=$(planned_point "$size") || return 1
    KERNELSWEEP_BIN=${KERNELSWEEP_BIN:-$build/kernelsweep} "${pin[@]}" "$python" bench/gpu/liger_sides.py "$3" "$planned" "$measures" $check \
      >> "$1" 2>> "$out/round-$2/$3.stderr.txt" \
      || { tail -5 "$out/round-$2/$3.stderr.txt"; return 1; }
  done
}

# One round of Liger's own benchmark function: "tokens median_ms" lines into $1.
liger_round() {
  (cd "$liger/benchmark/scripts" && TOKENS=$tokens MEASURES=$measures LIGER_CLOSURE=${LIGER_CLOSURE:-0} \
    "${pin[@]}" "$python" - > "$1" 2> "$out/round-$2/liger.stderr.txt") <<'PY'
import os
import torch
import triton.testing
import benchmark_distill_cosine_loss as liger_benchmark
from utils import SingleBenchmarkRunInput

measures = int(os.environ["MEASURES"])
timed_closure = os.environ["LIGER_CLOSURE"] == "1"
medians = []  # of the measurements of the call in progress

# With LIGER_CLOSURE=1 the function's do_bench times its closure `measures` times; the function
# returns the last measurement, and every one is printed.
do_bench_once = triton.testing.do_bench
def do_bench_repeated(fn, *args, **kwargs):
    for _ in range(measures):
        result = do_bench_once(fn, *args, **kwargs)
        medians.append(result[0])  # quantiles (0.5, 0.2, 0.8): the median first
    return result
if timed_closure:
    triton.testing.do_bench = do_bench_repeated

# extra_benchmark_configs[0] of the script's __main__ (its "mode" key is not read).
config = {"H": 4096, "V": 128256, "mode": "forward", "dtype": torch.bfloat16, "bias": False,
          "weight_hard_loss": 0.5, "weight_soft_loss": 0.5, "ignore_index": -100}
for tokens in map(int, os.environ["TOKENS"].split()):
    for _ in range(1 if timed_closure else measures):
        medians.clear()
        result = liger_benchmark.bench_speed_cosine_similarity_loss(SingleBenchmarkRunInput(
            x=tokens, kernel_provider="liger", kernel_operation_mode="full", extra_benchmark_config=config))
        for median in medians if timed_closure else [result.y_50]:
            print(tokens, median, flush=True)
PY
}

# PAIRED_TURNS=N first times, at each size, Liger's closure against kernelsweep's instance in one
# process, in N alternating turns (liger_paired.py): the difference of the callables and of the timing
# loops, with the host's moves from process to process left out. The rounds follow.
if [[ -n ${PAIRED_TURNS:-} ]]; then
  for size in $tokens; do
    echo "== one process, $PAIRED_TURNS alternating turns, $size tokens (liger_paired.py)"
    planned=$(planned_point "$size") || exit 1
    PYTHONPATH=$liger/benchmark/scripts:$PYTHONPATH "${pin[@]}" "$python" bench/gpu/liger_paired.py "$planned" "$PAIRED_TURNS" \
      2> "$out/paired-$size.stderr.txt" || { tail -5 "$out/paired-$size.stderr.txt"; exit 1; }
  done
fi

# DEADLINE_S (seconds from now) ends the rounds early: the summary covers the rounds finished.
# FIRST_ROUND=N goes on from round N in an OUT_DIR that holds rounds 1 to N-1 of the same host (a
# run longer than one job's time limit, in several): the summary covers them all.
deadline=$((SECONDS + ${DEADLINE_S:-1000000}))
first_round=${FIRST_ROUND:-1}
for ((round = 1; round < first_round; ++round)); do
  for side in "${sides[@]}"; do
    [[ -s $out/round-$round/$side.txt ]] || { echo "FIRST_ROUND=$first_round: no $out/round-$round/$side.txt"; exit 2; }
  done
done
for ((round = first_round; round <= rounds; ++round)); do
  if ((SECONDS >= deadline)); then rounds=$((round - 1)); echo "deadline reached after $rounds rounds"; break; fi
  mkdir -p "$out/round-$round/kernelsweep"
  start=$(date +%s)
  said="round $round"
  for ((i = 0; i < ${#sides[@]}; ++i)); do
    side=${sides[(i + round - 1) % ${#sides[@]}]}
    case $side in
      kernelsweep) kernelsweep_round "$out/round-$round/$side.txt" "$round" ;;
      liger) liger_round "$out/round-$round/$side.txt" "$round" ;;
      *) layer_round "$out/round-$round/$side.txt" "$round" "$side" ;;
    esac || { echo "round $round failed ($side)"; exit 1; }
    said+=" | $side $(cut -d' ' -f1,2 "$out/round-$round/$side.txt" | tr '\n' ' ')"
  done
  echo "$said ($(($(date +%s) - start)) s)"
done

((rounds > 0)) || { gpu_state; exit 0; }
echo "== full pass, median ms: each round (the median of its measurements), then across rounds; each side against Liger"
"$python" - "$out" "$rounds" "${sides[@]}" <<'PY' || exit 1
import collections, random, statistics, sys
out, rounds, sides = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
def read(path):
    """tokens -> the medians (ms) of that round's measurements, in order."""
    measured = collections.defaultdict(list)
    for line in open(path):
        if line.strip():
            tokens, ms = line.split()[:2]
            measured[int(tokens)].append(float(ms))
    return measured
results = {side: [read(f"{out}/round-{r}/{side}.txt") for r in range(1, rounds + 1)] for side in sides}
theirs = results["liger"]
others = [side for side in sides if side != "liger"]
headline = "kernelsweep" if "kernelsweep" in sides else others[0]  # the side held to the 2% goal
def percent(a, b):
    return (a - b) / b * 100
worst = worst_best = worst_all = 0.0
print(f"{'tokens':>6}  {'side':<12} {'by round':<40} {'median':>8} {'difference':>10} {'fastest':>8} {'difference':>10}")
for tokens in sorted(theirs[0]):
    b = [statistics.median(r[tokens]) for r in theirs]
    for side in sides:
        a = [statistics.median(r[tokens]) for r in results[side]]
        difference, best = percent(statistics.median(a), statistics.median(b)), percent(min(a), min(b))
        if side == headline:
            worst, worst_best = max(worst, abs(difference)), max(worst_best, abs(best))
        print(f"{tokens:>6}  {side:<12} {' '.join(f'{x:.3f}' for x in a):<40} {statistics.median(a):>8.3f} "
              f"{difference:>+9.2f}% {min(a):>8.3f} {best:>+9.2f}%")
print(f"largest difference of {headline}'s medians across {rounds} rounds from Liger's: {worst:.2f}% (goal: within 2% at every size)")
# Where the host enqueues the pass more slowly than the GPU runs it (1024 tokens: see
# liger_host_bound.py), a round's median follows the host CPU's speed of the moment; the fastest
# round of each side is the pass timed while the host ran at its fastest.
print(f"largest difference of the fastest rounds: {worst_best:.2f}%")
if any(len(r[t]) > 1 for side in sides for r in results[side] for t in r):
    print("== every measurement of each side: count, quartiles and median (ms)")
    print(f"{'tokens':>6}  {'side':<12} {'count':>5} {'p25':>8} {'median':>8} {'p75':>8}")
    for tokens in sorted(theirs[0]):
        medians = {}
        for side in sides:
            every = [ms for r in results[side] for ms in r[tokens]]
            q1, q2, q3 = statistics.quantiles(every, n=4) if len(every) > 1 else every * 3
            medians[side] = statistics.median(every)
            print(f"{tokens:>6}  {side:<12} {len(every):>5} {q1:>8.3f} {medians[side]:>8.3f} {q3:>8.3f}")
        for side in others:
            difference = percent(medians[side], medians["liger"])
            if side == headline:
                worst_all = max(worst_all, abs(difference))
            print(f"{tokens:>6}  {side} against Liger, difference of the medians of every measurement: {difference:+.2f}%")
            # The measurements of one process are not independent (a process can stay in one state of
            # the host for all of them): the interval resamples whole rounds of each side.
            if rounds > 1:
                generator = random.Random(1)
                def resampled_median(side_results):
                    return statistics.median([ms for r in generator.choices(side_results, k=rounds) for ms in r[tokens]])
                ratios = sorted(resampled_median(results[side]) / resampled_median(theirs) for _ in range(2000))
                print(f"{tokens:>6}  {side} against Liger, ratio of the medians, 95% interval resampling whole rounds: "
                      f"{ratios[50]:.3f} to {ratios[1949]:.3f}")
    print(f"largest difference of {headline}'s median of every measurement from Liger's: {worst_all:.2f}% (goal: within 2% at every size)")
PY
gpu_state
