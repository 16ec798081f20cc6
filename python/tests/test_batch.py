"""batch_solve: its arguments refused on the host before any device work, the options and the
per-problem outcome (detail, detail_row) carried between Python and gs_batch_solve (host, with
the library's device calls stood in for), and on a GPU (skipped without one) every method x
preconditioner against scipy.sparse.linalg and the problems a preconditioner refuses."""
import ctypes
import os

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import gpusolve
from gpusolve import _batch, _lib

lib = _lib.lib
EPS = np.finfo(np.float64).eps
SPD = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(6, 6), format="csr")
ONES = np.ones(6)
METHODS = ["cg", "bicgstab", "gmres"]
PRECONDS = [None, "jacobi", "block-jacobi", "ilu0"]

# the library's own names, through prototypes of our own
_pc_name = ctypes.CFUNCTYPE(ctypes.c_char_p, ctypes.c_int)(("gs_batch_precond_name", lib))
_pc_find = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_char_p)(("gs_batch_precond_find", lib))


def _reason(name):
    """The gs_reason_t value whose string is name."""
    for k in range(-32, 33):
        if _lib.s(lib.gs_reason_string(k)) == name:
            return k
    raise AssertionError(f"no reason {name}")


def _seed_rng():
    seed = int.from_bytes(os.urandom(4), "little")
    print("seed", seed)
    return np.random.default_rng(seed)


# ---- host: refusals before the device -------------------------------------------------------

@pytest.mark.parametrize("kw, pattern", [
    (dict(method="lsqr"), "method: .*'gmres'"),
    (dict(method="GMRES"), "method"),
    (dict(method="pipecg"), "method"),
    (dict(method=None), "method"),
    (dict(method=["cg"]), "method"),
    (dict(precond="amg"), "precond: .*'ilu0'"),
    (dict(precond="ic0"), "precond"),
    (dict(precond="Jacobi"), "precond"),
    (dict(precond="auto"), "precond"),
    (dict(precond=1), "precond"),
    (dict(method="gmres", restart=0), "restart: .*1 .. 10000"),
    (dict(method="gmres", restart=10001), "restart"),
    (dict(method="gmres", restart=-3), "restart"),
    (dict(method="gmres", restart=2.5), "restart"),
    (dict(method="gmres", restart="30"), "restart"),
    (dict(method="gmres", restart=True), "restart"),
    (dict(method="gmres", restart=None), "restart"),
    (dict(restart=0), "restart"),  # checked for every method, as solve does
    (dict(precond="block-jacobi", block=0), "block: .*1 .. 8"),
    (dict(precond="block-jacobi", block=9), "block"),
    (dict(precond="block-jacobi", block=32), "block"),
    (dict(precond="block-jacobi", block=4.0), "block"),
    (dict(precond="block-jacobi", block=True), "block"),
    (dict(precond="jacobi", block=9), "block"),
    (dict(precond="block-jacobi", agglomerate=1), "agglomerate"),
    (dict(precond="block-jacobi", agglomerate=0), "agglomerate"),
    (dict(precond="block-jacobi", agglomerate="yes"), "agglomerate"),
    (dict(precond="block-jacobi", agglomerate=None), "agglomerate"),
    (dict(maxiter=5, maxit=6), "disagree"),
    (dict(method="gmres", maxiter=0), "maxiter"),
], ids=lambda v: repr(v) if isinstance(v, dict) else None)
def test_batch_arguments_refused_on_host(no_device, kw, pattern):
    with pytest.raises(gpusolve.InputError, match=pattern) as ei:
        gpusolve.batch_solve([SPD, SPD], [ONES, ONES], **kw)
    assert ei.value.status == "GS_ERR_INVALID_ARG" and "\n" not in str(ei.value)


@pytest.mark.parametrize("kw", [
    dict(method="gmres", restart=1), dict(method="gmres", restart=10000),
    dict(method="gmres", restart=np.int64(7)), dict(precond="block-jacobi", block=1),
    dict(precond="block-jacobi", block=8, agglomerate=False),
    dict(precond="block-jacobi", agglomerate=np.bool_(True)), dict(precond="none"),
    dict(method="bicgstab", precond="ilu0"), dict(method="gmres", precond="jacobi"),
    dict(maxiter=5, maxit=5),
], ids=repr)
def test_batch_arguments_accepted_up_to_the_device(no_device, kw):
    """The bounds' ends and every name pass the checks (the call reaches the device)."""
    with pytest.raises(AssertionError, match="reached the device"):
        gpusolve.batch_solve([SPD, SPD], [ONES, ONES], **kw)


def test_batch_precond_names_are_the_librarys():
    """What batch_solve takes is the library's table, each name mapping to its own value."""
    names = []
    while _pc_name(len(names)):
        names.append(_lib.s(_pc_name(len(names))))
    assert names == list(_batch._BATCH_PRECONDS)
    assert all(_pc_find(n.encode()) == _batch._BATCH_PRECONDS[n] for n in names)
    assert {p for p in PRECONDS if p} <= set(names)


