#!/usr/bin/env python3
"""tests/pyamg_iterations.py: reference results of PyAMG's smoothed aggregation (SA) AMG.

Writes tests/data/pyamg_iterations.tsv, which gpusolve's AMG suite and benchmarks compare against:
PyAMG's iterations, hierarchy (levels, rows per level, complexities) and times with the settings
of our AMG preconditioner (precond/amg_impl.h):

  strength      ('symmetric', {'theta': THETA}), THETA in THETAS (0.0, 0.08):
                a_ij strong when |a_ij| >= theta sqrt(|a_ii a_jj|)
  aggregate     'standard' (PyAMG's greedy aggregation; ours is the parallel MIS(2) aggregation
                of amg_impl.h, so the aggregates differ and counts agree only roughly)
  smooth        ('jacobi', {'omega': 4/3}): P = (I - (4/3) / rho(D^-1 A) D^-1 A) T
  B             ones (improve_candidates=None: PyAMG's default would relax B first)
  R             P^T (symmetry='symmetric', also for the nonsymmetric systems, as ours)
  max_coarse    1000 (our default coarse size), max_levels 20, coarse_solver 'pinv'
  cycle         V, one pre- and one post-smoothing step, the same smoother on both sides:
    jacobi      x += W_l D_l^-1 r with W_l = (4/3) / rho(D_l^-1 A_l) on each level l, rho the
                very estimate (pyamg.util.linalg.approximate_spectral_radius of D_l^-1 A_l) that
                PyAMG's prolongation smoothing of level l used (recorded by wrapping the
                function during the setup): amg_impl.h's omega of step 5. Passed to PyAMG's
                change_smoothers as one ('jacobi', {'omega': W_l, 'withrho': False,
                'iterations': 1}) tuple per level (withrho=True would divide by a second,
                different estimate: see "rhs" below for why that matters).
    l1-jacobi   x += D_l1^-1 r, d_l1_i = sum_j |a_ij| (Baker, Falgout, Kolev and Yang 2011, on
                one process), no weight. PyAMG has no l1-Jacobi (its 'jacobi' always uses
                diag(A)), so each level's presmoother and postsmoother are replaced by a function
                (A, x, b) -> x += r / d_l1, which is how PyAMG's cycle calls its smoothers.
  Krylov        x0 = 0, tol 1e-8, at most MAXITER = 500 iterations:
                M = one V-cycle from 0 (vcycle(): ml.aspreconditioner() less its residual
                norms), the Krylov methods of pyamg.krylov, as ml.solve(accel=...) runs them:
    cg          SPD systems: pyamg.krylov.cg (test ||r|| < tol ||b||).
    bicgstab    nonsymmetric: pyamg.krylov.bicgstab (right
                preconditioned, test on the true ||r|| < tol ||b|| after each full iteration;
                gs_solve also tests the half step, which never changes the count: ||r|| <= ||s||)
    gmres       nonsymmetric, restart 30: ml.solve(accel='gmres') would precondition on the left
                (test on ||M r||) and not restart, so, as tests/scipy_iterations.py does for
                gs_solve's right-preconditioned GMRES, pyamg.krylov.gmres (modified Gram-Schmidt)
                runs without M on A M^-1, restart 30,
                ceil(500 / 30) cycles, and x = M^-1 u. Its residual is the true one.
  rhs           "ones": b = A * ones (as tests/scipy_iterations.py), and "mod7": b_i = (i mod 7)
                - 3. With "ones" and the jacobi smoother the V-cycle is an exact solver whenever
                every node is aggregated and the coarsest solve is exact: the first presmoothing
                step leaves the error (I - W D^-1 A) 1 = P s (s_J = sqrt(|aggregate J|), T s = 1),
                which the coarse correction removes, so the count is 1; a weight 0.1% off the
                prolongation's one gives 6 to 9 instead (Laplacians). Our AMG gets 1 there
                only when it smooths with the rho of its prolongation; the "mod7" rows (not
                sensitive to that: 12 on laplace2d5_64 for weights 0 to 5% off) are the ones
                to compare convergence and to benchmark with.
  iterations    len(residuals) - 1: the Krylov iterations (GMRES: inner iterations, checked
                against its count of products); converged: PyAMG's flag 0 within MAXITER.
  setup_s       the hierarchy (smoothed_aggregation_solver; built once per theta and shared by
                both smoothers' and both right-hand sides' rows) plus that smoother's own setup;
                solve_s the Krylov solve. Wall seconds with one BLAS thread, the levels'
                matrices turned from PyAMG's BSR (1 x 1 blocks) into CSR, and the coarse
                pseudo-inverse (PyAMG computes it at its first use) in the setup: compare only
                on the same machine.
The spectral radius estimates start from a random vector: NumPy's generator is seeded (SEED)
before each hierarchy, so the table is reproducible.

Explicit zeros are dropped from A before the setup (eliminate_zeros; A is numerically the same):
PyAMG's symmetric strength keeps a stored zero as strong when theta = 0, ours does not.

Systems: the "spd" category of the matrix folder (--matrices, default $GS_MATRIX_DIR, else
tests/data/matrices; MANIFEST.tsv), the Laplacians of gs_gen_laplace (tests/scipy_iterations.py's
laplace(), built here with NumPy: laplace2d5_64, laplace3d7_20, laplace3d27_20) with cg, and
`gpusolve gen convdiff --grid 64x64 --peclet 10` (pipe field; built here in Python exactly as
io/gen.c, and compared entry for entry with the CLI's output when --gpusolve exists) with
bicgstab and gmres.

Elasticity (issue 34, a near-null space of k vectors): PyAMG's gallery.linear_elasticity((N, N))
(plane strain Q1, 2 N^2 unknowns interleaved x, y; gs_gen_elasticity (`gpusolve gen elasticity`) builds the same system
for the C suites, --check-elasticity FILE compares one of its matrices with PyAMG's), with cg,
as "elasticity2d_N_B[_mis2]":
  B             rbm: the three rigid-body modes PyAMG returns (our near_null=PATH or
                gs_precond_set_near_null_space, with block=2); ones: B = ones (ours: block=2
                alone, the default vector; PyAMG propagates its coarse B = R where ours keeps
                ones on the coarse levels, the same on two levels)
  A             BSR with 2 x 2 blocks: strength and aggregation of the nodes, the strength of
                the Frobenius norms of the blocks (PyAMG's BSR rule is amg_impl.h's NODES);
                PyAMG's max_coarse counts nodes (block rows), so it gets 1000 / k with k
                vectors (1000 rows on the coarse levels, as ours)
  aggregate     standard, or with "_mis2" our MIS(2) aggregation (amg_impl.h rules 3a-d,
                mis2_aggregation() below, in place of PyAMG's standard_aggregation): the same
                aggregates as ours, which isolates the aggregation from the rest. MIS(2)
                aggregates are larger (elasticity 50 x 50: 198 against 289), which costs the
                rigid-body modes more than the constant (PyAMG itself: 14 iterations with its
                aggregates, 20 with ours).
--large adds the large systems (their rows follow a "# large" comment line in the table, and a
run without --large keeps them): G3_circuit (--large-matrices, default /work/shared/matrices-
large, gzip), laplace3d27_100 (27-point 100^3) and laplace2d5_2000 (5-point 2000 x 2000).

Usage: python3 tests/pyamg_iterations.py [--matrices DIR] [--out FILE] [--large]
                                         [--large-matrices DIR] [--only NAME,...] [--gpusolve EXE]
       python3 tests/pyamg_iterations.py --check-elasticity FILE
With --only, only those systems are recomputed and the other rows of --out are kept.
Needs pyamg (pip install pyamg, which brings numpy and scipy). Progress goes to stderr.
"""

