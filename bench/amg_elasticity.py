#!/usr/bin/env python3
"""bench/amg_elasticity.py: AMG with a near-null space on 2D linear elasticity (issue 34).

For each N, 2D linear elasticity on N x N nodes (plane strain Q1, 2 N^2 unknowns, x and y
interleaved) is written next to its rigid-body modes (an n x 3 Matrix Market array) and
b_i = (i mod 7) - 3, and solved with CG by
`gpusolve solve A.mtx b.mtx --precond amg --json --no-cache` with
    scalar      the defaults (every unknown a node, B = ones)
    block=2     nodes of the two unknowns, B = ones
    rbm         block=2 and near_null=B.mtx (the three rigid-body modes)
each at --theta (default 0), one row each: iterations, setup / prepare / solve ms, their sum,
the process's wall time, operator complexity and rows per level. Beside them PyAMG's iterations
for the same settings (tests/pyamg_iterations.py: standard aggregation, and "mis2" with our
MIS(2) aggregates; CG, Jacobi smoothing, the mod 7 right-hand side).

Where the system and PyAMG's counts come from:
  PyAMG installed     A and B from PyAMG's gallery.linear_elasticity((N, N)), its iterations
                      computed here (as before);
  no PyAMG, or        A and B from `gpusolve gen elasticity --grid NxN --near-null B.mtx`
  --gen-cli           (gs_gen_elasticity: PyAMG's matrix to rounding, its modes exactly), and
                      PyAMG's iterations read from tests/data/pyamg_iterations.tsv where it has
                      the size (N = 50, 100), "-" where it has not.
--no-pyamg leaves PyAMG's column empty. Needs numpy and scipy (the PyAMG path also pyamg).

    bench/amg_elasticity.py --cli build/apps/gpusolve [--sizes 100,400,1000] [--theta 0]
                            [--dir /tmp] [--gen-cli] [--no-pyamg] [--json-out F]
"""
import argparse
import csv
import json
import os
import subprocess
import sys
import time

import numpy as np
import scipy.io

HERE = os.path.dirname(os.path.abspath(__file__))
TABLE = os.path.join(HERE, "..", "tests", "data", "pyamg_iterations.tsv")


def have_pyamg():
    try:
        import pyamg  # noqa: F401
    except ImportError:
        return False
    return True


def run(cli, args):
    t0 = time.time()
    p = subprocess.run([cli, "solve"] + args + ["--json", "--no-cache"], capture_output=True,
                       text=True)
    wall = time.time() - t0
    if p.returncode not in (0, 1):
        return {"error": p.stderr.strip()}, wall
    return json.loads(p.stdout), wall


def pyamg_its(P, A, B, theta, aggregation):
    """PyAMG's CG iterations with the table's settings (jacobi, b mod 7); negative when it did
    not converge."""
    ml, rhos = P.hierarchy(A, theta, (B, 2, aggregation))
    P.set_smoother(ml, "jacobi", rhos)
    its, conv, _ = P.solve(ml, A, P.rhs(A, "mod7"), "cg")
    return its if conv else -its


def read_table(path):
    """{(matrix, theta): (iterations, converged)} of the table's cg / jacobi / mod7 rows."""
    out = {}
    if not os.path.exists(path):
        return out
    with open(path) as f:
        rows = csv.reader((line for line in f if not line.startswith("#")), delimiter="\t")
        head = next(rows, None)
        if not head:
            return out
        col = {name: k for k, name in enumerate(head)}
        for r in rows:
            if len(r) != len(head):
                continue
            if (r[col["method"]], r[col["smoother"]], r[col["rhs"]]) != ("cg", "jacobi", "mod7"):
                continue
            out[(r[col["matrix"]], float(r[col["theta"]]))] = (int(r[col["iterations"]]),
                                                               r[col["converged"]] == "1")
    return out


def table_its(table, nx, b, aggregation, theta):
    """PyAMG's count for elasticity2d_N_B[_mis2] from the table, "-" where it has no row."""
    key = ("elasticity2d_%d_%s%s" % (nx, b, "_mis2" if aggregation == "mis2" else ""), theta)
    if key not in table:
        return "-"
    its, conv = table[key]
    return str(its if conv else -its)


