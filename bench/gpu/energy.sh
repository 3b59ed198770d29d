#!/usr/bin/env bash
# Energy per call on this host's first GPU, held against nvidia-smi: bench/gpu/energy.yaml (a bf16
# product of 4096^3 under `energy: true`) runs on one rank while nvidia-smi samples the GPU's power
# every 100 ms; kernelsweep's joules per call is printed beside nvidia-smi's mean power times the
# point's median time, over the point's own time (from its started_at to its ended_at) and over the
# whole run. nvidia-smi's power.draw is itself an average (over about a second on H100 and H200), so
# the two agree to within some percent, not exactly.
#   bench/gpu/energy.sh [BUILD_DIR] [OUT_DIR]
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
print_header
require_gpus

# The GPU the rank measures on: the first one visible.
first_gpu=${CUDA_VISIBLE_DEVICES:-0}
first_gpu=${first_gpu%%,*}
samples=$out/power.csv
# power.draw.instant where the driver has it (power.draw is a one-second average on H100 and H200).
field=power.draw.instant
nvidia-smi -i "$first_gpu" --query-gpu=$field --format=csv,noheader > /dev/null 2>&1 || field=power.draw
echo "nvidia-smi field: $field"
nvidia-smi -i "$first_gpu" --query-gpu=timestamp,$field --format=csv,noheader,nounits -lms 100 > "$samples" &
sampler=$!
sleep 1  # a few idle samples before the run

echo "== bench/gpu/energy.yaml"
mpirun -np 1 "$build/kernelsweep" run bench/gpu/energy.yaml --output-dir "$out/sweep" --overwrite --calibrate off \
  > "$out/sweep.log" 2>&1
echo "exit $?"
sleep 1
kill "$sampler"
wait "$sampler" 2> /dev/null

"$build/kernelsweep" show "$out/sweep/energy.h5" \
  --columns kernel,implementation,M,dtype,status,median_ms,tflops,joules_per_call,gflops_per_joule,energy_window_s,power_w
"$build/kernelsweep" show "$out/sweep/energy.h5" --format json \
  --columns started_at,ended_at,median_ms,joules_per_call,energy_window_s > "$out/point.json"

python3 - "$out/point.json" "$samples" <<'PY'
import calendar, json, sys, time
from datetime import datetime

point = json.load(open(sys.argv[1]))[0]
def utc_seconds(iso):  # "2026-12-07T10:03:41.123Z"
    utc = datetime.strptime(iso, "%Y-%m-%dT%H:%M:%S.%fZ")
    return calendar.timegm(utc.timetuple()) + utc.microsecond / 1e6

samples = []  # (seconds since the epoch, watts); nvidia-smi writes local time
for line in open(sys.argv[2]):
    stamp, _, watts = line.partition(",")
    try:
        local = datetime.strptime(stamp.strip(), "%Y/%m/%d %H:%M:%S.%f")
        samples.append((time.mktime(local.timetuple()) + local.microsecond / 1e6, float(watts)))
    except ValueError:
        continue
if not samples or point["joules_per_call"] is None:
    sys.exit(f"nothing to compare: {len(samples)} power samples, joules_per_call {point['joules_per_call']}")

median_s = point["median_ms"] / 1e3
start, end = utc_seconds(point["started_at"]), utc_seconds(point["ended_at"])
during_point = [w for t, w in samples if start <= t <= end]
# The energy window is the point's last energy_window_s (it runs after the timed repetitions).
window = [w for t, w in samples if end - point["energy_window_s"] <= t <= end]
whole_run = [w for _, w in samples]
print(f"kernelsweep: {point['joules_per_call']:.5f} J a call (window {point['energy_window_s']:.2f} s, "
      f"median {median_s * 1e6:.1f} us: {point['joules_per_call'] / median_s:.0f} W)")
for name, watts in (("during the energy window", window), ("during the point", during_point),
                    ("whole run", whole_run)):
    if not watts:
        print(f"nvidia-smi {name}: no sample")
        continue
    mean = sum(watts) / len(watts)
    joules = mean * median_s
    print(f"nvidia-smi {name}: mean {mean:.0f} W over {len(watts)} samples x median = {joules:.5f} J a call "
          f"({100 * (point['joules_per_call'] - joules) / joules:+.1f}% from kernelsweep's)")
PY