import argparse
import csv
import datetime
import math
import os
import platform
import subprocess
import sys
import tempfile
import time
import warnings

# One BLAS thread: on a small machine OpenBLAS's threads make the many short dot products of the
# Krylov loops 10 to 100 times slower, and erratic (timed: 0.3 to 2 s for one solve).
for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import numpy as np  # noqa: E402 (after the thread settings)
import scipy  # noqa: E402
import scipy.io  # noqa: E402
import scipy.sparse as sp  # noqa: E402
import scipy.sparse.linalg as sla  # noqa: E402

try:
    import pyamg
    from pyamg.krylov import gmres as pyamg_gmres
    from pyamg.relaxation.smoothing import change_smoothers
    from pyamg.util.linalg import approximate_spectral_radius
    import pyamg.aggregation.smooth as pyamg_smooth
    import pyamg.aggregation.aggregation as pyamg_aggregation
except ImportError:
    sys.exit("pyamg_iterations.py: needs PyAMG (pip install pyamg)")

HERE = os.path.dirname(os.path.abspath(__file__))
THETAS = (0.0, 0.08)
OMEGA = 4.0 / 3.0
MAX_COARSE = 1000
MAX_LEVELS = 20
TOL = 1e-8
MAXITER = 500
RESTART = 30
SEED = 20240601
SMOOTHERS = ("jacobi", "l1-jacobi")
LARGE_MARK = "# large systems (--large)"
RHS = ("ones", "mod7")
COLUMNS = ("matrix", "method", "smoother", "theta", "iterations", "converged", "levels",
           "operator_complexity", "grid_complexity", "rows_per_level", "setup_s", "solve_s", "rhs")


