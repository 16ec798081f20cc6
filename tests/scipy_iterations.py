#!/usr/bin/env python3
"""tests/scipy_iterations.py: reference iteration counts of SciPy's Krylov solvers.

Writes tests/data/scipy_iterations.tsv and tests/data/scipy_lsqr.tsv (with the solutions in
tests/data/scipy_lsqr/), which tests/test_solvers.c compares gs_solve against.

The systems: every matrix of the "spd", "nonsymmetric" and "rectangular" categories of the
matrix folder (--matrices, default $GS_MATRIX_DIR, else tests/data/matrices; its MANIFEST.tsv)
plus generated Laplacians, with b = A * ones, x0 = 0, rtol = 1e-8, atol = 0, so that both codes
stop when ||r|| <= 1e-8 ||b|| (cgnr: ||A^T r|| <= 1e-8 ||A^T b||).

  cg                  SPD matrices and Laplacians; preconditioners none, jacobi, ilu0, ic0
  pipecg              the same systems against SciPy's cg (pipelined CG computes CG's iterates
                      in exact arithmetic); its variants below run gs_solve's pipelined CG, so
                      a row is "stable" only where the pipelining itself does not move the
                      count (it does on the ill-conditioned systems: see pipecg() below)
  bicgstab, gmres(30) nonsymmetric matrices and Laplacians; none, jacobi, ilu0
  bicg                nonsymmetric matrices and Laplacians; none, jacobi (and ic0 on the
                      Laplacians): the preconditioners with M^T = M, the ones gs_solve's BiCG
                      takes (it applies M^-T as M^-1)
  cgnr                nonsymmetric and rectangular matrices and Laplacians; SciPy's cg on the
                      normal equations A^T A x = A^T b (a LinearOperator, never formed)
  lsqr                rectangular matrices (scipy_lsqr.tsv): SciPy's lsqr with atol = btol =
                      LSQR_RTOL, conlim = 0 (gs_solve's LSQR has no condition limit), on two
                      right-hand sides: b = A * ones (consistent: LSQR's test on ||r||) and
                      b_i = (i mod 7) - 3 (inconsistent for the tall matrices: its test on
                      ||A^T r||); the solution x is written next to the table
  jacobi              a LinearOperator r -> r / diag(A) (skipped where a diagonal entry is 0)
  ilu0, ic0           SciPy has neither (spilu is ILUT): ILU(0) and IC(0) are computed here in
                      NumPy (the unique factors with the pattern of A, resp. tril(A), that match
                      A on that pattern: what cuSPARSE csrilu02 / csric02 compute) and applied
                      with spsolve_triangular. Those rows say reference "numpy-ilu0/ic0".

How counts are taken, to match gs_solve's definition of an iteration:
  cg        loop passes (callbacks): SciPy tests ||r|| at the top of a pass, gs_solve after the
            update, the same count.
  pipecg    SciPy's cg count; the variants count gs_solve's iterations, restarts included.
  bicgstab  matrix-vector products / 2, rounded up: an iteration that converges at its half
            step counts as one, as in gs_solve (SciPy returns from it without calling back).
  gmres     inner (Arnoldi) iterations, counted with callback_type='pr_norm'. gs_solve
            preconditions on the right (its monitored residual is the true one) and SciPy's M
            on the left; so with a preconditioner the reference runs SciPy's gmres without M on
            the operator A M^-1 (right-preconditioned GMRES(30)) and maps x = M^-1 u back.
  bicg      loop passes (callbacks), as cg.
  cgnr      loop passes of cg on A^T A. gs_solve runs CGLS (Saad's CGNR, Algorithm 8.4: the
            residual r = b - Ax is the recurrence, z = A^T r computed from it), the same
            iteration in exact arithmetic; the variants below run CGLS.
  lsqr      itn, the bidiagonalization steps.

Rounding. Krylov iteration counts on ill-conditioned systems depend on the order of summation
in dot products, which a GPU reduction does not share with NumPy. For each converged row the
script reruns the same algorithm as gs_solve (CG; BiCGSTAB; GMRES with classical Gram-Schmidt
and re-orthogonalization) with two other summation orders (exact math.fsum, or for GMRES's many
dots NumPy's on the reversed vectors; and blocks of 256 summed in reverse as a GPU tree might)
and records the smallest and largest count of the three
(SciPy's included; -1 when a variant did not converge). The test asks for the 5% agreement
where these agree within 2% ("stable"); elsewhere the count is rounding-chaotic (BiCGSTAB on
memplus, sherman5, ...) and the test asks for convergence or a detected breakdown (memplus with
Jacobi runs BiCGSTAB with r~^T r at 1e-17 of its terms, where an exact 0 is a matter of luck).
Rows where SciPy did not converge are recorded but not compared.

LSQR's solutions: the variants' x are compared with SciPy's, and the largest relative difference
is recorded (xspread); LSQR_RTOL = 1e-12 keeps it below 1e-8 on the shared rectangular matrices,
so that the test's 1e-6 on ||x - x_scipy|| / ||x_scipy|| is 100 times what rounding moves.

Usage: python3 tests/scipy_iterations.py [--matrices DIR] [--out FILE] [--rtol R]
                                         [--methods cg,bicg,...]
With --methods, only those methods are recomputed and the other rows of --out are kept.
Needs numpy and scipy (pip install scipy). Takes about ten minutes, most of it SciPy's GMRES
running to the iteration limit on the systems it cannot solve.
"""

