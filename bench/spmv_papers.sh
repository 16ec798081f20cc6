#!/usr/bin/env bash
# bench/spmv_papers.sh: reproduce the SpMV tables of the closing notes: the papers' synthetic
# matrices (Bell & Garland's 27-point Laplacian and Pareto rows, HOLA's normal-band rows, and a
# scale-free graph with Zipf rows: 2M rows, mean 8, exponent 2.5), and any matrix files given
# after OUTDIR (G3_circuit, cage10, ...), through `gpusolve spmv --format all --transpose`, every
# format against cuSPARSE in the same run; then the format x matrix table of both products
# (bench/spmv_table.py all).
# Usage: bash bench/spmv_papers.sh [build/apps/gpusolve] [OUTDIR] [MATRIX.mtx[.gz] ...]
#   (needs a GPU; OUTDIR gets one JSON document per matrix, each printed as it is done, and
#   table.md, the table of all of them)
set -euo pipefail
cli=${1:-build/apps/gpusolve}
out=${2:-bench-out}
shift $(($# < 2 ? $# : 2))
mkdir -p "$out"
"$cli" gen laplace --grid 100x100x100 --stencil 27 -o "$out/lap27.mtx"
"$cli" gen normal --rows 1000000 --per-row 22 --sigma 10000 -o "$out/normal.mtx"
"$cli" gen pareto --rows 200000 --k 1 -o "$out/pareto.mtx"
"$cli" gen powerlaw --rows 2000000 --mean 8 -o "$out/powerlaw.mtx"
json=()
for f in "$out/lap27.mtx" "$out/normal.mtx" "$out/pareto.mtx" "$out/powerlaw.mtx" "$@"; do
  m=$(basename "$f"); m=${m%%.*}
  echo "=== $m"
  "$cli" spmv "$f" --format all --transpose --runs 200 --json > "$out/spmv_$m.json"
  python3 "$(dirname "$0")/spmv_table.py" all "$out/spmv_$m.json"
  json+=("$out/spmv_$m.json")
done
python3 "$(dirname "$0")/spmv_table.py" all "${json[@]}" | tee "$out/table.md"