def log(msg):
    print(msg, file=sys.stderr, flush=True)


# ---- systems ----------------------------------------------------------------------------------

def laplace(nx, ny, nz, stencil):
    """gs_gen_laplace's Laplacian (tests/scipy_iterations.py laplace(), vectorized): Dirichlet
    boundaries, diagonal = number of neighbours in the full stencil, off-diagonals -1, index
    x + nx (y + ny z)."""
    rng = (-1, 0, 1)
    offs = [(dx, dy, dz) for dx in rng for dy in rng for dz in rng if (dx, dy, dz) != (0, 0, 0)]
    if stencil in (3, 5, 7):
        offs = [o for o in offs if abs(o[0]) + abs(o[1]) + abs(o[2]) == 1]
    if nz == 1:
        offs = [o for o in offs if o[2] == 0]
    if ny == 1:
        offs = [o for o in offs if o[1] == 0]
    n = nx * ny * nz
    idx = np.arange(n, dtype=np.int64)
    x, y, z = idx % nx, (idx // nx) % ny, idx // (nx * ny)
    rows, cols, vals = [idx], [idx], [np.full(n, float(len(offs)))]
    for dx, dy, dz in offs:
        X, Y, Z = x + dx, y + dy, z + dz
        ok = (X >= 0) & (X < nx) & (Y >= 0) & (Y < ny) & (Z >= 0) & (Z < nz)
        rows.append(idx[ok])
        cols.append((X + nx * (Y + ny * Z))[ok])
        vals.append(np.full(int(ok.sum()), -1.0))
    A = sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                      shape=(n, n))
    A.sort_indices()
    return A


def check_laplace():
    """The vectorized laplace() against tests/scipy_iterations.py's loop version."""
    sys.path.insert(0, HERE)
    try:
        import scipy_iterations as ref
    finally:
        sys.path.pop(0)
    for args in ((7, 5, 1, 5), (5, 4, 3, 7), (5, 4, 3, 27), (6, 1, 1, 3)):
        a, b = laplace(*args), ref.laplace(*args)
        if (a != b).nnz or a.nnz != b.nnz:
            sys.exit(f"pyamg_iterations.py: laplace{args} differs from scipy_iterations.py's")


def convdiff(nx, ny, nz, peclet, field="pipe"):
    """gs_gen_convdiff (io/gen.c) for the pipe and rotate fields, operation for operation:
    upwind convection-diffusion, diagonal 2 dims + sum |c_k|, -1 - |c_k| upstream, -1 else."""
    dims = 3 if nz > 1 else 2
    hx, hy = 1.0 / (nx + 1.0), 1.0 / (ny + 1.0)
    stride = (1, nx, nx * ny)
    rows, cols, vals = [], [], []
    row = 0
    for zz in range(nz):
        for yy in range(ny):
            for xx in range(nx):
                pos, ln = (xx, yy, zz), (nx, ny, nz)
                px, py = (xx + 1) * hx, (yy + 1) * hy
                v = [0.0, 0.0, 0.5 if dims == 3 else 0.0]
                if field == "pipe":
                    r0, r1, r = 0.3, 0.9, math.sqrt(px * px + py * py)
                    if r0 < r < r1:
                        s = 4.0 * (r - r0) * (r1 - r) / ((r1 - r0) * (r1 - r0))
                        v[0] = -s * py / r
                        v[1] = s * px / r
                elif field == "rotate":
                    v[0] = -2.0 * (py - 0.5)
                    v[1] = 2.0 * (px - 0.5)
                else:
                    raise ValueError(field)
                c = [0.0, 0.0, 0.0]
                diag = 2.0 * dims
                for k in range(3):
                    c[k] = peclet * v[k]
                    diag += abs(c[k])
                for s_ in range(-3, 4):
                    k = -s_ - 1 if s_ < 0 else s_ - 1
                    d = -1 if s_ < 0 else 1
                    if s_ != 0 and (pos[k] + d < 0 or pos[k] + d >= ln[k]):
                        continue
                    rows.append(row)
                    if s_ == 0:
                        cols.append(row)
                        vals.append(diag)
                    else:
                        up = (d < 0 and c[k] > 0.0) or (d > 0 and c[k] < 0.0)
                        cols.append(row + d * stride[k])
                        vals.append(-1.0 - abs(c[k]) if up else -1.0)
                row += 1
    n = nx * ny * nz
    A = sp.csr_matrix((vals, (rows, cols)), shape=(n, n))
    A.sort_indices()
    return A


