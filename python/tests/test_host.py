"""Host tests: need libgpusolve and no GPU (import, registries, the selection rule, read_mm
against scipy.io.mmread, errors, bad inputs refused before any device work, the GIL)."""
import ctypes
import gzip
import json
import os
import subprocess
import sys
import threading

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

import gpusolve
from gpusolve import _device, _lib
from conftest import DATA, HAVE_GPU, cli, matrices

# ---- import, versions, registries ------------------------------------------------------------


def test_import_and_version():
    v = gpusolve.library_version()
    assert v.count(".") == 2 and all(p.isdigit() for p in v.split("."))
    assert gpusolve.__version__ == v
    assert os.path.exists(gpusolve.library_path)
    assert gpusolve.device_count() >= 0


def test_formats():
    names = gpusolve.formats()
    assert names and len(names) == len(set(names))
    assert "csr-vector" in names and "auto" not in names
    det = gpusolve.formats(details=True)
    assert [f.name for f in det] == names
    assert all(isinstance(f, gpusolve.Format) and f.summary for f in det)
    assert any(f.transpose for f in det) and any(f.vendor for f in det)
    exe = cli()
    if exe:  # the CLI lists the same registry
        r = subprocess.run([exe, "spmv", "--list"], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        out = r.stdout
        for n in names:
            assert n in out


def test_preconditioners_and_methods():
    assert {"none", "jacobi", "ilu0", "ic0"} <= set(gpusolve.preconditioners())
    assert {"cg", "bicgstab", "gmres", "lsqr", "auto"} <= set(gpusolve.methods())


# ---- select(rule=True): host only -------------------------------------------------------------


@pytest.mark.parametrize("path", matrices(), ids=lambda p: p.stem)
def test_select_rule(path):
    A = gpusolve.read_mm(path)
    s = gpusolve.select(A, rule=True)
    assert not s.measured and s.format == s.candidates[0]
    assert set(s.candidates) <= set(gpusolve.formats())
    assert s.features["rows"] == A.shape[0] and s.features["nnz"] == A.nnz
    # the same answer from a path and from another sparse format
    assert gpusolve.select(str(path)).candidates == s.candidates
    assert gpusolve.select(A.tocoo()).candidates == s.candidates
    tr = {f.name for f in gpusolve.formats(details=True) if f.transpose}
    st = gpusolve.select(A, transpose=True)
    assert set(st.candidates) <= tr
    exe = cli()
    if exe:  # the CLI's rule on the same file
        r = subprocess.run([exe, "select", "--rule", "--json", str(path)], capture_output=True,
                           text=True)
        assert r.returncode == 0, r.stderr
        j = json.loads(r.stdout)
        assert j["rule"] == s.format
        assert j["selection"]["rule"]["candidates"] == s.candidates
        assert j["selection"]["rule"]["row"] == s.row


def test_select_rule_options():
    A = gpusolve.read_mm(DATA / "matrices" / "nos7.mtx")  # banded: dia first, fill 1.1
    assert gpusolve.select(A, options="max_fill=2").format == "dia"
    tight = gpusolve.select(A, options={"max_fill": 1})
    assert "ell" not in tight.candidates and "dia" not in tight.candidates
    assert "dia" in tight.excluded and "ell" in tight.excluded
    with pytest.raises(gpusolve.InputError, match="max_fill"):
        gpusolve.select(A, options="max_fill=abc")


# ---- read_mm against scipy.io.mmread ----------------------------------------------------------


def _scipy_csr(path):
    B = scipy.io.mmread(str(path))
    if not sp.issparse(B):
        return sp.csr_array(np.asarray(B, dtype=np.float64)), True
    B = sp.csr_array(B).astype(np.float64)
    B.sum_duplicates()
    return B, False


def _same(A, B, dense):
    assert A.shape == B.shape
    assert A.dtype == np.float64 and A.format == "csr"
    if dense:  # array files keep their zeros as entries; SciPy's dense matrix drops them
        np.testing.assert_array_equal(A.toarray(), B.toarray())
        return
    A.sort_indices()
    B.sort_indices()
    np.testing.assert_array_equal(A.indptr, B.indptr)
    np.testing.assert_array_equal(A.indices, B.indices)
    np.testing.assert_array_equal(A.data, B.data)  # parsing rounds the same: bit for bit


@pytest.mark.parametrize("path", matrices() + sorted((DATA / "ok").glob("*.mtx")),
                         ids=lambda p: p.parent.name + "/" + p.stem)
def test_read_mm_matches_scipy(path, recwarn):
    A = gpusolve.read_mm(path)
    try:
        B, dense = _scipy_csr(path)
    except ValueError as e:  # a few ok/ files use what SciPy's reader refuses
        assert path.parent.name == "ok", e
        pytest.skip(f"scipy.io.mmread refuses it: {e}")
    _same(A, B, dense)


def test_read_mm_zero_copy_and_info():
    path = DATA / "matrices" / "nos7.mtx"
    A, info = gpusolve.read_mm(path, return_info=True)
    assert info.symmetry == "symmetric" and info.field == "real" and not info.array
    assert (info.rows, info.cols) == A.shape and info.stored < A.nnz
    assert A.indices.dtype == np.int32 and A.indptr.dtype == np.int32
    # the C arrays, not copies: the values' base chain ends in the reader's buffer
    base = A.data
    while isinstance(base, np.ndarray) and base.base is not None:
        base = base.base
    assert type(base).__name__ == "_Owned"
    del A  # the C buffer goes with its last array (nothing to observe but no crash)


def test_read_mm_symmetric_both_triangles(tmp_path):
    p = tmp_path / "both.mtx"
    p.write_text("%%MatrixMarket matrix coordinate real symmetric\n2 2 3\n1 1 4\n2 1 1\n1 2 1\n")
    with pytest.warns(gpusolve.MatrixMarketWarning, match="both sides"):
        A = gpusolve.read_mm(p)
    assert A.toarray()[0, 1] == 2.0  # summed, as SciPy reads it
    with pytest.raises(gpusolve.InputError):
        gpusolve.read_mm(p, strict=True)


def test_read_mm_gzip_and_write_roundtrip(tmp_path):
    src = DATA / "matrices" / "west0479.mtx"
    A = gpusolve.read_mm(src)
    out = tmp_path / "w.mtx"
    gpusolve.write_mm(out, A)
    _same(gpusolve.read_mm(out), A.copy(), False)
    gz = tmp_path / "w.mtx.gz"
    gz.write_bytes(gzip.compress(src.read_bytes()))
    if gpusolve.has_gzip():
        _same(gpusolve.read_mm(gz), A.copy(), False)
    else:
        with pytest.raises(gpusolve.InputError, match="zlib"):
            gpusolve.read_mm(gz)


def test_read_mm_threads(tmp_path):
    """A file big enough for the parallel reader: the same matrix on 1 and 2 threads."""
    seed = int.from_bytes(os.urandom(4), "little")
    print("seed", seed)
    rng = np.random.default_rng(seed)
    n, k = 20000, 200000
    R = sp.coo_array((rng.standard_normal(k), (rng.integers(0, n, k), rng.integers(0, n, k))),
                     shape=(n, n))
    p = tmp_path / "big.mtx"
    scipy.io.mmwrite(str(p), R)
    before = gpusolve.read_threads()
    try:
        gpusolve.set_read_threads(1)
        assert gpusolve.read_threads() == 1
        A1 = gpusolve.read_mm(p)
        gpusolve.set_read_threads(2)
        assert gpusolve.read_threads() == 2
        A2 = gpusolve.read_mm(p)
    finally:
        gpusolve.set_read_threads(None)
    assert gpusolve.read_threads() == before
    _same(A1, A2.copy(), False)
    _same(A1, _scipy_csr(p)[0], False)


# (the vector_* files are bad as vectors, not as matrices)
BAD = sorted(p for p in (DATA / "bad").iterdir() if not p.name.startswith("vector_"))


@pytest.mark.parametrize("path", BAD, ids=lambda p: p.name)
def test_read_mm_bad_files(path):
    with pytest.raises(gpusolve.Error) as ei:
        gpusolve.read_mm(path)
    e = ei.value
    assert isinstance(e, gpusolve.InputError), (type(e), e.status, str(e))
    assert e.status in ("GS_ERR_PARSE", "GS_ERR_IO", "GS_ERR_UNSUPPORTED"), e.status
    assert str(path) in str(e) and e.message == str(e) and e.location
    exe = cli()
    if exe:  # the CLI prints the same message
        r = subprocess.run([exe, "info", str(path)], capture_output=True, text=True)
        assert r.returncode == 2
        assert r.stderr.strip().splitlines()[-1] == "gpusolve: " + str(e)


def test_read_mm_missing_file(tmp_path):
    with pytest.raises(gpusolve.InputError) as ei:
        gpusolve.read_mm(tmp_path / "nope.mtx")
    assert ei.value.status == "GS_ERR_IO" and "nope.mtx" in str(ei.value)
    with pytest.raises(gpusolve.InputError):
        gpusolve.read_mm("")


# ---- error mapping -------------------------------------------------------------------------------


def test_error_classes():
    assert issubclass(gpusolve.InputError, gpusolve.Error)
    assert issubclass(gpusolve.InputError, ValueError)
    assert issubclass(gpusolve.DeviceError, gpusolve.Error)
    assert issubclass(gpusolve.DeviceError, RuntimeError)
    from gpusolve._errors import from_status
    for code, cls in ((-1, gpusolve.InputError), (-2, gpusolve.InputError),
                      (-3, gpusolve.InputError), (-6, gpusolve.InputError),
                      (-8, gpusolve.DeviceError), (-9, gpusolve.DeviceError),
                      (-11, gpusolve.DeviceError), (-12, gpusolve.Error)):
        e = from_status(code)
        assert type(e) is cls or (cls is gpusolve.Error and type(e) is gpusolve.Error)
        assert e.code == code and e.status == _lib.s(_lib.lib.gs_status_string(code))
    assert isinstance(from_status(-7), MemoryError)


def test_error_carries_c_message():
    with pytest.raises(gpusolve.InputError) as ei:
        gpusolve.SpMV(sp.eye(3, format="csr"), format="csr-vector", options="nokey=1")
    assert "nokey" in str(ei.value) and ei.value.status == "GS_ERR_INVALID_ARG"


@pytest.mark.skipif(HAVE_GPU, reason="checks the no-GPU path")
def test_no_gpu_is_device_error():
    A = sp.eye(4, format="csr")
    with pytest.raises(gpusolve.DeviceError, match="no CUDA device"):
        gpusolve.solve(A, np.ones(4))
    with pytest.raises(gpusolve.DeviceError):
        gpusolve.SpMV(A)
    with pytest.raises(gpusolve.DeviceError):
        gpusolve.select(A, rule=False)


def test_context_on_default_streams_refused():
    """A context on CUDA's default streams (the legacy null stream, cudaStreamLegacy, the
    per-thread stream) is refused by the library before it asks the device anything, so with
    or without a GPU; a stream that is not a stream is refused by the package."""
    for s, why in ((0, "legacy default stream"), (1, "legacy default stream"),
                   (2, "per-thread default stream")):
        with pytest.raises(gpusolve.InputError, match=why) as e:
            gpusolve.Context(0, stream=s)
        assert e.value.status == "GS_ERR_INVALID_ARG"
    for s in ("0x1234", 1.5, True):
        with pytest.raises(gpusolve.InputError, match="stream: expected"):
            gpusolve.Context(0, stream=s)


# ---- bad inputs: refused on the host, before any device work ----------------------------------

SPD = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(6, 6), format="csr")
RECT = sp.csr_array(np.arange(24.0).reshape(6, 4) % 5)
ONES = np.ones(6)


