#!/usr/bin/env python3
"""Matrix Market reading speed: gpusolve's reader against fast_matrix_market, thread for thread.

usage: python3 bench/mm_scipy_compare.py FILE.mtx [--threads 1,2,all] [--reps N] [--bench PATH]

fast_matrix_market (pip install fast_matrix_market) is the threaded C++ reader behind
scipy.io.mmread since SciPy 1.12. For each thread count k ("all" = the online cores) it times
fast_matrix_market.mmread(FILE, parallelism=k) and gpusolve's gs_mm_read_coo with k threads
(bench/mm_read_bench FILE N --threads LIST, its machine-readable lines), each the median of N
reads (default 5) of the file already in the page cache, and prints MB/s of both, the ratio
(ours / fmm; the goal is at least 1.5 at every k) and, for information, gpusolve's
gs_mm_read_csr (the COO converted to CSR as well: fmm.mmread stops at a scipy coo_matrix).

A large test file: build/apps/gpusolve gen laplace --grid 100x100x100 --stencil 27 -o lap27.mtx
(444 MB, 26.5 M entries).
"""
import argparse
import gc
import os
import re
import statistics
import subprocess
import sys
import time


def thread_list(text):
    out = []
    for w in text.split(","):
        k = (os.cpu_count() or 1) if w == "all" else int(w)
        if k not in out:
            out.append(k)
    return out


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    default_bench = os.path.join(os.path.dirname(here), "build", "bench", "mm_read_bench")
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("path", help="a Matrix Market file (.mtx)")
    ap.add_argument("--threads", default="1,2,all", help="thread counts (default 1,2,all)")
    ap.add_argument("--reps", type=int, default=5, help="reads per timing (median)")
    ap.add_argument("--bench", default=default_bench, help="the mm_read_bench program")
    args = ap.parse_args()

    try:
        import fast_matrix_market as fmm
    except ImportError:
        sys.exit("mm_scipy_compare: fast_matrix_market is not installed "
                 "(pip install fast_matrix_market scipy)")
    if not os.path.isfile(args.path):
        sys.exit(f"mm_scipy_compare: {args.path}: no such file")
    if not os.access(args.bench, os.X_OK):
        sys.exit(f"mm_scipy_compare: {args.bench}: not built (cmake --build build)")
    ks = thread_list(args.threads)
    reps = max(1, args.reps)
    mb = os.path.getsize(args.path) / 1e6
    print(f"file {args.path}: {mb:.1f} MB, {os.cpu_count()} CPUs, "
          f"fast_matrix_market {getattr(fmm, '__version__', '?')}")

    fmm.mmread(args.path, parallelism=1)  # into the page cache, imports warmed up
    theirs = {}
    for k in ks:
        times = []
        for _ in range(reps):
            gc.collect()
            t0 = time.perf_counter()
            a = fmm.mmread(args.path, parallelism=k)
            times.append(time.perf_counter() - t0)
            del a
        theirs[k] = statistics.median(times)
        print(f"  fmm.mmread parallelism={k}: median {theirs[k]:.4f} s", flush=True)

    cmd = [args.bench, args.path, str(reps), "--threads", ",".join(str(k) for k in ks)]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"mm_scipy_compare: {args.bench} failed: {out.stderr.strip()}")
    ours = {}
    for m in re.finditer(r"threads=(\d+) coo_s=([0-9.eE+-]+) coo_mb_per_s=[0-9.]+ "
                         r"csr_s=([0-9.eE+-]+)", out.stdout):
        ours[int(m.group(1))] = (float(m.group(2)), float(m.group(3)))
    if set(ours) != set(ks):
        sys.exit(f"mm_scipy_compare: no threads= lines for every count from {args.bench}")

    print(f"\n{'threads':>7} {'ours COO MB/s':>14} {'fmm MB/s':>10} {'ratio':>7} "
          f"{'ours CSR MB/s':>14}")
    worst = None
    for k in ks:
        r = theirs[k] / ours[k][0]
        worst = r if worst is None else min(worst, r)
        print(f"{k:7d} {mb / ours[k][0]:14.1f} {mb / theirs[k]:10.1f} {r:7.2f} "
              f"{mb / ours[k][1]:14.1f}")
    print(f"\nlowest ratio {worst:.2f} (goal >= 1.5): {'met' if worst >= 1.5 else 'MISSED'}")


if __name__ == "__main__":
    main()
