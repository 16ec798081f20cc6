"""libgpusolve through ctypes: finding the library, the C structs, the prototypes.

Every struct mirrored here is checked against the C compiler's sizeof/offsetof by
tests/test_abi.py. Structs the library fills (options defaults, stats, records) carry a
trailing reserve so that a newer library that appends fields cannot write past them.

ctypes.CDLL releases the GIL around every foreign call (PyDLL would keep it), so reads, builds
and solves run while other Python threads go on; a monitor callback takes the GIL back for the
time of its Python code.
"""
import ctypes
import ctypes.util
import os

_here = os.path.dirname(os.path.abspath(__file__))

c_int, c_double, c_char_p, c_void_p = ctypes.c_int, ctypes.c_double, ctypes.c_char_p, ctypes.c_void_p
c_idx = ctypes.c_int32  # gs_idx_t
c_off = ctypes.c_int64  # gs_off_t
c_long = ctypes.c_long
c_size = ctypes.c_size_t
P = ctypes.POINTER
_RESERVE = 256  # bytes after the known fields of structs the library writes


def _candidates():
    env = os.environ.get("GPUSOLVE_LIBRARY")
    if env:
        return [env], True
    out = [os.path.join(_here, "libgpusolve.so")]
    found = ctypes.util.find_library("gpusolve")
    if found:
        out.append(found)
    return out, False


def _preload_cuda():
    """Loads the CUDA libraries libgpusolve links from the toolkit (CUDA_HOME, CUDA_PATH,
    /usr/local/cuda) when the loader's path lacks them; False when none was found."""
    done = False
    for root in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if not root:
            continue
        for sub in ("lib64", "lib", "targets/x86_64-linux/lib"):
            d = os.path.join(root, sub)
            if not os.path.isdir(d):
                continue
            for stem in ("libcudart.so", "libcublasLt.so", "libcublas.so", "libcusparse.so"):
                names = sorted(f for f in os.listdir(d) if f.startswith(stem + "."))
                for f in names[:1] or ([stem] if os.path.exists(os.path.join(d, stem)) else []):
                    try:
                        ctypes.CDLL(os.path.join(d, f), mode=ctypes.RTLD_GLOBAL)
                        done = True
                    except OSError:
                        pass
            if done:
                return True
    return done


def _load():
    paths, from_env = _candidates()
    errors = []
    for p in paths:
        if not from_env and os.path.sep in p and not os.path.exists(p):
            continue
        try:
            return ctypes.CDLL(p), p
        except OSError as e:  # a missing CUDA library says so here
            if "libcu" in str(e) and _preload_cuda():
                try:
                    return ctypes.CDLL(p), p
                except OSError as e2:
                    e = e2
            errors.append(f"{p}: {e}")
    where = "; ".join(errors) if errors else "no libgpusolve.so in the package (" + _here + \
        ") nor on the loader's path"
    raise ImportError("gpusolve: cannot load libgpusolve: " + where + ". Reinstall with "
                      "`pip install ./python` (needs the CUDA toolkit), or point GPUSOLVE_LIBRARY "
                      "at a built libgpusolve.so; the CUDA libraries it links (libcudart, libcublas, "
                      "libcusparse) must be on the loader's path")


lib, path = _load()


# ---- structs ---------------------------------------------------------------------------------
class Csr(ctypes.Structure):  # gs_csr_t
    _fields_ = [("m", c_idx), ("n", c_idx), ("nnz", c_off), ("row_ptr", P(c_off)),
                ("col", P(c_idx)), ("val", P(c_double)), ("symmetry", c_int)]


class MMInfo(ctypes.Structure):  # gs_mm_info_t
    _fields_ = [("array", c_int), ("field", c_int), ("symmetry", c_int),
                ("rows", ctypes.c_int64), ("cols", ctypes.c_int64), ("stored", ctypes.c_int64),
                ("lower", ctypes.c_int64), ("upper", ctypes.c_int64),
                ("_reserve", ctypes.c_char * _RESERVE)]


class SelectFeatures(ctypes.Structure):  # gs_select_features_t
    _fields_ = [("rows", c_idx), ("cols", c_idx), ("nnz", c_off), ("pct_nnz", c_double),
                ("row_mean", c_double), ("row_std", c_double), ("row_max", c_off),
                ("diagonals", c_idx), ("ell_fill", c_double), ("dia_fill", c_double),
                ("sell_fill", c_double), ("ell_slots", c_double), ("dia_slots", c_double),
                ("sell_slots", c_double), ("sell_total", c_double),
                ("distinct_values", c_off), ("symmetric", c_int)]


SELECT_MAX, SELECT_NAME = 32, 32


