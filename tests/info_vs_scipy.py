#!/usr/bin/env python3
"""Compare `gpusolve info --json` with SciPy on every matrix of the matrix folder.

rows, cols and expanded nnz (symmetric storage mirrored, duplicates summed, explicit zeros kept)
must agree. Usage: python3 tests/info_vs_scipy.py [build/apps/gpusolve] [matrix dir]
The matrix folder defaults to $GS_MATRIX_DIR, else the in-repository set tests/data/matrices.
"""
import glob, json, os, subprocess, sys

import scipy.io
import scipy.sparse as sp

cli = sys.argv[1] if len(sys.argv) > 1 else "build/apps/gpusolve"
mdir = sys.argv[2] if len(sys.argv) > 2 else (os.environ.get("GS_MATRIX_DIR") or
                                               os.path.join(os.path.dirname(__file__), "data", "matrices"))
bad = 0
files = sorted(glob.glob(os.path.join(mdir, "*.mtx")))
for f in files:
    ours = json.loads(subprocess.run([cli, "info", f, "--json"], check=True, capture_output=True, text=True).stdout)
    A = sp.coo_matrix(scipy.io.mmread(f))
    A.sum_duplicates()  # mmread mirrors symmetric storage; explicit zeros stay stored
    ref = (A.shape[0], A.shape[1], A.nnz)
    got = (ours["rows"], ours["cols"], ours["nnz"])
    ok = ref == got
    bad += not ok
    print(f"{os.path.basename(f):24s} scipy {ref}  gpusolve {got}  {'ok' if ok else 'MISMATCH'}")
print(f"{len(files) - bad} passed, {bad} failed")
sys.exit(1 if bad else 0)
