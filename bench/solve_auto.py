#!/usr/bin/env python3
"""bench/solve_auto.py: whole solves with --format auto against every format (issue 12).

For each matrix: `gpusolve solve A --format all --json` (every format, one row each) and
`gpusolve solve A --json --no-cache --persistent off` (auto, measuring its candidates, in the
loop that the per-format rows run: by default auto would take the persistent iterations, whose
own product stands in for the chosen format's, and this bench compares formats). The total of
a row is prepare + solve: for auto, prepare is the whole selection (the rule, every candidate's
build and timed products, the chosen one's build). Prints a table with the fastest format's
total, auto's total and their ratio, and counts the systems where auto is within 5% of the
fastest (the target). A third column is the CLI's default solve (`gpusolve solve A --json
--no-cache`: auto, and the persistent iterations wherever the default takes them, whose own
product then stands in for the chosen format's): what a user who names nothing gets.
BiCGSTAB's iteration counts change with the rounding of each format's products (hundreds of
iterations apart on some systems), so a second ratio scales every format's solve time to
auto's iteration count (prepare + solve * its_auto / its_format): the format's speed without
the luck of its rounding.
The solver is the CLI's automatic choice (cg for SPD matrices, bicgstab otherwise) unless
--solver is given; the per-format rows also give the BiCGSTAB comparison of issue 11.

    bench/solve_auto.py [--cli build/apps/gpusolve] [--solver NAME] [--repeat R]
                        [--json-out FILE] A.mtx ...

--repeat R runs each command R times and keeps each format's smallest total (first-run noise).
"""
import argparse
import json
import math
import subprocess
import sys


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    try:
        return json.loads(p.stdout)
    except json.JSONDecodeError:
        sys.stderr.write(f"{' '.join(cmd)}: exit {p.returncode}: {p.stderr.strip()[:300]}\n")
        return None


def totals(doc):
    """format -> (total s, prepare s, solve s, iterations, converged) of the ok rows. With
    --format all the matrix's device CSR is uploaded once before the rows (shared_csr_ms): a
    format that reads it pays it in its prepare when run alone, so it is added to theirs. A
    single solve (auto, the default) uploads it when the matrix is created (the row's
    upload_ms, in no prepare): added the same way, so that every total counts it once."""
    out = {}
    shared = ((doc or {}).get("shared_csr_ms") or 0.0) / 1e3
    for r in (doc or {}).get("results", []):
        if r.get("status") != "ok":
            continue
        upload = max(shared if r.get("shared_csr") else 0.0, (r.get("upload_ms") or 0.0) / 1e3)
        prep = r["prepare_ms"] / 1e3 + upload
        out[r["format"]] = (prep + r["solve_s"], prep, r["solve_s"], r["iterations"],
                            r["converged"])
    return out


def best_of(runs):
    merged = {}
    for t in runs:
        for f, v in t.items():
            if f not in merged or v[0] < merged[f][0]:
                merged[f] = v
    return merged


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", default="build/apps/gpusolve")
    ap.add_argument("--solver", default=None)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--json-out", default=None)
    ap.add_argument("matrices", nargs="+")
    a = ap.parse_args()
    extra = ["--solver", a.solver] if a.solver else []
    rows, within, nwithin, dwithin, counted, logs = [], 0, 0, 0, 0, []
    print(f"{'matrix':22} {'solver':9} {'best':13} {'best s':>9} {'auto':13} {'auto s':>9} "
          f"{'(prep s)':>9} {'auto/best':>9} {'norm':>6} {'default s':>9} {'def/best':>8} "
          f"{'cusp-csr s':>10} {'bccoo s':>9}")
    for m in a.matrices:
        all_runs, auto_runs, def_runs, solver, auto_doc = [], [], [], "?", None
        for _ in range(a.repeat):
            d3 = run([a.cli, "solve", m, "--json", "--no-cache"] + extra)
            if d3:
                def_runs.append(min((v[0] for v in totals(d3).values()), default=math.nan))
            d = run([a.cli, "solve", m, "--format", "all", "--json"] + extra)
            if d:
                solver = d.get("solver", solver)
                all_runs.append(totals(d))
            d2 = run([a.cli, "solve", m, "--json", "--no-cache", "--persistent", "off"] + extra)
            if d2:
                auto_doc = d2
                auto_runs.append(totals(d2))
        logs.append({"matrix": m, "all": all_runs, "auto": auto_runs, "auto_doc": auto_doc,
                     "default_total_s": def_runs})
        fa, au = best_of(all_runs), best_of(auto_runs)
        name = m.rsplit("/", 1)[-1]
        if not fa or not au:
            print(f"{name[:22]:22} (no result)")
            continue
        bf = min(fa, key=lambda f: fa[f][0])
        af = next(iter(au))
        ratio = au[af][0] / fa[bf][0]
        its = max(au[af][3], 1)
        norm = {f: v[1] + v[2] * its / max(v[3], 1) for f, v in fa.items()}
        nratio = au[af][0] / min(norm.values())
        counted += 1
        within += ratio <= 1.05
        nwithin += nratio <= 1.05
        cs = fa.get("cusparse-csr", (math.nan,))[0]
        bc = fa.get("bccoo", (math.nan,))[0]
        dt = min(def_runs) if def_runs else math.nan
        dratio = dt / fa[bf][0]
        dwithin += dratio <= 1.05
        print(f"{name[:22]:22} {solver:9} {bf:13} {fa[bf][0]:9.4f} {af:13} {au[af][0]:9.4f} "
              f"{au[af][1]:9.4f} {ratio:9.3f} {nratio:6.3f} {dt:9.4f} {dratio:8.3f} {cs:10.4f} "
              f"{bc:9.4f}")
        rows.append((name, solver, fa, au))
    print(f"auto within 5% of the fastest total on {within} of {counted} systems "
          f"({nwithin} with the solve times scaled to auto's iteration count); the default "
          f"solve within 5% on {dwithin}")
    # BiCGSTAB rows: bccoo against cusparse-csr, prepare included (issue 11)
    sp = [fa["cusparse-csr"][0] / fa["bccoo"][0] for _, s, fa, _ in rows
          if s == "bicgstab" and "bccoo" in fa and "cusparse-csr" in fa]
    if sp:
        sp.sort()
        med = sp[len(sp) // 2] if len(sp) % 2 else 0.5 * (sp[len(sp) // 2 - 1] + sp[len(sp) // 2])
        print(f"bicgstab systems: bccoo total speed-up over cusparse-csr (prepare included): "
              f"median {med:.3f}, min {sp[0]:.3f}, max {sp[-1]:.3f} over {len(sp)}")
    if a.json_out:
        with open(a.json_out, "w") as f:
            json.dump(logs, f)


if __name__ == "__main__":
    main()
