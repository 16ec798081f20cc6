"""Host-only functions: Matrix Market reading, the registries, versions (no GPU needed)."""
import ctypes
import os
import warnings
from collections import namedtuple

import numpy as np
import scipy.sparse as sp

from . import _lib
from ._errors import bad, check

lib = _lib.lib


class _Owned:
    """Exposes C-allocated memory to NumPy (__array_interface__) and keeps its owner alive:
    NumPy's array holds this object as its base."""

    def __init__(self, addr, n, typestr, owner):
        self.__array_interface__ = {"data": (addr, False), "shape": (n,), "typestr": typestr,
                                    "version": 3}
        self.owner = owner


class _CsrOwner:
    """A gs_csr_t from the reader: freed (gs_csr_destroy) when its last array goes."""

    def __init__(self, p):
        self.p = p

    def __del__(self):
        try:
            lib.gs_csr_destroy(ctypes.byref(self.p))
        except Exception:
            pass


def _view(ptr, n, typestr, owner):
    addr = ctypes.cast(ptr, ctypes.c_void_p).value
    if n == 0 or not addr:
        return np.empty(0, dtype=np.dtype(typestr))
    return np.asarray(_Owned(addr, n, typestr, owner))


def _csr_array_from_c(csr):
    """A scipy csr_array over a library-made gs_csr_t (sorted rows, no duplicates), which it
    then owns: values and columns are not copied."""
    owner = _CsrOwner(csr)
    c = csr.contents
    m, n, nnz = c.m, c.n, c.nnz
    indptr = _view(c.row_ptr, m + 1, "<i8", owner)
    indices = _view(c.col, nnz, "<i4", owner)
    data = _view(c.val, nnz, "<f8", owner)
    if m == 0:
        indptr = np.zeros(1, dtype=np.int64)
    if nnz <= np.iinfo(np.int32).max:  # SciPy wants one index type: int32 keeps `indices` as is
        indptr = indptr.astype(np.int32)
    A = sp.csr_array((data, indices, indptr), shape=(m, n), copy=False)
    A.has_canonical_format = True
    return A


def laplace(nx, ny=1, nz=1, stencil=None):
    """The Laplacian stencil matrix of an nx x ny x nz grid with Dirichlet boundaries
    (gs_gen_laplace: stencil 3 in 1D, 5 or 9 in 2D, 7 or 27 in 3D; default the smallest):
    symmetric positive definite, as a csr_array."""
    if stencil is None:
        stencil = 7 if nz > 1 else 5 if ny > 1 else 3
    csr = ctypes.POINTER(_lib.Csr)()
    check(lib.gs_gen_laplace(ctypes.byref(csr), int(nx), int(ny), int(nz), int(stencil)))
    return _csr_array_from_c(csr)


class MatrixMarketWarning(UserWarning):
    """A file read as SciPy reads it, but worth a word (symmetric with both triangles)."""


MMInfo = namedtuple("MMInfo", "array field symmetry rows cols stored lower upper")
_FIELDS = {0: "real", 1: "integer", 2: "pattern"}
_SYMS = {0: "general", 1: "symmetric", 2: "skew-symmetric"}


def read_mm(path, *, strict=False, return_info=False):
    """Reads a Matrix Market file into a scipy.sparse.csr_array (float64), on the host with the
    library's parallel reader (threads: set_read_threads, or GS_THREADS, else every core).

    Coordinate files (real, integer, pattern; general, symmetric, skew-symmetric; .gz) and
    dense array files; symmetric storage is expanded, duplicates summed, explicit zeros kept
    (what scipy.io.mmread(path).tocsr() gives). The values and column indices are the C
    reader's own arrays, not copied. strict=True refuses a symmetric file that stores entries
    on both sides of the diagonal (otherwise each is mirrored and a warning says so).
    A malformed or unreadable file raises InputError with the reader's message
    ("FILE:LINE: cause"). return_info=True returns (A, MMInfo) with what the file held."""
    p = os.fspath(path)
    if isinstance(p, bytes):
        p = os.fsdecode(p)
    if not p:
        raise bad("read_mm: empty path")
    csr = ctypes.POINTER(_lib.Csr)()
    info = _lib.MMInfo()
    st = lib.gs_mm_read_csr_ex(os.fsencode(p), _lib.MM_STRICT if strict else 0,
                               ctypes.byref(csr), ctypes.byref(info))
    check(st)
    A = _csr_array_from_c(csr)
    mi = MMInfo(bool(info.array), _FIELDS.get(info.field, "?"), _SYMS.get(info.symmetry, "?"),
                info.rows, info.cols, info.stored, info.lower, info.upper)
    if info.symmetry == 1 and info.lower > 0 and info.upper > 0:
        warnings.warn(f"{p}: symmetric file with entries on both sides of the diagonal "
                      f"({info.lower} below, {info.upper} above): each is mirrored, so an "
                      "(i, j) and (j, i) pair is summed (strict=True refuses such a file)",
                      MatrixMarketWarning, stacklevel=2)
    return (A, mi) if return_info else A


def write_mm(path, A):
    """Writes A as `matrix coordinate real general` (%.17g: reads back bit for bit; .gz
    compressed by name), replacing a file atomically (the library's writer)."""
    from ._arrays import as_host_csr
    H = as_host_csr(A)
    check(lib.gs_mm_write_csr(os.fsencode(os.fspath(path)), H.ptr))


def set_read_threads(n=None):
    """Threads of read_mm for the whole process: n >= 1 fixes the count, None restores the
    default (GS_THREADS, else the online cores)."""
    lib.gs_mm_set_threads(0 if n is None else max(1, int(n)))


def read_threads():
    """Threads the next read_mm will use."""
    return int(lib.gs_mm_threads())


def has_gzip():
    """Whether this libgpusolve reads and writes .gz files (built with zlib)."""
    return bool(lib.gs_mm_has_gzip())


def library_version():
    """The version of the loaded libgpusolve ("0.1.0")."""
    return _lib.s(lib.gs_version())


# ---- registries --------------------------------------------------------------------------------
Format = namedtuple("Format", "name summary transpose vendor mixed float wide")
_F_TRANSPOSE, _F_VENDOR, _F_WIDE, _F_MIXED, _F_FLOAT = 1, 2, 8, 64, 128


def formats(details=False):
    """The SpMV formats of this build, in the registry's order: their names, or with
    details=True Format tuples (name, summary, and whether each has a transpose kernel, is a
    vendor baseline, takes precision mixed / float, takes more than 2^31-1 entries).
    "auto" (measured selection) is not listed: it is accepted wherever a format is."""
    out = []
    for i in range(lib.gs_spmv_backend_count()):
        name = _lib.s(lib.gs_spmv_backend_name(i))
        if not details:
            out.append(name)
            continue
        f = lib.gs_spmv_backend_flags(i)
        out.append(Format(name, _lib.s(lib.gs_spmv_backend_summary(i)), bool(f & _F_TRANSPOSE),
                          bool(f & _F_VENDOR), bool(f & _F_MIXED), bool(f & _F_FLOAT),
                          bool(f & _F_WIDE)))
    return out


def preconditioners():
    """The preconditioners of this build ("none", "jacobi", ...); solve also takes "auto"."""
    return [_lib.s(lib.gs_precond_name_at(i)) for i in range(lib.gs_precond_count())]


METHODS = ("cg", "pipecg", "bicgstab", "gmres", "bicg", "cgnr", "lsqr", "auto")


def methods():
    """The Krylov and least-squares methods solve takes."""
    return [m for m in METHODS if lib.gs_method_find(m.encode()) >= 0]
