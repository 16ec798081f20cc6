#!/usr/bin/env python3
"""bench/select_fit.py: the rule of the "auto" format (select/rule.c) against measured data.

    bench/select_fit.py JSON... [--c FILE] [--set NAME=VALUE]... [--cases OUT]

JSON: the output of bench/select.sh (`gpusolve select --json` per matrix: the features, and in
"formats" every registered backend's prepare_ms and spmv_us, the oracle data). For each matrix
it prints the rule's row, its candidates, its first choice, the oracle (fastest product), the
first choice's speed as a fraction of the oracle's, and whether a candidate is within 3 % of the
oracle; then per row how many matrices it took, and the geomeans.

The table (RULES and THRESHOLDS) is read from the C source (--c, default select/rule.c), so a
proposed table is a modified copy of that file, and --set overrides single thresholds. What is
re-implemented here is the rest of gs_select_rule: the predicates (holds()), the filters
(refuses(): max_fill 3 of the padded formats, ell_fill, registration = present in the JSON's
"formats"), the bccoo insertion and the cut at max_candidates. --cases OUT writes this rule's
answer for every matrix's feature vector as a text file that tests/test_select_host.c reads and
checks against the C rule (tests/data/select_rule_cases.txt): the two implementations agree on
the measured feature vectors, or the host test fails.
"""
import argparse
import json
import math
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
MAX_FILL = 3.0  # GS_SPMV_OPTION_MAX_FILL's default (spmv/options.h): ell, dia, cusparse-sell
NEAR = 0.97     # "within 3 % of the oracle"


def read_table(path):
    src = open(path).read()
    th = {}
    for key, name, value in re.findall(r'\[(T_\w+)\]\s*=\s*\{\s*"(\w+)",\s*([-+0-9.eE]+)', src):
        th[key] = (name, float(value))
    body = src[src.index("RULES[] = {"):]
    body = body[:body.index("\n};")]
    body = re.sub(r"/\*.*?\*/", "", body, flags=re.S)
    rules = []
    for pred, row, names in re.findall(r'\{\s*(P_\w+),\s*"((?:[^"\\]|\\.)*)",\s*\{([^}]*)\}\s*\}',
                                       body):
        rules.append((pred, row, re.findall(r'"([^"]+)"', names)))
    if not th or not rules:
        sys.exit(f"select_fit: no THRESHOLDS/RULES table found in {path}")
    return {name: v for name, v in th.values()}, rules


def holds(pred, f, T):
    if pred == "P_BANDED":
        return f["nnz"] > 0 and f["dia_fill"] <= T["dia_fill"]
    if pred == "P_IRREGULAR":
        return f["row_std"] > T["sigma_outlier"] or f["row_std"] > T["irregular_cv"] * f["row_mean"]
    if pred == "P_SMALL":  # tables before issue 12's fit (bench/data/select-h100.json's)
        return f["nnz"] <= T["small_nnz"]
    if pred == "P_OUTLIER":
        return f["row_std"] > T["sigma_outlier"]
    if pred == "P_S1":
        return f["pct_nnz"] <= T["s1_pct"]
    if pred == "P_S2":
        return f["pct_nnz"] <= T["s2_pct"]
    if pred == "P_ANY":
        return True
    sys.exit(f"select_fit: predicate {pred} of the C table is not implemented here")


def refuses(name, f, T):
    nnz = float(f["nnz"])
    if name == "ell":
        return f["ell_fill"] * nnz > MAX_FILL * nnz or f["ell_fill"] > T["ell_fill"]
    if name == "dia":
        return f["rows"] + f["cols"] >= 2**31 or (f["nnz"] > 0 and f["dia_fill"] * nnz > MAX_FILL * nnz)
    if name == "cusparse-sell":
        return f["sell_fill"] * nnz > MAX_FILL * nnz
    return False


def rule(f, T, rules, registered):
    out = []

    def offer(name):
        if len(out) >= T["max_candidates"] or name not in registered or name in out:
            return
        if not refuses(name, f, T):
            out.append(name)

    for pred, row, names in rules:
        if holds(pred, f, T):
            break
    for k, name in enumerate(names):
        offer(name)
        if k == 0 and f["nnz"] > 0 and f["distinct_values"] <= T["few_values"]:
            offer("bccoo")
    if not out:
        offer("csr-vector")
        offer("cusparse-csr")
    return row, out


