#!/usr/bin/env bash
# Installs what kernelsweep needs on Debian 12 from Debian's packages, skipping what is there.
# CUDA is not a Debian package: when /usr/local/cuda/bin/nvcc exists the CUDA implementations are
# built too (KERNELSWEEP_CUDA=AUTO), otherwise kernelsweep builds and runs on the CPU alone.
set -euo pipefail
# gnuplot-nox draws `kernelsweep report`'s plots; chromium is the headless browser its test opens the page in;
# python3-h5py runs the h5py examples of docs/hdf5-layout.md in the tests, as a user would; python3-torch
# (CPU) runs the Python worker's torch implementations in the tests (docs/python.md); clang and its
# runtime (libFuzzer, the sanitizers) build the fuzz targets (scripts/fuzz.sh); slurm-wlm runs the Slurm
# tests on a private single-node cluster (tests/slurm/cluster.sh); zlib and libzstd compress the document
# shards (the zstd tool reads them back in the tests, as a user would).
packages=(build-essential cmake ninja-build pkg-config git
          libopenmpi-dev openmpi-bin libhdf5-dev hdf5-tools libyaml-cpp-dev nlohmann-json3-dev
          libcli11-dev libssl-dev libgtest-dev libfmt-dev zlib1g-dev libzstd-dev zstd
          gnuplot-nox chromium python3-h5py python3-numpy python3-torch clang libclang-rt-14-dev
          slurm-wlm)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
sudo_cmd=()
if [[ $(id -u) -ne 0 ]]; then sudo_cmd=(sudo); fi
"${sudo_cmd[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
