#!/usr/bin/env bash
# kernelsweep's NCCL collectives beside nccl-tests (github.com/NVIDIA/nccl-tests) built from its
# source, on this host's GPUs, minutes apart in one run:
#   1. nccl-tests' COLLECTIVE_perf $NT_SIZES -f 2 -g GPUS -w 20 -n 50 -c 0 (float sum, out of place;
#      its time is the mean of the 50 calls);
#   2. kernelsweep: $CONFIG's points of those collectives, group_size set to the GPU count, under
#      mpirun with one rank per GPU, unchecked (--check none; the gpu tests check);
#   3. per size and implementation, nccl-tests' time and bus bandwidth beside kernelsweep's median
#      and mean and its bus bandwidth, and the ratio of the bus bandwidths (of the algorithm
#      bandwidths on one GPU, where the bus factors are 0 but broadcast's).
#   bench/gpu/nccl_vs_nccl_tests.sh [BUILD_DIR] [OUT_DIR]
#   CONFIG=configs/nccl-busbw-8g.yaml NT_SIZES="-b 1M -e 8G" COLLECTIVES="all_reduce all_gather" (the defaults)
#   CONFIG=configs/nccl-busbw.yaml NT_SIZES="-b 8 -e 128M" COLLECTIVES="all_reduce all_gather reduce_scatter alltoall broadcast"
# nccl-tests must be built in external/nccl-tests (or $NCCL_TESTS), never committed:
#   git -C NCCL_TESTS_CLONE archive HEAD | tar x -C external/nccl-tests   # the commit is printed below
#   make -C external/nccl-tests -j CUDA_HOME=/usr/local/cuda NCCL_HOME=/usr/local/cuda \
#     NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90" src.build
export NCCL_NVLS_ENABLE=0  # NVLink multicast off, as everywhere in bench/gpu
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
print_header
require_gpus

nccl_tests=${NCCL_TESTS:-$ks_root/external/nccl-tests}
[[ -x $nccl_tests/build/all_reduce_perf ]] || { echo "no nccl-tests build in $nccl_tests/build"; exit 2; }
echo "nccl-tests: $(cat "$nccl_tests/COMMIT" 2> /dev/null || echo "commit not recorded")"
collectives=${COLLECTIVES:-all_reduce all_gather}
config=${CONFIG:-configs/nccl-busbw-8g.yaml}
nt_sizes=${NT_SIZES:--b 1M -e 8G}
name=$(basename "$config" .yaml)

for c in $collectives; do
  echo "== nccl-tests ${c}_perf $nt_sizes -f 2 -g $gpus -w 20 -n 50 -c 0"
  "$nccl_tests/build/${c}_perf" $nt_sizes -f 2 -g "$gpus" -w 20 -n 50 -c 0 > "$out/$c.nccl-tests.txt" 2>&1
  grep -E "^ +[0-9]+ " "$out/$c.nccl-tests.txt" | awk '{print $1, $6, $8}' > "$out/$c.nccl-tests.rows"
  grep -E "nccl-tests version|Avg bus" "$out/$c.nccl-tests.txt"
done

echo "== kernelsweep run $config (group_size $gpus, $gpus rank(s), --check none)"
sed "s/group_size: [0-9]*/group_size: $gpus/" "$config" > "$out/$name.yaml"
where="kernel=$(tr ' ' '|' <<< "$collectives")"
start=$(date +%s.%N)
ks_mpirun "$gpus" run "$out/$name.yaml" --where "$where" --check none --overwrite --output-dir "$out/sweep" \
  > "$out/sweep.run.txt" 2>&1
echo "run exit code $?, wall $(awk "BEGIN {printf \"%.1f\", $(date +%s.%N) - $start}") s"
results=$out/sweep/$name.h5
"$build/kernelsweep" show "$results" --where 'status!=passed' --columns kernel,param.bytes,status,message

echo "== per size: nccl-tests (mean of 50) beside kernelsweep (median and mean of do_bench's repetitions)"
for c in $collectives; do
  for implementation in $("$build/kernelsweep" show "$results" --where "kernel=$c" --columns implementation --format csv |
                          tail -n +2 | tr -d '\r' | sort -u); do
    rows=$out/$c.$implementation.kernelsweep.rows
    "$build/kernelsweep" show "$results" --where "kernel=$c,implementation=$implementation" \
      --columns param.bytes,median_ms,mean_ms,gbps,bus_gbps,n_repeat --format csv | tail -n +2 | tr -d '\r' > "$rows"
    echo "-- $c $implementation"
    printf "%12s %10s %10s %10s %10s %10s %10s %8s %8s\n" bytes nt_us nt_busbw ks_med_us ks_mean_us ks_algbw ks_busbw ratio n_repeat
    awk -F'[ ,]' -v gpus="$gpus" '
      NR == FNR { nt_us[$1] = $2; nt_bus[$1] = $3; next }
      ($1 in nt_us) {
        bus = (gpus > 1 || $5 > 0)
        ks = bus ? $5 : $4; nt = bus ? nt_bus[$1] : $1 / (nt_us[$1] * 1e3)
        printf "%12s %10.1f %10.2f %10.1f %10.1f %10.2f %10.2f %8.4f %8s\n", $1, nt_us[$1], nt_bus[$1], $2 * 1e3, $3 * 1e3, $4, $5,
               (nt > 0) ? ks / nt : 0, $6
      }' "$out/$c.nccl-tests.rows" "$rows"
  done
done
gpu_state
