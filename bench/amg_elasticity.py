#!/usr/bin/env python3
"""bench/amg_elasticity.py: AMG with a near-null space on 2D linear elasticity (issue 34).

For each N, PyAMG's gallery.linear_elasticity((N, N)) (plane strain Q1, 2 N^2 unknowns, x and y
interleaved; the system tests/amg_elasticity.h builds for the suites) is written next to its
rigid-body modes (an n x 3 Matrix Market array) and b_i = (i mod 7) - 3, and solved with CG by
`gpusolve solve A.mtx b.mtx --precond amg --json --no-cache` with
    scalar      the defaults (every unknown a node, B = ones)
    block=2     nodes of the two unknowns, B = ones
    rbm         block=2 and near_null=B.mtx (the three rigid-body modes)
each at --theta (default 0), one row each: iterations, setup / prepare / solve ms, their sum,
the process's wall time, operator complexity and rows per level. Beside them PyAMG's iterations
for the same settings (tests/pyamg_iterations.py: standard aggregation, and "mis2" with our
MIS(2) aggregates; computed here, --no-pyamg skips them).

    bench/amg_elasticity.py --cli build/apps/gpusolve [--sizes 100,400,1000] [--theta 0]
                            [--dir /tmp] [--no-pyamg] [--json-out F]
"""
import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np
import scipy.io

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
import pyamg_iterations as P  # noqa: E402 (the table's PyAMG settings and elasticity())


def run(cli, args):
    t0 = time.time()
    p = subprocess.run([cli, "solve"] + args + ["--json", "--no-cache"], capture_output=True,
                       text=True)
    wall = time.time() - t0
    if p.returncode not in (0, 1):
        return {"error": p.stderr.strip()}, wall
    return json.loads(p.stdout), wall


def pyamg_its(A, B, theta, aggregation):
    """PyAMG's CG iterations with the table's settings (jacobi, b mod 7)."""
    ml, rhos = P.hierarchy(A, theta, (B, 2, aggregation))
    P.set_smoother(ml, "jacobi", rhos)
    its, conv, _ = P.solve(ml, A, P.rhs(A, "mod7"), "cg")
    return its if conv else -its


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cli", default="build/apps/gpusolve")
    ap.add_argument("--sizes", default="100,400,1000")
    ap.add_argument("--theta", type=float, default=0.0)
    ap.add_argument("--dir", default="/tmp")
    ap.add_argument("--no-pyamg", action="store_true")
    ap.add_argument("--json-out")
    a = ap.parse_args()
    out = []
    print("| N | unknowns | AMG | its | PyAMG its (standard, mis2) | setup ms | prepare ms | "
          "solve ms | total ms | wall s | op. cx | rows per level |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for nx in (int(x) for x in a.sizes.split(",")):
        A, rbm = P.elasticity(nx)
        n = A.shape[0]
        base = os.path.join(a.dir, f"elasticity2d_{nx}")
        scipy.io.mmwrite(base + ".mtx", A, symmetry="general")
        scipy.io.mmwrite(base + "_rbm.mtx", rbm)
        scipy.io.mmwrite(base + "_mod7.mtx", ((np.arange(n) % 7) - 3.0).reshape(-1, 1))
        variants = [("scalar", []), ("block=2", ["block=2"]),
                    ("rbm", ["block=2", "near_null=" + base + "_rbm.mtx"])]
        for label, opts in variants:
            refs = ""
            if not a.no_pyamg and label != "scalar":
                B = rbm if label == "rbm" else np.ones((n, 1))
                refs = "%d, %d" % (pyamg_its(A, B, a.theta, "standard"),
                                   pyamg_its(A, B, a.theta, "mis2"))
            args = [base + ".mtx", base + "_mod7.mtx", "--precond", "amg", "--precond-opt",
                    "theta=%g" % a.theta]
            for o in opts:
                args += ["--precond-opt", o]
            j, wall = run(a.cli, args)
            if "error" in j:
                print("| %d | %d | %s | error: %s |" % (nx, n, label, j["error"]))
                continue
            r = j["results"][0]
            setup = j.get("precond_setup_ms", 0.0) or 0.0
            h = j.get("hierarchy") or {}
            rows = ",".join(str(lv.get("rows")) for lv in h.get("levels", []))
            print("| %d | %d | %s | %d%s | %s | %.1f | %.1f | %.1f | %.1f | %.2f | %s | %s |" % (
                nx, n, label, r["iterations"], "" if r["converged"] else " (not conv.)", refs,
                setup, r["prepare_ms"], 1e3 * r["solve_s"],
                setup + r["prepare_ms"] + 1e3 * r["solve_s"], wall,
                "%.3f" % h["operator_complexity"] if h else "", rows))
            sys.stdout.flush()
            out.append({"n": nx, "variant": label, "pyamg": refs, "json": j, "wall_s": wall})
    if a.json_out:
        with open(a.json_out, "w") as f:
            json.dump(out, f)


if __name__ == "__main__":
    main()
