#!/usr/bin/env bash
# bench/reorder.sh: issue 37 item 2's table (docs/reorder.md): `gpusolve solve` and `gpusolve
# spmv` with --reorder none, rcm, degree and auto on the power-law matrices (gen pareto, gen
# powerlaw), the 27-point Laplacian, and the matrices given (G3_circuit, as-caida, email-Enron,
# wiki-Vote, ...): one JSON file per run in OUTDIR and a summary line per matrix and ordering
# (solve seconds, iterations, reorder ms, bandwidth, SpMV median us of the format). Needs a GPU.
# Usage: bash bench/reorder.sh [build/apps/gpusolve] [OUTDIR] [A.mtx ...]
# Env: FORMAT (default auto), SOLVER (default auto), PRECOND (default none), MAXIT (1000)
set -euo pipefail
cli=${1:-build/apps/gpusolve}
out=${2:-bench-out/reorder}
shift $(( $# < 2 ? $# : 2 ))
format=${FORMAT:-auto}
solver=${SOLVER:-auto}
precond=${PRECOND:-none}
maxit=${MAXIT:-1000}
mkdir -p "$out"
gen() { [ -s "$out/$1.mtx" ] || "$cli" gen "${@:2}" -o "$out/$1.mtx"; }
gen pareto pareto --rows 200000 --k 1
gen powerlaw powerlaw --rows 2000000 --mean 8
gen lap27 laplace --grid 100x100x100 --stencil 27
mats=("$out/pareto.mtx" "$out/powerlaw.mtx" "$out/lap27.mtx" "$@")
printf '%-24s %-7s %-7s %10s %6s %10s %10s %10s %10s\n' matrix asked used solve_s iters \
  reorder_ms bw_before bw_after spmv_us
for f in "${mats[@]}"; do
  name=$(basename "$f" .mtx)
  for r in none rcm degree auto; do
    js="$out/$name.solve.$r.json"
    # a solver that does not converge in maxit still times maxit iterations: the comparison holds
    "$cli" solve "$f" --reorder "$r" --format "$format" --solver "$solver" --precond "$precond" \
      --maxit "$maxit" --json > "$js" || true
    sp="$out/$name.spmv.$r.json"
    "$cli" spmv "$f" --reorder "$r" --format csr-vector,cusparse-csr,hola --json > "$sp" || true
    python3 - "$js" "$sp" "$name" "$r" <<'PY'
import json, sys
def load(p):
    try:
        return json.load(open(p))
    except Exception:
        return {}
s, p, name, r = load(sys.argv[1]), load(sys.argv[2]), sys.argv[3], sys.argv[4]
res = (s.get("results") or [{}])[0]
rows = [x for x in p.get("results", []) if x.get("status") == "ok" and x.get("op", "N") == "N"]
best = min((x.get("median_us", x.get("med_us", 0)) for x in rows), default=float("nan"))
print("%-24s %-7s %-7s %10.4f %6s %10.2f %10s %10s %10.2f" % (
    name, r, s.get("reorder", "?"), res.get("seconds_total", res.get("solve_s", float("nan"))),
    res.get("iterations", "?"), s.get("reorder_ms", 0.0), s.get("bandwidth_before", "-"),
    s.get("bandwidth_after", "-"), best))
PY
  done
done