class SelectRule(ctypes.Structure):  # gs_select_rule_t
    _fields_ = [("n", c_int), ("names", (ctypes.c_char * SELECT_NAME) * SELECT_MAX),
                ("row", c_char_p), ("excluded", ctypes.c_char * 512)]


class SelectTime(ctypes.Structure):  # gs_select_time_t
    _fields_ = [("name", ctypes.c_char * SELECT_NAME), ("status", c_int),
                ("prepare_s", c_double), ("spmv_s", c_double), ("spmv_t_s", c_double),
                ("cost_s", c_double), ("bound_s", c_double)]


class Selection(ctypes.Structure):  # gs_selection_t
    _fields_ = [("features", SelectFeatures), ("rule", SelectRule), ("pool", SelectRule),
                ("expected_products", c_double), ("expected_products_t", c_double),
                ("measured", c_int), ("cache", c_int), ("cache_file", ctypes.c_char * 1024),
                ("shared_csr_s", c_double), ("ntimes", c_int),
                ("times", SelectTime * SELECT_MAX), ("chosen", c_int),
                ("chosen_name", ctypes.c_char * SELECT_NAME), ("seconds", c_double),
                ("features_s", c_double), ("measuring_s", c_double),
                ("warning", ctypes.c_char * 1024), ("staged", c_int),
                ("first_name", ctypes.c_char * SELECT_NAME), ("tried", c_int),
                ("switches", c_int), ("switch_iteration", c_long),
                ("remaining_products", c_double), ("progress_s", c_double)]


class SelectOpts(ctypes.Structure):  # gs_select_opts_t
    _fields_ = [("expected_products", c_double), ("expected_products_t", c_double),
                ("rule_only", c_int), ("use_cache", c_int), ("cache_dir", c_char_p),
                ("need_transpose", c_int), ("warmup", c_int), ("runs", c_int),
                ("staged", c_int), ("_reserve", ctypes.c_char * _RESERVE)]


MONITOR = ctypes.CFUNCTYPE(c_int, c_void_p, c_int, c_double, c_double)


class SolveOpts(ctypes.Structure):  # gs_solve_opts_t
    _fields_ = [("method", c_int), ("rtol", c_double), ("atol", c_double), ("maxit", c_int),
                ("restart", c_int), ("x0_given", c_int), ("check_every", c_int),
                ("stagnation_window", c_int), ("timing", c_int), ("monitor", MONITOR),
                ("monitor_user", c_void_p), ("graphs", c_int), ("persistent", c_int),
                ("precond_auto", c_int), ("precond_auto_opts", c_char_p),
                ("fallback", c_int), ("_reserve", ctypes.c_char * _RESERVE)]


class SolveStats(ctypes.Structure):  # gs_solve_stats_t
    _fields_ = [("method", c_int), ("reason", c_int), ("detail", c_char_p),
                ("iterations", c_int), ("restarts", c_int), ("bnorm", c_double),
                ("rnorm0", c_double), ("rnorm", c_double), ("true_residual_norm", c_double),
                ("rel_residual", c_double), ("seconds_total", c_double),
                ("seconds_spmv", c_double), ("seconds_precond", c_double),
                ("seconds_setup", c_double), ("seconds_precond_setup", c_double),
                ("spmv_count", c_long), ("precond_count", c_long),
                ("normal_residual_norm", c_double), ("rel_normal_residual", c_double),
                ("anorm", c_double), ("acond", c_double), ("graphs", c_int),
                ("graphs_note", c_char_p), ("checks", c_int), ("persistent", c_int),
                ("persistent_note", c_char_p), ("vector_bytes", c_double),
                ("precond_auto_iteration", c_int), ("precond_auto_setup_s", c_double),
                ("precond_auto_left_s", c_double), ("precond_auto_cost_s", c_double),
                ("precond_auto_levels", c_int), ("precond_auto_complexity", c_double),
                ("precond_auto_note", c_char_p), ("precond_auto_limit", c_int),
                ("fallback_iteration", c_int), ("fallback_from", c_int),
                ("fallback_reason", c_int), ("fallback_detail", c_char_p),
                ("fallback_note", c_char_p), ("_reserve", ctypes.c_char * _RESERVE)]


class RefineOpts(ctypes.Structure):  # gs_refine_opts_t
    _fields_ = [("inner_rtol", c_double), ("max_outer", c_int), ("min_reduction", c_double),
                ("reliable_delta", c_double), ("_reserve", ctypes.c_char * _RESERVE)]


class RefineStats(ctypes.Structure):  # gs_refine_stats_t
    _fields_ = [("outer", c_int), ("inner_iterations", c_int), ("last_inner_reason", c_int),
                ("seconds_inner", c_double), ("reliable", c_int), ("outer_spmv", c_long),
                ("seconds_outer_spmv", c_double), ("_reserve", ctypes.c_char * _RESERVE)]


