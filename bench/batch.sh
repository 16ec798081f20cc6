#!/bin/sh
# bench/batch.sh: the tables of issue 13 (batched SpMV and batched solves, Anzt et al. ScalA17).
# usage: bench/batch.sh [BUILD_DIR] [MATRIX_DIR] [WHAT]
#   BUILD_DIR   default build (the CLI is BUILD_DIR/apps/gpusolve)
#   MATRIX_DIR  default ../shared/matrices: its square matrices of at most 2000 rows, repeated
#   WHAT        all (default), gen, tiny, uniform, real, solve, precond: run one part only
#               (each part stays within a few minutes on an H100)
# Output: one text table per batch on stdout and the JSON documents under $OUT (default
# batch-bench/). Every table times each batched kernel (median of --runs products after 10
# warm-up, CUDA events) beside the same batch as ONE block-diagonal matrix through cusparse-csr,
# csr-vector and hola, (batches of <= 1000) a loop of cusparse-csr calls, and cuSPARSE's strided
# batches (cusparseSpMM, one column, CSR_ALG1 and ALG2), which only the uniform part's batches
# (one pattern, --shared) let run: the other tables print them "n/a (patterns differ)".
set -eu
BUILD=${1:-build}
MDIR=${2:-../shared/matrices}
WHAT=${3:-all}
G="$BUILD/apps/gpusolve"
OUT=${OUT:-batch-bench}
mkdir -p "$OUT"

run() { # name, args...
  name=$1
  shift
  echo "== gpusolve batch $*"
  "$G" batch "$@"
  "$G" batch "$@" --json > "$OUT/$name.json"
}
# a solve that leaves a problem unconverged exits 1: a row of the table, not the end of the run
run_nc() {
  run "$@" || echo "   (exit $?: not every problem converged)"
}

if [ "$WHAT" = all ] || [ "$WHAT" = gen ]; then
  for kind in laplace random; do
    for n in 1000 10000 100000; do
      run "spmv-$kind-$n" --gen "$kind" --count "$n" --rows 10:2000 --seed 1 --format all
    done
  done
fi
if [ "$WHAT" = all ] || [ "$WHAT" = tiny ]; then
  run spmv-laplace-tiny --gen laplace --count 100000 --rows 10:100 --seed 1 --format all
  run spmv-random-tiny --gen random --count 100000 --rows 10:100 --seed 1 --format all
fi
if [ "$WHAT" = all ] || [ "$WHAT" = uniform ]; then
  # one pattern per batch, values per problem: what cuSPARSE's strided batches can read
  for kind in laplace random; do
    for n in 1000 10000 100000; do
      run "spmv-$kind-uniform100-$n" --gen "$kind" --shared --rows 100 --count "$n" --seed 1 --format all
    done
    run "spmv-$kind-uniform1000-10000" --gen "$kind" --shared --rows 1000 --count 10000 --seed 1 --format all
  done
fi
list="$OUT/small.list"
spd="$OUT/small-spd.list"
if [ -f "$MDIR/MANIFEST.tsv" ]; then
  # columns: name category ... rows(5) cols(6)
  awk -F'\t' -v d="$(cd "$MDIR" && pwd)" 'NR > 1 && $5 == $6 && $5 <= 2000 { print d "/" $1 ".mtx" }' \
    "$MDIR/MANIFEST.tsv" > "$list"
  awk -F'\t' -v d="$(cd "$MDIR" && pwd)" 'NR > 1 && $2 == "spd" && $5 <= 2000 { print d "/" $1 ".mtx" }' \
    "$MDIR/MANIFEST.tsv" > "$spd"
fi
if [ "$WHAT" = all ] || [ "$WHAT" = real ]; then
  for n in 1000 10000; do
    run "spmv-real-$n" "$list" --count "$n" --format all
  done
fi
if [ "$WHAT" = all ] || [ "$WHAT" = solve ]; then
  run solve-cg-laplace --gen laplace --count 10000 --rows 10:500 --seed 1 --solve cg --compare
  run solve-cg-laplace-jacobi --gen laplace --count 10000 --rows 10:500 --seed 1 --solve cg --jacobi --compare
  run solve-bicgstab-random --gen random --count 10000 --rows 10:500 --seed 1 --solve bicgstab --compare
  run_nc solve-gmres-random --gen random --count 10000 --rows 10:500 --seed 1 --solve gmres --compare
  run_nc solve-gmres-laplace --gen laplace --count 1000 --rows 10:2000 --seed 1 --solve gmres --compare
  if [ -s "$spd" ]; then
    run solve-cg-real --count 10000 "$spd" --solve cg --jacobi --compare
  fi
fi
if [ "$WHAT" = all ] || [ "$WHAT" = precond ]; then
  # issue 38 item 2: the batched preconditioners (set up inside the solve's launch) against the
  # same preconditioner on the block-diagonal gs_solve (--compare): iterations and time
  for pc in jacobi block-jacobi ilu0; do
    run_nc "solve-cg-laplace-$pc" --gen laplace --count 1000 --rows 10:2000 --seed 1 --solve cg \
      --precond "$pc" --compare
    run_nc "solve-bicgstab-random-$pc" --gen random --count 1000 --rows 10:2000 --seed 1 \
      --solve bicgstab --precond "$pc" --compare
    run_nc "solve-gmres-random-$pc" --gen random --count 1000 --rows 10:2000 --seed 1 --solve gmres \
      --precond "$pc" --compare
  done
  run_nc solve-gmres-laplace-bj4 --gen laplace --count 1000 --rows 10:2000 --seed 1 --solve gmres \
    --precond block-jacobi --precond-opt block=4 --compare
  run_nc solve-gmres-laplace-ilu0-10000 --gen laplace --count 10000 --rows 10:500 --seed 1 \
    --solve gmres --precond ilu0 --compare
  if [ -s "$spd" ]; then
    run_nc solve-cg-real-ilu0 --count 1000 "$spd" --solve cg --precond ilu0 --compare
    run_nc solve-gmres-real-bj --count 1000 "$list" --solve gmres --precond block-jacobi --compare
  fi
fi