def check_convdiff(A, exe, grid, peclet):
    """A against `gpusolve gen convdiff` (skipped, with a note, when exe is missing)."""
    if not (exe and os.path.isfile(exe) and os.access(exe, os.X_OK)):
        log(f"convdiff: {exe} not found: the Python generator is not checked against the CLI")
        return
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "convdiff.mtx")
        subprocess.run([exe, "gen", "convdiff", "--grid", grid, "--peclet", repr(peclet),
                        "-o", path], check=True)
        B = sp.csr_matrix(scipy.io.mmread(path))
    B.sum_duplicates()
    B.sort_indices()
    same = (A.shape == B.shape and A.nnz == B.nnz and np.array_equal(A.indptr, B.indptr)
            and np.array_equal(A.indices, B.indices) and np.array_equal(A.data, B.data))
    if not same:
        sys.exit(f"pyamg_iterations.py: convdiff {grid} differs from `{exe} gen convdiff`")
    log(f"convdiff {grid}: identical to `gpusolve gen convdiff` ({A.nnz} entries)")


def elasticity(nx):
    """PyAMG's 2D linear elasticity on nx x nx nodes: (A as CSR, explicit zeros dropped, the
    rigid-body modes B, n x 3)."""
    A, B = pyamg.gallery.linear_elasticity((nx, nx), format="csr")
    A = sp.csr_matrix(A)
    A.eliminate_zeros()
    A.sort_indices()
    return A, np.asarray(B, dtype=np.float64)


def check_elasticity(path):
    """A matrix file of gs_gen_elasticity (`gpusolve gen elasticity`) (2 N^2 rows) against PyAMG's: the same pattern,
    values to rounding (1e-14 of the largest)."""
    B = read_mtx(path)
    nx = int(round(math.sqrt(B.shape[0] / 2)))
    A, _ = elasticity(nx)
    diff = abs(A - B).max() if A.shape == B.shape else float("inf")
    same = (A.shape == B.shape and A.nnz == B.nnz and np.array_equal(A.indptr, B.indptr)
            and np.array_equal(A.indices, B.indices) and diff <= 1e-14 * abs(A).max())
    if not same:
        sys.exit(f"pyamg_iterations.py: {path} is not PyAMG's elasticity {nx} x {nx} (max "
                 f"difference {diff:g})")
    log(f"{path}: PyAMG's elasticity {nx} x {nx} ({A.nnz} entries, max difference {diff:.3g})")


def read_mtx(path):
    A = sp.csr_matrix(scipy.io.mmread(path)).astype(np.float64)
    A.sum_duplicates()
    A.sort_indices()
    return A


def spd_systems(matdir, ext):
    """(name, loader) of the "spd" matrices of matdir's MANIFEST.tsv, files NAME + ext."""
    with open(os.path.join(matdir, "MANIFEST.tsv")) as f:
        for row in csv.DictReader(f, delimiter="\t"):
            if row["category"] == "spd":
                path = os.path.join(matdir, row["name"] + ext)
                yield row["name"], (lambda p=path: read_mtx(p))


def nns_system(nx, b, agg):
    """An elasticity system with its near-null space: (A, B, block, aggregation)."""
    A, rbm = elasticity(nx)
    B = rbm if b == "rbm" else np.ones((A.shape[0], 1))
    return A, B, 2, ("mis2" if agg else "standard")


def systems(args):
    """(name, methods, loader, large) in table order; a loader returns A, or (A, B, block,
    aggregation) for a near-null-space system."""
    out = [(n, ("cg",), ld, False) for n, ld in spd_systems(args.matrices, ".mtx")]
    out += [("laplace2d5_64", ("cg",), lambda: laplace(64, 64, 1, 5), False),
            ("laplace3d7_20", ("cg",), lambda: laplace(20, 20, 20, 7), False),
            ("laplace3d27_20", ("cg",), lambda: laplace(20, 20, 20, 27), False)]

    def cd():
        A = convdiff(64, 64, 1, 10.0)
        check_convdiff(A, args.gpusolve, "64x64", 10.0)
        return A
    out.append(("convdiff2d_64_pe10", ("gmres", "bicgstab"), cd, False))
    for nx in (50, 100):
        for agg in ("", "_mis2"):
            for b in ("rbm", "ones"):
                out.append((f"elasticity2d_{nx}_{b}{agg}", ("cg",),
                            lambda nx=nx, b=b, agg=agg: nns_system(nx, b, agg), False))
    if args.large:
        out += [(n, ("cg",), ld, True) for n, ld in spd_systems(args.large_matrices, ".mtx.gz")]
        k = args.large_2d
        out += [("laplace3d27_100", ("cg",), lambda: laplace(100, 100, 100, 27), True),
                (f"laplace2d5_{k}", ("cg",), lambda: laplace(k, k, 1, 5), True)]
    return out


