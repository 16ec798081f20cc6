"""batch_solve: many small independent systems in one launch (gpusolve/batch.h)."""
import ctypes

import numpy as np

from . import _lib
from ._arrays import (as_device_vector, as_host_csr, as_host_vector, cupy, dim_error,
                      is_cupy_array)
from ._device import CupyOrder, SolveVectors
from ._errors import bad, check
from ._solve import SolveInfo, _positive_int, _tolerance
from ._spmv import context_for

lib = _lib.lib
_BATCH_METHOD_NAMES = ("cg", "bicgstab", "gmres")
_BATCH_METHODS = {m: lib.gs_method_find(m.encode()) for m in _BATCH_METHOD_NAMES}
_RESTART_MAX = 10000  # the CLI's bound (GMRES(m) keeps m + 1 vectors a problem)
_BLOCK_MAX = 8        # GS_BATCH_BJ_MAX_BLOCK


def _batch_preconds():
    """{name: gs_batch_precond_t} from the library's own table (gs_batch_precond_name), through
    a prototype of our own so that the shared CDLL's attributes stay as _lib set them."""
    name = ctypes.CFUNCTYPE(ctypes.c_char_p, ctypes.c_int)(("gs_batch_precond_name", lib))
    out, k = {}, 0
    while name(k):
        out[_lib.s(name(k))] = k
        k += 1
    return out


_BATCH_PRECONDS = _batch_preconds()


class BatchInfo(SolveInfo):
    """What a batched solve did: `converged` (every problem), `problems` (one SolveInfo-like
    record a problem: converged, reason, detail, detail_row, iterations, bnorm, rnorm0, rnorm,
    residual_norm, rel_residual), and the summary: n_converged, iterations_min / median / max,
    seconds (GPU time of the solve kernels), shared_problems (vectors kept in shared memory);
    method, precond, restart (GMRES's m, else None), block and agglomerate (block-Jacobi's,
    else None), device.

    A problem's `detail` says why it stopped beyond its reason ("" when there is nothing to
    add): the preconditioner that could not be set up for it ("Jacobi: a zero or missing
    diagonal entry", ...) or GMRES's cause; `detail_row` is the row of that problem (0-based)
    the detail names (the zero diagonal, the zero pivot, the block without a usable pivot), -1
    when none."""

    def __repr__(self):
        return (f"BatchInfo(converged={self.converged}, problems={len(self.problems)}, "
                f"n_converged={self.n_converged}, iterations {self.iterations_min}.."
                f"{self.iterations_max}, seconds={self.seconds:.4g})")


def _bounded_int(v, what, hi):
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not 1 <= v <= hi:
        raise bad(f"{what}: expected an integer in 1 .. {hi}, not {v!r}")
    return int(v)


