"""CuPy inputs (skipped without cupy or a device): vectors read and written in place on the
device (no host copy of b or x), results equal to the NumPy path's, CuPy's stream order."""
import numpy as np
import pytest

import gpusolve
from gpusolve import _device

pytestmark = [pytest.mark.gpu, pytest.mark.cupy]


@pytest.fixture
def cp():
    import cupy
    return cupy


@pytest.fixture
def copies(monkeypatch):
    """Counts the package's host <-> device vector copies."""
    seen = []
    monkeypatch.setattr(_device, "host_copy_hook", lambda kind, n: seen.append((kind, n)))
    return seen


def _system():
    A = gpusolve.laplace(24, 24, 24, 7)
    return A, A @ np.linspace(1.0, 2.0, A.shape[0])


def test_solve_cupy_vectors_in_place(cp, copies):
    A, b = _system()
    x_np, info_np = gpusolve.solve(A, b, format="csr-vector", rtol=1e-10)
    assert copies  # the NumPy path copies b and x
    copies.clear()
    b_cp = cp.asarray(b)
    x_cp, info = gpusolve.solve(A, b_cp, format="csr-vector", rtol=1e-10)
    assert isinstance(x_cp, cp.ndarray) and x_cp.shape == (A.shape[0],)
    assert copies == []  # neither b nor x went through the host
    assert info.converged and info.iterations == info_np.iterations
    np.testing.assert_allclose(cp.asnumpy(x_cp), x_np, rtol=1e-12, atol=0)


def test_solve_cupyx_matrix(cp):
    import cupyx.scipy.sparse as csp
    A, b = _system()
    Ad = csp.csr_matrix(A)
    x, info = gpusolve.solve(Ad, cp.asarray(b), rtol=1e-10, x0=cp.zeros(A.shape[0]))
    assert info.converged and isinstance(x, cp.ndarray)
    np.testing.assert_allclose(cp.asnumpy(x), np.linspace(1.0, 2.0, A.shape[0]), rtol=1e-7)


def _guard_host_copies(cp, monkeypatch, Ad):
    """Fails the test when any of the cupyx matrix Ad's arrays (or memory inside them) is
    copied to the host: through the matrix's get(), cupy.asnumpy or an array's get()."""
    spans = [(a.data.ptr, a.data.ptr + a.nbytes) for a in (Ad.data, Ad.indices, Ad.indptr)
             if a.nbytes]

    def is_a(arr):
        p = getattr(getattr(arr, "data", None), "ptr", None)
        return isinstance(p, int) and any(lo <= p < hi for lo, hi in spans)

    def fail(*a, **k):
        raise AssertionError("the cupyx matrix was copied to the host")
    monkeypatch.setattr(type(Ad), "get", fail)
    real_asnumpy = cp.asnumpy

    def asnumpy(a, *args, **kw):
        if is_a(a):
            fail()
        return real_asnumpy(a, *args, **kw)
    monkeypatch.setattr(cp, "asnumpy", asnumpy)
    try:  # cupy.ndarray is a Python subclass of the Cython base since CuPy 12
        real_get = cp.ndarray.get

        def get(self, *args, **kw):
            if is_a(self):
                fail()
            return real_get(self, *args, **kw)
        monkeypatch.setattr(cp.ndarray, "get", get)
    except (TypeError, AttributeError):
        pass


