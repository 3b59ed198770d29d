#!/usr/bin/env bash
# Installs what kernelsweep needs on Debian 12 from Debian's packages, skipping what is there:
#   scripts/install-deps.sh           what building and running kernelsweep needs (./run.sh)
#   scripts/install-deps.sh --tests   that, and what only the test suite needs (./test.sh)
# CUDA is not a Debian package: when /usr/local/cuda/bin/nvcc exists the CUDA implementations are
# built too (KERNELSWEEP_CUDA=AUTO), otherwise kernelsweep builds and runs on the CPU alone. torch and
# triton are not needed to build: the Python worker finds them at run time where they are installed.
set -euo pipefail
# The product: compilers and build tools (git stamps the commit into every result), MPI, HDF5 and
# its tools (h5dump, h5clear: what a damaged file's error message points to), the parsers and
# formatters, libcrypto for the SHA-256 point ids, zlib and libzstd for the compressed document
# shards, and gnuplot-nox, which draws `kernelsweep report`'s plots.
packages=(build-essential cmake ninja-build pkg-config git
          libopenmpi-dev openmpi-bin libhdf5-dev hdf5-tools libyaml-cpp-dev nlohmann-json3-dev
          libcli11-dev libssl-dev libfmt-dev zlib1g-dev libzstd-dev gnuplot-nox)
# The tests: GoogleTest; the zstd tool reads compressed shards back as a user would; chromium is the
# headless browser the report's page is opened in; python3-h5py runs the h5py examples of
# docs/hdf5-layout.md; python3-torch (CPU) runs the Python worker's torch implementations
# (docs/python.md); clang and its runtime (libFuzzer, the sanitizers) build the fuzz targets
# (scripts/fuzz.sh); slurm-wlm runs the Slurm tests on a private single-node cluster
# (tests/slurm/cluster.sh); clang-format checks the sources' format (scripts/check-format.sh).
test_packages=(libgtest-dev zstd chromium python3-h5py python3-numpy python3-torch clang
               libclang-rt-14-dev slurm-wlm clang-format)
case "${1:-}" in
  "") ;;
  --tests) packages+=("${test_packages[@]}") ;;
  *) echo "install-deps: unknown argument '$1' (usage: scripts/install-deps.sh [--tests])" >&2; exit 2 ;;
esac
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