def write_rhs(path, n):
    """b_i = (i mod 7) - 3 as a Matrix Market array (integers: written exactly)."""
    v = (np.arange(n) % 7) - 3
    with open(path, "w") as f:
        f.write("%%%%MatrixMarket matrix array real general\n%d 1\n" % n)
        f.write("\n".join(map(str, v.tolist())))
        f.write("\n")


def gen_cli(cli, nx, base):
    """A and B by `gpusolve gen elasticity`; the unknowns, or None after a message."""
    p = subprocess.run([cli, "gen", "elasticity", "--grid", "%dx%d" % (nx, nx), "-o",
                        base + ".mtx", "--near-null", base + "_rbm.mtx"], capture_output=True,
                       text=True)
    if p.returncode != 0:
        print("gen elasticity %dx%d failed: %s" % (nx, nx, p.stderr.strip()), file=sys.stderr)
        return None
    return 2 * nx * nx


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cli", default="build/apps/gpusolve")
    ap.add_argument("--sizes", default="100,400,1000",
                    help="grid sides N (default 100,400,1000)")
    ap.add_argument("--theta", type=float, default=0.0)
    ap.add_argument("--dir", default="/tmp")
    ap.add_argument("--gen-cli", action="store_true",
                    help="the system from `gpusolve gen elasticity` and PyAMG's counts from the "
                    "table even where PyAMG is installed")
    ap.add_argument("--no-pyamg", action="store_true", help="no PyAMG column")
    ap.add_argument("--json-out")
    a = ap.parse_args()
    use_cli = a.gen_cli or not have_pyamg()
    P = None
    if not use_cli:
        sys.path.insert(0, os.path.join(HERE, "..", "tests"))
        import pyamg_iterations as P  # noqa: E402 (exits without PyAMG: imported only here)
    table = read_table(TABLE) if use_cli and not a.no_pyamg else {}
    print("system: %s; PyAMG's iterations: %s" % (
        "gpusolve gen elasticity" if use_cli else "PyAMG's gallery.linear_elasticity",
        "none (--no-pyamg)" if a.no_pyamg else
        "tests/data/pyamg_iterations.tsv" if use_cli else "computed with PyAMG"),
        file=sys.stderr)
    t_start = time.time()
    out = []
    print("| N | unknowns | AMG | its | PyAMG its (standard, mis2) | setup ms | prepare ms | "
          "solve ms | total ms | wall s | op. cx | rows per level |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for nx in (int(x) for x in a.sizes.split(",")):
        base = os.path.join(a.dir, f"elasticity2d_{nx}")
        if use_cli:
            n = gen_cli(a.cli, nx, base)
            if n is None:
                continue
        else:
            A, rbm = P.elasticity(nx)
            n = A.shape[0]
            scipy.io.mmwrite(base + ".mtx", A, symmetry="general")
            scipy.io.mmwrite(base + "_rbm.mtx", rbm)
        write_rhs(base + "_mod7.mtx", n)
        variants = [("scalar", []), ("block=2", ["block=2"]),
                    ("rbm", ["block=2", "near_null=" + base + "_rbm.mtx"])]
        for label, opts in variants:
            refs = ""
            if not a.no_pyamg and label != "scalar":
                b = "rbm" if label == "rbm" else "ones"
                if use_cli:
                    refs = "%s, %s" % (table_its(table, nx, b, "standard", a.theta),
                                       table_its(table, nx, b, "mis2", a.theta))
                else:
                    B = rbm if label == "rbm" else np.ones((n, 1))
                    refs = "%d, %d" % (pyamg_its(P, A, B, a.theta, "standard"),
                                       pyamg_its(P, A, B, a.theta, "mis2"))
            args = [base + ".mtx", base + "_mod7.mtx", "--precond", "amg", "--precond-opt",
                    "theta=%g" % a.theta]
            for o in opts:
                args += ["--precond-opt", o]
            j, wall = run(a.cli, args)
            if "error" in j:  # the row keeps PyAMG's column; the message goes to stderr
                print("| %d | %d | %s | error | %s |  |  |  |  |  |  |  |" % (nx, n, label, refs))
                print("N %d %s: %s" % (nx, label, j["error"]), file=sys.stderr)
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
    print("total %.1f s" % (time.time() - t_start), file=sys.stderr)
    if a.json_out:
        with open(a.json_out, "w") as f:
            json.dump(out, f)


if __name__ == "__main__":
    main()
