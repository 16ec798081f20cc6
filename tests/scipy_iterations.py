#!/usr/bin/env python3
"""tests/scipy_iterations.py: reference iteration counts of SciPy's Krylov solvers.

Writes tests/data/scipy_iterations.tsv, which tests/test_solvers.c compares gs_solve against.

The systems: every matrix of the "spd" and "nonsymmetric" categories of the matrix folder
(--matrices, default $GS_MATRIX_DIR, else tests/data/matrices; its MANIFEST.tsv) plus generated Laplacians, with b = A * ones, x0 = 0, rtol = 1e-8, atol = 0,
so that both codes stop when ||r|| <= 1e-8 ||b||.

  cg                  SPD matrices and Laplacians; preconditioners none, jacobi, ilu0, ic0
  bicgstab, gmres(30) nonsymmetric matrices and Laplacians; none, jacobi, ilu0
  jacobi              a LinearOperator r -> r / diag(A) (skipped where a diagonal entry is 0)
  ilu0, ic0           SciPy has neither (spilu is ILUT): ILU(0) and IC(0) are computed here in
                      NumPy (the unique factors with the pattern of A, resp. tril(A), that match
                      A on that pattern: what cuSPARSE csrilu02 / csric02 compute) and applied
                      with spsolve_triangular. Those rows say reference "numpy-ilu0/ic0".

How counts are taken, to match gs_solve's definition of an iteration:
  cg        loop passes (callbacks): SciPy tests ||r|| at the top of a pass, gs_solve after the
            update, the same count.
  bicgstab  matrix-vector products / 2, rounded up: an iteration that converges at its half
            step counts as one, as in gs_solve (SciPy returns from it without calling back).
  gmres     inner (Arnoldi) iterations, counted with callback_type='pr_norm'. gs_solve
            preconditions on the right (its monitored residual is the true one) and SciPy's M
            on the left; so with a preconditioner the reference runs SciPy's gmres without M on
            the operator A M^-1 (right-preconditioned GMRES(30)) and maps x = M^-1 u back.

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

Usage: python3 tests/scipy_iterations.py [--matrices DIR] [--out FILE] [--rtol R]
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
            if row["category"] in ("spd", "nonsymmetric"):
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
    n = A.shape[0]
    nmv = Counter()

    def mv(x):
        nmv()
        return A @ x

    Aop = sla.LinearOperator(A.shape, matvec=mv, dtype=np.float64)
    M = sla.LinearOperator(A.shape, matvec=P, dtype=np.float64)
    cb = Counter()
    with np.errstate(all="ignore"):
        if method == "cg":
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


MIMIC = {"cg": cg, "bicgstab": bicgstab, "gmres": gmres}


# ---- main -----------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--matrices", default=os.environ.get("GS_MATRIX_DIR") or
                    os.path.join(HERE, "data", "matrices"))
    ap.add_argument("--out", default=os.path.join(HERE, "data", "scipy_iterations.tsv"))
    ap.add_argument("--rtol", type=float, default=1e-8)
    args = ap.parse_args()

    plan = {"spd": [("cg", ("none", "jacobi", "ilu0", "ic0"))],
            "nonsymmetric": [("bicgstab", ("none", "jacobi", "ilu0")),
                             ("gmres", ("none", "jacobi", "ilu0"))],
            "laplace": [("cg", ("none", "jacobi", "ilu0", "ic0")),
                        ("bicgstab", ("none", "jacobi", "ilu0")),
                        ("gmres", ("none", "jacobi", "ilu0"))]}
    rows = []
    for name, cat, A in systems(args.matrices):
        n = A.shape[0]
        b = A @ np.ones(n)
        maxit = min(10 * n, MAXIT_CAP)
        Ps = {}
        for method, pcs in plan[cat]:
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

    with open(args.out, "w") as f:
        f.write(f"# SciPy {scipy.__version__}, NumPy {np.__version__}; written by "
                f"tests/scipy_iterations.py (b = A*ones, x0 = 0, atol = 0, GMRES restart 30).\n"
                f"# converged: SciPy's own test (info 0); relres: its true ||b - Ax|| / ||b||; "
                f"lo, hi: counts of three summation orders (-1: one did not converge).\n")
        f.write("matrix\tcategory\tn\tnnz\tmethod\tprecond\trtol\tmaxit\titerations\tconverged\t"
                "relres\tlo\thi\treference\n")
        for r in rows:
            f.write("\t".join(f"{v:.6g}" if isinstance(v, float) else str(v) for v in r) + "\n")
    print(f"wrote {len(rows)} rows to {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