import argparse
import csv
import math
import os
import sys
import time

import numpy as np
import scipy
import scipy.io
import scipy.sparse as sp
import scipy.sparse.linalg as sla

HERE = os.path.dirname(os.path.abspath(__file__))
MAXIT_CAP = 20000  # iteration limit of every run (SciPy's default 10 n, capped)
RESTART = 30
LSQR_RTOL = 1e-12  # atol = btol of the LSQR rows (see the docstring)


# ---- systems ----------------------------------------------------------------------------------

def laplace(nx, ny, nz, stencil):
    """The Laplacian of gs_gen_laplace (include/gpusolve/io.h): Dirichlet boundaries, diagonal
    = number of neighbours in the full stencil, off-diagonals -1, index x + nx (y + ny z)."""
    rng = (-1, 0, 1)
    offs = [(dx, dy, dz) for dx in rng for dy in rng for dz in rng if (dx, dy, dz) != (0, 0, 0)]
    if stencil in (3, 5, 7):
        offs = [o for o in offs if abs(o[0]) + abs(o[1]) + abs(o[2]) == 1]
    if nz == 1:
        offs = [o for o in offs if o[2] == 0]
    if ny == 1:
        offs = [o for o in offs if o[1] == 0]
    rows, cols, vals = [], [], []
    for z in range(nz):
        for y in range(ny):
            for x in range(nx):
                i = x + nx * (y + ny * z)
                rows.append(i)
                cols.append(i)
                vals.append(float(len(offs)))
                for dx, dy, dz in offs:
                    X, Y, Z = x + dx, y + dy, z + dz
                    if 0 <= X < nx and 0 <= Y < ny and 0 <= Z < nz:
                        rows.append(i)
                        cols.append(X + nx * (Y + ny * Z))
                        vals.append(-1.0)
    n = nx * ny * nz
    return sp.csr_matrix((vals, (rows, cols)), shape=(n, n))


def systems(matdir):
    with open(os.path.join(matdir, "MANIFEST.tsv")) as f:
        for row in csv.DictReader(f, delimiter="\t"):
            if row["category"] in ("spd", "nonsymmetric", "rectangular"):
                A = sp.csr_matrix(scipy.io.mmread(os.path.join(matdir, row["name"] + ".mtx")))
                A.sum_duplicates()
                A.sort_indices()
                yield row["name"], row["category"], A.astype(np.float64)
    for name, args in (("laplace2d5_32", (32, 32, 1, 5)), ("laplace3d7_16", (16, 16, 16, 7)),
                       ("laplace3d27_16", (16, 16, 16, 27))):
        yield name, "laplace", laplace(*args)


# ---- preconditioners --------------------------------------------------------------------------

def diag_positions(A):
    n = A.shape[0]
    pos = np.full(n, -1)
    for i in range(n):
        lo, hi = A.indptr[i], A.indptr[i + 1]
        k = lo + np.searchsorted(A.indices[lo:hi], i)
        if k < hi and A.indices[k] == i:
            pos[i] = k
    return pos