# ---- AMG ----------------------------------------------------------------------------------------

def amg_hash(i):
    """gs_amg_hash (precond/amg_impl.h) of a uint64 array of node numbers."""
    m = np.uint64(0xFFFFFFFF)
    h = (i * np.uint64(0x9E3779B1)) & m
    h ^= h >> np.uint64(16)
    h = (h * np.uint64(0x85EBCA6B)) & m
    h ^= h >> np.uint64(13)
    h = (h * np.uint64(0xC2B2AE35)) & m
    h ^= h >> np.uint64(16)
    return h


def amg_key(rank, i):
    """gs_amg_key: (rank << 62) | ((hash(i) >> 1) << 31) | i."""
    return ((np.asarray(rank, dtype=np.uint64) << np.uint64(62))
            | ((amg_hash(i) >> np.uint64(1)) << np.uint64(31)) | i)


def row_max(S, v, init):
    """max(init_i, max of v_j over row i's columns j of S), vectorized."""
    out = init.copy()
    nz = np.diff(S.indptr) > 0
    if S.nnz:
        m = np.maximum.reduceat(v[S.indices], S.indptr[:-1][nz])
        out[nz] = np.maximum(out[nz], m)
    return out


def mis2_aggregation(C):
    """Our aggregation (precond/amg_impl.h rules 3a-d: MIS(2) with hashed priorities, then the
    roots' neighbours, their neighbours, singletons) of the strength matrix C (its off-diagonal
    entries are the strong ones), as PyAMG's standard_aggregation returns it: (AggOp, roots)."""
    C = sp.csr_matrix(C)
    C.eliminate_zeros()
    n = C.shape[0]
    coo = C.tocoo()
    off = coo.row != coo.col
    S = sp.csr_matrix((np.ones(int(off.sum())), (coo.row[off], coo.col[off])), shape=(n, n))
    S.sort_indices()
    iso = np.diff(S.indptr) == 0
    # Ns restricted to non-isolated nodes, for the rounds
    Sc = S.tocoo()
    keep = ~iso[Sc.col] & ~iso[Sc.row]
    Sn = sp.csr_matrix((np.ones(int(keep.sum())), (Sc.row[keep], Sc.col[keep])), shape=(n, n))
    Sn.sort_indices()
    idx = np.arange(n, dtype=np.uint64)
    state = np.where(iso, 0, 1).astype(np.uint64)  # OUT 0, UNDECIDED 1, IN 2
    while np.any(state == 1):
        key = amg_key(state, idx)
        t1 = row_max(Sn, key, key)
        t2 = row_max(Sn, t1, t1)
        und = (state == 1) & ~iso
        win = und & (t2 == key)
        lose = und & ~win & ((t2 >> np.uint64(62)) == 2)
        if not (win.any() or lose.any()):
            sys.exit("mis2_aggregation: a round decided no node")
        state[win] = 2
        state[lose] = 0
    roots = np.flatnonzero(state == 2)
    agg = -np.ones(n, dtype=np.int64)
    agg[roots] = np.arange(len(roots))
    # b: the root neighbour of largest key
    rootkey = np.where(state == 2, amg_key(2, idx), np.uint64(0))
    best = row_max(S, rootkey, np.zeros(n, dtype=np.uint64))
    b = (state != 2) & ~iso & (best > 0)
    agg[b] = agg[(best[b] & np.uint64(0x7FFFFFFF)).astype(np.int64)]
    # c: the neighbour (rank-0 key) of largest key that has an aggregate, as b left them
    prev = agg.copy()
    has = np.where(prev >= 0, amg_key(0, idx) + np.uint64(1), np.uint64(0))
    best = row_max(S, has, np.zeros(n, dtype=np.uint64))
    c = ~iso & (prev < 0) & (best > 0)
    agg[c] = prev[((best[c] - np.uint64(1)) & np.uint64(0x7FFFFFFF)).astype(np.int64)]
    # d: singletons after the roots
    d = ~iso & (agg < 0)
    agg[d] = len(roots) + np.arange(int(d.sum()))
    na = int(agg.max()) + 1 if n else 0
    rows = np.flatnonzero(agg >= 0)
    AggOp = sp.csr_matrix((np.ones(len(rows)), (rows, agg[rows])), shape=(n, na))
    return AggOp, roots


