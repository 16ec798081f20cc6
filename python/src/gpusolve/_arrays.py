"""Inputs to the C structs: SciPy, NumPy and CuPy matrices and vectors, checked on the host
before any device work."""
import ctypes
import os

import numpy as np
import scipy.sparse as sp

from . import _lib
from ._errors import InputError, check

_IDX_MAX = 2**31 - 1


def _bad(msg, status="GS_ERR_INVALID_ARG", code=-1):
    return InputError(msg, status, code, "")


def dim_error(msg):
    return _bad(msg, "GS_ERR_DIMENSION", -2)


# ---- CuPy (optional) --------------------------------------------------------------------------
_cupy = None


def cupy():
    """The cupy module when it can be imported, else None (imported once, on first need)."""
    global _cupy
    if _cupy is None:
        try:
            import importlib
            cp = importlib.import_module("cupy")
            importlib.import_module("cupyx.scipy.sparse")
            _cupy = cp
        except Exception:  # not installed, or no usable CUDA for it
            _cupy = False
    return _cupy or None


def _module_of(obj):
    return type(obj).__module__.split(".")[0]


def is_cupy_array(v):
    return _module_of(v) == "cupy" and cupy() is not None and isinstance(v, cupy().ndarray)


def is_cupy_sparse(A):
    if _module_of(A) != "cupyx" or cupy() is None:
        return False
    import cupyx.scipy.sparse as csp
    return csp.issparse(A)


# ---- matrices -----------------------------------------------------------------------------------
class HostCsr:
    """A gs_csr_t over NumPy arrays (row_ptr int64, col int32, val float64) that this object
    keeps alive: the library reads them in place (gs_matrix_create then copies once).
    `checked`: whether gs_csr_validate has passed on them (validate() runs it once)."""

    def __init__(self, indptr, indices, data, shape, symmetry=0, keep=None, what="A"):
        self.indptr, self.indices, self.data = indptr, indices, data
        self.shape = shape
        self.keep = keep  # the object the arrays came from, if any
        self.what = what  # the argument's name, for the messages
        self.checked = False
        self.struct = _lib.Csr(shape[0], shape[1], len(data),
                               indptr.ctypes.data_as(ctypes.POINTER(_lib.c_off)),
                               indices.ctypes.data_as(ctypes.POINTER(_lib.c_idx)),
                               data.ctypes.data_as(ctypes.POINTER(ctypes.c_double)), symmetry)

    @property
    def ptr(self):
        return ctypes.pointer(self.struct)

    def validate(self):
        """gs_csr_validate (finite values, indices in range): InputError naming the first
        fault ("A: row 3, column 2: value is not finite")."""
        if not self.checked:
            check(_lib.lib.gs_csr_validate(self.ptr), self.what)
            self.checked = True


def _real_dtype(dtype, what):
    if dtype.kind == "c":
        raise _bad(f"{what}: complex values are not supported (dtype {dtype}): gpusolve solves "
                   "real systems in double precision")
    if dtype.kind not in "fiub":
        raise _bad(f"{what}: dtype {dtype} is not a real number type")


def as_host_csr(A, what="A", checked=True):
    """HostCsr of A: a scipy.sparse matrix or array of any format, a dense 2-D NumPy array, a
    cupyx.scipy.sparse matrix (copied to the host: for the host-only selection rule and the
    batches; solve and SpMV take it on the device, as_device_csr) or a path to a Matrix Market
    file.

    checked=True: rows made canonical (sorted, duplicates summed, on a copy) and the entries
    validated on the host (gs_csr_validate: finite values, indices in range), for the
    consumers that read the arrays as they are. checked=False: for gs_matrix_create, which
    validates, sorts and sums duplicates itself (what a C caller pays): the arrays go as they
    are, with no pass over the entries here (float64 values and int32 columns are not even
    copied); validate() checks them when needed first (no GPU: bad input outranks it)."""
    if isinstance(A, (str, os.PathLike)):
        from ._io import read_mm
        A = read_mm(A)
    elif is_cupy_sparse(A):
        A = A.get()
    if sp.issparse(A):
        if A.ndim != 2:
            raise dim_error(f"{what}: a sparse matrix must be 2-D, not {A.ndim}-D")
        if A.format != "csr":
            A = A.tocsr()
    elif isinstance(A, np.ndarray) or (hasattr(A, "__array__") and not is_cupy_array(A)):
        D = np.asarray(A)
        if D.ndim != 2:
            raise dim_error(f"{what}: a dense matrix must be 2-D, not of shape {D.shape}")
        _real_dtype(D.dtype, what)
        A = sp.csr_array(D.astype(np.float64, copy=False))
    elif is_cupy_array(A):
        raise _bad(f"{what}: a dense CuPy array; give a cupyx.scipy.sparse matrix")
    else:
        raise _bad(f"{what}: expected a scipy.sparse matrix, a cupyx.scipy.sparse matrix, a "
                   f"2-D NumPy array or a Matrix Market path, not {type(A).__name__}")
    _real_dtype(A.dtype, what)
    m, n = A.shape
    if m > _IDX_MAX or n > _IDX_MAX:
        raise dim_error(f"{what}: {m} x {n} exceeds 2^31-1 rows or columns")
    # SciPy's own check of the flag is a pass over the entries: only where it is needed
    if checked and not A.has_canonical_format:  # sorted, no duplicates: the library's CSR
        A = A.copy()
        A.sum_duplicates()
    data = np.ascontiguousarray(A.data, dtype=np.float64)
    indices = np.ascontiguousarray(A.indices, dtype=np.int32)
    indptr = np.ascontiguousarray(A.indptr, dtype=np.int64)
    H = HostCsr(indptr, indices, data, (m, n), keep=A, what=what)
    if checked:
        H.validate()
    return H


