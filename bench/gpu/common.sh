# Sourced by the benchmark scripts beside it; not a benchmark itself. Every script is called as
#   bench/gpu/NAME.sh [BUILD_DIR] [OUT_DIR]
# BUILD_DIR: a CMake build folder of this repository, configured with CUDA (default: build/).
# OUT_DIR: where everything the script prints (NAME.log) and writes goes (default: $OUT, else
# results/bench/NAME). The script runs from the repository root, whatever the working directory.
#
# A GPU host without OpenMPI, HDF5 and yaml-cpp can run the binaries with a runtime kit
# (../shared/gpu-host/make-kit): when $KS_KIT (a kit.tar.xz) or .kit/kit.tar.xz exists, it is
# unpacked into /tmp/kit and its env.sh sourced. Without one, the host's own libraries are used.
#
# NVLink multicast stays off (NCCL_NVLS_ENABLE=0). Nothing here changes a GPU's clocks or settings:
# nvidia-smi is only queried.

set -uo pipefail

ks_name=$(basename "$0" .sh)
ks_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${1:-$ks_root/build}
out=${2:-${OUT:-$ks_root/results/bench/$ks_name}}
if ! build=$(cd "$build" 2>/dev/null && pwd) || [[ ! -x $build/kernelsweep ]]; then
  echo "$ks_name: no kernelsweep in build folder '${1:-build}' (usage: bench/gpu/$ks_name.sh [BUILD_DIR] [OUT_DIR])" >&2
  exit 2
fi
mkdir -p "$out" && out=$(cd "$out" && pwd)
cd "$ks_root" || exit 2

kit=${KS_KIT:-$ks_root/.kit/kit.tar.xz}
if [[ -f $kit ]]; then
  mkdir -p /tmp/kit && tar xJf "$kit" -C /tmp/kit && source /tmp/kit/env.sh
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export NCCL_NVLS_ENABLE=0

# Everything printed from here on also goes to OUT_DIR/NAME.log.
exec > >(tee "$out/$ks_name.log") 2>&1

# The GPUs this process may use: CUDA_VISIBLE_DEVICES's entries when it is set, else nvidia-smi's
# list, else torch's count.
gpu_count() {
  if [[ -n ${CUDA_VISIBLE_DEVICES+set} ]]; then
    local visible=${CUDA_VISIBLE_DEVICES//[[:space:]]/}
    if [[ -z $visible || $visible == -1 ]]; then echo 0; else tr ',' '\n' <<< "$visible" | grep -c .; fi
  elif command -v nvidia-smi > /dev/null && nvidia-smi -L > /dev/null 2>&1; then
    nvidia-smi -L | grep -c '^GPU '
  else
    python3 -c 'import torch; print(torch.cuda.device_count())' 2> /dev/null || echo 0
  fi
}
gpus=$(gpu_count)

# Clocks, temperature and power as they are (read, never set): every GPU, or the one given.
gpu_state() {
  nvidia-smi ${1:+-i "$1"} --query-gpu=index,name,uuid,pci.bus_id,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw \
    --format=csv 2> /dev/null || echo "(nvidia-smi not available)"
}

# The lowest compute capability among the GPUs, as 80, 90, ...; 0 when unknown.
compute_capability() {
  local cc
  cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2> /dev/null | sort -n | head -1)
  [[ -z $cc ]] && cc=$(python3 -c 'import torch; print("%d.%d" % torch.cuda.get_device_capability(0))' 2> /dev/null)
  [[ $cc =~ ^([0-9]+)\.([0-9]) ]] && echo "${BASH_REMATCH[1]}${BASH_REMATCH[2]}" || echo 0
}

# The first lines of every log: what ran, from which commit, where, on what.
print_header() {
  echo "== $ks_name: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "build: $build ($("$build/kernelsweep" --version 2>&1 | head -1))"
  echo "commit: $(git -C "$ks_root" rev-parse --short=12 HEAD 2> /dev/null || echo unknown)"
  echo "host: $(hostname), GPUs visible: $gpus"
  gpu_state
}

require_gpus() {
  if ((gpus < 1)); then
    echo "$ks_name: no GPU visible; nothing to measure" >&2
    exit 2
  fi
}

# mpirun -np RANKS kernelsweep ARGS...
ks_mpirun() {
  local ranks=$1
  shift
  mpirun -np "$ranks" "$build/kernelsweep" "$@"
}

# Liger-Kernel's source on the Python path (external/liger, or $LIGER_SRC; liger_benchmark.sh says how
# to bring it), and the Python workers' output unbuffered. Without it, liger points are recorded skipped.
use_liger() {
  liger=${LIGER_SRC:-$ks_root/external/liger}
  export PYTHONPATH=$liger/src:$liger${PYTHONPATH:+:$PYTHONPATH}
  export KERNELSWEEP_PYTHON=${KERNELSWEEP_PYTHON:-python3} PYTHONUNBUFFERED=1
}

# The first GPU calibrated into OUT_DIR/calibration, then the sweep file $1 run on it into
# OUT_DIR/sweep (its log in OUT_DIR/sweep.log), so that every point has its sol_pct.
calibrate_and_sweep() {
  export KERNELSWEEP_CALIBRATION_DIR=$out/calibration
  echo "== kernelsweep calibrate"
  mpirun -np 1 "$build/kernelsweep" calibrate
  echo "== $1"
  local start
  start=$(date +%s)
  mpirun -np 1 "$build/kernelsweep" run "$1" --output-dir "$out/sweep" --overwrite > "$out/sweep.log" 2>&1
  echo "exit $? in $(($(date +%s) - start)) s"
}
