#!/usr/bin/env bash
# python/tests/run.sh [BUILD_DIR]: the Python package's tests against the library built in
# BUILD_DIR (default build): a venv in BUILD_DIR/pyenv with numpy, scipy and pytest (made when
# missing), `pip install ./python` packaging BUILD_DIR/libgpusolve.so (no second nvcc build),
# then pytest python/tests (the GPU tests skip without a device). Run by scripts/test.sh.
# A venv that cannot be made (no python3, no venv module and no apt-get to install it) is an
# error, never a skip.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:-build}
PY=${PYTHON:-python3}
say() { printf 'python tests: %s\n' "$*" >&2; }
[ -d "$BUILD" ] || { say "no build folder $BUILD"; exit 1; }
BUILD=$(cd "$BUILD" && pwd) # absolute: the tests run from python/
lib=$BUILD/libgpusolve.so
[ -e "$lib" ] || { say "$lib is not built (cmake --build $BUILD)"; exit 1; }
command -v "$PY" >/dev/null || { say "$PY not found: install Python 3 (python3, python3-venv)"; exit 1; }
venv=$BUILD/pyenv
if [ ! -x "$venv/bin/python" ]; then
  if ! "$PY" -m venv "$venv" >/dev/null 2>&1; then
    rm -rf "$venv"
    if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
      say "installing python3-venv"
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        python3-venv >/dev/null || true
    fi
    "$PY" -m venv "$venv" || { rm -rf "$venv"; say "cannot create a venv with $PY -m venv"; exit 1; }
  fi
fi
vpy=$venv/bin/python
"$vpy" -m pip install -q --disable-pip-version-check numpy scipy pytest
"$vpy" -m pip install -q --disable-pip-version-check --force-reinstall --no-deps ./python \
  -Ccmake.define.GPUSOLVE_LIBRARY="$(cd "$(dirname "$lib")" && pwd)/$(basename "$lib")"
# the CLI of the same build cross-checks messages and the selection rule
export GPUSOLVE_CLI=${GPUSOLVE_CLI:-$(cd "$BUILD" && pwd)/apps/gpusolve}
cd python
exec "$vpy" -m pytest tests -q -rs -p no:cacheprovider