def test_cupyx_matrix_not_copied_to_host(cp, monkeypatch, copies):
    """A cupyx matrix goes to the library as device arrays (gs_matrix_create_device): none of
    its arrays reaches the host, and with CuPy b neither does any vector."""
    import cupyx.scipy.sparse as csp
    A, b = _system()
    Ad = csp.csr_matrix(A)
    x_ref, info_ref = gpusolve.solve(A, b, format="csr-vector", rtol=1e-10)
    ctx = _device.cupy_context(0)
    before = ctx.bytes_in_use
    _guard_host_copies(cp, monkeypatch, Ad)
    copies.clear()
    x, info = gpusolve.solve(Ad, cp.asarray(b), format="csr-vector", rtol=1e-10)
    assert copies == [] and isinstance(x, cp.ndarray)
    assert info.converged and info.iterations == info_ref.iterations
    assert ctx.bytes_in_use == before  # the solve's matrix and work freed
    op = gpusolve.SpMV(Ad, format="csr-vector")
    assert op.ctx.bytes_in_use >= (A.shape[0] + 1) * 4 + A.nnz * 12  # the matrix's own copy
    y = op @ cp.asarray(x_ref)
    monkeypatch.undo()
    np.testing.assert_allclose(cp.asnumpy(x), x_ref, rtol=1e-12, atol=0)
    np.testing.assert_allclose(cp.asnumpy(y), A @ x_ref, rtol=1e-12, atol=1e-12)


def test_cupyx_matrix_inputs(cp):
    """cupyx matrices in other formats, value types and index orders are converted on the
    device; what the library reads is checked on the device (NaN refused with its message)."""
    import cupyx.scipy.sparse as csp
    A, b = _system()
    x_ref, _ = gpusolve.solve(A, b, format="csr-vector", rtol=1e-10)
    for Ad in (csp.coo_matrix(A), csp.csc_matrix(A), csp.csr_matrix(A.astype(np.float32))):
        x, info = gpusolve.solve(Ad, cp.asarray(b), format="csr-vector", rtol=1e-10)
        assert info.converged
        tol = 1e-4 if Ad.dtype == np.float32 else 1e-10  # x of the rounded matrix
        np.testing.assert_allclose(cp.asnumpy(x), x_ref, rtol=tol)
    # each row's columns reversed, and (0, 0) split into two entries: not canonical, sorted
    # and summed on the device (as SciPy's sum_duplicates) before the library sees it
    ip, ix, dv = A.indptr.copy(), A.indices.copy(), A.data.copy()
    for i in range(A.shape[0]):
        ix[ip[i]:ip[i + 1]] = ix[ip[i]:ip[i + 1]][::-1]
        dv[ip[i]:ip[i + 1]] = dv[ip[i]:ip[i + 1]][::-1]
    k = ip[0] + int(np.flatnonzero(ix[ip[0]:ip[1]] == 0)[0])
    dv[k] -= 1.0
    ix, dv = np.insert(ix, ip[1], 0), np.insert(dv, ip[1], 1.0)
    ip[1:] += 1
    Ad = csp.csr_matrix((cp.asarray(dv), cp.asarray(ix), cp.asarray(ip)), shape=A.shape)
    assert not Ad.has_canonical_format
    x, info = gpusolve.solve(Ad, cp.asarray(b), format="csr-vector", rtol=1e-10)
    assert info.converged
    np.testing.assert_allclose(cp.asnumpy(x), x_ref, rtol=1e-8)
    # NaN in A: refused by the library's device check, naming the row and column
    Ad = csp.csr_matrix(A)
    Ad.data[7] = cp.nan
    row = int(np.searchsorted(A.indptr, 7, side="right") - 1)
    with pytest.raises(gpusolve.InputError, match=f"row {row}, column {A.indices[7]}: value "
                       r"-?nan is not finite \(entry 7\)"):
        gpusolve.solve(Ad, cp.asarray(b))


def test_cupyx_stream(cp):
    """With CuPy inputs the solve runs on CuPy's current stream (a context on it): work queued
    there just before (A's values and b changed in place) is seen, and the result is ready for
    the next work on it, with no synchronization by hand."""
    import cupyx.scipy.sparse as csp
    A, _ = _system()
    n = A.shape[0]
    s = cp.cuda.Stream(non_blocking=True)
    with s:
        ctx = _device.cupy_context(0)
        assert ctx.stream == s.ptr and ctx.borrows_stream
        assert _device.cupy_context(0) is ctx  # kept per stream
        Ad = csp.csr_matrix(A)
        for k in range(3):
            b = cp.ones(n)
            b *= float(k + 1)          # queued on s just before the solve reads b
            Ad.data *= 2.0             # and A
            x, info = gpusolve.solve(Ad, b, format="csr-vector", rtol=1e-10)
            r = float(cp.linalg.norm(Ad @ x - b))  # queued on s after the solve
            assert info.converged and r <= 1e-8 * float(cp.linalg.norm(b))
    assert _device.cupy_context(0) is not ctx  # back on CuPy's null stream: the default