def ilu0(A):
    """ILU(0), IKJ order: (L unit lower, U upper) as CSR, or None (missing or zero pivot)."""
    n = A.shape[0]
    ptr, ind, val = A.indptr, A.indices, A.data.copy()
    dpos = diag_positions(A)
    if np.any(dpos < 0):
        return None
    where = [dict(zip(ind[ptr[i]:ptr[i + 1]].tolist(), range(ptr[i], ptr[i + 1])))
             for i in range(n)]
    for i in range(n):
        wi = where[i]
        for kk in range(ptr[i], dpos[i]):
            k = ind[kk]
            piv = val[dpos[k]]
            if piv == 0.0:
                return None
            val[kk] /= piv
            lik = val[kk]
            for jj in range(dpos[k] + 1, ptr[k + 1]):
                p = wi.get(ind[jj])
                if p is not None:
                    val[p] -= lik * val[jj]
    if np.any(val[dpos] == 0.0) or not np.all(np.isfinite(val)):
        return None
    F = sp.csr_matrix((val, ind.copy(), ptr.copy()), shape=A.shape)
    L = sp.tril(F, -1, format="csr") + sp.identity(n, format="csr")
    U = sp.triu(F, 0, format="csr")
    return L.tocsr(), U.tocsr()


def ic0(A):
    """IC(0) on the pattern of tril(A), row by row: (L, L^T) as CSR, or None."""
    n = A.shape[0]
    T = sp.tril(A, 0, format="csr")
    T.sort_indices()
    ptr, ind, val = T.indptr, T.indices, T.data.copy()
    dpos = diag_positions(T)
    if np.any(dpos < 0):
        return None
    where = [dict(zip(ind[ptr[i]:ptr[i + 1]].tolist(), range(ptr[i], ptr[i + 1])))
             for i in range(n)]
    for i in range(n):
        for kk in range(ptr[i], ptr[i + 1]):
            k = ind[kk]
            s = val[kk]
            wk = where[k]
            for jj in range(ptr[i], kk):
                p = wk.get(ind[jj])
                if p is not None:
                    s -= val[jj] * val[p]
            if k < i:
                val[kk] = s / val[dpos[k]]
            elif s > 0.0:
                val[kk] = math.sqrt(s)
            else:
                return None
    L = sp.csr_matrix((val, ind.copy(), ptr.copy()), shape=A.shape)
    return L, L.T.tocsr()


def make_precond(A, name):
    """z = M^-1 r as a function, or None where gs_solve refuses the preconditioner."""
    if name == "none":
        return lambda r: r
    if name == "jacobi":
        d = A.diagonal()
        if np.any(d == 0.0):
            return None
        dinv = 1.0 / d
        return lambda r: dinv * r
    f = ilu0(A) if name == "ilu0" else ic0(A)
    if f is None:
        return None
    L, U = f
    unit = name == "ilu0"
    return lambda r: sla.spsolve_triangular(
        U, sla.spsolve_triangular(L, r, lower=True, unit_diagonal=unit), lower=False)


# ---- SciPy runs ---------------------------------------------------------------------------------

class Counter:
    def __init__(self):
        self.n = 0

    def __call__(self, *args):
        self.n += 1


