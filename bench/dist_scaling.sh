#!/usr/bin/env bash
# bench/dist_scaling.sh: issue 16's scaling tables for the multi-GPU solver (gpusolve solve
# --gpus), on generated Laplacians built in memory (--grid, no files):
#   strong scaling: the same system on 1, 2, 4, ... GPUs (27-point on GRID27^3, ~150M entries
#                   at 176; 7-point on GRID7^3, ~500M entries at 415), ITERS iterations, time
#                   per iteration in the steady state (--steady), against the single-GPU solver
#                   of the same machine (--compare on the rows of 2 GPUs and more);
#   weak scaling:   WEAK^3 rows per GPU (the grid grows along z and y);
#   the product:    gpusolve spmv --gpus: whole product, local product alone, halo exchange
#                   alone, overlap.
# Needs NCCL and the GPUs. Usage: bash bench/dist_scaling.sh [build/apps/gpusolve] [OUTDIR]
# Environment: GPUS (max GPUs, default all), GRID27 (176), GRID7 (415), WEAK (140), ITERS (300),
# SOLVERS ("cg pipecg"), TRANSPORT (auto; peer or nccl to compare them).
set -uo pipefail
cli=${1:-build/apps/gpusolve}
out=${2:-bench-out/dist}
mkdir -p "$out"
ngpu=${GPUS:-$(nvidia-smi -L 2>/dev/null | wc -l)}
g27=${GRID27:-176}
g7=${GRID7:-415}
weak=${WEAK:-140}
iters=${ITERS:-300}
solvers=${SOLVERS:-cg pipecg}
transport=(--transport "${TRANSPORT:-auto}")
export NCCL_NVLS_ENABLE=0 # keep NVLink multicast off (shared hosts)
counts=()
for g in 1 2 4 8; do [ "$g" -le "$ngpu" ] && counts+=("$g"); done
log=$out/dist_scaling.txt
: >"$log"
run() { echo "\$ gpusolve $*" | tee -a "$log"; "$cli" "$@" 2>&1 | tee -a "$log"; echo | tee -a "$log"; }
for s in $solvers; do
  for spec in "27 $g27" "7 $g7"; do
    set -- $spec
    for g in "${counts[@]}"; do
      cmp=(); [ "$g" -gt 1 ] && cmp=(--compare)
      run solve --grid "$2x$2x$2" --stencil "$1" --gpus "$g" "${transport[@]}" --solver "$s" \
        --maxit "$iters" --check-every 50 --steady "${cmp[@]}"
    done
  done
done
for g in "${counts[@]}"; do
  run spmv --grid "${g27}x${g27}x${g27}" --stencil 27 --gpus "$g" "${transport[@]}" --runs 50
done
for g in "${counts[@]}"; do
  z=$((weak * (g >= 2 ? 2 : 1))); y=$((weak * (g >= 4 ? 2 : 1))); x=$((weak * (g >= 8 ? 2 : 1)))
  run solve --grid "${x}x${y}x${z}" --stencil 27 --gpus "$g" "${transport[@]}" --solver cg \
    --maxit "$iters" --check-every 50 --steady
done
# one line per run: the command, then its time per iteration or its product timing
python3 - "$log" >"$out/summary.txt" <<'PY'
import re, sys
cmd = ""
for line in open(sys.argv[1]):
    if line.startswith("$ gpusolve"):
        cmd = line[2:].strip()
    m = re.match(r"steady\s+(\d+ ranks?|1 GPU): ([0-9.]+) us per iteration", line)
    if m:
        print(f"{cmd} | {m.group(1)} | {m.group(2)} us/it")
    if line.startswith("speed-up") or line.startswith("time"):
        print(f"{cmd} | {line.strip()}")
PY
cat "$out/summary.txt"
