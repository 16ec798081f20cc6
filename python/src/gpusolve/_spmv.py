"""SpMV: one format's product y = A x (and A^T x) on the GPU, as a SciPy-style operator."""
import ctypes
import threading

import numpy as np

from . import _lib
from ._arrays import (HostCsr, as_device_csr, as_device_vector, as_host_csr, as_host_vector,
                      cupy, is_cupy_array, is_cupy_sparse)
from . import _device
from ._device import Buffer, CupyOrder, DeviceMatrix, Product, cupy_context, default_context
from ._errors import DeviceError, InputError, bad, check
from ._select import options_string, selection_from_record

lib = _lib.lib
PRECISIONS = ("double", "mixed", "float")


def check_format(fmt, what="format"):
    if not isinstance(fmt, str) or (fmt != "auto" and lib.gs_spmv_backend_find(fmt.encode()) < 0):
        from ._io import formats
        raise bad(f"{what}: unknown SpMV format {fmt!r} (auto, {', '.join(formats())})")


def with_precision(opts, precision):
    """The option string with precision=P appended (bytes or None)."""
    if precision == "double":
        return opts
    tail = f"precision={precision}".encode()
    return opts + b"," + tail if opts else tail


def context_for(context, device, cupy_inputs=False, matrix=None):
    """The context given, else (CuPy inputs) the one on CuPy's current stream, else this
    thread's default context; on `device` (0 when None). matrix: a HostCsr that
    gs_matrix_create will validate later; when no context can be had (no GPU), it is validated
    here first, so that bad input raises InputError on any machine."""
    dev = 0 if device is None else int(device)
    if context is not None:
        if device is not None and context.device != dev:
            raise bad(f"the inputs are on device {dev}, the context on device {context.device}")
        return context
    try:
        return cupy_context(dev) if cupy_inputs else default_context(dev)
    except DeviceError:
        if isinstance(matrix, HostCsr):
            matrix.validate()
        raise


def matrix_input(A, what="A"):
    """(HostCsr or DeviceCsr, device or None): a cupyx.scipy.sparse matrix stays on its device
    (no copy to the host), anything else becomes a host CSR, its entries left to
    gs_matrix_create to check (DeviceMatrix; context_for(matrix=H) where there is no GPU)."""
    if is_cupy_sparse(A):
        D = as_device_csr(A, what)
        return D, D.device
    return as_host_csr(A, what, checked=False), None  # DeviceMatrix validates


