"""solve: A x = b (or min ||b - A x||) with the library's Krylov methods on the GPU."""
import ctypes
import math
import time

import numpy as np

from . import _lib
from ._arrays import as_device_vector, as_host_vector, cupy, dim_error, is_cupy_array
from ._device import CupyOrder, DeviceMatrix, Product, SolveVectors
from ._errors import InputError, bad, check
from ._select import options_string, selection_from_record
from ._spmv import check_format, context_for, matrix_input, with_precision

lib = _lib.lib
SOLVE_PRECISIONS = ("double", "mixed", "mixed-refine")
_LSQR = 6


class SolveInfo:
    """What a solve did. `converged` is the test; `reason` says why it stopped
    ("converged_rtol", "diverged_maxit", "diverged_breakdown", ...) and `detail` what exactly.

    iterations, restarts, method (resolved), format (the product's format, auto resolved),
    precond, precision; bnorm = ||b||, rnorm0 = ||b - A x0||, residual_norm = ||b - A x||
    recomputed from x, rel_residual = residual_norm / ||b|| (least squares: also
    normal_residual_norm and rel_normal_residual, of A^T (b - A x)); times in seconds:
    seconds_total (the solve on the GPU timeline), seconds_spmv, seconds_precond,
    seconds_setup, seconds_precond_setup, prepare_s (format preparation, selection included),
    wall_s (the whole call); spmv_count, precond_count; selection (format="auto": a
    Selection), graphs, persistent and their notes; mixed-refine: outer, reliable;
    precond="auto": precond_auto_iteration (-1: no escalation), precond_auto_limit (escalated
    because the forecast passed maxiter) and the other precond_auto_* figures; method="auto":
    fallback_from, fallback_reason, fallback_detail (the guessed CG or BiCGSTAB that failed;
    None when none did), fallback_iteration (its iterations, -1: none) and fallback_note
    (then `method` is "gmres").
    """

    def __init__(self, **kw):
        self.__dict__.update(kw)

    def as_dict(self):
        d = dict(self.__dict__)
        if d.get("selection") is not None:
            d["selection"] = dict(d["selection"].__dict__)
        return d

    def __repr__(self):
        return (f"SolveInfo(converged={self.converged}, reason={self.reason!r}, "
                f"iterations={self.iterations}, rel_residual={self.rel_residual:.3g}, "
                f"method={self.method!r}, format={self.format!r}, precond={self.precond!r}, "
                f"seconds_total={self.seconds_total:.4g})")


_STAT_FIELDS = [k for k, _ in _lib.SolveStats._fields_ if not k.startswith("_")
                and k not in ("method", "reason", "detail", "true_residual_norm")]


def _method_id(method):
    if not isinstance(method, str) or lib.gs_method_find(method.encode()) < 0:
        from ._io import methods
        raise bad(f"method: unknown method {method!r} ({', '.join(methods())})")
    return lib.gs_method_find(method.encode())


def _precond_name(precond):
    pc = "none" if precond is None else precond
    if not isinstance(pc, str) or (pc != "auto" and lib.gs_precond_find(pc.encode()) < 0):
        from ._io import preconditioners
        raise bad(f"precond: unknown preconditioner {precond!r} (None, auto, "
                  f"{', '.join(preconditioners())})")
    return pc


def _positive_int(v, what, allow_none=True):
    if v is None and allow_none:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1 or v > 2**31 - 1:
        raise bad(f"{what}: expected a positive integer, not {v!r}")
    return int(v)


def _tolerance(v, what):
    try:
        f = float(v)
    except (TypeError, ValueError):
        raise bad(f"{what}: expected a number, not {v!r}") from None
    if not math.isfinite(f) or f < 0:
        raise bad(f"{what} = {v!r}: must be finite and >= 0")
    return f


def _products_per_iteration(method_id):
    return 1.0 if method_id in (0, 2, 7) else 2.0  # cg, gmres, pipecg: one product


