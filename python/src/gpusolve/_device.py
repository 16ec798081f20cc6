"""Contexts, device buffers, device matrices, and the ordering of our stream with CuPy's."""
import collections
import ctypes
import threading

import numpy as np

from . import _lib
from ._arrays import cupy
from ._errors import bad, check

lib = _lib.lib


def device_count():
    """CUDA devices visible to gpusolve (0 without a GPU or driver; never fails)."""
    return int(lib.gs_device_count())


class Context:
    """A gpusolve context on one CUDA device: its stream and its cuBLAS and cuSPARSE handles.
    Everything made with it keeps it alive. Not for concurrent use from several threads (the
    default contexts are per thread).

    stream=None: the context makes a stream of its own. Otherwise the context runs on that
    stream (gs_context_create_on_stream): a cupy.cuda.Stream (kept alive by the context) or a
    cudaStream_t as an int; its work is then ordered with the stream's other work, with nothing
    in between. CUDA's default streams (the null stream, the per-thread one) are refused."""

    def __init__(self, device=0, stream=None):
        self._p = ctypes.c_void_p()
        self._stream_owner = None
        if stream is None:
            check(lib.gs_context_create(ctypes.byref(self._p), int(device)))
        else:
            ptr = stream if isinstance(stream, int) else getattr(stream, "ptr", None)
            if not isinstance(ptr, int) or isinstance(ptr, bool):
                raise bad(f"stream: expected a cupy.cuda.Stream or an int, not "
                          f"{type(stream).__name__}")
            check(lib.gs_context_create_on_stream(ctypes.byref(self._p), int(device),
                                                  ctypes.c_void_p(ptr)))
            self._stream_owner = stream  # the stream outlives the context
        self.device = int(device)

    @property
    def handle(self):
        return self._p

    @property
    def device_name(self):
        return _lib.s(lib.gs_context_device_name(self._p))

    @property
    def stream(self):
        """The context's cudaStream_t as an integer (its own, or the one it was given)."""
        return lib.gs_context_stream(self._p) or 0

    @property
    def borrows_stream(self):
        """True when the context runs on a stream it was given."""
        return self._stream_owner is not None

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
        on = f", on stream {self.stream:#x}" if self.borrows_stream else ""
        return f"<gpusolve.Context device {self.device}: {self.device_name}{on}>"


_local = threading.local()


def default_context(device=0):
    """This thread's context on `device` (with a stream of its own), created on first use."""
    ctxs = getattr(_local, "contexts", None)
    if ctxs is None:
        ctxs = _local.contexts = {}
    c = ctxs.get(device)
    if c is None:
        c = ctxs[device] = Context(device)
    return c


# CuPy's default streams: the legacy null stream (0, or cudaStreamLegacy = 1) and the
# per-thread one (2), which gs_context_create_on_stream refuses (C header: the legacy stream
# cannot be captured into a CUDA graph; the per-thread one differs per thread).
_DEFAULT_STREAMS = (0, 1, 2)
_STREAM_CONTEXTS = 8  # contexts kept a thread for CuPy streams, the most recently used


def cupy_stream(device):
    """CuPy's current stream on `device`."""
    cp = cupy()
    with cp.cuda.Device(device):
        return cp.cuda.get_current_stream()


