#!/usr/bin/env bash
# slurm/sweep.sbatch on a real Slurm: the private single-node cluster of tests/slurm/cluster.sh.
#
#   tests/slurm/slurm_test.sh CASE KERNELSWEEP KERNELSWEEP_TEST CLUSTER_DIR WORK_DIR
#
# KERNELSWEEP is the product's binary, KERNELSWEEP_TEST the one with the test kernels (test_sleep);
# CLUSTER_DIR a cluster started by `cluster.sh start`; WORK_DIR/CASE is made afresh for the case.
#
# Cases:
#   matches_mpirun    the template with 2 tasks gives the points `mpirun -np 2` gives; submitted
#                     again on the finished sweep it adds no row (the cuda points stay skipped)
#   signalled         a job signalled mid-sweep (scancel -b --signal=TERM, as --signal=B:TERM@N does)
#   signalled_early   a job signalled while it validates the sweep file, before any rank starts
#                     logs one clean message, requeues itself, resumes, and ends with every point
#                     passed exactly once
#   time_limit        the same at a real --time limit with --signal=B:TERM@N
#   bad_sweep         a bad sweep file fails the job at once, its error in the output file, no requeue
#   array             `kernelsweep submit --array 3`: three shards of equal size and the merge job give
#                     one results file with every point exactly once, its status and its report
#   array_requeued    the same for 2 shards whose tasks are signalled as near their time limit and
#                     are requeued: the merge job waits for the requeued tasks
#
# Exit 0 when every check holds.
set -euo pipefail

