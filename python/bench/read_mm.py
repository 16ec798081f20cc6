#!/usr/bin/env python3
"""gpusolve.read_mm against scipy.io.mmread, thread count for thread count (host only).

usage: python3 python/bench/read_mm.py [FILE.mtx ...] [--threads 1,2,all] [--reps N]
       [--lap N]

For each file and thread count k ("all" = the online cores) it times, alternating read by read
so that both see the same machine load, N reads each (default 5) of a file already in the page
cache:
  read_mm     gpusolve.read_mm(FILE) with set_read_threads(k): a scipy.sparse.csr_array
  mmread      scipy.io.mmread(FILE) with fast_matrix_market's PARALLELISM = k: a coo_array
  mmread+csr  scipy.io.mmread(FILE).tocsr(): the same result as read_mm's
and prints the medians and the speed-ups (the goal: read_mm >= 1.5x mmread at every k).
Without FILE it writes the 27-point Laplacian of an N^3 grid (--lap, default 64: 7.0 M
entries) to a temporary file with gpusolve.write_mm and reads that. The CPU model and the load
average before and after are printed: other work on the machine takes cores from both readers,
and from a parallel reader more than from the serial parts of another, so only timings taken at
a low load compare.
"""
import argparse
import gc
import os
import statistics
import sys
import tempfile
import time

import numpy as np
import scipy
import scipy.io
import scipy.io._fast_matrix_market as fmm

import gpusolve

# thread_list: the C reader's benchmark beside fast_matrix_market parses --threads the same way
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
from mm_scipy_compare import thread_list  # noqa: E402


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


def load():
    try:
        return "load average %.2f %.2f %.2f" % os.getloadavg()
    except OSError:
        return "load average unknown"


def timed(fn):
    gc.collect()
    t0 = time.perf_counter()
    r = fn()
    dt = time.perf_counter() - t0
    del r
    return dt


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="*", help="Matrix Market files (.mtx)")
    ap.add_argument("--threads", default="1,2,all", help="thread counts (default 1,2,all)")
    ap.add_argument("--reps", type=int, default=5, help="reads per timing (median)")
    ap.add_argument("--lap", type=int, default=64, help="grid side of the default file")
    args = ap.parse_args()
    tmp = None
    paths = args.paths
    if not paths:
        tmp = tempfile.TemporaryDirectory()
        p = os.path.join(tmp.name, f"lap27_{args.lap}.mtx")
        gpusolve.write_mm(p, gpusolve.laplace(args.lap, args.lap, args.lap, 27))
        paths = [p]
    print(f"{os.cpu_count()} CPUs ({cpu_model()}), gpusolve {gpusolve.__version__}, "
          f"SciPy {scipy.__version__}, NumPy {np.__version__}; median of {args.reps} reads; "
          f"{load()}")
    hdr = (f"{'file':<22} {'MB':>7} {'nnz':>10} {'thr':>3} {'read_mm s':>10} {'mmread s':>9} "
           f"{'+tocsr s':>9} {'vs mmread':>9} {'vs +tocsr':>9}")
    print(hdr)
    print("-" * len(hdr))
    for path in paths:
        mb = os.path.getsize(path) / 1e6
        A = gpusolve.read_mm(path)  # warms the page cache; checks the two agree
        B = scipy.io.mmread(path)
        if hasattr(B, "tocsr"):
            Bc = B.tocsr()
            Bc.sum_duplicates()
            if A.shape != Bc.shape or abs(A - Bc).max() != 0:
                sys.exit(f"read_mm: {path}: read_mm and scipy.io.mmread disagree")
        nnz = A.nnz
        del A, B
        for k in thread_list(args.threads):
            gpusolve.set_read_threads(k)
            fmm.PARALLELISM = k
            ours, theirs, theirs_csr = [], [], []
            for _ in range(max(1, args.reps)):
                ours.append(timed(lambda: gpusolve.read_mm(path)))
                theirs.append(timed(lambda: scipy.io.mmread(path)))
                theirs_csr.append(timed(lambda: scipy.io.mmread(path).tocsr()))
            o, t, tc = (statistics.median(v) for v in (ours, theirs, theirs_csr))
            print(f"{os.path.basename(path)[:22]:<22} {mb:7.1f} {nnz:10d} {k:3d} {o:10.3f} "
                  f"{t:9.3f} {tc:9.3f} {t / o:8.2f}x {tc / o:8.2f}x")
    gpusolve.set_read_threads(None)
    fmm.PARALLELISM = 0
    print(f"after: {load()}")


if __name__ == "__main__":
    main()