def features(r):
    f = dict(r["selection"]["features"])
    f.update(rows=r["rows"], cols=r["cols"], nnz=r["nnz"])
    f.setdefault("row_max", 0)
    f.setdefault("diagonals", 0)
    return f


def geomean(v):
    return math.exp(sum(math.log(x) for x in v) / len(v)) if v else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("json", nargs="+")
    ap.add_argument("--c", default=os.path.join(HERE, "..", "spmv", "auto_rule.c"))
    ap.add_argument("--set", action="append", default=[], metavar="NAME=VALUE")
    ap.add_argument("--recorded", action="store_true",
                    help="check the candidates against those the JSON recorded (same table)")
    ap.add_argument("--cases", metavar="OUT", help="write the C test's cases file")
    a = ap.parse_args()
    T, rules = read_table(a.c)
    for s in a.set:
        k, v = s.split("=", 1)
        if k not in T:
            sys.exit(f"select_fit: no threshold {k} (have {', '.join(T)})")
        T[k] = float(v)
    data = []
    for path in a.json:
        data += json.load(open(path))

    ratios, covered, per_row, cases, mismatches = [], 0, {}, [], []
    print(f"{'matrix':22} {'row':10} {'rule':13} {'oracle':13} {'rule/or':>7} {'best cand':>9}"
          f"  candidates")
    for r in data:
        name = os.path.basename(r["matrix"]).replace(".mtx.gz", "").replace(".mtx", "")
        f = features(r)
        times = {x["format"]: x["spmv_us"] for x in r.get("formats", []) if x["status"] == "ok"}
        registered = {x["format"] for x in r.get("formats", [])}
        row, cand = rule(f, T, rules, registered)
        cases.append((name, f, cand))
        rec = r["selection"]["rule"]["candidates"]
        if a.recorded and rec != cand:
            mismatches.append(f"{name}: recorded {rec}, here {cand}")
        if not times:
            continue
        oracle = min(times, key=times.get)
        t0 = times[oracle]
        first = t0 / times[cand[0]] if cand and cand[0] in times else float("nan")
        best = max((t0 / times[c] for c in cand if c in times), default=0.0)
        ratios.append(first)
        covered += best >= NEAR
        per_row.setdefault(row, []).append((name, first, best))
        print(f"{name[:22]:22} {row.split(':')[0][:10]:10} {cand[0] if cand else '-':13} "
              f"{oracle:13} {first:7.3f} {best:9.3f}{'' if best >= NEAR else ' MISS'}  "
              f"{','.join(cand)}")
    print("\nrows:")
    for pred, row, names in rules:
        got = per_row.get(row, [])
        print(f"  {len(got):2d}  {row}\n      first {names[0]}: "
              + (f"geomean {geomean([g[1] for g in got]):.3f}, min {min(g[1] for g in got):.3f} "
                 f"({', '.join(g[0] for g in got)})" if got else "no matrix"))
    print(f"\n{len(ratios)} matrices; rule only: geomean of the oracle's speed "
          f"{geomean(ratios):.3f} (target >= 0.85), min {min(ratios):.3f}; a candidate within "
          f"3 % of the oracle on {covered} of {len(ratios)} (target: all)")
    if a.recorded:
        print(f"recorded candidates: {len(mismatches)} differ" + "".join(f"\n  {m}" for m in mismatches))
    for k in sorted(T):
        print(f"  {k:15} {T[k]:g}")
    if a.cases:
        with open(a.cases, "w") as out:
            out.write("# bench/select_fit.py --cases: the Python rule's candidates for measured\n"
                      "# feature vectors; tests/test_select_host.c checks the C rule agrees.\n"
                      "# name rows cols nnz pct_nnz row_mean row_std row_max diagonals ell_fill "
                      "dia_fill sell_fill distinct_values symmetric : candidates\n")
            for name, f, cand in cases:
                out.write(f"{name} {f['rows']} {f['cols']} {f['nnz']} {f['pct_nnz']!r} "
                          f"{f['row_mean']!r} {f['row_std']!r} {f['row_max']} {f['diagonals']} "
                          f"{f['ell_fill']!r} {f['dia_fill']!r} {f['sell_fill']!r} "
                          f"{f['distinct_values']} {int(bool(f['symmetric']))} : "
                          f"{' '.join(cand)}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
