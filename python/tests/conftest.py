"""Shared fixtures: where the test data lives, the device, and a guard that fails a test when
the device is touched (for the checks that must happen on the host first)."""
import os
import shutil
from pathlib import Path

import pytest

import gpusolve
from gpusolve import _lib

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "data"
MATRIX_DIR = Path(os.environ.get("GS_MATRIX_DIR") or DATA / "matrices")
HAVE_GPU = gpusolve.device_count() > 0


def matrices():
    """The test matrices (.mtx) of MATRIX_DIR, sorted."""
    return sorted(MATRIX_DIR.glob("*.mtx"))


def cli():
    """The gpusolve CLI of the same build, for cross-checks (GPUSOLVE_CLI, else beside a
    library taken from a build tree), or None."""
    env = os.environ.get("GPUSOLVE_CLI")
    if env:
        return env if os.access(env, os.X_OK) else None
    cand = Path(_lib.path).resolve().parent / "apps" / "gpusolve"
    if cand.exists():
        return str(cand)
    return shutil.which("gpusolve")


def pytest_collection_modifyitems(config, items):
    cupy_ok = HAVE_GPU
    if cupy_ok:
        try:
            import cupy  # noqa: F401
            cupy.zeros(1)
        except Exception:
            cupy_ok = False
    no_gpu = pytest.mark.skip(reason="no CUDA device (gs_device_count() == 0)")
    no_cupy = pytest.mark.skip(reason="cupy is not importable or has no device")
    for item in items:
        if "gpu" in item.keywords and not HAVE_GPU:
            item.add_marker(no_gpu)
        if "cupy" in item.keywords and not cupy_ok:
            item.add_marker(no_cupy)


_DEVICE_ENTRIES = ("gs_context_create", "gs_context_create_on_stream", "gs_matrix_create",
                   "gs_matrix_create_device", "gs_spmv_create", "gs_spmv_create_auto",
                   "gs_dmalloc", "gs_batch_create", "gs_solve", "gs_copy_to_device")


@pytest.fixture
def no_device(monkeypatch):
    """Any call that would reach the device fails the test: the check under test must have
    refused the input on the host before."""
    def touched(name):
        def f(*args):
            raise AssertionError(f"{name} called: the input reached the device")
        return f
    for name in _DEVICE_ENTRIES:
        monkeypatch.setattr(_lib.lib, name, touched(name))
    yield