def cupy_context(device):
    """The context for CuPy inputs on `device`: one on CuPy's current stream (made on first use
    and kept per thread and stream, holding the stream alive), so that the library's work is
    queued in order with CuPy's own, with no synchronization; on CuPy's default streams, which
    the library cannot take, this thread's default context, ordered by CupyOrder's events."""
    cp = cupy()
    s = cupy_stream(device)
    dev = cp.cuda.runtime.getDevice()  # a context's creation selects its own device
    try:
        if s.ptr in _DEFAULT_STREAMS:
            return default_context(device)
        cache = getattr(_local, "stream_contexts", None)
        if cache is None:
            cache = _local.stream_contexts = collections.OrderedDict()
        key = (device, s.ptr)
        c = cache.pop(key, None)
        if c is None:
            c = Context(device, stream=s)
            while len(cache) >= _STREAM_CONTEXTS:  # closed once nothing made with it is left
                cache.popitem(last=False)
        cache[key] = c
        return c
    finally:
        cp.cuda.runtime.setDevice(dev)


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
    """gs_matrix_t: the library's copy of a host CSR (HostCsr: validated, sorted and copied by
    gs_matrix_create, faults raised as InputError naming H.what; one device copy on first use), or
    of a CSR on the device (DeviceCsr: copied device to device, checked there; its host copy is
    made by the library only if a format or the selection needs it)."""

    def __init__(self, ctx, H):
        self.ctx = ctx
        self.shape = H.shape
        self._p = ctypes.c_void_p()
        if hasattr(H, "row_ptr_bits"):  # a DeviceCsr
            self.nnz = H.nnz
            check(lib.gs_matrix_create_device(
                ctypes.byref(self._p), ctx.handle, H.shape[0], H.shape[1], H.nnz,
                ctypes.c_void_p(H.indptr.data.ptr), H.row_ptr_bits,
                ctypes.c_void_p(H.indices.data.ptr or None),
                ctypes.c_void_p(H.data.data.ptr or None), 0), "A")
        else:  # gs_matrix_create validates (as for a C caller: the one pass over A)
            self.nnz = len(H.data)
            check(lib.gs_matrix_create(ctypes.byref(self._p), ctx.handle, H.ptr), H.what)
            H.checked = True

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
    """Orders ctx's stream with CuPy's current stream when they differ (a default stream of
    CuPy's, or a product prepared under another stream): ctx's stream waits for CuPy's queued
    work on entry and CuPy's stream for ctx's on exit, through events, with no host
    synchronization. Nothing to do when ctx runs on CuPy's current stream (cupy_context). Keeps
    CuPy's current device as it was (the library may select its own)."""

    def __init__(self, ctx, active=True):
        self.ctx = ctx
        self.active = active and cupy() is not None

    def _link(self, wait_on, record_on):
        cp = cupy()
        ev = cp.cuda.Event(disable_timing=True)
        cp.cuda.runtime.eventRecord(ev.ptr, record_on)
        cp.cuda.runtime.streamWaitEvent(wait_on, ev.ptr, 0)

    def __enter__(self):
        self.link = False
        if self.active:
            cp = cupy()
            self.dev = cp.cuda.runtime.getDevice()
            self.cur = cupy_stream(self.ctx.device).ptr
            self.link = self.cur != self.ctx.stream
            if self.link:
                with cp.cuda.Device(self.ctx.device):
                    self._link(self.ctx.stream, self.cur)
        return self

    def __exit__(self, *exc):
        if self.active:
            cp = cupy()
            if self.link:
                with cp.cuda.Device(self.ctx.device):
                    self._link(self.cur, self.ctx.stream)
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


class SolveVectors:
    """b and x of a solve as the C call takes them: device pointers d_b and d_x.
    On the device (CuPy b, on_device=True): b is read in place and x is a new CuPy array (a
    copy of x0 when given). On the host (NumPy): b and x0 are uploaded into the library's
    allocator, x allocated there. n_alloc >= n entries are allocated for x (the batches keep a
    non-NULL pointer for 0 entries); result() is x, n entries of b's kind."""

    def __init__(self, ctx, b, x0, n, on_device, n_alloc=None):
        self.n = n
        self.on_device = on_device
        n_alloc = n if n_alloc is None else n_alloc
        if on_device:
            cp = cupy()
            with b.device:
                self._x = x0.copy() if x0 is not None else cp.empty(n_alloc, dtype=cp.float64)
            self.d_b, self.d_x = ctypes.c_void_p(b.data.ptr), ctypes.c_void_p(self._x.data.ptr)
        else:
            self._b = to_device(ctx, b, "b")
            self._x = to_device(ctx, x0, "x0") if x0 is not None else \
                Buffer(ctx, max(8 * n_alloc, 8), "x")
            self.d_b, self.d_x = self._b._p, self._x._p

    def result(self):
        """x: the CuPy array itself, or a new NumPy array downloaded from the device."""
        if self.on_device:
            return self._x if self._x.size == self.n else self._x[:self.n]
        return to_host(self._x, self.n)