(($# == 5)) || { echo "usage: $0 CASE KERNELSWEEP KERNELSWEEP_TEST CLUSTER_DIR WORK_DIR" >&2; exit 2; }
case_name=$1
cli=$(realpath -- "$2")
test_cli=$(realpath -- "$3")
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
eval "$("$here/cluster.sh" env "$4")"
export SLURM_CONF

work=$(realpath -m -- "$5")/$case_name
rm -rf "$work"
mkdir -p "$work"
cd "$work"

failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
pass() { echo "ok: $*"; }
finish() {
  if ((failures)); then
    # The cluster's logs go with the next start of the cluster: the case keeps a copy, and prints what
    # the controller said of its jobs.
    cp -r "$KS_SLURM_DIR/log" "$work/cluster-log" 2>/dev/null || true
    local jobs
    jobs=$(ls "$work" "$work"/results/*/ 2>/dev/null | sed -n 's/^\(job\|slurm\)-\([0-9]*\).*\.out$/\2/p' | sort -u | paste -sd'|')
    if [[ -n $jobs ]]; then
      echo "-- slurmctld on the jobs of this case ($jobs):" >&2
      grep -E "JobId=($jobs)([^0-9_]|_|$)" "$KS_SLURM_DIR/log/slurmctld.log" >&2 || true
    fi
    echo "$case_name: $failures check(s) failed; the job's files are in $work, the cluster's logs in $work/cluster-log" >&2
    exit 1
  fi
  echo "$case_name: all checks passed"
}

# The template as a user on a partition without GPUs edits it (its comments say how).
template=$work/sweep.sbatch
grep -v -- '--gpus-per-task' "$root/slurm/sweep.sbatch" >"$template"

# A sweep of `points` sleepers of `ms` milliseconds each (the test kernels of kernelsweep-test).
sleepers() {
  local name=$1 points=$2 ms=$3
  cat >"$work/$name.yaml" <<EOF
name: $name
protocol: {warmup_ms: 1, rep_ms: 4, max_repeat: 20, flush_bytes: 0}
kernels:
  - kernel: test_sleep
    implementations: [cpu]
    modes: [forward]
    grid: {id: {from: 1, to: $points, step: 1}}
    fixed: {setup_ms: $ms}
EOF
}

job_field() { scontrol show job "$1" 2>/dev/null | tr ' ' '\n' | sed -n "s/^$2=//p" | head -n 1; }

# Waits until job $1 has ended (COMPLETED, FAILED, ...), starting it, and the jobs $3 names, again at
# once whenever a requeue leaves one pending until its begin time (Slurm holds a requeued job back for
# a while); prints the state.
wait_for_end() {
  local job=$1 deadline=$((SECONDS + ${2:-400})) state one
  local -a others=()
  read -ra others <<<"${3:-}"
  while ((SECONDS < deadline)); do
    for one in "$job" "${others[@]}"; do
      [[ $(job_field "$one" JobState) == PENDING && $(job_field "$one" Reason) == BeginTime ]] &&
        scontrol update JobId="$one" StartTime=now 2>/dev/null
    done
    state=$(job_field "$job" JobState)
    case $state in
      COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY) echo "$state"; return ;;
    esac
    sleep 1
  done
  echo "STILL-$state"
}

# The rows stored in results file $2 (0 while it is not there), as `$1 status --json` counts them.
stored_rows() {
  [[ -f $2 ]] || { echo 0; return; }
  "$1" status --json "$2" 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["rows"])' 2>/dev/null || echo 0
}

# Waits until results file $3 of job $2 holds at least 4 rows, then sends SIGTERM to the job's batch
# script, as Slurm does near a time limit (but at a moment the test chooses, not slurmctld's next
# check of the limits).
signal_once_rows_stored() {
  local bin=$1 job=$2 file=$3 deadline=$((SECONDS + 120))
  until (($(stored_rows "$bin" "$file") >= 4)); do
    [[ $(job_field "$job" JobState) =~ ^(PENDING|RUNNING|CONFIGURING)$ ]] && ((SECONDS < deadline)) ||
      { fail "no rows stored in $file while job $job ran"; return 1; }
    sleep 0.5
  done
  scancel -b --signal=TERM "$job"
}

# Rows of each status: "passed=N skipped=M ..." and the rows per point, from the results file.
rows_per_point() { "$1" show "$2" --format csv --columns point,status | tr -d '\r' | tail -n +2 | sort; }

check_every_point_passed_once() {
  local bin=$1 file=$2 points=$3 rows distinct
  rows=$(rows_per_point "$bin" "$file")
  distinct=$(cut -d, -f1 <<<"$rows" | sort -u | wc -l)
  if [[ $(wc -l <<<"$rows") == "$points" && $distinct == "$points" && $(grep -vc ',passed$' <<<"$rows" || true) == 0 ]]; then
    pass "every one of the $points points passed, once"
  else
    fail "expected $points points passed once each; $file holds $(wc -l <<<"$rows") rows for $distinct points:"
    grep -v ',passed$' <<<"$rows" | head >&2 || true
  fi
}

count() { grep -c -- "$1" "$2" || true; }

case $case_name in
matches_mpirun)
  bin=$cli
  export KERNELSWEEP=$bin
  set +e
  timeout 300 sbatch --wait --ntasks-per-node=2 -o "$work/job-%j.out" "$template" "$root/configs/quickstart.yaml" >/dev/null
  rc=$?
  set -e
  ((rc == 0)) && pass "sbatch --wait returned 0" || fail "sbatch --wait returned $rc: $(cat "$work"/job-*.out)"
  file=$work/results/quickstart/quickstart.h5
  ws=$(h5dump -a /world_size "$file" | sed -n 's/^ *(0): *//p')
  [[ $ws == 2 ]] && pass "one MPI world of 2 ranks" || fail "world_size is '$ws', not 2"
  grep -q '  job: slurm job [0-9]*, partition debug, nodes ' "$work"/job-*.out && pass "the log names the job" ||
    fail "no job line in the log: $(cat "$work"/job-*.out)"
  rows_per_point "$bin" "$file" >"$work/slurm.points"
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout 300 \
    mpirun -q -np 2 --oversubscribe "$bin" run "$root/configs/quickstart.yaml" --output-dir "$work/mpirun" >"$work/mpirun.log" 2>&1 ||
    fail "mpirun failed: $(tail "$work/mpirun.log")"
  rows_per_point "$bin" "$work/mpirun/quickstart.h5" >"$work/mpirun.points"
  if cmp -s "$work/slurm.points" "$work/mpirun.points" && [[ -s $work/slurm.points ]]; then
    pass "the same $(wc -l <"$work/slurm.points") points and statuses as mpirun -np 2"
  else
    fail "points differ from mpirun's:"; diff "$work/slurm.points" "$work/mpirun.points" >&2 || true
  fi
  # Submitted again on the finished sweep: nothing to measure, no row added, no requeue.
  rows_before=$(wc -l <"$work/slurm.points")
  documents_before=$(find "$work/results/quickstart/kernelindex" -type f | wc -l)
  set +e
  timeout 300 sbatch --wait --ntasks-per-node=2 -o "$work/again-%j.out" "$template" "$root/configs/quickstart.yaml" >/dev/null
  rc=$?
  set -e
  ((rc == 0)) && pass "the resubmitted job returned 0" || fail "the resubmitted job returned $rc"
  rows_after=$(rows_per_point "$bin" "$file" | wc -l)
  documents_after=$(find "$work/results/quickstart/kernelindex" -type f | wc -l)
  [[ $rows_after == "$rows_before" && $documents_after == "$documents_before" ]] &&
    pass "resubmitted: no row or document added ($rows_after rows)" ||
    fail "resubmitted: rows $rows_before -> $rows_after, documents $documents_before -> $documents_after"
  ;;

signalled | time_limit)
  bin=$test_cli
  export KERNELSWEEP=$bin
  if [[ $case_name == signalled ]]; then
    points=40
    sleepers slow "$points" 400
    job=$(sbatch --parsable --ntasks-per-node=2 -o "$work/job-%j.out" "$template" "$work/slow.yaml")
    signal_once_rows_stored "$bin" "$job" "$work/results/slow/slow.h5" || { cat "$work"/job-*.out >&2; finish; }
  else
    # A one-minute limit, signalled 50 s before it: slurmctld checks time limits every 30 s, so the
    # signal comes at the job's first check once 10 s have gone by (within 40 s of its start, later
    # on a loaded machine), and again in every requeued run, until the sweep is complete. The sweep
    # holds 55 s of work on 2 ranks, nearly the limit: with 40 s, a late check let a run end unsignalled.
    points=200
    sleepers slow "$points" 550
    job=$(sbatch --parsable --ntasks-per-node=2 --time=1 --signal=B:TERM@50 -o "$work/job-%j.out" "$template" "$work/slow.yaml")
  fi
  state=$(wait_for_end "$job" 500)
  log=$(echo "$work"/job-*.out)
  [[ $state == COMPLETED ]] && pass "the job completed" || fail "the job ended $state: $(cat "$log")"
  restarts=$(job_field "$job" Restarts)
  ((restarts >= 1)) && pass "requeued $restarts time(s)" || fail "never requeued: $(cat "$log")"
  # A signal can come before the ranks start (Slurm's first check of the limit at the job's start):
  # the script requeues the job without a run, and says so instead.
  interrupted=$(count 'kernelsweep: interrupted (' "$log")
  before_start=$(count 'SIGTERM before the ranks started' "$log")
  ((interrupted + before_start == restarts)) &&
    pass "one interruption message per requeue ($interrupted, $before_start before the ranks started)" ||
    fail "$interrupted interruption messages and $before_start before the ranks started for $restarts requeues: $(cat "$log")"
  [[ $(count 'kernelsweep: interrupted (SIGTERM to the batch script' "$log") == "$interrupted" ]] ||
    fail "an interruption not by SIGTERM: $(grep 'interrupted (' "$log")"
  [[ $(count 'requeueing job' "$log") == "$restarts" ]] || fail "requeue lines do not match $restarts restarts"
  for noise in MPI_ABORT 'task [0-9]*: Killed' 'forcing job termination'; do
    [[ $(count "$noise" "$log") == 0 ]] && pass "no '$noise' in the log" || fail "'$noise' in the log: $(cat "$log")"
  done
  grep -q "resuming: [0-9]* of $points points already passed" "$log" && pass "the requeued job resumed" ||
    fail "no resume in the log"
  check_every_point_passed_once "$bin" "$work/results/slow/slow.h5" "$points"
  # No rank or worker outlives its job.
  if pgrep -f -- "$work/slow.yaml" >/dev/null; then fail "processes of the job still run: $(pgrep -af -- "$work/slow.yaml")"
  else pass "no process of the job left"; fi
  ;;

signalled_early)
  # The signal comes while the sweep file is validated, before any rank starts: validate is made slow
  # (a wrapper that says when it starts), so that it surely does. The job is requeued, not killed,
  # and its next run measures the sweep.
  bin=$test_cli
  printf '#!/usr/bin/env bash\nif [[ $1 == validate ]]; then touch %q; sleep 4; fi\nexec %q "$@"\n' \
    "$work/validating" "$bin" >"$work/slow-validate"
  chmod +x "$work/slow-validate"
  export KERNELSWEEP=$work/slow-validate
  points=6
  sleepers quick "$points" 10
  job=$(sbatch --parsable --ntasks-per-node=1 -o "$work/job-%j.out" "$template" "$work/quick.yaml")
  deadline=$((SECONDS + 120))
  until [[ -f $work/validating ]]; do
    ((SECONDS < deadline)) || { fail "the batch script never validated: $(cat "$work"/job-*.out)"; finish; }
    sleep 0.2
  done
  scancel -b --signal=TERM "$job"
  state=$(wait_for_end "$job" 300)
  log=$(echo "$work"/job-*.out)
  [[ $state == COMPLETED ]] && pass "the job completed" || fail "the job ended $state: $(cat "$log")"
  restarts=$(job_field "$job" Restarts)
  ((restarts == 1)) && pass "requeued once" || fail "requeued ${restarts:-?} times: $(cat "$log")"
  [[ $(count 'SIGTERM before the ranks started' "$log") == 1 ]] &&
    pass "the log says the signal came before the ranks" || fail "no word of the early signal: $(cat "$log")"
  [[ $(count 'kernelsweep: interrupted (' "$log") == 0 ]] && pass "no run was interrupted" ||
    fail "a run was interrupted: $(cat "$log")"
  check_every_point_passed_once "$bin" "$work/results/quick/quick.h5" "$points"
  ;;

bad_sweep)
  export KERNELSWEEP=$cli
  printf 'name: broken\nkernels:\n  - kernel: gemm\n    implementations: [cpu]\n    grid:\n      M: [16]\n      N: [8]\n      K: [8]\n      dtpye: [fp32]\n' >"$work/broken.yaml"
  set +e
  timeout 120 sbatch --wait --ntasks-per-node=2 -o "$work/job-%j.out" "$template" "$work/broken.yaml" >/dev/null
  rc=$?
  set -e
  log=$(echo "$work"/job-*.out)
  ((rc == 2)) && pass "sbatch --wait returned 2 (bad input)" || fail "sbatch --wait returned $rc, not 2"
  grep -q "broken.yaml:9.*dtpye" "$log" && pass "the output file names the file, line and key" ||
    fail "no file:line error in the log: $(cat "$log")"
  job=$(basename "$log" .out)
  job=${job#job-}
  [[ $(job_field "$job" Restarts) == 0 ]] && pass "not requeued" || fail "requeued: $(scontrol show job "$job")"
  [[ ! -e $work/results/broken ]] && pass "no results folder made" || fail "a results folder was made"
  ;;

array)
  bin=$test_cli
  points=30
  sleepers spread "$points" 100
  said=$("$bin" submit "$work/spread.yaml" --array 3 --batch-script "$template" -- --ntasks-per-node=2)
  echo "$said"
  merge_job=$(sed -n 's/.* and merge job \([0-9]*\) .*/\1/p' <<<"$said")
  array_job=$(sed -n 's/^submitted array job \([0-9]*\) .*/\1/p' <<<"$said")
  [[ -n $merge_job && -n $array_job ]] || { fail "submit said: $said"; finish; }
  state=$(wait_for_end "$merge_job" 400)
  [[ $state == COMPLETED ]] && pass "the merge job completed" ||
    fail "the merge job ended $state: $(cat "$work"/results/spread/slurm-*-merge.out)"
  for task in 0 1 2; do
    shard=$work/results/spread/spread.shard-$task-of-3.h5
    said=$("$bin" status "$shard")
    grep -q "10 points planned in shard $task/3" <<<"$said" && grep -q "missing: 0 points" <<<"$said" &&
      pass "shard $task: 10 points, none missing" || fail "shard $task: $said"
  done
  check_every_point_passed_once "$bin" "$work/results/spread/spread.h5" "$points"
  grep -q "missing: 0 points" "$work"/results/spread/slurm-*-merge.out && pass "the merge job's log has the status" ||
    fail "no status in the merge job's log: $(cat "$work"/results/spread/slurm-*-merge.out)"
  [[ -f $work/results/spread/report/report.md ]] && pass "the report was written" || fail "no report"
  ;;

array_requeued)
  bin=$test_cli
  points=80
  sleepers long "$points" 400
  # One rank per task, both tasks at once, 16 s of work each. Each task's batch script gets SIGTERM,
  # as near its time limit, once its shard has stored rows (the time limit itself is time_limit's
  # case: here the signal must come while the task still has work, whatever the machine's load).
  said=$("$bin" submit "$work/long.yaml" --array 2 --batch-script "$template" -- --ntasks-per-node=1)
  merge_job=$(sed -n 's/.* and merge job \([0-9]*\) .*/\1/p' <<<"$said")
  array_job=$(sed -n 's/^submitted array job \([0-9]*\) .*/\1/p' <<<"$said")
  [[ -n $merge_job && -n $array_job ]] || { fail "submit said: $said"; finish; }
  for task in 0 1; do
    signal_once_rows_stored "$bin" "${array_job}_$task" "$work/results/long/long.shard-$task-of-2.h5" || finish
  done
  state=$(wait_for_end "$merge_job" 400 "${array_job}_0 ${array_job}_1")
  [[ $state == COMPLETED ]] && pass "the merge job completed" ||
    fail "the merge job ended $state: $(cat "$work"/results/long/slurm-*-merge.out)"
  for task in 0 1; do
    requeues=$(cat "$work"/results/long/slurm-*_"$task".out | grep -c 'requeueing job' || true)
    ((requeues >= 1)) && pass "task $task was requeued $requeues time(s)" || fail "task $task was not requeued"
  done
  check_every_point_passed_once "$bin" "$work/results/long/long.h5" "$points"
  ;;

*)
  echo "unknown case $case_name" >&2
  exit 2
  ;;
esac
finish
