#!/usr/bin/env python3
"""bench/amg.py: time to solution with --precond amg against none and jacobi (issue 34).

For each matrix and right-hand side, runs `gpusolve solve A [b] --precond P --json --no-cache`
for P in none, jacobi and the AMG variants given (--amg "smoother=chebyshev,degree=3" ...), and
prints one row each: iterations, the preconditioner's setup (ms), the format's prepare (ms), the
solve (ms), their sum and the process's wall time (which also holds reading the file and the CUDA
start-up), and AMG's operator complexity and levels. The right-hand sides: b = A * 1 (the CLI's
default) and, with --mod7, b_i = (i mod 7) - 3 written next to the matrix (b = A * 1 flatters
smoothed aggregation: see docs/amg.md). PyAMG's counts for the same settings, where
tests/data/pyamg_iterations.tsv has them, are printed beside (--pyamg-name NAME=TABLE_NAME maps a
file to the table's name).

    bench/amg.py --cli build/apps/gpusolve [--mod7] [--amg OPTS ...] [--json-out F] A.mtx ...
"""
import argparse
import json
import os
import subprocess
import sys
import time


def write_mod7(path, n):
    with open(path, "w") as f:
        f.write("%%MatrixMarket matrix array real general\n" + str(n) + " 1\n")
        f.write("".join(str((i % 7) - 3) + "\n" for i in range(n)))


def rows_of(path):
    """Rows of a Matrix Market file (plain or .gz) from its size line."""
    import gzip
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "rt") as f:
        for line in f:
            if not line.startswith("%"):
                return int(line.split()[0])
    raise ValueError(path + ": no size line")


def pyamg_table(path):
    t = {}
    if not os.path.exists(path):
        return t
    head = None
    for line in open(path):
        if line.startswith("#"):
            continue
        f = line.rstrip("\n").split("\t")
        if head is None:
            head = f
            continue
        r = dict(zip(head, f))
        key = (r["matrix"], r["method"], r["smoother"], float(r["theta"]), r.get("rhs", "ones"))
        t.setdefault(key, r)
    return t


def run(cli, args):
    t0 = time.time()
    p = subprocess.run([cli, "solve"] + args + ["--json", "--no-cache"], capture_output=True,
                       text=True)
    wall = time.time() - t0
    if p.returncode not in (0, 1):
        return {"error": p.stderr.strip()}, wall
    return json.loads(p.stdout), wall


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cli", default="build/apps/gpusolve")
    ap.add_argument("--mod7", action="store_true")
    ap.add_argument("--amg", action="append", default=None,
                    help="an AMG option string (repeatable); default: the defaults")
    ap.add_argument("--pyamg", default=os.path.join(os.path.dirname(__file__), "..", "tests",
                                                    "data", "pyamg_iterations.tsv"))
    ap.add_argument("--pyamg-name", action="append", default=[])
    ap.add_argument("--json-out")
    ap.add_argument("matrices", nargs="+")
    a = ap.parse_args()
    table = pyamg_table(a.pyamg)
    names = dict(x.split("=", 1) for x in a.pyamg_name)
    variants = [("none", None), ("jacobi", None)] + [("amg", o) for o in (a.amg or [""])]
    out = []
    print("| matrix | b | precond | its | PyAMG its | setup ms | prepare ms | solve ms | "
          "total ms | wall s | op. cx | levels |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for m in a.matrices:
        base = os.path.basename(m).split(".")[0]
        rhss = [("ones", None)]
        if a.mod7:
            b = os.path.join("/tmp", base + "_mod7.mtx")
            write_mod7(b, rows_of(m))
            rhss.append(("mod7", b))
        for rname, b in rhss:
            for pc, opts in variants:
                args = [m] + ([b] if b else []) + ["--precond", pc]
                smoother, theta = "jacobi", 0.0
                if opts:
                    for kv in opts.split(","):
                        args += ["--precond-opt", kv]
                        k, v = kv.split("=", 1)
                        if k == "smoother":
                            smoother = v
                        if k == "theta":
                            theta = float(v)
                j, wall = run(a.cli, args)
                if "error" in j:
                    print("| %s | %s | %s %s | error: %s |" % (base, rname, pc, opts or "",
                                                                j["error"]))
                    continue
                r = j["results"][0]
                setup = j.get("precond_setup_ms", 0.0) or 0.0
                h = j.get("hierarchy")
                ref = table.get((names.get(base, base), "cg", smoother, theta, rname)) \
                    if pc == "amg" else None
                total = setup + r["prepare_ms"] + 1e3 * r["solve_s"]
                label = pc + (" " + opts if opts else "")
                print("| %s | %s | %s | %d%s | %s | %.1f | %.1f | %.1f | %.1f | %.2f | %s | %s |" % (
                    base, rname, label, r["iterations"], "" if r["converged"] else " (not conv.)",
                    ref["iterations"] if ref else "", setup, r["prepare_ms"], 1e3 * r["solve_s"],
                    total, wall, "%.3f" % h["operator_complexity"] if h else "",
                    len(h["levels"]) if h else ""))
                sys.stdout.flush()
                out.append({"matrix": base, "rhs": rname, "precond": label, "json": j,
                            "wall_s": wall})
    if a.json_out:
        with open(a.json_out, "w") as f:
            json.dump(out, f)


if __name__ == "__main__":
    main()
