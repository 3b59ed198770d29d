#!/usr/bin/env bash
# What a full disk and a stop cost, measured on the real thing (root: it mounts a tmpfs).
#   bench/reliability.sh BUILD [REPEATS=5]
# BUILD is a build with the tests (it sweeps the test sleepers with BUILD/tests/kernelsweep-test).
#
# 1. A full disk: a 96 MiB tmpfs filled but for 38 MiB, then a 4-rank sweep of 1,000 sleepers of
#    1 ms; the disk fills part way. Printed: results stored, results received but not stored (the
#    window of loss), seconds from the refused write to the job's end, and after --resume on the
#    emptied disk, points passed exactly once.
# 2. A stop: a 3-rank sweep of 0.5 s points, SIGTERM to every process of the job once 3 results
#    are stored. Printed: seconds from the signal to the job's end (the file closed), results
#    stored, and points recorded crashed (goal 0).
# Figures: bench/results/reliability-cpu2.md.
set -euo pipefail
build=$(realpath "$1")
repeats=${2:-5}
cli="$build/tests/kernelsweep-test"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
work=$(mktemp -d /tmp/kernelsweep-reliability-XXXXXX)
disk="$work/disk"
mkdir -p "$disk"
trap 'umount -l "$disk" 2>/dev/null || true; rm -rf "$work"' EXIT

sleepers() {  # NAME POINTS FIXED
  printf 'name: %s\nprotocol: {warmup_ms: 1, rep_ms: 4, max_repeat: 20, flush_bytes: 0}\nkernels:\n' "$1"
  printf '  - kernel: test_sleep\n    implementations: [cpu]\n    modes: [forward]\n'
  printf '    grid: {id: {from: 1, to: %s, step: 1}}\n    fixed: {%s}\n' "$2" "$3"
}

passed_once() {  # RESULTS: points whose rows are exactly one passed row
  "$cli" show "$1" --format json --columns point,status,rows |
    /usr/bin/python3 -c 'import json,sys; print(sum(1 for r in json.load(sys.stdin) if r["status"]=="passed" and r["rows"]==1))'
}

echo "## full disk (1,000 points, 4 ranks)"
echo "| run | stored | not stored | s from the last write to exit | passed exactly once after --resume |"
echo "|---|---:|---:|---:|---:|"
sleepers full 1000 "run_ms: 1.0" > "$work/full.yaml"
for run in $(seq "$repeats"); do
  mount -t tmpfs -o size=96m kernelsweep-bench "$disk"
  free=$(( $(stat -f -c '%a*%S' "$disk") ))
  fallocate -l $(( free - 38 * 1024 * 1024 )) "$disk/filler"
  start=$(date +%s.%N)
  mpirun -np 4 --oversubscribe "$cli" run "$work/full.yaml" --output-dir "$disk/out" --progress-interval 1000 \
    > "$work/full.log" 2>&1 || true
  end=$(date +%s.%N)
  line=$(grep -o 'holds the [0-9]* results stored before, the [0-9]* received since' "$work/full.log" || true)
  stored=$(echo "$line" | awk '{print $3}')
  lost=$(echo "$line" | awk '{print $8}')
  # The file's last write (its mtime) came just before the refused one: from it to the end of the job.
  refusal_to_exit=$(/usr/bin/python3 -c "import os; print(f'{$end - os.path.getmtime(\"$disk/out/full.h5\"):.2f}')")
  rm "$disk/filler"
  mpirun -np 4 --oversubscribe "$cli" run "$work/full.yaml" --output-dir "$disk/out" --resume --progress-interval 1000 \
    > "$work/resume.log" 2>&1
  echo "| $run | ${stored:-none} | ${lost:-none} | $refusal_to_exit | $(passed_once "$disk/out/full.h5") |"
  umount "$disk"
done

echo
echo "## SIGTERM to every process of a job (30 points of 0.5 s, 3 ranks)"
echo "| run | s from SIGTERM to exit | stored | crashed |"
echo "|---|---:|---:|---:|"
sleepers stop 30 "setup_ms: 500" > "$work/stop.yaml"
for run in $(seq "$repeats"); do
  rm -rf "$work/stop"
  setsid mpirun -np 3 --oversubscribe "$cli" run "$work/stop.yaml" --output-dir "$work/stop" > "$work/stop.log" 2>&1 &
  job=$!
  until [[ -f "$work/stop/stop.h5" ]] && (( $("$cli" status "$work/stop/stop.h5" --json 2>/dev/null |
        /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["rows"])' 2>/dev/null || echo 0) >= 3 )); do
    sleep 0.1
  done
  start=$(date +%s.%N)
  pkill -TERM -s "$(ps -o sid= -p "$job" | tr -d ' ')" || true
  wait "$job" || true
  end=$(date +%s.%N)
  crashed=$("$cli" show "$work/stop/stop.h5" --format json --columns status |
    /usr/bin/python3 -c 'import json,sys; print(sum(1 for r in json.load(sys.stdin) if r["status"]=="crashed"))')
  rows=$("$cli" status "$work/stop/stop.h5" --json | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["rows"])')
  echo "| $run | $(/usr/bin/python3 -c "print(f'{$end - $start:.2f}')") | $rows | $crashed |"
done
