#!/usr/bin/env bash
# How a sweep scales over this host's GPUs: each sweep file run on R = 1, 2, ..., GPUs ranks (one
# GPU per rank), then per sweep a table of wall time (date around mpirun, start-up included), time
# from the results file's own start and end (no start-up), points per minute and efficiency
# against one rank, and the spread of each point's median between the 1-rank run and each other run
# (bench_median_spread, points of at least 1 ms).
#   bench/gpu/scale.sh [BUILD_DIR] [OUT_DIR]
# Settings (environment): SWEEPS="configs/gemm-scale.yaml configs/liger-distill-cosine.yaml",
# RANKS="1 2 ... GPUs" (the rank counts to run).
export NCCL_NVLS_ENABLE=0  # NVLink multicast off, as everywhere in bench/gpu
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
print_header
require_gpus

sweeps=${SWEEPS:-configs/gemm-scale.yaml configs/liger-distill-cosine.yaml}
ranks_list=${RANKS:-$(seq 1 "$gpus")}
seconds_between() { awk "BEGIN {printf \"%.2f\", $2 - $1}"; }
iso_seconds() { date -u -d "$1" +%s.%N; }

rc=0
for sweep in $sweeps; do
  name=$(basename "$sweep" .yaml)
  table=$out/$name.scale.txt
  printf "%-28s %5s %7s %9s %9s %10s %10s\n" sweep ranks points "wall s" "file s" points/min efficiency > "$table"
  for ranks in $ranks_list; do
    dir=$out/$name-np$ranks
    echo "== mpirun -np $ranks kernelsweep run $sweep"
    start=$(date +%s.%N)
    ks_mpirun "$ranks" run "$sweep" --overwrite --kernelindex-format jsonl --output-dir "$dir" > "$dir.log" 2>&1
    run_rc=$?
    end=$(date +%s.%N)
    ((run_rc == 0)) || rc=1
    grep -vE "^progress|pmix|Perhaps a missing|dlopen" "$dir.log" | tail -6
    status=$("$build/kernelsweep" status "$dir/$name.h5" 2>&1)
    echo "$status"
    wall=$(seconds_between "$start" "$end")
    # "started 2026-11-30T13:01:51.445Z, ended 2026-11-30T13:01:52.675Z" in kernelsweep status
    file_s=$(sed -nE 's/^started ([^,]+), ended (.+)$/\1 \2/p' <<< "$status" | {
      read -r s e && [[ -n $e ]] && seconds_between "$(iso_seconds "$s")" "$(iso_seconds "$e")"; })
    points=$(sed -nE 's/^ +passed +([0-9]+).*/\1/p' <<< "$status")
    [[ $ranks == 1 ]] && wall1=$wall
    efficiency=$(awk "BEGIN {if (\"${wall1:-}\" == \"\") print \"-\"; else printf \"%.1f %%\", 100 * ${wall1:-0} / ($ranks * $wall)}")
    printf "%-28s %5d %7s %9s %9s %10.0f %10s   (exit %d)\n" "$name" "$ranks" "${points:-0}" "$wall" "${file_s:--}" \
      "$(awk "BEGIN {print 60 * ${points:-0} / $wall}")" "$efficiency" "$run_rc" >> "$table"
  done
  echo "== $name: scaling"
  cat "$table"
  if [[ -x $build/bench/bench_median_spread && -f $out/$name-np1/$name.h5 ]]; then
    for ranks in $ranks_list; do
      [[ $ranks == 1 || ! -f $out/$name-np$ranks/$name.h5 ]] && continue
      echo "== $name: spread of each point's median, 1 rank against $ranks"
      "$build/bench/bench_median_spread" "$out/$name-np1/$name.h5" "$out/$name-np$ranks/$name.h5" --min-ms 1
    done
  fi
done
gpu_state
exit "$rc"