@pytest.mark.parametrize("method", ["cg", "pipecg", "bicgstab", "gmres", "bicg"])
def test_nonsquare_for_square_methods(no_device, method):
    with pytest.raises(gpusolve.InputError, match="square") as ei:
        gpusolve.solve(RECT, ONES, method=method)
    assert ei.value.status == "GS_ERR_DIMENSION"


@pytest.mark.parametrize("case", [
    ("complex A", lambda: gpusolve.solve(SPD.astype(complex), ONES), "complex"),
    ("complex b", lambda: gpusolve.solve(SPD, ONES + 1j), "complex"),
    ("string b", lambda: gpusolve.solve(SPD, np.array(["a"] * 6)), "dtype"),
    ("object b", lambda: gpusolve.solve(SPD, np.array([None] * 6)), "numeric"),
    ("list A", lambda: gpusolve.solve([[1, 2]], ONES), "2-D|square"),
    ("3-D A", lambda: gpusolve.solve(np.ones((2, 2, 2)), ONES), "2-D"),
    ("NaN b", lambda: gpusolve.solve(SPD, np.r_[1, 2, np.nan, 4, 5, 6]), r"b\[2\]"),
    ("Inf b", lambda: gpusolve.solve(SPD, np.r_[np.inf, 2, 3, 4, 5, 6]), r"b\[0\]"),
    ("NaN x0", lambda: gpusolve.solve(SPD, ONES, x0=np.r_[np.nan, 0, 0, 0, 0, 0]), "x0"),
    ("select NaN A", lambda: gpusolve.select(SPD * np.nan, rule=True), "not finite"),
    ("batch NaN A", lambda: gpusolve.batch_solve([SPD * np.nan], [ONES]), "not finite"),
    ("short b", lambda: gpusolve.solve(SPD, np.ones(5)), "6 entries"),
    ("2-D b", lambda: gpusolve.solve(SPD, np.ones((6, 2))), "shape"),
    ("long x0", lambda: gpusolve.solve(SPD, ONES, x0=np.ones(7)), "x0"),
    ("method", lambda: gpusolve.solve(SPD, ONES, method="cholesky"), "unknown method"),
    ("precond", lambda: gpusolve.solve(SPD, ONES, precond="ilu9"), "unknown precond"),
    ("format", lambda: gpusolve.solve(SPD, ONES, format="csr9"), "unknown SpMV format"),
    ("precision", lambda: gpusolve.solve(SPD, ONES, precision="float"), "precision"),
    ("rtol<0", lambda: gpusolve.solve(SPD, ONES, rtol=-1), "rtol"),
    ("rtol nan", lambda: gpusolve.solve(SPD, ONES, rtol=float("nan")), "rtol"),
    ("tol 0", lambda: gpusolve.solve(SPD, ONES, rtol=0, atol=0), "rtol = atol = 0"),
    ("maxiter 0", lambda: gpusolve.solve(SPD, ONES, maxiter=0), "maxiter"),
    ("maxiter 1.5", lambda: gpusolve.solve(SPD, ONES, maxiter=1.5), "maxiter"),
    ("restart", lambda: gpusolve.solve(SPD, ONES, method="gmres", restart=0), "restart"),
    ("callback", lambda: gpusolve.solve(SPD, ONES, callback=3), "callable"),
    ("lsqr + pc", lambda: gpusolve.solve(RECT, ONES, method="lsqr", precond="jacobi"),
     "least-squares"),
    ("auto rect + pc", lambda: gpusolve.solve(RECT, ONES, method="auto", precond="jacobi"),
     "least-squares"),
    ("bicg + ilu0", lambda: gpusolve.solve(SPD, ONES, method="bicg", precond="ilu0"),
     "symmetric preconditioner"),
    ("pc options", lambda: gpusolve.solve(SPD, ONES, precond_options="theta=0.1"), "name one"),
    ("bad pc option", lambda: gpusolve.solve(SPD, ONES, precond="amg",
                                             precond_options="theta=abc"), "theta"),
    ("bad spmv option", lambda: gpusolve.solve(SPD, ONES, options="max_fill=-3"), "max_fill"),
    ("refine lsq", lambda: gpusolve.solve(RECT, ONES, method="lsqr",
                                          precision="mixed-refine"), "least-squares"),
    ("spmv format", lambda: gpusolve.SpMV(SPD, format="nope"), "unknown SpMV format"),
    ("spmv auto mixed", lambda: gpusolve.SpMV(SPD, precision="mixed"), "name a format"),
    ("spmv complex", lambda: gpusolve.SpMV(SPD.astype(complex)), "complex"),
    ("batch lengths", lambda: gpusolve.batch_solve([SPD, SPD], [ONES]), "right-hand"),
    ("batch square", lambda: gpusolve.batch_solve([RECT], [ONES]), "square"),
    ("batch method", lambda: gpusolve.batch_solve([SPD], [ONES], method="lsqr"), "gmres"),
    ("batch precond", lambda: gpusolve.batch_solve([SPD], [ONES], precond="amg"), "ilu0"),
    ("batch NaN", lambda: gpusolve.batch_solve([SPD], [ONES * np.nan]), "finite"),
    ("batch empty", lambda: gpusolve.batch_solve([], []), "no matrices"),
    ("select options", lambda: gpusolve.select(SPD, rule=False, options="x=1"), "x"),
], ids=lambda c: c[0])
def test_bad_input_refused_on_host(no_device, case):
    _, call, pattern = case
    with pytest.raises(gpusolve.InputError, match=pattern):
        call()


