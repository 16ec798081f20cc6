#!/bin/sh
# bench/batch_sweep.sh: the batched solver's scheduling knobs (issue 38) in one GPU run: the
# blocks' order (GS_BATCH_ORDER: 1 largest problem first, 0 index order), the shared-memory
# budget of a block (GS_BATCH_SMEM_KB; "default" is gs_batch_kernel_smem_cap's rule, 46 the
# budget before issue 38) and the threads a block (GS_BATCH_THREADS), against the whole batch as
# one block-diagonal gs_solve (--compare, once per batch and method; its time is repeated on
# the batch's other lines).
# usage: bench/batch_sweep.sh [BUILD_DIR]       (the CLI is BUILD_DIR/apps/gpusolve; default build)
# Environment (optional):
#   COMBOS         generator:method pairs (default "laplace:cg laplace:bicgstab random:bicgstab";
#                  CG needs SPD problems: random:cg mostly stops unconverged)
#   SMEMS          budgets in KiB (default "default 16 24 32 46")
#   THREADS        extra thread counts tried on the 1000-problem batches (default "64 128")
#   COMPARE_10000  1: --compare the 10,000-problem batches too (several seconds each)
# Output: one line per run: generator, problems, rows, method, order, smem (KiB), threads,
# batched ms (GPU time of the solve's launch), block-diagonal ms, ratio (block-diagonal /
# batched: above 1 the batch is faster), problems with vectors in shared memory, converged.
# "default" in the smem and threads columns is the library's choice. Each line is one solve
# (after one untimed warm-up solve in the same process): repeat the script to see the noise.
# Batches of 2000:2000 rows are uniform (the order is the identity; no vector fits 46 KiB):
# they run once, with the defaults. Budget: about 2-3 minutes on an H100 or H200.
set -eu
BUILD=${1:-build}
G="$BUILD/apps/gpusolve"
COMBOS=${COMBOS:-"laplace:cg laplace:bicgstab random:bicgstab"}
SMEMS=${SMEMS:-"default 16 24 32 46"}
THREADS=${THREADS:-"64 128"}
COMPARE_10000=${COMPARE_10000:-0}
[ -x "$G" ] || { echo "batch_sweep.sh: no CLI at $G (give the build folder)" >&2; exit 2; }

start=$(date +%s)
printf '%-8s %6s %-9s %-9s %5s %7s %7s %10s %10s %7s %7s %9s\n' gen problems rows method order \
  smem threads batch_ms bd_ms ratio shared converged
BD=- # block-diagonal ms of the current batch and method

# one solve: gen count rows method order smem threads compare(0|1)
one() {
  gen=$1 count=$2 rows=$3 method=$4 order=$5 smem=$6 threads=$7 cmp=$8
  kb=$smem nt=$threads
  [ "$kb" = default ] && kb=
  [ "$nt" = default ] && nt=
  flag=
  [ "$cmp" = 1 ] && flag=--compare
  rc=0
  out=$(GS_BATCH_ORDER=$order GS_BATCH_SMEM_KB=$kb GS_BATCH_THREADS=$nt "$G" batch --gen "$gen" \
    --count "$count" --rows "$rows" --seed 1 --solve "$method" $flag 2>&1) || rc=$?
  # "solve: ...: converged C of N, iterations ..., T ms on the GPU (S problems with vectors ...)"
  sol=$(printf '%s\n' "$out" | sed -n 's/^solve: .*converged \([0-9]*\) of \([0-9]*\),.* \([0-9.]*\) ms on the GPU (\([0-9]*\) problems.*/\3 \4 \1\/\2/p')
  if [ -z "$sol" ]; then
    printf '%-8s %6s %-9s %-9s %5s %7s %7s   failed (exit %s): %s\n' "$gen" "$count" "$rows" \
      "$method" "$order" "$smem" "$threads" "$rc" "$(printf '%s\n' "$out" | tail -n 1)"
    return 0
  fi
  if [ "$cmp" = 1 ]; then
    BD=$(printf '%s\n' "$out" | sed -n 's/^block-diagonal gs_solve: .*, \([0-9.]*\) ms (.*/\1/p')
    [ -n "$BD" ] || BD=-
  fi
  # shellcheck disable=SC2086 # (split on purpose: ms, shared, converged)
  set -- $sol
  ratio=$(awk -v b="$BD" -v t="$1" 'BEGIN { if (b == "-" || t <= 0) print "-"; else printf "%.2f", b / t }')
  printf '%-8s %6s %-9s %-9s %5s %7s %7s %10s %10s %7s %7s %9s\n' "$gen" "$count" "$rows" \
    "$method" "$order" "$smem" "$threads" "$1" "$BD" "$ratio" "$2" "$3"
}

for combo in $COMBOS; do
  gen=${combo%%:*}
  method=${combo#*:}
  for cfg in 132:10:2000 132:2000:2000 528:10:2000 528:2000:2000 1000:10:2000 10000:10:2000; do
    count=${cfg%%:*}
    rows=${cfg#*:}
    cmp=1
    [ "$count" = 10000 ] && [ "$COMPARE_10000" != 1 ] && cmp=0
    BD=-
    one "$gen" "$count" "$rows" "$method" 1 default default "$cmp"
    [ "$rows" = 2000:2000 ] && continue
    # the order off at the default budget and at the old one
    one "$gen" "$count" "$rows" "$method" 0 default default 0
    one "$gen" "$count" "$rows" "$method" 0 46 default 0
    for smem in $SMEMS; do
      [ "$smem" = default ] && continue
      one "$gen" "$count" "$rows" "$method" 1 "$smem" default 0
      # the full cross of order and budget where the issue measures (1,000 problems)
      [ "$count" = 1000 ] && [ "$smem" != 46 ] && one "$gen" "$count" "$rows" "$method" 0 "$smem" default 0
    done
    if [ "$count" = 1000 ]; then
      for nt in $THREADS; do
        one "$gen" "$count" "$rows" "$method" 1 default "$nt" 0
        one "$gen" "$count" "$rows" "$method" 1 24 "$nt" 0
      done
    fi
  done
done
echo "# $(($(date +%s) - start)) s"
