#!/usr/bin/env bash
# scripts/seeds.sh [N] [BUILD_DIR]: runs every test executable of a build (BUILD_DIR/tests/test_*)
# N times (default 200), each run with GS_TEST_SEED set to a fresh random seed, and reports every
# failing run with its suite and seed, so that a flaky draw can be replayed:
#     GS_TEST_SEED=<seed> BUILD_DIR/tests/test_<suite>
# A suite that exits 77 (a GPU suite on a machine without a GPU) is reported as skipped and not
# run again. Exit status: 0 when no run failed, 1 otherwise, 2 on bad usage.
#
# Environment:
#   SEEDS_JOBS=k        runs at most k suites at once (default: the number of CPUs)
#   SEEDS_SUITES=a,b    runs only these suites (names without test_)
#   SEEDS_QUICK=a,b     runs these suites with GS_TEST_QUICK=1 (their small cases only)
#   SEEDS_TIMEOUT=s     a run longer than s seconds fails (default 900)
#   SEEDS_LOGS=dir      keeps the logs of failing runs there (default: a fresh folder in /tmp)
set -u

usage() {
  sed -n '2,16s/^# \{0,1\}//p' "$0" >&2
  exit 2
}

N=${1:-200}
BUILD=${2:-build}
case "$N" in '' | *[!0-9]* | 0) usage ;; esac
[ -d "$BUILD/tests" ] || { echo "seeds.sh: no tests folder in build dir '$BUILD'" >&2; usage; }
BUILD=$(cd "$BUILD" && pwd)
JOBS=${SEEDS_JOBS:-$(nproc 2>/dev/null || echo 2)}
TIMEOUT=${SEEDS_TIMEOUT:-900}
LOGS=${SEEDS_LOGS:-$(mktemp -d /tmp/gs_seeds_XXXXXX)}
mkdir -p "$LOGS" || exit 2

in_list() { # name, comma-separated list
  case ",$2," in *",$1,"*) return 0 ;; esac
  return 1
}

suites=()
for exe in "$BUILD"/tests/test_*; do
  if [ ! -f "$exe" ] || [ ! -x "$exe" ]; then continue; fi
  s=${exe##*/test_}
  if [ -n "${SEEDS_SUITES:-}" ] && ! in_list "$s" "$SEEDS_SUITES"; then continue; fi
  suites+=("$s")
done
[ ${#suites[@]} -gt 0 ] || { echo "seeds.sh: no test executables in $BUILD/tests" >&2; exit 2; }

seeds=()
for ((k = 0; k < N; ++k)); do
  seeds+=("$(od -An -N8 -tu8 /dev/urandom | tr -d ' ')")
done

echo "seeds.sh: ${#suites[@]} suites x $N seeds, $JOBS at a time, build $BUILD"
echo "suites: ${suites[*]}"
[ -n "${SEEDS_QUICK:-}" ] && echo "GS_TEST_QUICK=1 for: $SEEDS_QUICK"
for ((k = 0; k < N; ++k)); do echo "seed $((k + 1)): ${seeds[$k]}"; done

# One run: prints "rc suite seed seconds"; keeps the log only when the run failed.
# shellcheck disable=SC2317 # called through xargs
run_one() {
  local suite=$1 seed=$2 log="$LOGS/$1-$2.log" t0 t1 rc
  t0=$(date +%s.%N)
  (
    cd "$BUILD/tests" || exit 3
    if in_list "$suite" "${SEEDS_QUICK:-}"; then export GS_TEST_QUICK=1; fi
    GS_TEST_SEED=$seed exec timeout "$TIMEOUT" "./test_$suite"
  ) >"$log" 2>&1
  rc=$?
  t1=$(date +%s.%N)
  if [ "$rc" -eq 0 ] || [ "$rc" -eq 77 ]; then rm -f "$log"; fi
  printf '%s %s %s %s\n' "$rc" "$suite" "$seed" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')"
}
export -f run_one in_list
export BUILD LOGS TIMEOUT SEEDS_QUICK

results=$(mktemp /tmp/gs_seeds_results_XXXXXX)
trap 'rm -f "$results"' EXIT

# The first seed on every suite first: a suite that skips (77) is not run again.
for s in "${suites[@]}"; do printf '%s %s\n' "$s" "${seeds[0]}"; done |
  xargs -P "$JOBS" -n 2 bash -c 'run_one "$@"' _ >>"$results"
active=()
for s in "${suites[@]}"; do
  if grep -q "^77 $s " "$results"; then
    echo "$s: exit 77 (no GPU): skipped"
  else
    active+=("$s")
  fi
done

if [ "$N" -gt 1 ] && [ ${#active[@]} -gt 0 ]; then
  for ((k = 1; k < N; ++k)); do
    for s in "${active[@]}"; do printf '%s %s\n' "$s" "${seeds[$k]}"; done
  done | xargs -P "$JOBS" -n 2 bash -c 'run_one "$@"' _ >>"$results"
fi

echo
printf '%-20s %6s %6s %8s %8s\n' suite runs failed "mean s" "max s"
fails=0
for s in "${suites[@]}"; do
  awk -v s="$s" '$2 == s { n++; if ($1 != 0 && $1 != 77) f++; if ($1 == 77) k++; t += $4;
                           if ($4 > m) m = $4 }
                 END { if (k == n && n > 0) printf "%-20s %6d %6s %8s %8s\n", s, n, "skip", "-", "-";
                       else printf "%-20s %6d %6d %8.2f %8.2f\n", s, n, f, n ? t / n : 0, m }' \
    "$results"
done
while read -r rc suite seed _; do
  if [ "$rc" -eq 0 ] || [ "$rc" -eq 77 ]; then continue; fi
  fails=$((fails + 1))
  what="exit $rc"
  [ "$rc" -eq 124 ] && what="timed out after ${TIMEOUT}s"
  echo "FAIL $suite seed $seed ($what): GS_TEST_SEED=$seed $BUILD/tests/test_$suite" \
    "(log $LOGS/$suite-$seed.log)"
done <"$results"
if [ "$fails" -gt 0 ]; then
  echo "seeds.sh: $fails failing runs"
  exit 1
fi
rmdir "$LOGS" 2>/dev/null
echo "seeds.sh: every run passed"
exit 0
