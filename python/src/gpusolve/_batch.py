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
_BATCH_METHODS = {"cg": 0, "bicgstab": 1}


class BatchInfo(SolveInfo):
    """What a batched solve did: `converged` (every problem), `problems` (one SolveInfo-like
    record a problem: converged, reason, iterations, bnorm, rnorm0, rnorm, residual_norm,
    rel_residual), and the summary: n_converged, iterations_min / median / max, seconds (GPU
    time of the solve kernels), shared_problems (vectors kept in shared memory)."""

    def __repr__(self):
        return (f"BatchInfo(converged={self.converged}, problems={len(self.problems)}, "
                f"n_converged={self.n_converged}, iterations {self.iterations_min}.."
                f"{self.iterations_max}, seconds={self.seconds:.4g})")


def batch_solve(matrices, bs, method="cg", precond=None, rtol=1e-8, atol=0.0, maxiter=None,
                x0=None, *, context=None, maxit=None):
    """Solves A_i x_i = b_i for every i with one thread block per problem (the batched CG or
    BiCGSTAB: every problem stops on its own test). matrices: a list of square matrices (any
    sizes and patterns; what solve takes: the batch is built from host CSRs, so cupyx matrices
    are copied to the host); bs (and x0): a list of vectors, NumPy or CuPy (CuPy: on CuPy's
    current stream). precond: None or "jacobi". Returns (list of x_i of b's kind, BatchInfo)."""
    if method not in _BATCH_METHODS:
        raise bad(f"method: batched solves take 'cg' or 'bicgstab', not {method!r}")
    if precond not in (None, "none", "jacobi"):
        raise bad(f"precond: batched solves take None or 'jacobi', not {precond!r}")
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
            o.jacobi = 1 if precond == "jacobi" else 0
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
                                  iterations=s.iterations, bnorm=s.bnorm, rnorm0=s.rnorm0,
                                  rnorm=s.rnorm, residual_norm=s.true_residual_norm,
                                  rel_residual=rel, method=method, format="batch",
                                  precond=precond or "none", seconds_total=float("nan")))
    info = BatchInfo(converged=summ.converged == count, problems=problems,
                     n_converged=summ.converged, iterations_min=summ.it_min,
                     iterations_median=summ.it_median, iterations_max=summ.it_max,
                     seconds=summ.seconds, shared_problems=summ.shared_problems,
                     method=method, precond=precond or "none", device=ctx.device)
    return xs, info