def scipy_run(A, b, method, P, rtol, maxit):
    nmv = Counter()

    def mv(x):
        nmv()
        return A @ x

    Aop = sla.LinearOperator(A.shape, matvec=mv, rmatvec=lambda x: A.T @ x, dtype=np.float64)
    M = sla.LinearOperator(A.shape, matvec=P, rmatvec=P, dtype=np.float64)  # M^T = M
    cb = Counter()
    with np.errstate(all="ignore"):
        if method == "cgnr":  # cg on A^T A x = A^T b, A^T A never formed
            N = sla.LinearOperator((A.shape[1], A.shape[1]), matvec=lambda x: A.T @ (A @ x),
                                   dtype=np.float64)
            x, info = sla.cg(N, A.T @ b, rtol=rtol, atol=0.0, maxiter=maxit, callback=cb)
            its = cb.n
        elif method == "bicg":
            x, info = sla.bicg(Aop, b, rtol=rtol, atol=0.0, maxiter=maxit, M=M, callback=cb)
            its = cb.n
        elif method in ("cg", "pipecg"):  # pipecg: CG's iterates, so SciPy's cg is the reference
            x, info = sla.cg(Aop, b, rtol=rtol, atol=0.0, maxiter=maxit, M=M, callback=cb)
            its = cb.n
        elif method == "bicgstab":
            x, info = sla.bicgstab(Aop, b, rtol=rtol, atol=0.0, maxiter=maxit, M=M, callback=cb)
            its = (nmv.n + 1) // 2
        else:  # right preconditioning: GMRES on A M^-1, no M
            AP = sla.LinearOperator(A.shape, matvec=lambda u: mv(P(u)), dtype=np.float64)
            u, info = sla.gmres(AP, b, rtol=rtol, atol=0.0, restart=RESTART,
                                maxiter=(maxit + RESTART - 1) // RESTART,  # restart cycles
                                callback=cb, callback_type="pr_norm")
            x = P(u)
            its = cb.n
    relres = np.linalg.norm(b - A @ x) / np.linalg.norm(b)
    return its, int(info == 0), float(relres)


# ---- the same algorithms as gs_solve, with a chosen dot product ------------------------------

def dot_fsum(a, b):
    return math.fsum(a * b)


def dot_reversed(a, b):
    return float(np.dot(a[::-1], b[::-1]))


def dot_blocks(a, b):
    p = a * b
    pad = (-len(p)) % 256
    return float(np.sum(np.sum(np.concatenate([p, np.zeros(pad)]).reshape(-1, 256), axis=1)[::-1]))


def cg(A, b, P, rtol, maxit, dot):
    x = np.zeros_like(b)
    r = b.copy()
    tol = rtol * math.sqrt(dot(b, b))
    z = P(r)
    p = z.copy()
    rho = dot(r, z)
    for it in range(1, maxit + 1):
        q = A @ p
        pq = dot(p, q)
        if not pq > 0.0:
            return -1
        a = rho / pq
        x += a * p
        r -= a * q
        if math.sqrt(dot(r, r)) <= tol:
            return it
        z = P(r)
        rn = dot(r, z)
        if rn == 0.0:
            return -1
        p = z + (rn / rho) * p
        rho = rn
    return -1


def bicgstab(A, b, P, rtol, maxit, dot):
    x = np.zeros_like(b)
    r = b.copy()
    rh = r.copy()
    tol = rtol * math.sqrt(dot(b, b))
    rho_old = alpha = omega = 1.0
    p = v = None
    for it in range(1, maxit + 1):
        rho = dot(rh, r)
        if rho == 0.0 or omega == 0.0:
            return -1
        p = r.copy() if it == 1 else r + (rho / rho_old) * (alpha / omega) * (p - omega * v)
        ph = P(p)
        v = A @ ph
        rv = dot(rh, v)
        if rv == 0.0:
            return -1
        alpha = rho / rv
        s = r - alpha * v
        if math.sqrt(dot(s, s)) <= tol:
            return it
        sh = P(s)
        t = A @ sh
        tt = dot(t, t)
        if tt == 0.0:
            return -1
        omega = dot(t, s) / tt
        x += alpha * ph + omega * sh
        r = s - omega * t
        rho_old = rho
        if math.sqrt(dot(r, r)) <= tol:
            return it
    return -1