def batch_solve(matrices, bs, method="cg", precond=None, rtol=1e-8, atol=0.0, maxiter=None,
                x0=None, restart=30, *, block=8, agglomerate=True, context=None, maxit=None):
    """Solves A_i x_i = b_i for every i with one thread block per problem (the batched CG,
    BiCGSTAB or GMRES(restart): every problem stops on its own test, ||b_i - A_i x_i|| <=
    max(rtol ||b_i||, atol), GMRES's checked at the end of a cycle). Returns (list of x_i of
    b's kind, BatchInfo).

    matrices: a list of square matrices (any sizes and patterns; what solve takes: the batch is
    built from host CSRs, so cupyx matrices are copied to the host); bs (and x0): a list of
    vectors, NumPy or CuPy (CuPy: on CuPy's current stream).
    method: "cg" (SPD problems), "bicgstab" or "gmres" (GMRES(m) with m = restart, 1 .. 10000,
    each problem taking min(m, its rows); maxiter counts inner iterations).
    precond: None / "none", "jacobi", "block-jacobi" (diagonal blocks of at most `block` rows,
    1 .. 8, LU-factorized with partial pivoting; agglomerate=True builds the blocks from runs of
    rows sharing a pattern, False takes fixed blocks) or "ilu0", each set up per problem inside
    the launch. A problem whose preconditioner cannot be set up (a zero or missing diagonal, a
    singular block, a zero ILU(0) pivot) stops at once with reason "diverged_breakdown", its
    `detail` and `detail_row` naming the cause and the row; the others are solved.
    maxit is an alias of maxiter. Arguments are checked before any device work."""
    if not isinstance(method, str) or method not in _BATCH_METHODS:
        raise bad(f"method: batched solves take {', '.join(map(repr, _BATCH_METHOD_NAMES))}, "
                  f"not {method!r}")
    pc = "none" if precond is None else precond
    if not isinstance(pc, str) or pc not in _BATCH_PRECONDS:
        raise bad(f"precond: batched solves take None, "
                  f"{', '.join(map(repr, _BATCH_PRECONDS))}, not {precond!r}")
    restart = _bounded_int(restart, "restart", _RESTART_MAX)
    block = _bounded_int(block, "block", _BLOCK_MAX)
    if not isinstance(agglomerate, (bool, np.bool_)):
        raise bad(f"agglomerate: expected True or False, not {agglomerate!r}")
    if maxit is not None and maxiter is not None and maxit != maxiter:
        raise bad("maxiter and maxit (its alias) disagree")
    rtol, atol = _tolerance(rtol, "rtol"), _tolerance(atol, "atol")
    if rtol == 0 and atol == 0:
        raise bad("rtol = atol = 0: no solve could stop before maxiter")
    maxiter = _positive_int(maxiter if maxiter is not None else maxit, "maxiter")
    mats, bl = list(matrices), list(bs)
    if not mats:
        raise bad("batch_solve: no matrices")
    if len(bl) != len(mats):
        raise dim_error(f"batch_solve: {len(mats)} matrices and {len(bl)} right-hand sides")
    x0l = None if x0 is None else list(x0)
    if x0l is not None and len(x0l) != len(mats):
        raise dim_error(f"batch_solve: {len(mats)} matrices and {len(x0l)} initial guesses")
    Hs = []
    for i, A in enumerate(mats):
        H = as_host_csr(A, f"matrices[{i}]")
        if H.shape[0] != H.shape[1]:
            raise dim_error(f"matrices[{i}] is {H.shape[0]} x {H.shape[1]}: batched solves "
                            "need square matrices")
        Hs.append(H)
    sizes = [H.shape[0] for H in Hs]
    off = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    dev = is_cupy_array(bl[0])
    if any(is_cupy_array(v) != dev for v in bl):
        raise bad("batch_solve: mix of NumPy and CuPy right-hand sides")
    if dev:
        cp = cupy()
        device = bl[0].device.id
        with bl[0].device:
            bcat = cp.concatenate([as_device_vector(v, k, f"bs[{i}]", f"matrices[{i}]")
                                   for i, (v, k) in enumerate(zip(bl, sizes))]) \
                if off[-1] else cp.zeros(1)
            x0cat = None
            if x0l is not None:
                x0cat = cp.concatenate([as_device_vector(cp.asarray(v), k, f"x0[{i}]",
                                                         f"matrices[{i}]")
                                        for i, (v, k) in enumerate(zip(x0l, sizes))])
    else:
        device = None
        bcat = np.concatenate([as_host_vector(v, k, f"bs[{i}]", f"matrices[{i}]")
                               for i, (v, k) in enumerate(zip(bl, sizes))])
        x0cat = None if x0l is None else np.concatenate(
            [as_host_vector(v, k, f"x0[{i}]", f"matrices[{i}]")
             for i, (v, k) in enumerate(zip(x0l, sizes))])

    ctx = context_for(context, device, cupy_inputs=dev)  # CuPy's current stream for CuPy's
    count = len(Hs)
    arr = (ctypes.POINTER(_lib.Csr) * count)(*[H.ptr for H in Hs])
    B = ctypes.c_void_p()
    with CupyOrder(ctx, active=dev):
        check(lib.gs_batch_create(ctypes.byref(B), ctx.handle, count, arr))
        try:
            o = _lib.BatchSolveOpts()
            lib.gs_batch_solve_opts_default(ctypes.byref(o))
            o.method = _BATCH_METHODS[method]
            o.rtol, o.atol = rtol, atol
            if maxiter is not None:
                o.maxit = maxiter
            o.jacobi = 0  # deprecated: precond says it
            o.precond = _BATCH_PRECONDS[pc]
            o.block, o.agglomerate, o.restart = block, 1 if agglomerate else 0, restart
            o.x0_given = 1 if x0cat is not None else 0
            total = int(off[-1])
            vec = SolveVectors(ctx, bcat, x0cat, total, dev, n_alloc=max(total, 1))
            stats = (_lib.BatchStats * count)()
            summ = _lib.BatchSummary()
            check(lib.gs_batch_solve(B, ctypes.byref(o), vec.d_b, vec.d_x, stats,
                                     ctypes.byref(summ)))
            xcat = vec.result()
        finally:
            lib.gs_batch_destroy(ctypes.byref(B))
    xs = [xcat[off[i]:off[i + 1]] for i in range(count)]
    problems = []
    for i in range(count):
        s = stats[i]
        rel = s.true_residual_norm / s.bnorm if s.bnorm > 0 else s.true_residual_norm
        problems.append(SolveInfo(converged=bool(lib.gs_reason_converged(s.reason)),
                                  reason=_lib.s(lib.gs_reason_string(s.reason)),
                                  detail=_lib.s(s.detail), detail_row=int(s.detail_row),
                                  iterations=s.iterations, bnorm=s.bnorm, rnorm0=s.rnorm0,
                                  rnorm=s.rnorm, residual_norm=s.true_residual_norm,
                                  rel_residual=rel, method=method, format="batch",
                                  precond=pc, seconds_total=float("nan")))
    info = BatchInfo(converged=summ.converged == count, problems=problems,
                     n_converged=summ.converged, iterations_min=summ.it_min,
                     iterations_median=summ.it_median, iterations_max=summ.it_max,
                     seconds=summ.seconds, shared_problems=summ.shared_problems,
                     method=method, precond=pc,
                     restart=restart if method == "gmres" else None,
                     block=block if pc == "block-jacobi" else None,
                     agglomerate=bool(agglomerate) if pc == "block-jacobi" else None,
                     device=ctx.device)
    return xs, info
