#!/usr/bin/env bash
# bench/select.sh: the automatic format selection over a folder of matrices (issue 12): for each
# matrix `gpusolve select --json` (rule, measured choice, oracle = fastest format of the run),
# then a table and the geomean of the oracle's SpMV speed reached by the rule alone and by the
# measured stage, the latter twice: for $PRODUCTS products (default 1000, the library's default:
# a whole solve, prepare counts) and for $ALSO_PRODUCTS (default 1000000: prepare amortised away,
# the setting of the SpMV-speed targets), both from the same measured times. The data to
# re-derive the thresholds of select/rule.c from (bench/select_fit.py).
#
#   bench/select.sh DIR [GPUSOLVE] [MIN_NNZ]      (defaults: build/apps/gpusolve, 10000)
#
# The generated set (27-point Laplacian, normal, Pareto, power-law, convection-diffusion 2D/3D) is
# made once in $GEN_DIR (default bench-out/select). Matrices with fewer than MIN_NNZ entries are skipped (launch-bound). The raw JSON goes to
# select.json in the current folder. Runs with --no-cache, so every measured stage is measured.
set -euo pipefail
dir=${1:?usage: bench/select.sh DIR [GPUSOLVE] [MIN_NNZ]}
bin=${2:-build/apps/gpusolve}
min_nnz=${3:-10000}
out=select.json
# the generated set of issue 12 beside the folder's matrices
gdir=${GEN_DIR:-bench-out/select}
mkdir -p "$gdir"
gen() { [ -s "$gdir/$1.mtx" ] || "$bin" gen "${@:2}" -o "$gdir/$1.mtx"; }
gen lap27 laplace --grid 100x100x100 --stencil 27
gen normal normal --rows 1000000 --per-row 22 --sigma 10000
gen pareto pareto --rows 200000 --k 1
gen powerlaw powerlaw --rows 2000000 --mean 8
gen convdiff2d convdiff --grid 1500x1500 --peclet 100
gen convdiff3d convdiff --grid 100x100x100 --peclet 20 --field rotate
echo "[" > "$out"
first=1
for m in "$gdir"/*.mtx "$dir"/*.mtx "$dir"/*.mtx.gz; do
  [ -e "$m" ] || continue
  nnz=$("$bin" info "$m" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["nnz"])')
  [ "$nnz" -ge "$min_nnz" ] || continue
  [ $first -eq 1 ] || echo "," >> "$out"
  first=0
  "$bin" select "$m" --json --no-cache --products "${PRODUCTS:-1000}" \
    --also-products "${ALSO_PRODUCTS:-1000000}" >> "$out"
done
echo "]" >> "$out"
python3 - "$out" <<'PY'
import json, math, sys
rows = json.load(open(sys.argv[1]))
p0 = rows[0]["selection"]["expected_products"] if rows else 0
p1 = rows[0].get("also_products", 0) if rows else 0
c0, c1 = f"meas@{p0:.0f}", f"meas@{p1:.0f}"
print(f"{'matrix':24} {'rule':13} {c0:13} {c1:13} {'oracle':13} {'rule/or':>7} "
      f"{'m0/or':>6} {'m1/or':>6} {'CSR up ms':>9}")
gr, g0, g1 = [], [], []
for r in rows:
    name = r["matrix"].rsplit("/", 1)[-1]
    fr, f0, f1 = r.get("rule_vs_oracle"), r.get("measured_vs_oracle"), r.get("measured_also_vs_oracle")
    for v, g in ((fr, gr), (f0, g0), (f1, g1)):
        if v: g.append(math.log(v))
    nan = float("nan")
    print(f"{name[:24]:24} {r['rule'] or '-':13} {r['measured'] or '-':13} "
          f"{r.get('measured_also') or '-':13} {r['oracle'] or '-':13} {fr or nan:7.3f} "
          f"{f0 or nan:6.3f} {f1 or nan:6.3f} {r['selection'].get('shared_csr_ms') or 0:9.2f}")
g = lambda v: math.exp(sum(v) / len(v)) if v else float("nan")
w = lambda v: min((math.exp(x) for x in v), default=float("nan"))
print(f"\ngeomean of the oracle's SpMV speed: rule only {g(gr):.3f} (target >= 0.85); "
      f"measured for {p1:.0f} products {g(g1):.3f} (target >= 0.97), worst {w(g1):.3f} "
      f"(target >= 0.90); measured for {p0:.0f} products (prepare counts, a whole solve) "
      f"{g(g0):.3f}, worst {w(g0):.3f}")
PY