def gmres(A, b, P, rtol, maxit, dot, m=RESTART):
    n = len(b)
    m = min(m, n)
    x = np.zeros(n)
    r = b.copy()
    beta = math.sqrt(dot(r, r))
    tol = rtol * beta
    it = 0
    while True:
        V = np.zeros((m + 1, n))
        V[0] = r / beta
        H = np.zeros((m + 1, m))
        g = np.zeros(m + 1)
        g[0] = beta
        cs, sn = np.zeros(m), np.zeros(m)
        j = 0
        while j < m:
            it += 1
            w = A @ P(V[j])
            h = np.array([dot(V[i], w) for i in range(j + 1)])
            w = w - V[:j + 1].T @ h
            h2 = np.array([dot(V[i], w) for i in range(j + 1)])
            w = w - V[:j + 1].T @ h2
            col = np.concatenate([h + h2, [math.sqrt(dot(w, w))]])
            hn = col[j + 1]
            for i in range(j):
                a, c = col[i], col[i + 1]
                col[i], col[i + 1] = cs[i] * a + sn[i] * c, -sn[i] * a + cs[i] * c
            rr = math.hypot(col[j], hn)
            if rr == 0.0:
                return -1
            cs[j], sn[j] = col[j] / rr, hn / rr
            col[j] = rr
            H[:j + 1, j] = col[:j + 1]
            g[j + 1] = -sn[j] * g[j]
            g[j] = cs[j] * g[j]
            j += 1
            if hn == 0.0:
                break
            V[j] = w / hn
            if abs(g[j]) <= tol or it >= maxit:
                break
        y = np.linalg.solve(np.triu(H[:j, :j]), g[:j])
        x += P(V[:j].T @ y)
        r = b - A @ x
        beta = math.sqrt(dot(r, r))
        if beta <= tol:
            return it
        if it >= maxit:
            return -1


def bicg(A, b, P, rtol, maxit, dot):
    """gs_solve's BiCG (solvers/bicg.c): r~0 = r0, M^-T applied as M^-1 (M symmetric)."""
    x = np.zeros_like(b)
    r = b.copy()
    rt = r.copy()
    tol = rtol * math.sqrt(dot(b, b))
    rho_old = 1.0
    p = pt = None
    for it in range(1, maxit + 1):
        z, zt = P(r), P(rt)
        rho = dot(rt, z)
        if rho == 0.0:
            return -1
        if it == 1:
            p, pt = z.copy(), zt.copy()
        else:
            beta = rho / rho_old
            p, pt = z + beta * p, zt + beta * pt
        q, qt = A @ p, A.T @ pt
        pq = dot(pt, q)
        if pq == 0.0:
            return -1
        a = rho / pq
        x += a * p
        r -= a * q
        rt -= a * qt
        rho_old = rho
        if math.sqrt(dot(r, r)) <= tol:
            return it
    return -1


def cgnr(A, b, P, rtol, maxit, dot):
    """gs_solve's CGNR (solvers/cgnr.c): CGLS, Saad Algorithm 8.4; stops on ||A^T r||."""
    x = np.zeros(A.shape[1])
    r = b.copy()
    z = A.T @ r
    tol = rtol * math.sqrt(dot(z, z))
    p = z.copy()
    rho = dot(z, z)
    for it in range(1, maxit + 1):
        w = A @ p
        ww = dot(w, w)
        if ww == 0.0:
            return -1
        a = rho / ww
        x += a * p
        r -= a * w
        z = A.T @ r
        zn = math.sqrt(dot(z, z))
        if zn <= tol:
            return it
        rn = zn * zn
        p = z + (rn / rho) * p
        rho = rn
    return -1


def lsqr(A, b, tol, maxit, dot):
    """gs_solve's LSQR (solvers/lsqr.c): Paige and Saunders' LSQR with damp = 0 and no condition
    limit, in the form the GPU runs: U and V kept unnormalized (u = U / beta, v = V / alfa).
    Returns (iterations or -1, x)."""
    eps = np.finfo(float).eps
    m, n = A.shape
    nrm = lambda v: math.sqrt(dot(v, v))  # noqa: E731
    x = np.zeros(n)
    U = b.copy()
    beta = bnorm = nrm(U)
    V = (A.T @ U) / beta
    alfa = nrm(V)
    W = V / alfa if alfa > 0 else V.copy()
    rhobar, phibar = alfa, beta
    anorm = ddnorm = xxnorm = z = 0.0
    cs2, sn2 = -1.0, 0.0
    if alfa * beta == 0.0:
        return 0, x
    for it in range(1, maxit + 1):
        U = (A @ V) / alfa - (alfa / beta) * U
        beta_new = nrm(U)
        if beta_new > 0:
            anorm = math.sqrt(anorm ** 2 + alfa ** 2 + beta_new ** 2)
            V = (A.T @ U) / beta_new - (beta_new / alfa) * V
            alfa = nrm(V)
        beta = beta_new
        wnorm = nrm(W)
        rho = math.hypot(rhobar, beta)
        cs, sn = rhobar / rho, beta / rho
        theta, rhobar = sn * alfa, -cs * alfa
        phi, phibar = cs * phibar, sn * phibar
        tau = sn * phi
        ddnorm += (wnorm / rho) ** 2
        x = x + (phi / rho) * W
        W = (V / alfa if alfa > 0 else V) - (theta / rho) * W
        delta, gambar = sn2 * rho, -cs2 * rho
        rhs = phi - delta * z
        xnorm = math.sqrt(xxnorm + (rhs / gambar) ** 2)
        gamma = math.hypot(gambar, theta)
        cs2, sn2, z = gambar / gamma, theta / gamma, rhs / gamma
        xxnorm += z * z
        acond = anorm * math.sqrt(ddnorm)
        rnorm, arnorm = abs(phibar), alfa * abs(tau)
        test1, test2 = rnorm / bnorm, arnorm / (anorm * rnorm + eps)
        if (test1 <= tol + tol * anorm * xnorm / bnorm or test2 <= tol or
                1 + test1 / (1 + anorm * xnorm / bnorm) <= 1 or 1 + test2 <= 1 or
                1 + 1 / (acond + eps) <= 1):
            return it, x
    return -1, x