# ---- host: what reaches gs_batch_solve and what comes back ---------------------------------------

class _Ctx:
    device = 0
    handle = ctypes.c_void_p()


class _Vectors:
    """Stands for SolveVectors: no device buffers; x comes back as zeros."""

    def __init__(self, ctx, b, x0, n, on_device, n_alloc=None):
        self.n, self.d_b, self.d_x = n, ctypes.c_void_p(8), ctypes.c_void_p(16)

    def result(self):
        return np.zeros(self.n)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("pc", PRECONDS)
def test_batch_options_and_details_carried(monkeypatch, method, pc):
    """gs_batch_solve gets the method, precond, block, agglomerate and restart asked for (the
    deprecated jacobi flag off), and each problem's detail and detail_row come back as given."""
    rng = _seed_rng()
    restart, block = int(rng.integers(1, 10001)), int(rng.integers(1, 9))
    agglomerate = bool(rng.integers(0, 2))
    count = 3
    bad_row = int(rng.integers(0, 6))
    seen, destroyed = {}, []
    conv, brk = _reason("converged_rtol"), _reason("diverged_breakdown")
    phrase = b"a detail phrase"

    def create(out, ctx, n, arr):
        seen["count"] = n
        return 0

    def solve(B, o, d_b, d_x, stats, summ):
        seen["opts"] = {k: getattr(o._obj, k) for k, _ in _lib.BatchSolveOpts._fields_
                        if not k.startswith("_")}
        for i in range(count):
            s = stats[i]
            s.reason, s.iterations, s.bnorm = (brk, 0, 1.0) if i == 1 else (conv, 4 + i, 1.0)
            s.detail, s.detail_row = (phrase, bad_row) if i == 1 else (b"", -1)
        summ._obj.converged = count - 1
        return 0

    monkeypatch.setattr(_batch, "SolveVectors", _Vectors)
    monkeypatch.setattr(lib, "gs_batch_create", create)
    monkeypatch.setattr(lib, "gs_batch_solve", solve)
    monkeypatch.setattr(lib, "gs_batch_destroy", lambda B: destroyed.append(1))
    xs, info = gpusolve.batch_solve([SPD] * count, [ONES] * count, method=method, precond=pc,
                                    restart=restart, block=block, agglomerate=agglomerate,
                                    context=_Ctx())
    o = seen["opts"]
    assert seen["count"] == count and destroyed == [1] and len(xs) == count
    assert o["method"] == lib.gs_method_find(method.encode())
    assert o["precond"] == _pc_find((pc or "none").encode()) >= 0
    assert o["jacobi"] == 0 and o["x0_given"] == 0
    assert (o["restart"], o["block"], o["agglomerate"]) == (restart, block, int(agglomerate))
    assert [p.detail for p in info.problems] == ["", phrase.decode(), ""]
    assert [p.detail_row for p in info.problems] == [-1, bad_row, -1]
    assert [p.reason for p in info.problems] == ["converged_rtol", "diverged_breakdown",
                                                 "converged_rtol"]
    assert [p.converged for p in info.problems] == [True, False, True] and not info.converged
    assert info.method == method and info.precond == (pc or "none")
    assert info.restart == (restart if method == "gmres" else None)
    assert info.block == (block if pc == "block-jacobi" else None)
    assert info.agglomerate == (agglomerate if pc == "block-jacobi" else None)


# ---- GPU: every method x preconditioner against SciPy --------------------------------------------

def _nonsymmetric(rng, n):
    """A nonsymmetric, strictly diagonally dominant Z-matrix (an M-matrix: Jacobi, block-Jacobi
    and ILU(0) all exist for it)."""
    k = min(n - 1, 4)
    rows = np.repeat(np.arange(n), k)
    cols = (rows + rng.integers(1, n, size=rows.size)) % n  # never the diagonal
    A = sp.csr_array((-rng.random(rows.size), (rows, cols)), shape=(n, n))
    A.sum_duplicates()
    return sp.csr_array(A + sp.diags(1.0 + np.abs(A).sum(axis=1)))


def _make_batch(rng, symmetric):
    mats = []
    for _ in range(10):
        mats.append(gpusolve.laplace(int(rng.integers(3, 16)), int(rng.integers(1, 5))))
        if not symmetric:
            mats.append(_nonsymmetric(rng, int(rng.integers(2, 50))))
    return mats, [rng.standard_normal(A.shape[0]) for A in mats]


def _rounding(A, b, x):
    """A bound on the rounding error of ||b - A x|| computed in double."""
    return EPS * A.shape[0] * (np.linalg.norm(A.toarray(), 2) * np.linalg.norm(x)
                               + np.linalg.norm(b))


def _error_bound(A, b, x, y):
    """||x - y|| can be at most ||A^-1|| (||b - A x|| + ||b - A y||), plus the rounding of the
    two residuals."""
    smin = np.linalg.svd(A.toarray(), compute_uv=False)[-1]
    r = np.linalg.norm(b - A @ x) + np.linalg.norm(b - A @ y)
    return 1.01 * (r + _rounding(A, b, x) + _rounding(A, b, y)) / smin