class SpMV:
    """y = A x on the GPU through one SpMV format, prepared once.

        op = gpusolve.SpMV(A, format="auto")
        y = op @ x          # A x       (also op.matvec(x), op.dot(x))
        z = op.T @ y        # A^T y     (also op.rmatvec(y))
        L = op.aslinearoperator()   # for scipy.sparse.linalg (or kind="cupy")

    A: as for solve (scipy.sparse, 2-D NumPy, cupyx.scipy.sparse, a Matrix Market path); a
    cupyx matrix is copied device to device, and the product then runs on the CuPy stream
    current at construction (other streams are ordered with it by events).
    format: "auto" (measured selection for expected_products products; transpose=True keeps
    only formats with A^T x) or a name from formats(). options: backend options
    ("max_fill=4" or a dict). precision: "double", "mixed" (float values, double vectors) or
    "float" (float32 vectors in and out). x may be a NumPy array (copied to the device and
    back) or a CuPy array (read in place; y comes back as a CuPy array, ordered on CuPy's
    current stream). x of shape (n, k) multiplies column by column. One thread at a time.
    """

    def __init__(self, A, format="auto", *, options=None, precision="double", transpose=False,
                 expected_products=1000, context=None, device=None):
        check_format(format)
        if precision not in PRECISIONS:
            raise bad(f"precision: {precision!r} is not one of {', '.join(PRECISIONS)}")
        if format == "auto" and precision != "double":
            raise bad("format='auto' selects among double products; with precision "
                      f"{precision!r} name a format (csr-vector, ell, hyb, ...)")
        o = with_precision(options_string(options), precision)
        if o is not None:
            check(lib.gs_spmv_options_check(o), "options")
        H, a_dev = matrix_input(A)
        if device is not None and a_dev is not None and int(device) != a_dev:
            raise bad(f"A is on device {a_dev}, not on device {device}")
        device = a_dev if device is None else device
        self.shape = H.shape
        self.precision = precision
        self.dtype = np.dtype(np.float32 if precision == "float" else np.float64)
        self.ctx = context_for(context, device, cupy_inputs=a_dev is not None, matrix=H)
        with CupyOrder(self.ctx, active=a_dev is not None):  # A's arrays after CuPy's work
            self._matrix = DeviceMatrix(self.ctx, H)
        self.nnz = self._matrix.nnz
        del H
        S = ctypes.c_void_p()
        if format == "auto":
            so = _lib.SelectOpts()
            lib.gs_select_opts_default(ctypes.byref(so))
            if not expected_products > 0:
                raise bad("expected_products must be > 0")
            so.expected_products = float(expected_products)
            so.need_transpose = 1 if transpose else 0
            check(lib.gs_spmv_create_auto(ctypes.byref(S), self.ctx.handle,
                                          self._matrix.handle, o, ctypes.byref(so)))
        else:
            check(lib.gs_spmv_create(ctypes.byref(S), self.ctx.handle, self._matrix.handle,
                                     format.encode(), o))
        self._prod = Product(self._matrix, S)
        rec = lib.gs_spmv_selection(S)
        self.selection = selection_from_record(rec.contents) if rec else None
        self._bufs = {}
        self._lock = threading.Lock()

    # ---- what was prepared
    @property
    def format(self):
        """The format that serves the products (auto resolved)."""
        return self._prod.name

    @property
    def description(self):
        return _lib.s(lib.gs_spmv_describe(self._prod.handle))

    @property
    def has_transpose(self):
        return bool(lib.gs_spmv_supports(self._prod.handle, _lib.OP_T))

    def __repr__(self):
        m, n = self.shape
        return f"<gpusolve.SpMV {m}x{n}, {self.nnz} entries, format {self.format}>"

    # ---- products
    def _buf(self, key, n):
        b = self._bufs.get(key)
        need = max(n * self.dtype.itemsize, 8)
        if b is None or b.nbytes < need:
            b = self._bufs[key] = Buffer(self.ctx, need, key)
        return b

    def _launch(self, op, xp, yp):
        if self.precision == "float":
            st = lib.gs_spmv_apply_float(self._prod.handle, op, 1.0, xp, 0.0, yp)
        else:
            st = lib.gs_spmv_apply(self._prod.handle, op, 1.0, xp, 0.0, yp)
        check(st, "transpose product" if op == _lib.OP_T else None)

    def _apply(self, op, x):
        m, n = self.shape
        rows, cols = (n, m) if op == _lib.OP_T else (m, n)
        if op == _lib.OP_T and not self.has_transpose:
            raise InputError(f"format {self.format} has no transpose product for this matrix "
                             "(prepare with transpose=True, or name a format with one)",
                             "GS_ERR_UNSUPPORTED", -5)
        if getattr(x, "ndim", 1) == 2 and x.shape[1] != 1:
            if x.shape[0] != cols:
                raise InputError(f"x has shape {x.shape}; the product needs {cols} rows",
                                 "GS_ERR_DIMENSION", -2)
            cols_out = [self._apply(op, x[:, j]) for j in range(x.shape[1])]
            xp = cupy() if is_cupy_array(x) else np
            return xp.stack(cols_out, axis=1)
        if is_cupy_array(x):
            return self._apply_cupy(op, x, rows, cols)
        a = as_host_vector(x, cols, "x", "the product", finite=False)
        if self.dtype != np.float64:
            a = a.astype(self.dtype)
        with self._lock:
            dx, dy = self._buf("x", max(m, n)), self._buf("y", max(m, n))
            _device.host_copy_hook("to_device", a.nbytes)
            if a.nbytes:
                dx.upload(a)
            self._launch(op, dx._p, dy._p)
            y = np.empty(rows, dtype=self.dtype)
            _device.host_copy_hook("to_host", y.nbytes)
            if y.nbytes:
                dy.download(y)
            else:
                self.ctx.sync()
        return y

    def _apply_cupy(self, op, x, rows, cols):
        cp = cupy()
        if x.device.id != self.ctx.device:
            raise bad(f"x is on device {x.device.id}, the product on device {self.ctx.device}")
        a = as_device_vector(x, cols, "x", "the product", finite=False)
        with a.device:
            if a.dtype != self.dtype:
                a = a.astype(self.dtype)
            y = cp.empty(rows, dtype=self.dtype)
        with self._lock, CupyOrder(self.ctx):
            self._launch(op, ctypes.c_void_p(a.data.ptr), ctypes.c_void_p(y.data.ptr))
        return y

    def matvec(self, x):
        """A x."""
        return self._apply(_lib.OP_N, x)

    def rmatvec(self, x):
        """A^T x."""
        return self._apply(_lib.OP_T, x)

    dot = matvec

    def __matmul__(self, x):
        return self._apply(_lib.OP_N, x)

    @property
    def T(self):
        """The transpose, without forming it: op.T @ y is A^T y."""
        return _Transposed(self)

    def aslinearoperator(self, kind="numpy"):
        """A LinearOperator over these products: scipy.sparse.linalg's (kind="numpy", NumPy
        vectors) or cupyx.scipy.sparse.linalg's (kind="cupy", CuPy vectors, no host copies)."""
        if kind == "cupy":
            if cupy() is None:
                raise bad("aslinearoperator(kind='cupy'): cupy is not importable")
            from cupyx.scipy.sparse.linalg import LinearOperator
        elif kind == "numpy":
            from scipy.sparse.linalg import LinearOperator
        else:
            raise bad(f"aslinearoperator: kind {kind!r} is not 'numpy' or 'cupy'")
        rmv = self.rmatvec if self.has_transpose else None
        return LinearOperator(self.shape, matvec=self.matvec, rmatvec=rmv, dtype=self.dtype)


class _Transposed:
    """A^T of an SpMV (its op T)."""

    def __init__(self, base):
        self.base = base
        self.shape = (base.shape[1], base.shape[0])
        self.dtype = base.dtype

    def matvec(self, x):
        return self.base.rmatvec(x)

    def rmatvec(self, x):
        return self.base.matvec(x)

    dot = matvec

    def __matmul__(self, x):
        return self.base.rmatvec(x)

    @property
    def T(self):
        return self.base

    def __repr__(self):
        return f"<transpose of {self.base!r}>"
