#!/usr/bin/env python3
"""The Python package's overhead: gpusolve.solve against the same solve through the C API.

usage: python3 python/bench/overhead.py [--matrices lap27:100,PATH] [--formats auto,csr-vector]
       [--method cg] [--precond none] [--rtol 1e-8] [--reps 5] [--rounds 3]

For each matrix and format, the same steps on both sides, on the same GPU, with the same
libgpusolve (the one the package loads):
  C       overhead_c.c (compiled here with cc against include/ and that library): from the
          host CSR and b, gs_matrix_create, the product (auto: selected as solve does), the
          preconditioner, b's upload, gs_solve, x's download, the destroys; timed with
          gs_wall_seconds around the whole, after one untimed warm-up solve;
  Python  x, info = gpusolve.solve(A, b, ...) from a scipy csr_array and a NumPy b (the
          arguments' checks, row pointers widened to int64, b checked finite, then the same C
          steps: A's entries are checked once, by gs_matrix_create, on both sides), timed with
          perf_counter, after one warm-up.
Rounds alternate C and Python (each round: REPS solves of each); the table gives the medians
over all rounds, the overhead = Python / C - 1 (goal: <= 3%), and the GPU solve time
(seconds_total) of each side, which should agree. Default matrices: lap27:100 (the 27-point
Laplacian of a 100^3 grid, 26.5 M entries) and G3_circuit (1.6 M rows, 7.7 M entries) from
$GS_LARGE_MATRIX_DIR, shared/matrices-large in the checkout or ../shared/matrices-large beside
it (a note on stderr when in none). Needs a GPU (exits 3 without one).
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import gpusolve

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]


def build_c(tmp):
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        sys.exit("overhead: needs a C compiler (cc) for the C side")
    lib = Path(gpusolve.library_path).resolve()
    exe = Path(tmp) / "overhead_c"
    # the program asks the loader for the library's soname (libgpusolve.so.0.1): a link of
    # that name beside it, to the file the package loads
    soname = lib.name
    r = subprocess.run(["objdump", "-p", str(lib)], capture_output=True, text=True)
    for line in r.stdout.splitlines():
        if line.split()[:1] == ["SONAME"]:
            soname = line.split()[1]
    if soname != lib.name:
        os.symlink(lib, Path(tmp) / soname)
    cuda = [f"-Wl,-rpath-link,{d}" for d in ("/usr/local/cuda/lib64", "/usr/local/cuda/lib")
            if os.path.isdir(d)]
    cmd = [cc, "-std=c11", "-O2", "-I", str(REPO / "include"), str(HERE / "overhead_c.c"),
           "-o", str(exe), str(lib), f"-Wl,-rpath,{tmp}:{lib.parent}", *cuda, "-lm"]
    subprocess.run(cmd, check=True)
    return exe


def find_g3():
    """G3_circuit.mtx(.gz) in $GS_LARGE_MATRIX_DIR, shared/matrices-large inside the checkout
    (what travels to a device machine) or beside it, else None (said on stderr)."""
    dirs = [Path(os.environ["GS_LARGE_MATRIX_DIR"])] if os.environ.get("GS_LARGE_MATRIX_DIR") \
        else []
    dirs += [REPO / "shared" / "matrices-large", REPO.parent / "shared" / "matrices-large"]
    for d in dirs:
        for name in ("G3_circuit.mtx.gz", "G3_circuit.mtx"):
            if (d / name).is_file():
                return d / name
    print(f"overhead: G3_circuit.mtx(.gz) is in none of {', '.join(map(str, dirs))}: its row "
          "is left out (GS_LARGE_MATRIX_DIR or --matrices name it)", file=sys.stderr)
    return None


def load(spec):
    if spec.startswith("lap27:"):
        n = int(spec[6:])
        return f"lap27_{n}", gpusolve.laplace(n, n, n, 27)
    return Path(spec).name.split(".")[0], gpusolve.read_mm(spec)


def run_c(exe, spec, args, fmt):
    r = subprocess.run([str(exe), spec, args.method, args.precond, fmt, str(args.rtol),
                        str(args.reps)], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"overhead: C side failed ({r.returncode}): {r.stderr.strip()}")
    return json.loads(r.stdout)


def run_py(A, b, args, fmt):
    pc = None if args.precond == "none" else args.precond
    kw = dict(method=args.method, precond=pc, format=fmt, rtol=args.rtol)
    gpusolve.solve(A, b, **kw)  # warm-up
    wall, gpu, its = [], [], 0
    for _ in range(args.reps):
        t0 = time.perf_counter()
        x, info = gpusolve.solve(A, b, **kw)
        wall.append(time.perf_counter() - t0)
        gpu.append(info.seconds_total)
        its = info.iterations
    return wall, gpu, its


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    g3 = find_g3()
    default = "lap27:100" + (f",{g3}" if g3 else "")
    ap.add_argument("--matrices", default=default, help="lap27:N or Matrix Market paths")
    ap.add_argument("--formats", default="auto,csr-vector")
    ap.add_argument("--method", default="cg")
    ap.add_argument("--precond", default="none")
    ap.add_argument("--rtol", type=float, default=1e-8)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    if gpusolve.device_count() == 0:
        print("overhead: no CUDA device", file=sys.stderr)
        sys.exit(3)
    with tempfile.TemporaryDirectory() as tmp:
        exe = build_c(tmp)
        print(f"device 0, gpusolve {gpusolve.__version__} ({gpusolve.library_path}); "
              f"{args.method}, precond {args.precond}, rtol {args.rtol}; "
              f"{args.rounds} rounds x {args.reps} solves a side")
        hdr = (f"{'matrix':<12} {'format':<11} {'its':>5} {'C wall s':>9} {'Py wall s':>9} "
               f"{'overhead':>8} {'C solve s':>9} {'Py solve s':>10}")
        print(hdr)
        print("-" * len(hdr))
        for spec in args.matrices.split(","):
            name, A = load(spec)
            b = A @ np.ones(A.shape[1])
            for fmt in args.formats.split(","):
                cw, cg_, pw, pg = [], [], [], []
                for _ in range(args.rounds):
                    c = run_c(exe, spec, args, fmt)
                    cw.append(c["wall_median"])
                    cg_.append(c["solve_median"])
                    w, g, its = run_py(A, b, args, fmt)
                    pw += w
                    pg += g
                cm, pm = statistics.median(cw), statistics.median(pw)
                print(f"{name:<12} {fmt:<11} {its:5d} {cm:9.4f} {pm:9.4f} "
                      f"{100 * (pm / cm - 1):7.1f}% {statistics.median(cg_):9.4f} "
                      f"{statistics.median(pg):10.4f}")


if __name__ == "__main__":
    main()