def test_cupyx_select_and_mixed(cp):
    import cupyx.scipy.sparse as csp
    A, b = _system()
    Ad = csp.csr_matrix(A)
    sel = gpusolve.select(Ad, rule=False, cache=False)
    assert sel.measured and sel.format in gpusolve.formats()
    x, info = gpusolve.solve(Ad, cp.asarray(b), format="csr-vector", precision="mixed",
                             rtol=1e-6)
    assert info.converged and 0 < info.rel_residual_double < 1e-4


def test_spmv_cupy(cp, copies):
    A, _ = _system()
    op = gpusolve.SpMV(A, format="csr-vector")
    x = cp.random.default_rng(5).standard_normal(A.shape[1])
    copies.clear()
    y = op @ x
    assert isinstance(y, cp.ndarray) and copies == []
    np.testing.assert_allclose(cp.asnumpy(y), A @ cp.asnumpy(x), rtol=1e-12, atol=1e-12)
    z = op.T @ x
    np.testing.assert_allclose(cp.asnumpy(z), A.T @ cp.asnumpy(x), rtol=1e-12, atol=1e-12)


def test_stream_order(cp):
    """Work queued on a non-default CuPy stream before the call is seen by it, and the result
    is ready for the next work on that stream, without synchronizing by hand."""
    A, _ = _system()
    op = gpusolve.SpMV(A, format="csr-vector")
    n = A.shape[1]
    s = cp.cuda.Stream(non_blocking=True)
    with s:
        for k in range(5):
            x = cp.full(n, float(k + 1))
            x *= 2.0  # queued on s just before the product reads x
            y = op @ x
            total = float((y * 1.0).sum())  # queued on s after the product
            assert total == pytest.approx(float((A @ np.full(n, 2.0 * (k + 1))).sum()),
                                          rel=1e-12)


def test_linear_operator_cupy(cp):
    from cupyx.scipy.sparse.linalg import cg
    A, b = _system()
    L = gpusolve.SpMV(A, format="csr-vector").aslinearoperator(kind="cupy")
    x, flag = cg(L, cp.asarray(b), tol=1e-10, maxiter=5000) if _old_cupy_cg() else \
        cg(L, cp.asarray(b), rtol=1e-10, maxiter=5000)
    assert flag == 0
    np.testing.assert_allclose(cp.asnumpy(x), np.linspace(1.0, 2.0, A.shape[0]), rtol=1e-6)


def _old_cupy_cg():
    import inspect
    from cupyx.scipy.sparse.linalg import cg
    return "rtol" not in inspect.signature(cg).parameters


def test_batch_cupy(cp, copies):
    mats = [gpusolve.laplace(n, 3) for n in (5, 9, 17)]
    bs = [cp.ones(A.shape[0]) for A in mats]
    copies.clear()
    xs, info = gpusolve.batch_solve(mats, bs, rtol=1e-10)
    assert copies == [] and info.converged
    for A, x in zip(mats, xs):
        assert isinstance(x, cp.ndarray)
        np.testing.assert_allclose(A @ cp.asnumpy(x), 1.0, rtol=1e-8)


def test_cupy_bad_inputs(cp):
    A, b = _system()
    with pytest.raises(gpusolve.InputError, match="finite"):
        bb = cp.asarray(b)
        bb[3] = cp.nan
        gpusolve.solve(A, bb)
    with pytest.raises(gpusolve.InputError, match="entries"):
        gpusolve.solve(A, cp.ones(A.shape[0] - 1))
