#!/usr/bin/env bash
# bench/hola.sh: issue 10's HOLA table and issue 15's merge and csr-adaptive tables: `gpusolve
# spmv --format hola,merge,csr-adaptive,csr-vector,cusparse-csr --transpose` (merge and
# csr-adaptive have no op T: their T columns stay empty) on the papers' synthetic matrices (27-point Laplacian 100^3, HOLA's normal rows 1M x 22 with
# sigma 1e4, Bell & Garland's Pareto rows 200k with k = 1, a power-law graph 2M rows of mean 8)
# and on every real matrix of MATRIX_DIR with at least 100k entries (and any *.mtx.gz there),
# then one table (bench/spmv_table.py). Needs a GPU.
# Usage: bash bench/hola.sh [build/apps/gpusolve] [OUTDIR] [MATRIX_DIR...]
set -euo pipefail
cli=${1:-build/apps/gpusolve}
out=${2:-bench-out/hola}
shift $(( $# < 2 ? $# : 2 ))
formats=${FORMATS:-hola,merge,csr-adaptive,csr-vector,cusparse-csr}
runs=${RUNS:-200}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
gen() { [ -s "$out/$1.mtx" ] || "$cli" gen "${@:2}" -o "$out/$1.mtx"; }
gen lap27 laplace --grid 100x100x100 --stencil 27
gen normal normal --rows 1000000 --per-row 22 --sigma 10000
gen pareto pareto --rows 200000 --k 1
gen powerlaw powerlaw --rows 2000000 --mean 8 || echo "no powerlaw generator in this build"
mats=()
for m in lap27 normal pareto powerlaw; do [ -s "$out/$m.mtx" ] && mats+=("$out/$m.mtx"); done
for d in "$@"; do
  for f in "$d"/*.mtx "$d"/*.mtx.gz; do
    [ -e "$f" ] || continue
    nnz=$("$cli" info "$f" 2>/dev/null | awk '/^nonzeros/ {print $2}')
    [ -n "$nnz" ] && [ "$nnz" -ge 100000 ] && mats+=("$f")
  done
done
jsons=()
for f in "${mats[@]}"; do
  j="$out/$(basename "${f%%.mtx*}").json"
  "$cli" spmv "$f" --format "$formats" --transpose --runs "$runs" --json > "$j"
  jsons+=("$j")
done
for fmt in ${formats//,/ }; do
  [ "$fmt" = cusparse-csr ] && continue
  echo "== $fmt"
  python3 "$here/spmv_table.py" "$fmt" "${jsons[@]}"
done
case ",$formats," in
*,csr-adaptive,*csr-vector,*|*,csr-vector,*csr-adaptive,*)
  echo "== csr-adaptive over csr-vector (which one to keep, issue 15)"
  python3 "$here/spmv_table.py" csr-adaptive csr-vector "${jsons[@]}" ;;
esac