def pipecg(A, b, P, rtol, maxit, dot):
    """gs_solve's pipelined CG (solvers/pipecg.c, Ghysels and Vanroose 2014, Algorithm 4) with
    what gs_solve adds around it: a breakdown of the recurrences after a pass has iterated
    (p^T A p <= 0 or gamma <= 0) restarts from the true residual, at most 5 times, while the
    pass reduced ||b - Ax||; a recurrence residual under the tolerance with b - Ax above 10 times
    it restarts from b - Ax, at most 3 times (solvers/solver.c). Returns the iterations of a
    converged solve, else -1."""
    n = len(b)
    x = np.zeros(n)
    tol = rtol * math.sqrt(dot(b, b))
    total = 0
    for _ in range(4):  # solver.c: the first pass and up to 3 restarts from the true residual
        start, broke = None, False
        for brk in range(6):  # pipecg.c: up to 5 restarts after a breakdown
            r = b - A @ x
            u = P(r)
            w = A @ u
            z, q, s, p = np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(n)
            gamma, delta, rr = dot(r, u), dot(w, u), dot(r, r)
            rn = math.sqrt(rr)
            if rn <= tol:
                return total
            if broke and not rn < start:
                return -1
            if not (math.isfinite(gamma) and math.isfinite(delta)) or gamma <= 0 or not delta > 0:
                return -1
            start, broke = rn, False
            beta, alpha, gold = 0.0, gamma / delta, gamma
            while True:
                if total >= maxit:
                    return -1
                m = P(w)
                nv = A @ m
                z = nv + beta * z
                q = m + beta * q
                s = w + beta * s
                p = u + beta * p
                x = x + alpha * p
                r = r - alpha * s
                u = u - alpha * q
                w = w - alpha * z
                gamma, delta, rr = dot(r, u), dot(w, u), dot(r, r)
                total += 1
                if math.sqrt(rr) <= tol:
                    break
                if not math.isfinite(gamma):
                    return -1
                beta = gamma / gold
                den = delta - beta * gamma / alpha
                if gamma <= 0 or not den > 0:
                    broke = True
                    break
                alpha, gold = gamma / den, gamma
            if not broke:
                break
        if broke:
            return -1
        if np.linalg.norm(b - A @ x) <= 10 * tol:
            return total
    return -1


MIMIC = {"cg": cg, "bicgstab": bicgstab, "gmres": gmres, "bicg": bicg, "cgnr": cgnr,
         "pipecg": pipecg}


# ---- main -----------------------------------------------------------------------------------

PLAN = {"spd": [("cg", ("none", "jacobi", "ilu0", "ic0")),
                ("pipecg", ("none", "jacobi", "ilu0", "ic0"))],
        "nonsymmetric": [("bicgstab", ("none", "jacobi", "ilu0")),
                         ("gmres", ("none", "jacobi", "ilu0")),
                         ("bicg", ("none", "jacobi")),
                         ("cgnr", ("none",))],
        "rectangular": [("cgnr", ("none",))],
        "laplace": [("cg", ("none", "jacobi", "ilu0", "ic0")),
                    ("pipecg", ("none", "jacobi", "ilu0", "ic0")),
                    ("bicgstab", ("none", "jacobi", "ilu0")),
                    ("gmres", ("none", "jacobi", "ilu0")),
                    ("bicg", ("none", "jacobi", "ic0")),
                    ("cgnr", ("none",))]}

