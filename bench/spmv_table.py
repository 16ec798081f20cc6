#!/usr/bin/env python3
"""bench/spmv_table.py: one table from `gpusolve spmv --json` documents (one file per matrix).

Usage: python3 bench/spmv_table.py FORMAT [BASELINE] FILE.json...
       python3 bench/spmv_table.py all [BASELINE] FILE.json...
With FORMAT all: one row per format of the documents and one column per matrix, op N then op
T, each cell "median us (speed-up over the baseline)", or the status of a refused product
(refused, unsupported); the best of each column in bold. Otherwise, for each matrix: the format's op N and op T medians (us), their speed-up over the baseline
(default cusparse-csr) in the same run, the format's % of the device's copy bandwidth (its own
byte model), op T over its own op N, and its prepare time in products (the kernel time a describe line reports, else the wall time). Geometric means last.
"""
import json
import math
import re
import sys


def pick(doc, fmt, op):
    for r in doc["results"]:
        if r["format"] == fmt and r["op"] == op and r["status"] == "ok":
            return r
    return None


def gmean(v):
    v = [x for x in v if x and x > 0]
    return math.exp(sum(math.log(x) for x in v) / len(v)) if v else float("nan")


def grid(base, files):
    docs = []
    for f in files:
        with open(f) as fh:
            docs.append(json.load(fh))
    names = [d["matrix"].split("/")[-1].split(".")[0] for d in docs]
    fmts = []
    for d in docs:
        for r in d["results"]:
            if r["format"] not in fmts:
                fmts.append(r["format"])
    for op in ("N", "T"):
        print("\nop %s: median us (x %s in the same run)\n" % (op, base))
        print("| format | " + " | ".join(names) + " |")
        print("|" + "---|" * (len(names) + 1))
        best = []
        for d in docs:
            t = [r["median_us"] for r in d["results"]
                 if r["op"] == op and r["status"] == "ok" and r["format"] != "auto"]
            best.append(min(t) if t else None)
        for fm in fmts:
            cells = []
            for d, b in zip(docs, best):
                r = next((r for r in d["results"] if r["format"] == fm and r["op"] == op), None)
                bn = pick(d, base, op)
                if r is None:
                    cells.append("-")
                elif r["status"] != "ok":
                    cells.append(r["status"])
                else:
                    c = "%.1f" % r["median_us"]
                    if bn:
                        c += " (%.2f)" % (bn["median_us"] / r["median_us"])
                    cells.append("**%s**" % c if r["median_us"] == b and fm != "auto" else c)
            print("| %s | " % fm + " | ".join(cells) + " |")
    return 0


def main(argv):
    if len(argv) < 3:
        print(__doc__)
        return 2
    fmt = argv[1]
    base = "cusparse-csr"
    files = argv[2:]
    if not files[0].endswith(".json"):
        base, files = files[0], files[1:]
    if fmt == "all":
        return grid(base, files)
    hdr = ("matrix", "nnz", "N us", "base N", "N x", "N %bw", "T us", "base T", "T x", "T/N",
           "prep/N")
    print("| " + " | ".join(hdr) + " |")
    print("|" + "---|" * len(hdr))
    sn, st, tn = [], [], []
    for f in files:
        with open(f) as fh:
            doc = json.load(fh)
        name = doc["matrix"].split("/")[-1]
        n, bn = pick(doc, fmt, "N"), pick(doc, base, "N")
        t, bt = pick(doc, fmt, "T"), pick(doc, base, "T")
        row = [name, str(doc["nnz"])]
        if n and bn:
            sn.append(bn["median_us"] / n["median_us"])
            row += ["%.1f" % n["median_us"], "%.1f" % bn["median_us"], "%.2f" % sn[-1],
                    "%.0f%%" % (100 * n["copy_fraction"])]
        else:
            row += ["-"] * 4
        if t and bt:
            st.append(bt["median_us"] / t["median_us"])
            row += ["%.1f" % t["median_us"], "%.1f" % bt["median_us"], "%.2f" % st[-1]]
        else:
            row += ["-"] * 3
        if t and n:
            tn.append(t["median_us"] / n["median_us"])
            row.append("%.2f" % tn[-1])
        else:
            row.append("-")
        # The backend's own preprocessing when its describe line reports it ("row starts X
        # us", hola; "tile search X us", merge), else the wall time of gs_spmv_create
        # (allocations and uploads included).
        prep = None
        if n:
            mt = re.search(r"(?:row starts|tile search) ([0-9.]+) us", n.get("note", ""))
            prep = float(mt.group(1)) if mt else n["prepare_ms"] * 1e3
        row.append("%.2f" % (prep / n["median_us"]) if n else "-")
        print("| " + " | ".join(row) + " |")
    print("\ngeomean %s/%s: op N %.3fx (min %.2f), op T %.3fx (min %.2f), T/N %.2f (max %.2f)"
          % (fmt, base, gmean(sn), min(sn) if sn else float("nan"), gmean(st),
             min(st) if st else float("nan"), gmean(tn), max(tn) if tn else float("nan")))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
