"""The ctypes mirrors of the C structs against the C compiler: every field's offset and the
size (host test; skipped without a C compiler or the headers)."""
import ctypes
import shutil
import subprocess

import pytest

from gpusolve import _lib
from conftest import REPO

INCLUDE = REPO / "include"
HEADERS = ["gpusolve/status.h", "gpusolve/matrix.h", "gpusolve/io.h", "gpusolve/select.h",
           "gpusolve/solver.h", "gpusolve/batch.h"]


def _fields(cls):
    return [name for name, _ in cls._fields_ if not name.startswith("_")]


def _known_end(cls):
    for name, _ in cls._fields_:
        if name == "_reserve":
            return getattr(cls, name).offset
    return ctypes.sizeof(cls)


@pytest.fixture(scope="module")
def c_layout(tmp_path_factory):
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc or not (INCLUDE / "gpusolve" / "solver.h").exists():
        pytest.skip("needs a C compiler and the repository's include/")
    d = tmp_path_factory.mktemp("abi")
    lines = ["#include <stdio.h>", "#include <stddef.h>"]
    lines += [f'#include "{h}"' for h in HEADERS]
    lines.append("int main(void) {")
    for cls, ctype in _lib.ABI_STRUCTS:
        lines.append(f'  printf("{ctype} sizeof %zu\\n", sizeof({ctype}));')
        for f in _fields(cls):
            lines.append(f'  printf("{ctype} {f} %zu\\n", offsetof({ctype}, {f}));')
    lines += ["  return 0;", "}"]
    src = d / "abi.c"
    src.write_text("\n".join(lines) + "\n")
    exe = d / "abi"
    subprocess.run([cc, "-std=c11", "-I", str(INCLUDE), str(src), "-o", str(exe)], check=True)
    out = {}
    for line in subprocess.run([str(exe)], capture_output=True, text=True,
                               check=True).stdout.splitlines():
        t, f, v = line.split()
        out[(t, f)] = int(v)
    return out


@pytest.mark.parametrize("cls,ctype", _lib.ABI_STRUCTS, ids=[c for _, c in _lib.ABI_STRUCTS])
def test_struct_layout(c_layout, cls, ctype):
    for f in _fields(cls):
        assert getattr(cls, f).offset == c_layout[(ctype, f)], f"{ctype}.{f}"
    size = c_layout[(ctype, "sizeof")]
    end = _known_end(cls)
    # equal up to the C struct's tail padding (the ctypes reserve follows the last field)
    assert end <= size < end + 8, (ctype, end, size)
    if end == ctypes.sizeof(cls):  # no reserve: arrays of it must step alike
        assert ctypes.sizeof(cls) == size


# the package's copies of the C constants, by the C name each mirrors
_CONSTANTS = {"OP_N": "GS_OP_N", "OP_T": "GS_OP_T", "SOLVER_AUTO": "GS_SOLVER_AUTO",
              "METHOD_SQUARE": "GS_METHOD_SQUARE", "METHOD_TRANSPOSE": "GS_METHOD_TRANSPOSE",
              "METHOD_LEAST_SQUARES": "GS_METHOD_LEAST_SQUARES",
              "METHOD_SYMMETRIC_PC": "GS_METHOD_SYMMETRIC_PC",
              "PRECOND_AUTO_AMG": "GS_PRECOND_AUTO_AMG", "FALLBACK_AUTO": "GS_FALLBACK_AUTO",
              "FALLBACK_OFF": "GS_FALLBACK_OFF", "FALLBACK_GMRES": "GS_FALLBACK_GMRES",
              "PRECISION_DOUBLE": "GS_PRECISION_DOUBLE", "PRECISION_MIXED": "GS_PRECISION_MIXED",
              "PRECISION_FLOAT": "GS_PRECISION_FLOAT",
              "MATRIX_DEVICE_BORROW": "GS_MATRIX_DEVICE_BORROW", "MM_STRICT": "GS_MM_STRICT",
              "SELECT_MAX": "GS_SELECT_MAX", "SELECT_NAME": "GS_SELECT_NAME"}


def test_constants(tmp_path):
    """Every constant the package passes to the library has the C header's value."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc or not (INCLUDE / "gpusolve" / "solver.h").exists():
        pytest.skip("needs a C compiler and the repository's include/")
    lines = ["#include <stdio.h>", '#include "gpusolve/spmv.h"']
    lines += [f'#include "{h}"' for h in HEADERS]
    lines.append("int main(void) {")
    lines += [f'  printf("{py} %lld\\n", (long long)({c}));' for py, c in _CONSTANTS.items()]
    lines += ["  return 0;", "}"]
    src = tmp_path / "constants.c"
    src.write_text("\n".join(lines) + "\n")
    exe = tmp_path / "constants"
    subprocess.run([cc, "-std=c11", "-I", str(INCLUDE), str(src), "-o", str(exe)], check=True)
    got = dict(line.split() for line in subprocess.run(
        [str(exe)], capture_output=True, text=True, check=True).stdout.splitlines())
    for py in _CONSTANTS:
        assert getattr(_lib, py) == int(got[py]), f"{py}: {getattr(_lib, py)} != {got[py]}"