def test_int_and_float32_inputs_are_converted(no_device):
    """Real dtypes other than float64 are accepted (converted), up to the device."""
    with pytest.raises(AssertionError, match="reached the device"):
        gpusolve.solve(SPD.astype(np.float32), ONES.astype(np.int64))
    with pytest.raises(AssertionError, match="reached the device"):
        gpusolve.solve(SPD.tocoo().astype(np.int32), ONES)


def test_int64_indices_and_unsorted_duplicates(no_device):
    """int64 indices, unsorted columns and duplicates reach the library as one canonical CSR."""
    from gpusolve._arrays import as_host_csr
    A = sp.csr_array(([1.0, 2.0, 3.0, 4.0], ([0, 0, 1, 0], [1, 0, 1, 1])), shape=(2, 2))
    A = sp.csr_array((A.data, A.indices.astype(np.int64), A.indptr.astype(np.int64)),
                     shape=(2, 2))
    H = as_host_csr(A.tocoo())
    assert H.indptr.dtype == np.int64 and H.indices.dtype == np.int32
    dense = np.zeros((2, 2))
    for k in range(2):
        for p in range(H.indptr[k], H.indptr[k + 1]):
            dense[k, H.indices[p]] += H.data[p]
    np.testing.assert_array_equal(dense, [[2.0, 5.0], [0.0, 3.0]])
    assert all(np.all(np.diff(H.indices[H.indptr[k]:H.indptr[k + 1]]) > 0) for k in range(2))