def _check_method(mid, name, shape, pc, precision):
    """The method's demands on A and the preconditioner, checked before any device work."""
    flags = lib.gs_method_flags(mid)
    m, n = shape
    if flags & _lib.METHOD_SQUARE and m != n:
        raise dim_error(f"{name} needs a square matrix; A is {m} x {n} (least squares: "
                        "method='lsqr' or 'cgnr')")
    lsq = bool(flags & _lib.METHOD_LEAST_SQUARES)
    if lsq and pc not in ("none", "auto"):
        raise bad(f"{name} is a least-squares method and takes no preconditioner "
                  f"(precond={pc!r})")
    if flags & _lib.METHOD_SYMMETRIC_PC and pc not in ("none", "auto") and \
            not lib.gs_precond_symmetric_at(lib.gs_precond_find(pc.encode())):
        raise bad(f"{name} applies M^-T as M^-1: it needs a symmetric preconditioner, and "
                  f"{pc} is not")
    if lsq and precision == "mixed-refine":
        raise bad(f"precision='mixed-refine' refines square systems; {name} is a "
                  "least-squares method")


def solve(A, b, method="cg", precond=None, format="auto", rtol=1e-8, atol=0.0, maxiter=None,
          x0=None, restart=30, precision="double", callback=None, callback_every=None, *,
          options=None, precond_options=None, graphs=True, cache=True, context=None,
          maxit=None):
    """Solves A x = b on the GPU; returns (x, info) with x of b's kind (NumPy or CuPy).

    A: a scipy.sparse matrix or array (CSR, CSC, COO, ...; int32 or int64 indices), a 2-D
    NumPy array, a cupyx.scipy.sparse matrix (read on its device: copied device to device,
    never through the host), or a Matrix Market path. b, x0: NumPy or CuPy vectors (CuPy: read
    and written in place on the device). With a cupyx A or CuPy b the solve runs on CuPy's
    current stream, in order with the work queued there.
    method: "cg" (SPD), "pipecg", "bicgstab", "gmres" (restart), "bicg", "cgnr" and "lsqr"
    (least squares, any shape), "auto" (CG for a symmetric A with a positive diagonal,
    BiCGSTAB for another square A, LSQR for a rectangular one).
    precond: None, "jacobi", "ilu0", "ic0", "amg", or "auto" (CG starts without one and goes
    on with amg when the residual's rate says it pays); precond_options: "theta=0.08" or a dict.
    format: "auto" (selected and revised during the solve) or a name from formats();
    options: backend options ("max_fill=4" or a dict).
    Stops when ||b - A x|| <= max(rtol ||b||, atol) (least squares: see the README);
    maxiter: iteration limit (None: 10000; GMRES counts inner iterations).
    precision: "double"; "mixed" (float matrix values, double vectors: x solves the rounded
    matrix; info.rel_residual_double is that of A); "mixed-refine" (iterations on the mixed
    product, residual and test in double). Both need a named format (auto means csr-vector).
    callback(iteration, rnorm, rel) is called at each residual check (every iteration, or
    every callback_every); a true return value stops the solve (reason "stopped_by_monitor").
    maxit is an alias of maxiter.
    Every argument is checked on the host before any device work, A's entries (finite, in
    range) once, by gs_matrix_create before anything is uploaded (as for a C caller; first,
    where there is no GPU): bad input raises InputError; DeviceError when the GPU fails or is
    missing.
    """
    t_start = time.perf_counter()
    # ---- names and numbers
    mid = _method_id(method)
    pc = _precond_name(precond)
    check_format(format)
    if precision not in SOLVE_PRECISIONS:
        raise bad(f"precision: {precision!r} is not one of {', '.join(SOLVE_PRECISIONS)} "
                  "(float, float vectors too, is for SpMV)")
    fmt = "csr-vector" if precision != "double" and format == "auto" else format
    rtol = _tolerance(rtol, "rtol")
    atol = _tolerance(atol, "atol")
    if rtol == 0 and atol == 0:
        raise bad("rtol = atol = 0: no solve could stop before maxiter; give a positive rtol "
                  "or atol")
    if maxit is not None and maxiter is not None and maxit != maxiter:
        raise bad("maxiter and maxit (its alias) disagree")
    maxiter = _positive_int(maxiter if maxiter is not None else maxit, "maxiter")
    restart = _positive_int(restart, "restart", allow_none=False)
    every = _positive_int(callback_every, "callback_every")
    if callback is not None and not callable(callback):
        raise bad("callback: not callable")
    spmv_opts = options_string(options)
    outer_opts = with_precision(spmv_opts, "mixed") if precision == "mixed" else spmv_opts
    inner_opts = with_precision(spmv_opts, "mixed") if precision == "mixed-refine" else None
    for o in (outer_opts, inner_opts):
        if o is not None:
            check(lib.gs_spmv_options_check(o), "options")
    pc_opts = options_string(precond_options, "precond_options")
    if pc_opts is not None and pc == "none":
        raise bad("precond_options set options of a preconditioner: name one with precond=")
    if pc != "none":
        check(lib.gs_precond_options_check(b"amg" if pc == "auto" else pc.encode(), pc_opts),
              "precond_options")

    # ---- the system: a host CSR, or a cupyx matrix's arrays on its device
    H, device = matrix_input(A)
    a_dev = device is not None
    b_dev = is_cupy_array(b)
    if b_dev:
        device = b.device.id if device is None else device
        if b.device.id != device:
            raise bad(f"b is on device {b.device.id}, A on device {device}")
    m, n = H.shape
    if mid != _lib.SOLVER_AUTO:
        _check_method(mid, method, H.shape, pc, precision)
    elif m != n:
        _check_method(_LSQR, "auto (lsqr for a rectangular A)", H.shape, pc, precision)
    if b_dev:
        bv = as_device_vector(b, m, "b")
    else:
        bv = as_host_vector(b, m, "b")
    x0v = None
    if x0 is not None:
        if b_dev:
            cp = cupy()
            with bv.device:
                x0v = as_device_vector(x0 if is_cupy_array(x0) else cp.asarray(
                    as_host_vector(x0, n, "x0", "A's columns")), n, "x0", "A's columns")
        else:
            x0v = as_host_vector(x0.get() if is_cupy_array(x0) else x0, n, "x0",
                                 "A's columns")

    # ---- the device: on CuPy's current stream when the inputs are CuPy's
    cupy_in = a_dev or b_dev
    ctx = context_for(context, device, cupy_inputs=cupy_in, matrix=H)
    with CupyOrder(ctx, active=cupy_in):
        M = DeviceMatrix(ctx, H)
        if mid == _lib.SOLVER_AUTO:
            mid = _LSQR if m != n else lib.gs_solve_auto_method(M.handle)
            _check_method(mid, "auto", H.shape, pc, precision)
        mname = _lib.s(lib.gs_method_string(mid))
        flags = lib.gs_method_flags(mid)
        need_t = bool(flags & _lib.METHOD_TRANSPOSE)
        opts = _lib.SolveOpts()
        lib.gs_solve_opts_default(ctypes.byref(opts))
        opts.method = mid
        opts.rtol, opts.atol = rtol, atol
        if maxiter is not None:
            opts.maxit = maxiter
        opts.restart = restart
        opts.graphs = 1 if graphs else 0
        opts.check_every = every or 0
        escalate = pc == "auto" and mid == 0 and precision != "mixed-refine"
        # method "auto": CG or BiCGSTAB was a guess; GMRES goes on where it fails (the C
        # library's GS_FALLBACK_AUTO sees the resolved method, so ask for it by name)
        if method == "auto" and precision != "mixed-refine":
            opts.fallback = _lib.FALLBACK_GMRES
        if escalate:
            opts.precond_auto = _lib.PRECOND_AUTO_AMG
            opts.precond_auto_opts = pc_opts

        t0 = time.perf_counter()
        S = ctypes.c_void_p()
        if fmt == "auto":
            so = _lib.SelectOpts()
            lib.gs_select_opts_default(ctypes.byref(so))
            so.expected_products = opts.maxit * _products_per_iteration(mid)
            so.need_transpose = 1 if need_t else 0
            so.use_cache = 1 if cache else 0
            so.staged = 1  # start light, revised at the checks (as the CLI's solve)
            check(lib.gs_spmv_create_auto(ctypes.byref(S), ctx.handle, M.handle, outer_opts,
                                          ctypes.byref(so)))
        else:
            check(lib.gs_spmv_create(ctypes.byref(S), ctx.handle, M.handle, fmt.encode(),
                                     outer_opts))
        prod = Product(M, S)
        if need_t and not lib.gs_spmv_supports(S, _lib.OP_T):
            raise InputError(f"{mname} needs the transpose product A^T x, and format "
                             f"{prod.name} has none for this matrix", "GS_ERR_UNSUPPORTED", -5)
        inner = None
        if inner_opts is not None:
            Si = ctypes.c_void_p()
            check(lib.gs_spmv_create(ctypes.byref(Si), ctx.handle, M.handle, fmt.encode(),
                                     inner_opts))
            inner = Product(M, Si)
        check(lib.gs_context_sync(ctx.handle))
        prepare_s = time.perf_counter() - t0

        Mp = ctypes.c_void_p()
        if pc not in ("none", "auto"):
            check(lib.gs_precond_create_opts(ctypes.byref(Mp), ctx.handle, M.handle,
                                             pc.encode(), pc_opts))
        try:
            vec = SolveVectors(ctx, bv, x0v, n, b_dev)  # CuPy's in place, NumPy's uploaded
            d_b, d_x = vec.d_b, vec.d_x
            opts.x0_given = 1 if x0v is not None else 0

            raised = []
            if callback is not None:
                def _mon(user, it, rnorm, rel):
                    try:
                        return 1 if callback(it, rnorm, rel) else 0
                    except BaseException as e:  # stop the solve, re-raised below
                        raised.append(e)
                        return 1
                mon = _lib.MONITOR(_mon)
                opts.monitor = mon
            stats = _lib.SolveStats()
            rstats = _lib.RefineStats()
            if inner is not None:
                ro = _lib.RefineOpts()
                lib.gs_refine_opts_default(ctypes.byref(ro))
                st = lib.gs_solve_refine(ctx.handle, ctypes.byref(opts), ctypes.byref(ro),
                                         S, inner.handle, Mp, d_b, d_x, ctypes.byref(stats),
                                         ctypes.byref(rstats))
            else:
                st = lib.gs_solve(ctx.handle, ctypes.byref(opts), S, Mp, d_b, d_x,
                                  ctypes.byref(stats))
            if raised:
                raise raised[0]
            check(st)
            pc_setup = lib.gs_precond_setup_seconds(Mp) if Mp.value else 0.0
            x = vec.result()
        finally:
            lib.gs_precond_destroy(ctypes.byref(Mp))
        rec = lib.gs_spmv_selection(S)
        selection = selection_from_record(rec.contents) if rec else None
        fmt_used = prod.name

    info = {k: getattr(stats, k) for k in _STAT_FIELDS}
    for k in ("graphs_note", "persistent_note", "precond_auto_note", "fallback_detail",
              "fallback_note"):
        info[k] = _lib.s(info[k])
    info["precond_auto_limit"] = bool(stats.precond_auto_limit)
    ran = stats.fallback_iteration >= 0  # the method that failed, by name, when one did
    info["fallback_from"] = _lib.s(lib.gs_method_string(stats.fallback_from)) if ran else None
    info["fallback_reason"] = _lib.s(lib.gs_reason_string(stats.fallback_reason)) if ran else None
    info["graphs"], info["persistent"] = bool(stats.graphs), bool(stats.persistent)
    info["seconds_precond_setup"] = info["seconds_precond_setup"] or pc_setup
    rel_double = float("nan")
    if precision == "mixed" and a_dev:  # the residual of the double A, on A's device
        cp = cupy()
        with H.keep.data.device:
            bd, xd = cp.asarray(bv), cp.asarray(x)
            rn, bn = float(cp.linalg.norm(bd - H.keep @ xd)), float(cp.linalg.norm(bd))
        rel_double = rn / bn if bn > 0 else rn
    elif precision == "mixed" and not b_dev:  # the residual of the double A (x solves fl32(A))
        r = bv - H.keep @ x
        bn = float(np.linalg.norm(bv))
        rel_double = float(np.linalg.norm(r)) / bn if bn > 0 else float(np.linalg.norm(r))
    info.update(
        converged=bool(lib.gs_reason_converged(stats.reason)),
        reason=_lib.s(lib.gs_reason_string(stats.reason)),
        reason_text=_lib.s(lib.gs_reason_describe(stats.reason)),
        detail=_lib.s(stats.detail), method=_lib.s(lib.gs_method_string(stats.method)),
        format=fmt_used, precond=pc, precision=precision,
        residual_norm=stats.true_residual_norm, rel_residual_double=rel_double,
        prepare_s=prepare_s, wall_s=time.perf_counter() - t_start, selection=selection,
        device=ctx.device, outer=rstats.outer if inner is not None else 0,
        reliable=bool(rstats.reliable) if inner is not None else False)
    return x, SolveInfo(**info)
