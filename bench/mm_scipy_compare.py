#!/usr/bin/env python3
"""Matrix Market reading speed: gpusolve's reader against SciPy's, on the same file.

usage: python3 bench/mm_scipy_compare.py FILE.mtx [--bench PATH] [--reps N] [--legacy]

A large test file: build/bench/mm_read_bench 2500000 1 --keep (about 81 MB, path printed).

Times, each as the median of N reads (default 3) of a file already in the page cache:
  - scipy.io.mmread as users call it (SciPy >= 1.12 reads through fast_matrix_market, a C++
    reader that uses every core by default);
  - the same reader on one thread (fast_matrix_market's PARALLELISM = 1), where SciPy has it;
  - with --legacy, SciPy's pure-Python reader of before 1.12 (scipy.io._mmio.mmread), which
    is slow: expect minutes for a 100 MB file;
  - gpusolve's gs_mm_read_coo on one thread, by running the benchmark program
    (build/bench/mm_read_bench PATH N) and reading its last line.
Prints the MB/s of each and gpusolve's speed-up over each SciPy reading, by wall clock and,
for the single-threaded readings, by process CPU time too (steadier on a busy machine).
"""
import argparse
import gc
import os
import re
import statistics
import subprocess
import sys
import time


def median_time(fn, reps):
    """Median wall-clock and process-CPU seconds of reps calls."""
    wall, cpu = [], []
    for _ in range(reps):
        gc.collect()
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return statistics.median(wall), statistics.median(cpu)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    default_bench = os.path.join(os.path.dirname(here), "build", "bench", "mm_read_bench")
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("path", help="a Matrix Market file (.mtx)")
    ap.add_argument("--bench", default=default_bench, help="the mm_read_bench program")
    ap.add_argument("--reps", type=int, default=3, help="reads per timing (median)")
    ap.add_argument("--legacy", action="store_true",
                    help="also time SciPy's pure-Python reader (scipy.io._mmio)")
    args = ap.parse_args()

    try:
        import scipy
        import scipy.io
    except ImportError:
        sys.exit("mm_scipy_compare: SciPy is not installed (pip install scipy)")
    if not os.path.isfile(args.path):
        sys.exit(f"mm_scipy_compare: {args.path}: no such file")
    if not os.access(args.bench, os.X_OK):
        sys.exit(f"mm_scipy_compare: {args.bench}: not built (cmake --build build)")

    mb = os.path.getsize(args.path) / 1e6
    with open(args.path, "rb") as f:  # into the page cache for every reader alike
        while f.read(1 << 24):
            pass
    reps = max(1, args.reps)
    print(f"file {args.path}: {mb:.1f} MB, {os.cpu_count()} CPUs, SciPy {scipy.__version__}")

    results = []  # (label, wall seconds, CPU seconds or None when multi-threaded)
    t, _ = median_time(lambda: scipy.io.mmread(args.path), reps)
    results.append(("scipy.io.mmread (default threads)", t, None))

    fmm = None
    try:
        import scipy.io._fast_matrix_market as fmm
    except ImportError:
        pass
    if fmm is not None and hasattr(fmm, "PARALLELISM"):
        saved = fmm.PARALLELISM
        fmm.PARALLELISM = 1
        try:
            t, c = median_time(lambda: scipy.io.mmread(args.path), reps)
        finally:
            fmm.PARALLELISM = saved
        results.append(("scipy.io.mmread (1 thread)", t, c))

    if args.legacy:
        try:
            from scipy.io import _mmio
            t, c = median_time(lambda: _mmio.mmread(args.path), reps)
            results.append(("scipy legacy Python reader (scipy.io._mmio)", t, c))
        except (ImportError, AttributeError):
            print("scipy.io._mmio is not available in this SciPy: --legacy skipped")

    out = subprocess.run([args.bench, args.path, str(reps)], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"mm_scipy_compare: {args.bench} failed: {out.stderr.strip()}")
    m = re.search(r"median_s=([0-9.eE+-]+) median_cpu_s=([0-9.eE+-]+)", out.stdout)
    if not m:
        sys.exit(f"mm_scipy_compare: no median_s= line from {args.bench}")
    ours, ours_cpu = float(m.group(1)), float(m.group(2))

    def cpu_text(c):
        return f"  cpu {c:8.4f} s  {mb / c:9.1f} MB/s" if c else ""

    for label, t, c in results:
        print(f"{label:46s} {t:9.4f} s  {mb / t:9.1f} MB/s{cpu_text(c)}")
    print(f"{'gpusolve gs_mm_read_coo (1 thread)':46s} {ours:9.4f} s  {mb / ours:9.1f} MB/s"
          f"{cpu_text(ours_cpu)}")
    for label, t, c in results:
        line = f"speed-up of gpusolve over {label}: {t / ours:.2f}x wall"
        if c:
            line += f", {c / ours_cpu:.2f}x cpu"
        print(line)


if __name__ == "__main__":
    main()
