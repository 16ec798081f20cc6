#!/usr/bin/env python3
"""Krylov iteration time against its byte floor (issue 14's table).

usage: python3 bench/solve_floor.py [--cli build/apps/gpusolve] [--repeat 5] [--solvers cg,bicgstab,gmres]
                                    [--format best|NAME] [--json OUT.json] A.mtx ...

For each matrix: `gpusolve spmv A --format all --json` picks the fastest backend (op N median) unless
--format names one, and gives its bytes per product and the device's copy bandwidth (GB/s over the
fraction of it). Then each solver runs --repeat times (`gpusolve solve --json`, no preconditioner,
b = A*1, maxit 1000 at most, so that a slow system costs at most that); the time per iteration is
solve_s / iterations of each run, min and median over the runs (two solves of the same system differ
by up to 1.5x on a busy GPU: issue 14).

Byte floor of one iteration = (products per iteration x bytes per product + vector bytes) / copy
bandwidth, the vector bytes from the count above each method's loop (solvers/*.c), in n-vectors of
doubles read + written without a preconditioner: CG 14n, BiCGSTAB 28n (2 products), GMRES(30) 71n
averaged over a cycle (1 product; 73n before its fused Gram-Schmidt), pipelined CG 13n (its one fused update pass; --solvers pipecg). The ratio min/floor is what issue 14's targets are about.
"""
import argparse
import json
import statistics
import subprocess
import sys

VEC = {"cg": (1, 14), "bicgstab": (2, 28), "gmres": (1, 71), "pipecg": (1, 13)}


def run_json(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    try:
        return json.loads(p.stdout)
    except json.JSONDecodeError:
        sys.exit(f"solve_floor: {' '.join(cmd)} gave no JSON (exit {p.returncode}): {p.stderr.strip()[:300]}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("mats", nargs="+")
    ap.add_argument("--cli", default="build/apps/gpusolve")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--solvers", default="cg,bicgstab,gmres")
    ap.add_argument("--format", default="best")
    ap.add_argument("--maxit", type=int, default=1000)
    ap.add_argument("--extra", default="", help="more solve options, e.g. '--check-every 8'")
    ap.add_argument("--json", help="write the rows as JSON here too")
    a = ap.parse_args()
    rows = []
    print(f"{'matrix':<22} {'solver':<9} {'format':<14} {'its':>5} {'us/it min':>9} {'median':>8} "
          f"{'floor us':>8} {'min/floor':>9}")
    for path in a.mats:
        sp = run_json([a.cli, "spmv", path, "--format", "all" if a.format == "best" else a.format,
                       "--runs", "50", "--json"])
        ok = [r for r in sp["results"] if r.get("status") == "ok" and r.get("op") == "N"
              and r.get("format") != "auto"] if "results" in sp else []
        if not ok:
            sys.exit(f"solve_floor: no backend measured on {path}")
        best = min(ok, key=lambda r: r["median_us"])
        bw = best["gbs"] / best["copy_fraction"] * 1e9  # bytes/s
        n = sp.get("cols") or sp.get("n")
        for s in a.solvers.split(","):
            prods, vec = VEC[s]
            floor_us = (prods * best["bytes_per_apply"] + vec * n * 8) / bw * 1e6
            us = []
            its = None
            for _ in range(a.repeat):
                cmd = [a.cli, "solve", path, "--solver", s, "--format", best["format"],
                       "--maxit", str(a.maxit), "--json"] + a.extra.split()
                j = run_json(cmd)
                r = j["results"][0] if "results" in j else j
                its = r["iterations"]
                if its:
                    us.append(r["solve_s"] / its * 1e6)
            if not us:
                continue
            row = {"matrix": path.rsplit("/", 1)[-1], "solver": s, "format": best["format"],
                   "iterations": its, "us_min": min(us), "us_median": statistics.median(us),
                   "floor_us": floor_us, "ratio": min(us) / floor_us}
            rows.append(row)
            print(f"{row['matrix'][:22]:<22} {s:<9} {best['format']:<14} {its:5d} {row['us_min']:9.1f} "
                  f"{row['us_median']:8.1f} {floor_us:8.1f} {row['ratio']:9.2f}", flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