# ---- A's one check: gs_matrix_create's, as for a C caller -------------------------------------

class _Reached(Exception):
    pass


class _FakeContext:
    """Stands for a context (no GPU needed): what solve reads of one before gs_matrix_create."""
    device = 0
    handle = ctypes.c_void_p()
    stream = 0


def test_solve_hands_A_to_the_library_as_is(monkeypatch):
    """solve makes no pass over A's entries before gs_matrix_create, which validates, sorts and
    sums duplicates itself: float64 values and int32 columns reach it in place, an unsorted row
    and a duplicate as they are, and the host validation is not called."""
    A = sp.csr_array((np.array([1.0, 4.0, 2.0, 2.0]), np.array([1, 0, 1, 1], np.int32),
                      np.array([0, 2, 4], np.int32)), shape=(2, 2))
    seen = []

    def create(out, ctx, csr):
        c = csr.contents
        seen.append((c.m, c.n, c.nnz, ctypes.cast(c.col, ctypes.c_void_p).value,
                     ctypes.cast(c.val, ctypes.c_void_p).value, list(c.row_ptr[:3])))
        raise _Reached

    def validate(csr):
        raise AssertionError("gs_csr_validate called: a second pass over A")

    monkeypatch.setattr(_lib.lib, "gs_matrix_create", create)
    monkeypatch.setattr(_lib.lib, "gs_csr_validate", validate)
    for call in (lambda: gpusolve.solve(A, np.ones(2), method="bicgstab",
                                        context=_FakeContext()),
                 lambda: gpusolve.SpMV(A, format="csr-vector", context=_FakeContext())):
        with pytest.raises(_Reached):
            call()
    want = (2, 2, 4, A.indices.ctypes.data, A.data.ctypes.data, [0, 2, 4])
    assert seen == [want, want]


