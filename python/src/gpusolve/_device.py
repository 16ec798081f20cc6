"""Contexts, device buffers, device matrices, and the ordering of our stream with CuPy's."""
import ctypes
import threading

import numpy as np

from . import _lib
from ._arrays import cupy
from ._errors import check

lib = _lib.lib


def device_count():
    """CUDA devices visible to gpusolve (0 without a GPU or driver; never fails)."""
    return int(lib.gs_device_count())


class Context:
    """A gpusolve context on one CUDA device: its stream and its cuBLAS and cuSPARSE handles.
    Everything made with it keeps it alive. Not for concurrent use from several threads (the
    default contexts are per thread)."""

    def __init__(self, device=0):
        self._p = ctypes.c_void_p()
        check(lib.gs_context_create(ctypes.byref(self._p), int(device)))
        self.device = int(device)

    @property
    def handle(self):
        return self._p

    @property
    def device_name(self):
        return _lib.s(lib.gs_context_device_name(self._p))

    @property
    def stream(self):
        """The context's cudaStream_t as an integer (for cupy.cuda.ExternalStream)."""
        return lib.gs_context_stream(self._p) or 0

    @property
    def bytes_in_use(self):
        """Device bytes allocated through the library on this context now."""
        return int(lib.gs_device_bytes_in_use(self._p))

    @property
    def bytes_peak(self):
        return int(lib.gs_device_bytes_peak(self._p))

    def sync(self):
        check(lib.gs_context_sync(self._p))

    def close(self):
        if getattr(self, "_p", None) and self._p.value:
            lib.gs_context_destroy(ctypes.byref(self._p))

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def __repr__(self):
        return f"<gpusolve.Context device {self.device}: {self.device_name}>"


_local = threading.local()


def default_context(device=0):
    """This thread's context on `device`, created on first use."""
    ctxs = getattr(_local, "contexts", None)
    if ctxs is None:
        ctxs = _local.contexts = {}
    c = ctxs.get(device)
    if c is None:
        c = ctxs[device] = Context(device)
    return c


class Buffer:
    """Device memory from the library's counting allocator (gs_dmalloc) on one context."""

    def __init__(self, ctx, nbytes, what="buffer"):
        self.ctx = ctx
        self.nbytes = int(nbytes)
        self._p = ctypes.c_void_p()
        check(lib.gs_dmalloc(ctx.handle, ctypes.byref(self._p), self.nbytes, what.encode()))

    @property
    def ptr(self):
        return self._p.value or 0

    def upload(self, a):
        check(lib.gs_copy_to_device(self.ctx.handle, self._p, a.ctypes.data, a.nbytes))

    def download(self, a):
        check(lib.gs_copy_to_host(self.ctx.handle, a.ctypes.data, self._p, a.nbytes))

    def __del__(self):
        try:
            if self._p.value:
                lib.gs_dfree(self.ctx.handle, self._p)
                self._p = ctypes.c_void_p()
        except Exception:
            pass


class DeviceMatrix:
    """gs_matrix_t: the library's copy of a host CSR (one device copy on first use)."""

    def __init__(self, ctx, H):
        self.ctx = ctx
        self.shape = H.shape
        self.nnz = len(H.data)
        self._p = ctypes.c_void_p()
        check(lib.gs_matrix_create(ctypes.byref(self._p), ctx.handle, H.ptr))

    @property
    def handle(self):
        return self._p

    def __del__(self):
        try:
            lib.gs_matrix_destroy(ctypes.byref(self._p))
        except Exception:
            pass


class Product:
    """gs_spmv_t: one format's prepared product (owns it; keeps its matrix alive)."""

    def __init__(self, matrix, handle):
        self.matrix = matrix
        self.ctx = matrix.ctx
        self._p = handle

    @property
    def handle(self):
        return self._p

    @property
    def name(self):
        return _lib.s(lib.gs_spmv_name(self._p))

    def __del__(self):
        try:
            lib.gs_spmv_destroy(ctypes.byref(self._p))
        except Exception:
            pass


class CupyOrder:
    """Orders our context's stream after the work queued on CuPy's current stream (entry) and
    CuPy's current stream after ours (exit), with events: no host synchronization. Keeps CuPy's
    current device as it was (the library may select its own)."""

    def __init__(self, ctx, active=True):
        self.ctx = ctx
        self.active = active and cupy() is not None

    def __enter__(self):
        if self.active:
            cp = cupy()
            self.dev = cp.cuda.runtime.getDevice()
            self.ext = cp.cuda.ExternalStream(self.ctx.stream, self.ctx.device)
            ev = cp.cuda.Event(disable_timing=True)
            ev.record(cp.cuda.get_current_stream())
            self.ext.wait_event(ev)
        return self

    def __exit__(self, *exc):
        if self.active:
            cp = cupy()
            ev = cp.cuda.Event(disable_timing=True)
            ev.record(self.ext)
            cp.cuda.get_current_stream().wait_event(ev)
            cp.cuda.runtime.setDevice(self.dev)
        return False


def host_copy_hook(kind, nbytes):
    """Called for every host <-> device copy of a vector the package makes (tests wrap it to
    check that CuPy inputs make none)."""
    return None


def to_device(ctx, a, what):
    host_copy_hook("to_device", a.nbytes)
    buf = Buffer(ctx, max(a.nbytes, 8), what)
    if a.nbytes:
        buf.upload(a)
    return buf


def to_host(buf, n, dtype=np.float64):
    out = np.empty(n, dtype=dtype)
    host_copy_hook("to_host", out.nbytes)
    if out.nbytes:
        buf.download(out)
    return out