class BatchSolveOpts(ctypes.Structure):  # gs_batch_solve_opts_t
    _fields_ = [("method", c_int), ("rtol", c_double), ("atol", c_double), ("maxit", c_int),
                ("jacobi", c_int), ("x0_given", c_int), ("precond", c_int), ("block", c_int),
                ("agglomerate", c_int), ("restart", c_int),
                ("_reserve", ctypes.c_char * _RESERVE)]


class BatchStats(ctypes.Structure):  # gs_batch_stats_t (an array element: no reserve)
    _fields_ = [("reason", c_int), ("iterations", c_int), ("bnorm", c_double),
                ("rnorm0", c_double), ("rnorm", c_double), ("true_residual_norm", c_double),
                ("detail", ctypes.c_char_p), ("detail_row", c_int)]


class BatchSummary(ctypes.Structure):  # gs_batch_summary_t
    _fields_ = [("converged", c_int), ("it_min", c_int), ("it_median", c_int),
                ("it_max", c_int), ("seconds", c_double), ("shared_problems", c_int),
                ("_reserve", ctypes.c_char * _RESERVE)]


# The structs the ABI test compares with C: (ctypes class, C type, fields to check).
ABI_STRUCTS = [(Csr, "gs_csr_t"), (MMInfo, "gs_mm_info_t"),
               (SelectFeatures, "gs_select_features_t"), (SelectRule, "gs_select_rule_t"),
               (SelectTime, "gs_select_time_t"), (Selection, "gs_selection_t"),
               (SelectOpts, "gs_select_opts_t"), (SolveOpts, "gs_solve_opts_t"),
               (SolveStats, "gs_solve_stats_t"), (RefineOpts, "gs_refine_opts_t"),
               (RefineStats, "gs_refine_stats_t"), (BatchSolveOpts, "gs_batch_solve_opts_t"),
               (BatchStats, "gs_batch_stats_t"), (BatchSummary, "gs_batch_summary_t")]