def hierarchy(A, theta, nns=None):
    """PyAMG's SA hierarchy with our settings, without smoothers (set by set_smoother), and
    the rho(D_l^-1 A_l) that its Jacobi prolongation smoothing estimated on each level l (from
    pyamg.aggregation.smooth's call of approximate_spectral_radius, recorded on the way).
    nns = (B, block, aggregation): A as BSR of block x block (strength of the block norms), B
    the near-null space, our MIS(2) aggregation for "mis2"."""
    rhos = []
    B = None
    max_coarse = MAX_COARSE
    agg_fn = pyamg_aggregation.standard_aggregation
    if nns is not None:
        B, block, aggregation = nns
        if block > 1:  # nodes of block unknowns on level 0, of B's columns below
            A = A.tobsr(blocksize=(block, block))
        if aggregation == "mis2":
            agg_fn = mis2_aggregation
        # PyAMG stops at max_coarse block rows, ours at coarse_size rows: with k vectors the
        # coarse levels have k rows a node
        max_coarse = MAX_COARSE // B.shape[1]

    def record(M, *a, **k):
        r = approximate_spectral_radius(M, *a, **k)
        rhos.append(float(r))
        return r
    np.random.seed(SEED)
    pyamg_smooth.approximate_spectral_radius = record
    saved_agg = pyamg_aggregation.standard_aggregation
    pyamg_aggregation.standard_aggregation = agg_fn
    try:
        with warnings.catch_warnings():  # "less target vectors than blocksize" for B = ones
            warnings.simplefilter("ignore")
            ml = pyamg.smoothed_aggregation_solver(
                A, B=B, symmetry="symmetric", strength=("symmetric", {"theta": theta}),
                aggregate="standard", smooth=("jacobi", {"omega": OMEGA}), presmoother=None,
                postsmoother=None, improve_candidates=None, max_levels=MAX_LEVELS,
                max_coarse=max_coarse, coarse_solver="pinv", keep=False)
    finally:
        pyamg_smooth.approximate_spectral_radius = approximate_spectral_radius
        pyamg_aggregation.standard_aggregation = saved_agg
    # PyAMG keeps the coarse levels' A, P, R in BSR of 1 x 1 blocks, whose Jacobi and products
    # are 3 to 5 times slower than CSR's; CSR makes its times a fairer CPU reference
    for lvl in ml.levels:
        for attr in ("A", "P", "R"):
            if hasattr(lvl, attr) and sp.issparse(getattr(lvl, attr)):
                setattr(lvl, attr, getattr(lvl, attr).tocsr())
    # PyAMG computes the coarse pseudo-inverse at its first use: do it now, as setup time
    ml.coarse_solver(ml.levels[-1].A, np.zeros(ml.levels[-1].A.shape[0]))
    if len(rhos) != len(ml.levels) - 1:
        sys.exit(f"pyamg_iterations.py: {len(rhos)} spectral radius estimates for "
                 f"{len(ml.levels)} levels (PyAMG's smooth.py changed?)")
    return ml, rhos


def set_smoother(ml, name, rhos):
    """Installs `name` as the pre- and postsmoother of every level but the coarsest; returns the
    per-level weights."""
    levels = ml.levels[:-1]
    if name == "jacobi":
        ws = [OMEGA / r for r in rhos]
        sm = [("jacobi", {"omega": w, "withrho": False, "iterations": 1}) for w in ws]
        change_smoothers(ml, sm, sm)
        return ws
    # l1-jacobi: PyAMG's cycle calls presmoother(A, x, b) and expects x updated in place
    change_smoothers(ml, None, None)  # resets ml.symmetric_smoothing (True: pre = post)
    for lvl in levels:
        A = lvl.A.tocsr()
        dinv = 1.0 / np.asarray(abs(A).sum(axis=1)).ravel()

        def l1(A_, x, b, A=A, dinv=dinv):
            x += dinv * (b - A @ x)
        lvl.presmoother = lvl.postsmoother = l1
    return [1.0] * len(levels)


