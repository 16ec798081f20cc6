#!/usr/bin/env bash
# bench/select.sh: the automatic format selection over a folder of matrices (issue 12): for each
# matrix `gpusolve select --json` (rule, measured choice, oracle = fastest format of the run),
# then a table and the geomean of the oracle's SpMV speed reached by the rule alone and by the
# measured stage. The data to re-derive the thresholds of spmv/auto_rule.c from.
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
  "$bin" select "$m" --json --no-cache >> "$out"
done
echo "]" >> "$out"
python3 - "$out" <<'PY'
import json, math, sys
rows = json.load(open(sys.argv[1]))
print(f"{'matrix':32} {'rule':14} {'measured':14} {'oracle':14} {'rule/or':>8} {'meas/or':>8}")
gr, gm = [], []
for r in rows:
    name = r["matrix"].rsplit("/", 1)[-1]
    fr, fm = r.get("rule_vs_oracle"), r.get("measured_vs_oracle")
    if fr: gr.append(math.log(fr))
    if fm: gm.append(math.log(fm))
    print(f"{name[:32]:32} {r['rule'] or '-':14} {r['measured'] or '-':14} {r['oracle'] or '-':14} "
          f"{fr if fr else float('nan'):8.3f} {fm if fm else float('nan'):8.3f}")
g = lambda v: math.exp(sum(v) / len(v)) if v else float("nan")
print(f"\ngeomean of the oracle's speed: rule only {g(gr):.3f} (target >= 0.85), "
      f"measured {g(gm):.3f} (target >= 0.97); worst measured "
      f"{min((math.exp(x) for x in gm), default=float('nan')):.3f} (target >= 0.90)")
PY