# ---- prototypes ----------------------------------------------------------------------------
_st = c_int  # gs_status_t
_vp = c_void_p
_pp = P(c_void_p)
_PROTOS = {
    # status, version, devices
    "gs_version": (c_char_p, []),
    "gs_status_string": (c_char_p, [c_int]),
    "gs_last_error": (c_char_p, []),
    "gs_last_error_location": (c_char_p, []),
    "gs_clear_error": (None, []),
    "gs_device_count": (c_int, []),
    # host containers and I/O
    "gs_csr_destroy": (None, [P(P(Csr))]),
    "gs_csr_validate": (_st, [P(Csr)]),
    "gs_csr_spmv_host": (_st, [P(Csr), c_int, c_double, P(c_double), c_double, P(c_double)]),
    "gs_mm_read_csr_ex": (_st, [c_char_p, ctypes.c_uint, P(P(Csr)), P(MMInfo)]),
    "gs_mm_set_threads": (None, [c_int]),
    "gs_mm_threads": (c_int, []),
    "gs_mm_has_gzip": (c_int, []),
    "gs_mm_write_csr": (_st, [c_char_p, P(Csr)]),
    "gs_gen_laplace": (_st, [P(P(Csr)), c_idx, c_idx, c_idx, c_int]),
    # registries
    "gs_spmv_backend_count": (c_int, []),
    "gs_spmv_backend_name": (c_char_p, [c_int]),
    "gs_spmv_backend_summary": (c_char_p, [c_int]),
    "gs_spmv_backend_flags": (ctypes.c_uint, [c_int]),
    "gs_spmv_backend_find": (c_int, [c_char_p]),
    "gs_spmv_options_check": (_st, [c_char_p]),
    "gs_precond_count": (c_int, []),
    "gs_precond_name_at": (c_char_p, [c_int]),
    "gs_precond_summary_at": (c_char_p, [c_int]),
    "gs_precond_find": (c_int, [c_char_p]),
    "gs_precond_symmetric_at": (c_int, [c_int]),
    "gs_precond_options_check": (_st, [c_char_p, c_char_p]),
    "gs_method_find": (c_int, [c_char_p]),
    "gs_method_string": (c_char_p, [c_int]),
    "gs_method_flags": (ctypes.c_uint, [c_int]),
    "gs_reason_string": (c_char_p, [c_int]),
    "gs_reason_describe": (c_char_p, [c_int]),
    "gs_reason_converged": (c_int, [c_int]),
    "gs_precision_find": (c_int, [c_char_p]),
    # selection (the rule is host-only)
    "gs_select_features": (_st, [P(Csr), P(SelectFeatures)]),
    "gs_select_rule": (_st, [P(SelectFeatures), c_char_p, c_int, P(SelectRule)]),
    "gs_select_pool": (_st, [P(SelectFeatures), c_char_p, c_int, P(SelectRule), P(SelectRule)]),
    "gs_select_opts_default": (None, [P(SelectOpts)]),
    "gs_spmv_create_auto": (_st, [_pp, _vp, _vp, c_char_p, P(SelectOpts)]),
    "gs_spmv_selection": (P(Selection), [_vp]),
    # context and device memory
    "gs_context_create": (_st, [_pp, c_int]),
    "gs_context_create_on_stream": (_st, [_pp, c_int, _vp]),
    "gs_context_destroy": (None, [_pp]),
    "gs_context_stream": (_vp, [_vp]),
    "gs_context_sync": (_st, [_vp]),
    "gs_context_device": (c_int, [_vp]),
    "gs_context_device_name": (c_char_p, [_vp]),
    "gs_dmalloc": (_st, [_vp, _pp, c_size, c_char_p]),
    "gs_dfree": (None, [_vp, _vp]),
    "gs_device_bytes_in_use": (c_size, [_vp]),
    "gs_device_bytes_peak": (c_size, [_vp]),
    "gs_copy_to_device": (_st, [_vp, _vp, _vp, c_size]),
    "gs_copy_to_host": (_st, [_vp, _vp, _vp, c_size]),
    # matrices and products
    "gs_matrix_create": (_st, [_pp, _vp, P(Csr)]),
    "gs_matrix_create_device": (_st, [_pp, _vp, c_idx, c_idx, c_off, _vp, c_int, _vp, _vp,
                                      ctypes.c_uint]),
    "gs_matrix_destroy": (None, [_pp]),
    "gs_spmv_create": (_st, [_pp, _vp, _vp, c_char_p, c_char_p]),
    "gs_spmv_destroy": (None, [_pp]),
    "gs_spmv_apply": (_st, [_vp, c_int, c_double, _vp, c_double, _vp]),
    "gs_spmv_apply_float": (_st, [_vp, c_int, ctypes.c_float, _vp, ctypes.c_float, _vp]),
    "gs_spmv_name": (c_char_p, [_vp]),
    "gs_spmv_describe": (c_char_p, [_vp]),
    "gs_spmv_supports": (c_int, [_vp, c_int]),
    "gs_spmv_value_type": (c_int, [_vp]),
    # preconditioners and solvers
    "gs_precond_create_opts": (_st, [_pp, _vp, _vp, c_char_p, c_char_p]),
    "gs_precond_destroy": (None, [_pp]),
    "gs_precond_setup_seconds": (c_double, [_vp]),
    "gs_solve_opts_default": (None, [P(SolveOpts)]),
    "gs_solve_auto_method": (c_int, [_vp]),
    "gs_solve": (_st, [_vp, P(SolveOpts), _vp, _vp, _vp, _vp, P(SolveStats)]),
    "gs_refine_opts_default": (None, [P(RefineOpts)]),
    "gs_solve_refine": (_st, [_vp, P(SolveOpts), P(RefineOpts), _vp, _vp, _vp, _vp, _vp,
                              P(SolveStats), P(RefineStats)]),
    # batches
    "gs_batch_create": (_st, [_pp, _vp, c_int, P(P(Csr))]),
    "gs_batch_destroy": (None, [_pp]),
    "gs_batch_solve_opts_default": (None, [P(BatchSolveOpts)]),
    "gs_batch_solve": (_st, [_vp, P(BatchSolveOpts), _vp, _vp, P(BatchStats),
                             P(BatchSummary)]),
}

for _name, (_res, _args) in _PROTOS.items():
    _f = getattr(lib, _name)  # AttributeError names a symbol this library lacks
    _f.restype = _res
    _f.argtypes = _args

# enum values (gpusolve/status.h, solver.h, spmv.h)
OP_N, OP_T = 0, 1
SOLVER_AUTO = 3
METHOD_SQUARE, METHOD_TRANSPOSE, METHOD_LEAST_SQUARES, METHOD_SYMMETRIC_PC = 1, 2, 4, 8
PRECOND_AUTO_AMG = 1
FALLBACK_AUTO, FALLBACK_OFF, FALLBACK_GMRES = 0, 1, 2  # gs_solve_opts_t.fallback
PRECISION_DOUBLE, PRECISION_MIXED, PRECISION_FLOAT = 0, 1, 2
MATRIX_DEVICE_BORROW = 1
MM_STRICT = 1


def s(b):
    """C string (bytes or None) to str."""
    return b.decode("utf-8", "replace") if b else ""
