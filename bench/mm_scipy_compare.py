#!/usr/bin/env python3
"""Matrix Market reading speed: gpusolve's reader against fast_matrix_market, thread for thread.

usage: python3 bench/mm_scipy_compare.py FILE.mtx [--threads 1,2,all] [--reps N] [--lib PATH]

fast_matrix_market (pip install fast_matrix_market scipy) is the threaded C++ reader behind
scipy.io.mmread since SciPy 1.12. For each thread count k ("all" = the online cores) it times
fast_matrix_market.mmread(FILE, parallelism=k) (a scipy coo_matrix; without SciPy,
fast_matrix_market.read_coo, the same parse into numpy arrays) and gpusolve's
gs_mm_read_coo with k threads (through ctypes from build/libgpusolve.so, in this process), the
two alternating read by read so that both see the same machine load, N reads each (default 5)
of a file already in the page cache. Prints MB/s of both from the median times, the ratio (ours
/ fmm; the goal is at least 1.5 at every k), the same ratio from the fastest reads (steadier on
a busy machine), and gpusolve's gs_mm_read_csr (COO converted to CSR as well) for information.

A large test file: build/apps/gpusolve gen laplace --grid 100x100x100 --stencil 27 -o lap27.mtx
(444 MB, 26.5 M entries). build/bench/mm_read_bench FILE N --threads LIST times our reader alone.
"""
import argparse
import ctypes
import gc
import os
import statistics
import sys
import time


def thread_list(text):
    """--threads "1,2,all": the counts in order, once each ("all": the online cores). Also
    python/bench/read_mm.py's."""
    out = []
    for w in text.split(","):
        k = (os.cpu_count() or 1) if w == "all" else int(w)
        if k not in out:
            out.append(k)
    return out


def load_lib(path):
    lib = ctypes.CDLL(path)
    lib.gs_mm_set_threads.argtypes = [ctypes.c_int]
    lib.gs_mm_read_coo.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p)]
    lib.gs_mm_read_csr.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p)]
    lib.gs_coo_destroy.argtypes = [ctypes.POINTER(ctypes.c_void_p)]
    lib.gs_csr_destroy.argtypes = [ctypes.POINTER(ctypes.c_void_p)]
    lib.gs_last_error.restype = ctypes.c_char_p
    return lib


def timed(fn):
    gc.collect()
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    default_lib = os.path.join(os.path.dirname(here), "build", "libgpusolve.so")
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("path", help="a Matrix Market file (.mtx)")
    ap.add_argument("--threads", default="1,2,all", help="thread counts (default 1,2,all)")
    ap.add_argument("--reps", type=int, default=5, help="reads per timing (median)")
    ap.add_argument("--lib", default=default_lib, help="gpusolve's shared library")
    args = ap.parse_args()

    try:
        import fast_matrix_market as fmm
    except ImportError:
        sys.exit("mm_scipy_compare: fast_matrix_market is not installed "
                 "(pip install fast_matrix_market scipy)")
    if not os.path.isfile(args.path):
        sys.exit(f"mm_scipy_compare: {args.path}: no such file")
    if not os.path.isfile(args.lib):
        sys.exit(f"mm_scipy_compare: {args.lib}: not built (cmake --build build)")
    lib = load_lib(args.lib)
    path = args.path.encode()
    ks = thread_list(args.threads)
    reps = max(1, args.reps)
    mb = os.path.getsize(args.path) / 1e6
    print(f"file {args.path}: {mb:.1f} MB, {os.cpu_count()} CPUs, "
          f"fast_matrix_market {getattr(fmm, '__version__', '?')}")

    def ours_coo():
        a = ctypes.c_void_p()
        if lib.gs_mm_read_coo(path, ctypes.byref(a)) != 0:
            sys.exit(f"mm_scipy_compare: {lib.gs_last_error().decode()}")
        lib.gs_coo_destroy(ctypes.byref(a))

    def ours_csr():
        a = ctypes.c_void_p()
        if lib.gs_mm_read_csr(path, ctypes.byref(a)) != 0:
            sys.exit(f"mm_scipy_compare: {lib.gs_last_error().decode()}")
        lib.gs_csr_destroy(ctypes.byref(a))

    try:
        import scipy.sparse  # noqa: F401  (fmm.mmread builds a scipy coo_matrix)
        fmm_read, fmm_name = fmm.mmread, "mmread"
    except ImportError:
        # Without SciPy, time fmm.read_coo: the same threaded parse into numpy arrays that
        # mmread wraps in a coo_matrix (the wrapping copies nothing).
        fmm_read, fmm_name = fmm.read_coo, "read_coo (no scipy)"
    print(f"fast_matrix_market call: {fmm_name}")
    fmm_read(args.path, parallelism=1)  # into the page cache, imports warmed up
    rows = []
    for k in ks:
        lib.gs_mm_set_threads(k)
        t_fmm, t_coo, t_csr = [], [], []
        for _ in range(reps):
            t_fmm.append(timed(lambda: fmm_read(args.path, parallelism=k)))
            t_coo.append(timed(ours_coo))
            t_csr.append(timed(ours_csr))
        rows.append((k, t_coo, t_fmm, t_csr))
        print(f"  k={k}: fmm {' '.join(f'{t:.3f}' for t in t_fmm)} s; "
              f"ours {' '.join(f'{t:.3f}' for t in t_coo)} s", flush=True)
    lib.gs_mm_set_threads(0)

    med = statistics.median
    print(f"\n{'threads':>7} {'ours MB/s':>10} {'fmm MB/s':>9} {'ratio':>6} {'ratio(min)':>10} "
          f"{'ours CSR MB/s':>14}")
    worst = None
    for k, t_coo, t_fmm, t_csr in rows:
        r = med(t_fmm) / med(t_coo)
        worst = r if worst is None else min(worst, r)
        print(f"{k:7d} {mb / med(t_coo):10.1f} {mb / med(t_fmm):9.1f} {r:6.2f} "
              f"{min(t_fmm) / min(t_coo):10.2f} {mb / med(t_csr):14.1f}")
    print(f"\nlowest ratio of medians {worst:.2f} (goal >= 1.5): "
          f"{'met' if worst >= 1.5 else 'MISSED'}")


if __name__ == "__main__":
    main()