class DeviceCsr:
    """A cupyx.scipy.sparse matrix's CSR arrays as gs_matrix_create_device reads them, on its
    device: row pointers int32 or int64, columns int32, values float64, rows sorted without
    duplicates. `keep` is the cupyx matrix they belong to (the caller's, or a converted copy)."""

    def __init__(self, indptr, indices, data, shape, keep):
        self.indptr, self.indices, self.data = indptr, indices, data
        self.shape = shape
        self.keep = keep
        self.nnz = int(data.size)
        self.device = indptr.device.id

    @property
    def row_ptr_bits(self):
        return 32 if self.indptr.dtype.itemsize == 4 else 64


def as_device_csr(A, what="A"):
    """DeviceCsr of a cupyx.scipy.sparse matrix, converted on its device where needed (never
    through the host): another format to CSR, bool or float32 values to float64, int64 columns
    to int32; rows sorted and duplicates summed (as SciPy's sum_duplicates) on a copy when the
    matrix is not canonical (one flag read back, never the arrays). Its contents (finite
    values, indices in range) are checked by the library on the device."""
    cp = cupy()
    _real_dtype(A.dtype, what)
    m, n = A.shape
    if m > _IDX_MAX or n > _IDX_MAX:
        raise dim_error(f"{what}: {m} x {n} exceeds 2^31-1 rows or columns")
    with A.data.device:  # cupyx's own .device is not implemented (CuPy 14)
        if A.format != "csr":
            A = A.tocsr()
        if not A.has_canonical_format:
            A = A.copy()
            A.sum_duplicates()
        data = cp.ascontiguousarray(A.data, dtype=cp.float64)
        indices = cp.ascontiguousarray(A.indices, dtype=cp.int32)
        indptr = A.indptr
        if indptr.dtype not in (cp.int32, cp.int64):
            indptr = indptr.astype(cp.int64)
        indptr = cp.ascontiguousarray(indptr)
    return DeviceCsr(indptr, indices, data, (m, n), A)


# ---- vectors ------------------------------------------------------------------------------------
def _first_bad(v):
    bad = np.flatnonzero(~np.isfinite(v))
    return int(bad[0]) if bad.size else -1


def as_host_vector(v, n, what, rows_of="A", finite=True):
    """A float64 C-contiguous NumPy vector of n entries, finite."""
    a = np.asarray(v)
    if a.dtype == object:
        raise _bad(f"{what}: not a numeric array")
    _real_dtype(a.dtype, what)
    if a.ndim == 2 and a.shape[1] == 1:
        a = a[:, 0]
    if a.ndim != 1 or a.shape[0] != n:
        raise dim_error(f"{what} has shape {a.shape}; {rows_of} needs {n} entries")
    a = np.ascontiguousarray(a, dtype=np.float64)
    k = _first_bad(a) if finite else -1
    if k >= 0:
        raise _bad(f"{what}[{k}] = {a[k]}: values must be finite")
    return a


def as_device_vector(v, n, what, rows_of="A", finite=True):
    """A float64 C-contiguous CuPy vector of n entries, finite (checked on the device: one
    flag comes back, never the vector)."""
    cp = cupy()
    a = v
    _real_dtype(a.dtype, what)
    if a.ndim == 2 and a.shape[1] == 1:
        a = a[:, 0]
    if a.ndim != 1 or a.shape[0] != n:
        raise dim_error(f"{what} has shape {a.shape}; {rows_of} needs {n} entries")
    with a.device:
        a = cp.ascontiguousarray(a, dtype=cp.float64)
        if finite and n and not bool(cp.isfinite(a).all()):
            k = int(cp.flatnonzero(~cp.isfinite(a))[0])
            raise _bad(f"{what}[{k}] = {float(a[k])}: values must be finite")
    return a
