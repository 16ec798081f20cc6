#!/usr/bin/env bash
# bench/spmv_papers.sh: reproduce the SpMV tables of the closing notes: the papers' synthetic
# matrices (Bell & Garland's 27-point Laplacian and Pareto rows, HOLA's normal-band rows, and a
# scale-free graph with Zipf rows: 2M rows, mean 8, exponent 2.5) through
# `gpusolve spmv --format all --transpose`, every format against cuSPARSE in the same run.
# Usage: bash bench/spmv_papers.sh [build/apps/gpusolve] [OUTDIR]   (needs a GPU)
set -euo pipefail
cli=${1:-build/apps/gpusolve}
out=${2:-bench-out}
mkdir -p "$out"
"$cli" gen laplace --grid 100x100x100 --stencil 27 -o "$out/lap27.mtx"
"$cli" gen normal --rows 1000000 --per-row 22 --sigma 10000 -o "$out/normal.mtx"
"$cli" gen pareto --rows 200000 --k 1 -o "$out/pareto.mtx"
"$cli" gen powerlaw --rows 2000000 --mean 8 -o "$out/powerlaw.mtx"
for m in lap27 normal pareto powerlaw; do
  echo "=== $m"
  "$cli" spmv "$out/$m.mtx" --format all --transpose --runs 200 | tee "$out/spmv_$m.txt"
done
