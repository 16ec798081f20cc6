#!/usr/bin/env bash
# bench/prepare.sh: issue 33's prepare and auto benchmark: every format's prepare against one
# cusparse-csr product of the same run, and the auto row's cost, on the 27-point Laplacian
# (100^3), normal rows (1e4 sigma), Pareto and power-law rows, plus any .mtx files given
# (G3_circuit, say). Prints bench/prepare_table.py's table; the JSON documents stay in OUT.
#   bash bench/prepare.sh build/apps/gpusolve OUT [more.mtx ...]
set -euo pipefail
cli=${1:?usage: bench/prepare.sh GPUSOLVE OUT [A.mtx ...]}
out=${2:?usage: bench/prepare.sh GPUSOLVE OUT [A.mtx ...]}
shift 2
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
[ -f "$out/lap27.mtx" ] || "$cli" gen laplace --grid 100x100x100 --stencil 27 -o "$out/lap27.mtx"
[ -f "$out/normal.mtx" ] || "$cli" gen normal --rows 1000000 --per-row 22 --sigma 10000 -o "$out/normal.mtx"
[ -f "$out/pareto.mtx" ] || "$cli" gen pareto --rows 200000 --k 1 -o "$out/pareto.mtx"
[ -f "$out/powerlaw.mtx" ] || "$cli" gen powerlaw --rows 2000000 --mean 8 -o "$out/powerlaw.mtx"
docs=()
for m in "$out/lap27.mtx" "$out/normal.mtx" "$out/pareto.mtx" "$out/powerlaw.mtx" "$@"; do
  j="$out/$(basename "${m%%.*}").prepare.json"
  # --no-cache: auto measures its pool, as on a first run
  "$cli" spmv "$m" --format all --transpose --no-cache --json >"$j" || true
  docs+=("$j")
done
python3 "$here/prepare_table.py" "${docs[@]}"