HEADER = ("matrix\tcategory\tn\tnnz\tmethod\tprecond\trtol\tmaxit\titerations\tconverged\t"
          "relres\tlo\thi\treference\n")


def lsqr_rhs(A, kind):
    """The right-hand sides of the LSQR rows; test_solvers.c builds the same ones."""
    m, n = A.shape
    if kind == "A1":
        return A @ np.ones(n)
    return np.array([(i % 7) - 3.0 for i in range(m)])  # "mod7"


def lsqr_rows(name, A, outdir):
    """SciPy's lsqr on A with both right-hand sides; writes each x, returns the table rows."""
    rows = []
    m, n = A.shape
    maxit = MAXIT_CAP
    for kind in ("A1", "mod7"):
        b = lsqr_rhs(A, kind)
        t0 = time.time()
        with np.errstate(all="ignore"):
            res = sla.lsqr(A, b, atol=LSQR_RTOL, btol=LSQR_RTOL, conlim=0, iter_lim=maxit)
        x, istop, its, anorm, acond = res[0], res[1], res[2], res[5], res[6]
        lo = hi = its
        spread = 0.0
        for dot in (dot_fsum, dot_blocks):
            k, xv = lsqr(A, b, LSQR_RTOL, maxit, dot)
            if k < 0:
                lo = -1
            else:
                hi = max(hi, k)
                lo = min(lo, k) if lo >= 0 else lo
                spread = max(spread, float(np.linalg.norm(xv - x) / np.linalg.norm(x)))
        xfile = f"scipy_lsqr/{name}_{kind}.mtx"
        with open(os.path.join(outdir, xfile), "w") as f:
            f.write("%%MatrixMarket matrix array real general\n")
            f.write(f"% x of scipy.sparse.linalg.lsqr (SciPy {scipy.__version__}) on {name}, b "
                    f"{kind}, atol = btol = {LSQR_RTOL:g}, conlim = 0: tests/scipy_iterations.py\n")
            f.write(f"{n} 1\n")
            for v in x:
                f.write(f"{v:.17g}\n")
        print(f"{name:16s} lsqr     {kind:6s} its {its:6d} istop {istop} variants {lo}..{hi} "
              f"x spread {spread:.1e} ({time.time() - t0:.1f} s)", file=sys.stderr, flush=True)
        rows.append((name, m, n, A.nnz, kind, LSQR_RTOL, maxit, its, istop, lo, hi,
                     float(anorm), float(acond), spread, xfile))
    return rows


