#!/usr/bin/env python3
"""bench/prepare_table.py: issue 33's prepare and auto targets from `gpusolve spmv --json` runs.

For each JSON document (one matrix, `gpusolve spmv A --format all --transpose --json
--no-cache`), prints:
  - every format's prepare as a number of cusparse-csr products of the same run (op N median),
    against the target of its class: ell, dia, hyb, sellp, coo, bcoo, cusparse-sell,
    cusparse-coo <= 5; bccoo, csr5 <= 10; pkt <= 100 (the light CSR formats have none);
  - the auto row: its cost as run, prepare (the whole selection) + each op's timed runs x its
    time, against the best format's cost counted the same way (target >= 0.95 of it) and
    cusparse-csr's (never below it by more than 3%); and the same at the --runs products of
    each op (what a caller of that many products pays; not a target).
Run it on several documents to get one table; --md prints Markdown.

    bench/prepare_table.py [--md] RUN.json ...
"""
import json
import sys

TARGET = {"ell": 5, "dia": 5, "hyb": 5, "sellp": 5, "coo": 5, "bcoo": 5, "cusparse-sell": 5,
          "cusparse-coo": 5, "cusparse-coo2": 5, "bccoo": 10, "csr5": 10, "pkt": 100}


def rows(doc, op):
    return {r["format"]: r for r in doc["results"] if r["op"] == op}


def cost(n, t, runs=None):
    """prepare + products x time in ms, N and T; None when either op did not run. runs=None:
    each op's own timed runs (the products as run); else that many products of each op."""
    if not n or n.get("status") != "ok":
        return None
    if t is not None and t.get("status") != "ok":
        return None
    c = n["prepare_ms"] + (runs or n["runs"]) * n["median_us"] * 1e-3
    if t is not None:
        c += (runs or t["runs"]) * t["median_us"] * 1e-3
    return c


def main(argv):
    md = "--md" in argv
    files = [a for a in argv if a != "--md"]
    if not files:
        sys.stderr.write(__doc__)
        return 2
    docs = [json.load(open(f)) for f in files]
    names = sorted({r["format"] for d in docs for r in d["results"] if r["format"] in TARGET})
    sep = " | " if md else "  "
    head = ["format (target)"] + [d["matrix"].rsplit("/", 1)[-1] for d in docs]
    print(sep.join(head))
    if md:
        print("|".join(["---"] * len(head)))
    misses = 0
    for name in names:
        cells = [f"{name} (<= {TARGET[name]})"]
        for d in docs:
            n = rows(d, "N")
            base = n.get("cusparse-csr")
            r = n.get(name)
            if not r or r.get("status") != "ok" or not base or base.get("status") != "ok":
                cells.append(r.get("status", "-") if r else "-")
                continue
            ratio = r["prepare_ms"] / (base["median_us"] * 1e-3)
            ok = ratio <= TARGET[name]
            misses += not ok
            cells.append(f"{ratio:.1f}{'' if ok else ' MISS'}")
        print(sep.join(cells))
    print()
    for label, fixed in (("as run (each op's own timed runs)", None),
                         ("at the --runs products of each op", "expected")):
        print(f"\nauto, cost {label}")
        print(sep.join(["matrix", "auto picked", "selection ms", "auto cost ms", "best (cost ms)",
                        "auto/best", "auto/cusparse-csr"]))
        if md:
            print("|".join(["---"] * 7))
        for d in docs:
            n, t = rows(d, "N"), rows(d, "T")
            have_t = bool(t)
            a = n.get("auto")
            if not a or a.get("status") != "ok":
                print(sep.join([d["matrix"], "auto failed", "", "", "", "", ""]))
                continue
            runs = int(d.get("auto", {}).get("expected_products", 100)) if fixed else None
            costs = {}
            for name in n:
                c = cost(n[name], t.get(name) if have_t else None, runs)
                if name != "auto" and c is not None:
                    costs[name] = c
            ca = cost(a, t.get("auto") if have_t else None, runs)
            best = min(costs, key=costs.get)
            picked = d.get("auto", {}).get("chosen", "?")
            ok_best = costs[best] / ca >= 0.95
            ok_cus = "cusparse-csr" not in costs or ca <= 1.03 * costs["cusparse-csr"]
            if not fixed:
                misses += (not ok_best) + (not ok_cus)
            print(sep.join([d["matrix"].rsplit("/", 1)[-1], picked, f"{a['prepare_ms']:.1f}",
                            f"{ca:.2f}", f"{best} ({costs[best]:.2f})",
                            f"{costs[best] / ca:.3f}",
                            f"{costs.get('cusparse-csr', float('nan')) / ca:.3f}"]))
    print(f"\n{misses} target(s) missed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
