#!/usr/bin/env bash
# The chaos test (tests/mpi/reliability_test.cpp, Chaos.*) with seeds 1..N: workers killed, a rank
# stopped and the disk filled at random moments of a 4-rank sweep of 300 points, then --resume.
#   bench/chaos_seeds.sh BUILD [N=20]          (root: the test mounts a tmpfs)
# Prints each seed's line and the totals: seeds that failed (a point lost, passed twice, a document
# without its row), that hung, and what was done to them. Figures: bench/results/reliability-cpu2.md.
set -uo pipefail
build=$(realpath "$1")
seeds=${2:-20}
failed=0
hung=0
for seed in $(seq "$seeds"); do
  log=$(KS_CHAOS_SEED=$seed timeout 900 "$build/tests/mpi_tests" --gtest_filter='Chaos.*' 2>&1)
  code=$?
  echo "$log" | grep '^chaos seed'
  if ((code == 124)); then
    hung=$((hung + 1))
    echo "chaos seed $seed: HUNG"
  elif ! echo "$log" | grep -q '^\[  PASSED  \] 1 test'; then
    failed=$((failed + 1))
    echo "chaos seed $seed: FAILED"
    echo "$log" | grep -A3 Failure | head -20
  fi
done
echo "seeds: $seeds, failed: $failed, hung: $hung"