@pytest.mark.parametrize("call", [
    lambda A: gpusolve.solve(A, np.ones(A.shape[0])),
    lambda A: gpusolve.SpMV(A, format="csr-vector"),
    lambda A: gpusolve.select(A, rule=False),
], ids=["solve", "SpMV", "select"])
def test_bad_A_outranks_no_gpu(monkeypatch, call):
    """Where no context can be made (no GPU: gs_context_create fails), A is validated on the host
    first: a bad A is an InputError naming its first fault, as gs_matrix_create's would be; a
    good one gives the DeviceError."""
    monkeypatch.setattr(_device, "_local", threading.local())  # no context made before
    monkeypatch.setattr(_lib.lib, "gs_context_create", lambda out, dev: -9)  # GS_ERR_CUDA

    def create(*args):
        raise AssertionError("gs_matrix_create called without a context")

    monkeypatch.setattr(_lib.lib, "gs_matrix_create", create)
    A = sp.csr_array(sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(5, 5)))
    bad = A.copy()
    k = int(bad.indptr[3]) + 1  # row 3's second entry: its diagonal
    bad.data[k] = np.nan
    with pytest.raises(gpusolve.InputError) as ei:
        call(bad)
    assert str(ei.value) == f"A: row 3, column {bad.indices[k]}: value is not finite"
    assert ei.value.status == "GS_ERR_INVALID_ARG"
    with pytest.raises(gpusolve.DeviceError):
        call(A)


# ---- the GIL ------------------------------------------------------------------------------------

_GIL_SCRIPT = r"""
import os, sys, tempfile, threading
import gpusolve
d = tempfile.mkdtemp()
fifo = os.path.join(d, "A.mtx")
os.mkfifo(fifo)
text = open(sys.argv[1]).read()
def writer():  # runs only while read_mm waits in C without the GIL
    with open(fifo, "w") as f:
        f.write(text)
t = threading.Thread(target=writer)
t.start()
A = gpusolve.read_mm(fifo)  # blocks in open() until the writer thread opens the FIFO
t.join()
print(A.shape[0], A.nnz)
"""


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_gil_released_during_read():
    """read_mm of a FIFO waits in C for a writer that is a Python thread of the same process:
    it completes only if the foreign call released the GIL (held, it would deadlock: the
    timeout is the deadlock's detector, not a performance bound)."""
    path = DATA / "matrices" / "nos7.mtx"
    r = subprocess.run([sys.executable, "-c", _GIL_SCRIPT, str(path)], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["729", "4617"]