def keep_rows(path, methods):
    """Rows of an existing table whose method is not recomputed (--methods)."""
    kept = []
    if not os.path.exists(path):
        return kept
    with open(path) as f:
        for line in f:
            if line.startswith("#") or line.startswith("matrix\t"):
                continue
            cols = line.rstrip("\n").split("\t")
            if cols[4] not in methods:
                kept.append(cols)
    return kept


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--matrices", default=os.environ.get("GS_MATRIX_DIR") or
                    os.path.join(HERE, "data", "matrices"))
    ap.add_argument("--out", default=os.path.join(HERE, "data", "scipy_iterations.tsv"))
    ap.add_argument("--rtol", type=float, default=1e-8)
    ap.add_argument("--methods", default="cg,pipecg,bicgstab,gmres,bicg,cgnr,lsqr",
                    help="comma-separated methods to recompute; the other rows are kept")
    args = ap.parse_args()
    methods = set(args.methods.split(","))
    outdir = os.path.dirname(os.path.abspath(args.out))
    lsqr_out = os.path.join(outdir, "scipy_lsqr.tsv")

    rows, lrows = [], []
    for name, cat, A in systems(args.matrices):
        n = A.shape[0]
        b = A @ np.ones(A.shape[1])
        maxit = min(10 * max(A.shape), MAXIT_CAP)
        Ps = {}
        if cat == "rectangular" and "lsqr" in methods:
            os.makedirs(os.path.join(outdir, "scipy_lsqr"), exist_ok=True)
            lrows += lsqr_rows(name, A, outdir)
        for method, pcs in PLAN[cat]:
            if method not in methods:
                continue
            for pc in pcs:
                if pc not in Ps:
                    Ps[pc] = make_precond(A, pc)
                P = Ps[pc]
                if P is None:
                    print(f"{name:16s} {method:8s} {pc:6s} refused (zero or missing diagonal, "
                          f"or a bad pivot)", file=sys.stderr)
                    continue
                t0 = time.time()
                its, conv, relres = scipy_run(A, b, method, P, args.rtol, maxit)
                lo = hi = its
                if conv:
                    dots = (dot_reversed if method == "gmres" else dot_fsum, dot_blocks)
                    for dot in dots:
                        k = MIMIC[method](A, b, P, args.rtol, maxit, dot)
                        if k < 0:
                            lo = -1
                        else:
                            hi = max(hi, k)
                            lo = min(lo, k) if lo >= 0 else lo
                else:
                    lo = hi = -1
                ref = "scipy" if pc in ("none", "jacobi") else f"scipy+numpy-{pc}"
                print(f"{name:16s} {method:8s} {pc:6s} its {its:6d} conv {conv} relres "
                      f"{relres:.3e} variants {lo}..{hi} ({time.time() - t0:.1f} s)",
                      file=sys.stderr, flush=True)
                rows.append((name, cat, n, A.nnz, method, pc, args.rtol, maxit, its, conv,
                             relres, lo, hi, ref))

    # merge with the kept rows: each matrix's rows together, the methods in PLAN's order
    fmt = [[f"{v:.6g}" if isinstance(v, float) else str(v) for v in r] for r in rows]
    order = {(cat, mth, pc): (i, j) for cat, plan in PLAN.items()
             for i, (mth, pcs) in enumerate(plan) for j, pc in enumerate(pcs)}
    byname = {}
    for cols in keep_rows(args.out, methods) + fmt:
        byname.setdefault(cols[0], []).append(cols)
    with open(args.out, "w") as f:
        f.write(f"# SciPy {scipy.__version__}, NumPy {np.__version__}; written by "
                f"tests/scipy_iterations.py (b = A*ones, x0 = 0, atol = 0, GMRES restart 30).\n"
                f"# converged: SciPy's own test (info 0); relres: its true ||b - Ax|| / ||b||; "
                f"lo, hi: counts of three summation orders (-1: one did not converge).\n")
        f.write(HEADER)
        for name in byname:  # the kept order first, new matrices as they came
            for cols in sorted(byname[name], key=lambda c: order.get((c[1], c[4], c[5]),
                                                                      (99, 99))):
                f.write("\t".join(cols) + "\n")
    print(f"wrote {sum(len(v) for v in byname.values())} rows to {args.out}", file=sys.stderr)

    if "lsqr" in methods:
        with open(lsqr_out, "w") as f:
            f.write(f"# SciPy {scipy.__version__}, NumPy {np.__version__}; written by "
                    f"tests/scipy_iterations.py: scipy.sparse.linalg.lsqr, x0 = 0, damp = 0, "
                    f"atol = btol = rtol, conlim = 0.\n"
                    f"# rhs A1: b = A * ones; mod7: b_i = (i mod 7) - 3 (0-based i). istop: "
                    f"SciPy's reason; lo, hi: counts of three summation orders; anorm, acond: "
                    f"its estimates of ||A||_F and cond(A); xspread: max relative difference of "
                    f"the variants' x from SciPy's; x: SciPy's solution under tests/data.\n")
            f.write("matrix\tm\tn\tnnz\trhs\trtol\tmaxit\titerations\tistop\tlo\thi\tanorm\t"
                    "acond\txspread\tx\n")
            for r in lrows:
                f.write("\t".join(f"{v:.6g}" if isinstance(v, float) else str(v) for v in r)
                        + "\n")
        print(f"wrote {len(lrows)} rows to {lsqr_out}", file=sys.stderr)


if __name__ == "__main__":
    main()
