#!/usr/bin/env python3
"""bench/bicgstab_bccoo.py: BiCGSTAB with bccoo against BiCGSTAB with cusparse-csr (issue 11's
second table, the paper's whole-solver comparison).

For each matrix and each of the two formats: `gpusolve solve A --solver bicgstab --format F
--persistent off --json` (the iterations run the named format's product; the persistent
kernel, whose own product would stand in for both, is off), R times, keeping the smallest
total (prepare + solve). Prints per matrix the iterations, prepare and solve ms of each, and
three ratios of cusparse-csr's time to bccoo's:
  it     per iteration, solve only (solve_s / iterations);
  whole  prepare + solve, as a user pays them;
  norm   prepare + solve with each format's solve scaled to cusparse-csr's iteration count
         (BiCGSTAB's count changes with the rounding of each product: the format's speed
         without the luck of its rounding).
and their medians. A system that one format does not converge on is listed and left out of
the medians.

    bench/bicgstab_bccoo.py [--cli build/apps/gpusolve] [--repeat R] [--maxit N]
                            [--extra ARGS] A.mtx ...
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

FORMATS = ("bccoo", "cusparse-csr")


def solve(cli, path, fmt, maxit, extra):
    cmd = [cli, "solve", path, "--solver", "bicgstab", "--format", fmt, "--persistent", "off",
           "--maxit", str(maxit), "--json"] + extra
    p = subprocess.run(cmd, capture_output=True, text=True)
    try:
        doc = json.loads(p.stdout)
    except json.JSONDecodeError:
        sys.stderr.write(f"{' '.join(cmd)}: exit {p.returncode}: {p.stderr.strip()[:300]}\n")
        return None
    rows = [r for r in doc.get("results", []) if r.get("status") == "ok"]
    if not rows:
        return None
    r = rows[0]
    prep = r["prepare_ms"] / 1e3
    return {"prep": prep, "solve": r["solve_s"], "its": max(r["iterations"], 1),
            "conv": bool(r["converged"]), "total": prep + r["solve_s"]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", default="build/apps/gpusolve")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--maxit", type=int, default=20000)
    ap.add_argument("--extra", default="", help="more solve arguments, one string")
    ap.add_argument("matrices", nargs="+")
    a = ap.parse_args()
    extra = a.extra.split()
    print(f"{'matrix':<22} {'its b/c':>13} {'prep ms b/c':>15} {'solve ms b/c':>17} "
          f"{'it':>6} {'whole':>6} {'norm':>6}")
    r_it, r_whole, r_norm = [], [], []
    for path in a.matrices:
        name = os.path.basename(path).replace(".mtx", "")
        best = {}
        for _ in range(a.repeat):
            for f in FORMATS:
                s = solve(a.cli, path, f, a.maxit, extra)
                if s and (f not in best or s["total"] < best[f]["total"]):
                    best[f] = s
        if len(best) < 2:
            print(f"{name:<22} failed: {', '.join(f for f in FORMATS if f not in best)}")
            continue
        b, c = best["bccoo"], best["cusparse-csr"]
        it = (c["solve"] / c["its"]) / (b["solve"] / b["its"])
        whole = c["total"] / b["total"]
        norm = c["total"] / (b["prep"] + b["solve"] * c["its"] / b["its"])
        flag = "" if b["conv"] and c["conv"] else "  (not converged: left out)"
        print(f"{name:<22} {b['its']:>6}/{c['its']:<6} {1e3*b['prep']:>7.1f}/{1e3*c['prep']:<7.1f} "
              f"{1e3*b['solve']:>8.1f}/{1e3*c['solve']:<8.1f} {it:>6.2f} {whole:>6.2f} "
              f"{norm:>6.2f}{flag}")
        if not flag:
            r_it.append(it)
            r_whole.append(whole)
            r_norm.append(norm)
    if r_it:
        print(f"median over {len(r_it)} systems: per iteration {statistics.median(r_it):.3f}, "
              f"whole {statistics.median(r_whole):.3f}, normalised {statistics.median(r_norm):.3f}")


if __name__ == "__main__":
    main()
