#!/usr/bin/env python3
"""bench/block_jacobi.py: --precond block-jacobi against none, jacobi, ilu0 (and ic0 on SPD) on
the shared matrices (issue 38's block-Jacobi table).

For each matrix of the folder's MANIFEST.tsv in the categories asked (spd: cg; nonsymmetric:
bicgstab, or --nonsym-solver gmres), runs `gpusolve solve A --solver S --precond P --format F
--json --no-cache` for every preconditioner and block-jacobi variant, --repeat times, and prints
one Markdown row each: iterations, the preconditioner's setup (ms), the solve (ms, the median of
the repeats; the CLI times it with CUDA events after a warm-up solve), setup + solve, the time
in the preconditioner's applies, and the speed-up of setup + solve over jacobi. b = A * 1 (the
CLI's default), rtol 1e-8. One format for every row (default cusparse-csr, which also keeps the
persistent loop out) so that only the preconditioner differs; --format auto lets each run pick.
A preconditioner the matrix refuses (a zero pivot, a singular block) prints its message.

    bench/block_jacobi.py [--cli build/apps/gpusolve] [--matrices ../shared/matrices]
                          [--large ../shared/matrices-large/G3_circuit.mtx.gz ...]
                          [--blocks 4,8,16,32] [--repeat 3] [--json-out F]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys


def manifest(folder):
    """(name, category, path) of the square matrices of MANIFEST.tsv."""
    rows = []
    with open(os.path.join(folder, "MANIFEST.tsv")) as f:
        head = None
        for line in f:
            cols = line.rstrip("\n").split("\t")
            if head is None:
                head = cols
                continue
            r = dict(zip(head, cols))
            if r.get("rows") != r.get("cols"):
                continue
            rows.append((r["name"], r["category"], os.path.join(folder, r["name"] + ".mtx")))
    return rows


def solve(cli, path, solver, pc, opts, fmt):
    args = [cli, "solve", path, "--solver", solver, "--precond", pc, "--format", fmt, "--json",
            "--no-cache"]
    for kv in opts:
        args += ["--precond-opt", kv]
    p = subprocess.run(args, capture_output=True, text=True)
    if p.returncode not in (0, 1):
        return {"error": (p.stderr.strip().splitlines() or ["exit %d" % p.returncode])[-1]}
    return json.loads(p.stdout)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cli", default="build/apps/gpusolve")
    ap.add_argument("--matrices", default="../shared/matrices")
    ap.add_argument("--categories", default="spd,nonsymmetric")
    ap.add_argument("--large", action="append", default=[],
                    help="another matrix (SPD: solved with cg), e.g. G3_circuit.mtx.gz")
    ap.add_argument("--blocks", default="4,8,16,32", help="block-jacobi block sizes")
    ap.add_argument("--no-fixed", action="store_true",
                    help="skip the agglomerate=0 row at the default block size")
    ap.add_argument("--nonsym-solver", default="bicgstab")
    ap.add_argument("--format", default="cusparse-csr")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json-out")
    a = ap.parse_args()

    cats = a.categories.split(",")
    cases = [(n, c, p) for n, c, p in manifest(a.matrices) if c in cats]
    cases += [(os.path.basename(p).split(".")[0], "spd", p) for p in a.large]
    blocks = [int(b) for b in a.blocks.split(",") if b]
    out = []
    print("| matrix | solver | precond | its | setup ms | solve ms | setup + solve ms | "
          "precond ms | vs jacobi |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, cat, path in cases:
        solver = "cg" if cat == "spd" else a.nonsym_solver
        variants = [("none", []), ("jacobi", []), ("ilu0", [])]
        if cat == "spd":
            variants.append(("ic0", []))
        variants += [("block-jacobi", ["block=%d" % b]) for b in blocks]
        if not a.no_fixed:
            variants.append(("block-jacobi", ["block=8", "agglomerate=0"]))
        base = None
        for pc, opts in variants:
            runs = [solve(a.cli, path, solver, pc, opts, a.format) for _ in range(a.repeat)]
            label = pc + (" " + ",".join(opts) if opts else "")
            if "error" in runs[0]:
                print("| %s | %s | %s | refused: %s | | | | | |" % (name, solver, label,
                                                                   runs[0]["error"]))
                continue
            r0 = runs[0]["results"][0]
            setup = statistics.median(j.get("precond_setup_ms", 0.0) or 0.0 for j in runs)
            solve_ms = statistics.median(1e3 * j["results"][0]["solve_s"] for j in runs)
            pc_ms = statistics.median(1e3 * (j["results"][0].get("precond_s") or 0.0)
                                      for j in runs)
            total = setup + solve_ms
            if pc == "jacobi":
                base = total
            its = "%d%s" % (r0["iterations"], "" if r0["converged"] else " (not conv.)")
            print("| %s | %s | %s | %s | %.2f | %.2f | %.2f | %.2f | %s |" % (
                name, solver, label, its, setup, solve_ms, total, pc_ms,
                "%.2fx" % (base / total) if base and total > 0 else ""))
            sys.stdout.flush()
            out.append({"matrix": name, "solver": solver, "precond": label, "runs": runs})
    if a.json_out:
        with open(a.json_out, "w") as f:
            json.dump(out, f)


if __name__ == "__main__":
    main()