def vcycle(ml, A):
    """M: one V-cycle from x = 0, as a LinearOperator. PyAMG's ml.aspreconditioner() runs
    ml.solve(b, maxiter=1), which also computes ||b - A x|| before and after the cycle (two
    extra products with A); this calls the cycle itself (MultilevelSolver.__solve), the same M
    without them, so that solve_s times the AMG and the Krylov method only."""
    cyc = getattr(ml, "_MultilevelSolver__solve", None)
    if cyc is None or len(ml.levels) == 1:
        return ml.aspreconditioner(cycle="V")

    def mv(b):
        b = np.ravel(b)
        x = np.zeros_like(b)
        cyc(0, x, b, "V", 1)
        return x
    return sla.LinearOperator(A.shape, matvec=mv, rmatvec=mv, dtype=np.float64)


def solve(ml, A, b, method):
    """(iterations, converged, true relative residual) of `method` preconditioned by ml."""
    res = []
    x0 = np.zeros_like(b)
    M = vcycle(ml, A)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if method in ("cg", "bicgstab"):  # what ml.solve(accel=method) runs
            krylov = pyamg.krylov.cg if method == "cg" else pyamg.krylov.bicgstab
            x, info = krylov(A, b, x0=x0, tol=TOL, maxiter=MAXITER, M=M, residuals=res)
        else:  # right-preconditioned GMRES(30): pyamg.krylov.gmres on A M^-1, no M
            AM = sla.LinearOperator(A.shape, matvec=lambda u: A @ (M @ u), dtype=np.float64)
            u, info = pyamg_gmres(AM, b, x0=x0, tol=TOL, restart=RESTART,
                                  maxiter=-(-MAXITER // RESTART), orthog="mgs", residuals=res)
            x = M @ u
    its = len(res) - 1
    relres = float(np.linalg.norm(b - A @ x) / np.linalg.norm(b))
    return its, int(info == 0 and its <= MAXITER), relres


def rhs(A, kind):
    """b = A * ones ("ones", x = ones) or b_i = (i mod 7) - 3 ("mod7", 0-based i; as the "mod7"
    right-hand side of tests/scipy_iterations.py's LSQR rows)."""
    if kind == "ones":
        return A @ np.ones(A.shape[1])
    return (np.arange(A.shape[0]) % 7) - 3.0


def run_system(name, methods, A, nns=None):
    A = A.tocsr()
    A.eliminate_zeros()
    bs = {k: rhs(A, k) for k in RHS}
    rows = []
    for theta in THETAS:
        t0 = time.perf_counter()
        ml, rhos = hierarchy(A, theta, nns)
        t_h = time.perf_counter() - t0
        nl = len(ml.levels)
        oc, gc = ml.operator_complexity(), ml.grid_complexity()
        sizes = ",".join(str(l.A.shape[0]) for l in ml.levels)
        log(f"{name:20s} theta {theta:<4g} hierarchy {t_h:7.2f} s: {nl} levels [{sizes}] "
            f"oc {oc:.3f} gc {gc:.3f} rho(D^-1 A) " + " ".join(f"{r:.5f}" for r in rhos))
        for sm in SMOOTHERS:
            t0 = time.perf_counter()
            set_smoother(ml, sm, rhos)
            setup = t_h + time.perf_counter() - t0
            for kind in RHS:
                for method in methods:
                    t0 = time.perf_counter()
                    its, conv, relres = solve(ml, A, bs[kind], method)
                    t_s = time.perf_counter() - t0
                    log(f"{name:20s} {method:8s} {sm:9s} theta {theta:<4g} {kind:4s} its "
                        f"{its:4d} conv {conv} relres {relres:.2e} setup {setup:.2f} s solve "
                        f"{t_s:.2f} s")
                    rows.append([name, method, sm, f"{theta:g}", str(its), str(conv), str(nl),
                                 f"{oc:.4f}", f"{gc:.4f}", sizes, f"{setup:.3f}", f"{t_s:.3f}",
                                 kind])
    rows.sort(key=lambda r: RHS.index(r[-1]))  # stable: the "ones" rows first
    return rows


# ---- table --------------------------------------------------------------------------------------

def read_table(path):
    """{matrix: (large, rows)} in file order, from an existing table."""
    kept = {}
    if not os.path.exists(path):
        return kept
    large = False
    with open(path) as f:
        for line in f:
            if line.startswith(LARGE_MARK):
                large = True
            if line.startswith("#") or line.startswith("matrix\t") or not line.strip():
                continue
            cols = line.rstrip("\n").split("\t")
            kept.setdefault(cols[0], (large, []))[1].append(cols)
    return kept


def write_table(path, table, args):
    today = datetime.date.today().isoformat()
    with open(path, "w") as f:
        f.write(f"# PyAMG {pyamg.__version__}, SciPy {scipy.__version__}, NumPy {np.__version__}, "
                f"Python {platform.python_version()}; written {today} by "
                f"tests/pyamg_iterations.py (read its docstring).\n"
                f"# smoothed_aggregation_solver: strength ('symmetric', theta), aggregate "
                f"'standard', smooth ('jacobi', omega 4/3 / rho(D^-1 A)), B = ones, "
                f"improve_candidates None, R = P^T, max_coarse {MAX_COARSE}, max_levels "
                f"{MAX_LEVELS}, coarse_solver 'pinv'; explicit zeros dropped.\n"
                f"# V-cycle, 1 pre + 1 post sweep: jacobi = x += W_l D^-1 r, W_l = (4/3) / "
                f"rho(D_l^-1 A_l) per level; l1-jacobi = x += D_l1^-1 r, d_l1_i = sum_j |a_ij|.\n"
                f"# rhs ones: b = A*ones (jacobi: the V-cycle is exact there, 1 iteration, "
                f"where every node is aggregated); mod7: b_i = (i mod 7) - 3, the rows to "
                f"compare convergence with.\n"
                f"# x0 = 0, tol {TOL:g} (||r|| < tol ||b||), maxiter {MAXITER}; "
                f"cg, bicgstab: pyamg.krylov's with M = one V-cycle; gmres: restart {RESTART}, "
                f"right-preconditioned (pyamg.krylov.gmres on A M^-1), inner iterations.\n"
                f"# elasticity2d_N_B[_mis2]: PyAMG's linear_elasticity((N, N)), BSR 2 x 2, "
                f"B = rbm (its rigid-body modes) or ones, max_coarse "
                f"{MAX_COARSE} / k; _mis2: our MIS(2) aggregates in place of 'standard' (the "
                f"docstring says why).\n"
                f"# matrices from {os.path.abspath(args.matrices)}; setup_s, solve_s: wall "
                f"seconds on {platform.machine()} ({os.cpu_count()} cores), hierarchy time "
                f"shared by both smoothers' rows.\n")
        f.write("\t".join(COLUMNS) + "\n")
        for large in (False, True):
            names = [n for n, (lg, _) in table.items() if lg == large]
            if large and names:
                f.write(f"{LARGE_MARK}: " + ", ".join(names) + " (written by a run with "
                        "--large, kept by the runs without it).\n")
            for n in names:
                for cols in table[n][1]:
                    f.write("\t".join(cols) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--matrices", default=os.environ.get("GS_MATRIX_DIR") or
                    os.path.join(HERE, "data", "matrices"))
    ap.add_argument("--large-matrices", default="/work/shared/matrices-large")
    ap.add_argument("--out", default=os.path.join(HERE, "data", "pyamg_iterations.tsv"))
    ap.add_argument("--large", action="store_true", help="also the large systems")
    ap.add_argument("--large-2d", type=int, default=2000,
                    help="grid side of the large 2D 5-point Laplacian (default 2000)")
    ap.add_argument("--only", default="", help="comma-separated systems to recompute")
    ap.add_argument("--gpusolve", default=os.environ.get("GS_GPUSOLVE") or
                    os.path.join(HERE, "..", "build", "apps", "gpusolve"),
                    help="the CLI to check the convdiff generator against")
    ap.add_argument("--check-elasticity", default="", metavar="FILE",
                    help="compare a matrix file of gpusolve gen elasticity with PyAMG's and exit")
    args = ap.parse_args()
    if args.check_elasticity:
        check_elasticity(args.check_elasticity)
        return
    only = set(filter(None, args.only.split(",")))
    check_laplace()

    table = read_table(args.out)
    for name, methods, load, large in systems(args):
        if only and name not in only:
            continue
        t0 = time.perf_counter()
        A, nns = load(), None
        if isinstance(A, tuple):
            A, nns = A[0], A[1:]
        log(f"{name:20s} n {A.shape[0]} nnz {A.nnz} (loaded in {time.perf_counter() - t0:.1f} s)")
        table[name] = (large, run_system(name, methods, A, nns))
        if large:  # keep what is done if a later large system is interrupted
            write_table(args.out, table, args)
    write_table(args.out, table, args)
    log(f"wrote {sum(len(r) for _, r in table.values())} rows to {args.out}")


if __name__ == "__main__":
    main()