@pytest.mark.gpu
@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("pc", PRECONDS)
def test_batch_against_scipy(method, pc):
    """Each problem converges to ||b - A x|| <= rtol ||b|| (10x for the rounding of the
    recomputed residual) and x is within the residual bound of SciPy's same method with the
    same rtol (None, Jacobi) or of spsolve (block-Jacobi, ILU(0): SciPy has neither)."""
    rng = _seed_rng()
    rtol = 1e-10
    mats, bs = _make_batch(rng, symmetric=method == "cg")
    kw = dict(block=int(rng.integers(1, 9)), agglomerate=bool(rng.integers(0, 2)))
    print("options", kw)
    xs, info = gpusolve.batch_solve(mats, bs, method=method, precond=pc, rtol=rtol,
                                    maxiter=20000, restart=10, **kw)
    assert info.converged and info.n_converged == len(mats) and len(xs) == len(mats), info
    assert info.iterations_max == max(p.iterations for p in info.problems)
    for i, (A, b, x, p) in enumerate(zip(mats, bs, xs, info.problems)):
        what = f"problem {i} ({A.shape[0]} rows)"
        assert p.converged and p.detail_row == -1, (what, p.reason, p.detail)
        if method != "gmres":
            assert p.detail == "", (what, p.detail)
        r, nb = np.linalg.norm(b - A @ x), np.linalg.norm(b)
        assert r <= 10 * rtol * nb, (what, r / nb)
        assert abs(p.residual_norm - r) <= 1e-3 * r + 2 * _rounding(A, b, x), what
        if pc in (None, "jacobi"):
            skw = dict(rtol=rtol, atol=0.0, maxiter=20000)
            if pc:
                d = A.diagonal()
                skw["M"] = spla.LinearOperator(A.shape, matvec=lambda v, d=d: v / d)
            if method == "gmres":
                skw["restart"] = 10
            its = []
            if method == "cg":
                skw["callback"] = lambda xk: its.append(1)
            y, flag = getattr(spla, method)(A, b, **skw)
            assert flag == 0, what
            if method == "cg":  # the same recurrence: the same count up to rounding
                assert abs(p.iterations - len(its)) <= max(2, len(its) // 20), \
                    (what, p.iterations, len(its))
        else:
            y = spla.spsolve(A.tocsc(), b)
        assert np.linalg.norm(x - y) <= _error_bound(A, b, x, y), what


@pytest.mark.gpu
@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("pc, stored_zero", [("jacobi", False), ("jacobi", True),
                                              ("ilu0", False), ("block-jacobi", False)])
def test_batch_refused_problem_names_the_row(method, pc, stored_zero):
    """A problem whose diagonal entry k is missing (or a stored zero) cannot have its Jacobi,
    ILU(0) or 1-row block-Jacobi preconditioner: it stops at once with a breakdown naming the
    preconditioner and row k; the problems beside it are solved."""
    rng = _seed_rng()
    n = int(rng.integers(5, 40))
    k = int(rng.integers(0, n))
    T = sp.diags([-1.0, 4.0, -1.0], [-1, 0, 1], shape=(n, n), format="lil")
    T[k, k] = 0.0
    B = sp.csr_array(T.tocsr())
    if not stored_zero:
        B.eliminate_zeros()
    good = gpusolve.laplace(int(rng.integers(3, 12)), 2)
    mats = [good, B, good]
    bs = [rng.standard_normal(A.shape[0]) for A in mats]
    xs, info = gpusolve.batch_solve(mats, bs, method=method, precond=pc, rtol=1e-8,
                                    block=1, agglomerate=False)
    p = info.problems[1]
    assert not info.converged and info.n_converged == 2
    assert p.reason == "diverged_breakdown" and not p.converged and p.iterations == 0, p
    assert p.detail_row == k, (p.detail_row, k)
    prefix = {"jacobi": "Jacobi", "ilu0": "ILU(0)", "block-jacobi": "block-Jacobi"}[pc]
    assert p.detail.startswith(prefix), p.detail
    if pc != "block-jacobi":
        assert "diagonal" in p.detail, p.detail
    for i in (0, 2):
        q = info.problems[i]
        assert q.converged and q.detail_row == -1, (i, q.reason, q.detail)
        assert np.linalg.norm(bs[i] - good @ xs[i]) <= 10 * 1e-8 * np.linalg.norm(bs[i])


@pytest.mark.gpu
@pytest.mark.parametrize("method", METHODS)
def test_batch_maxiter_has_no_detail_row(method):
    A = gpusolve.laplace(30, 30)
    b = np.ones(A.shape[0])
    xs, info = gpusolve.batch_solve([A], [b], method=method, precond="ilu0", maxiter=2)
    p = info.problems[0]
    assert p.reason == "diverged_maxit" and 0 < p.iterations <= 2 and p.detail_row == -1, p
