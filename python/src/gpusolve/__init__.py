"""gpusolve: sparse linear systems on NVIDIA GPUs from SciPy and CuPy.

    import gpusolve
    x, info = gpusolve.solve(A, b, method="cg", precond="jacobi")   # A: scipy.sparse
    assert info.converged

The library (libgpusolve) is called through ctypes; every call releases the GIL. Host-only
functions (read_mm, formats, select(rule=True), ...) need no GPU.
"""
from ._lib import path as library_path
from ._errors import DeviceError, Error, InputError
from ._io import (Format, MatrixMarketWarning, formats, has_gzip, laplace, library_version,
                  methods, preconditioners, read_mm, read_threads, set_read_threads, write_mm)
from ._device import Context, device_count
from ._select import Selection, select
from ._spmv import SpMV
from ._solve import SolveInfo, solve
from ._batch import BatchInfo, batch_solve

__version__ = library_version()

__all__ = ["solve", "SpMV", "batch_solve", "select", "read_mm", "write_mm", "formats",
           "preconditioners", "methods", "laplace", "device_count", "set_read_threads",
           "read_threads",
           "has_gzip", "library_version", "library_path", "Context", "Error", "InputError",
           "DeviceError", "SolveInfo", "BatchInfo", "Selection", "Format",
           "MatrixMarketWarning", "__version__"]
