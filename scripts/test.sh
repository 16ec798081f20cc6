#!/usr/bin/env bash
# scripts/test.sh [BUILD_DIR]: builds gpusolve with its tests (Release, in BUILD_DIR, default
# build) and runs them with ctest. What the build and the tests need (cmake, a C compiler,
# CUnit, valgrind, zlib and MPICH: optional for the library and the CLI, wanted here so that the
# .gz reading and writing and the CLI's --distributed mode are tested) is installed with apt-get when this runs as root on Debian or Ubuntu;
# otherwise the script prints the exact command to run and stops. The CUDA toolkit (nvcc) must
# be there already. GPU suites report "skipped" on a machine without a GPU.
#
# Environment:
#   GS_JOBS=k          build and test with k parallel jobs (default: the number of CPUs)
#   GS_MATRIX_DIR=dir  real matrices for the tests (default: the small set in tests/data/matrices)
# Exit status: 0 when every test passed or was skipped, 1 otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
JOBS=${GS_JOBS:-$(nproc 2>/dev/null || echo 2)}

say() { printf 'test.sh: %s\n' "$*" >&2; }

if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH=/usr/local/cuda/bin:$PATH
fi
if ! command -v nvcc >/dev/null; then
  say "nvcc not found: install the CUDA toolkit (https://developer.nvidia.com/cuda-downloads) and put its bin/ on PATH"
  exit 1
fi

# A header the C compiler can find (a compiler is checked first).
have_header() { printf '#include <%s>\n' "$1" | cc -E -x c - >/dev/null 2>&1; }

need=()
command -v cmake >/dev/null || need+=(cmake)
if ! command -v cc >/dev/null || ! command -v make >/dev/null; then need+=(build-essential); fi
if ! command -v cc >/dev/null || ! have_header CUnit/CUnit.h; then need+=(libcunit1-dev); fi
if ! command -v cc >/dev/null || ! have_header zlib.h; then need+=(zlib1g-dev); fi
command -v valgrind >/dev/null || need+=(valgrind)
# MPI for the CLI's --distributed mode and its suite (cli_mpi); optional for the build
{ command -v mpicc >/dev/null && command -v mpiexec >/dev/null; } || need+=(mpich libmpich-dev)

if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
    say "installing ${need[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
  elif command -v apt-get >/dev/null; then
    say "missing ${need[*]}; install them with:"
    printf '    sudo apt-get install -y %s\n' "${need[*]}" >&2
    exit 1
  else
    say "missing ${need[*]} (Debian package names; on Fedora: cmake gcc make CUnit-devel zlib-devel valgrind mpich-devel)"
    exit 1
  fi
fi

cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DGS_BUILD_TESTS=REQUIRED
cmake --build "$BUILD" -j"$JOBS"
ctest --test-dir "$BUILD" --output-on-failure -j"$JOBS"
# the Python package (python/): pytest in a venv made in $BUILD/pyenv, against this build's library
python/tests/run.sh "$BUILD"
