#!/usr/bin/env bash
# scripts/fuzz.sh [SECONDS] [libFuzzer options...]: fuzz the Matrix Market reader.
#
# Builds fuzz/mm_read_fuzz.c with the reader's sources under clang's libFuzzer, AddressSanitizer
# and UndefinedBehaviorSanitizer in build-fuzz/ (no CUDA needed), then runs it for SECONDS
# (default 60) on one core, from a seed corpus of tests/data/ok, tests/data/bad and fuzz/seeds
# (hostile shapes: declared sizes, both triangles, summed infinities), with the dictionary
# fuzz/mm.dict (the banner's words, size lines, edge numbers, BOM/CR/NUL bytes). New inputs
# it finds are kept in build-fuzz/corpus for the next run. Exits non-zero on a crash, a
# sanitizer report or a broken contract (the input is written to build-fuzz/crash-*), and 0
# with one line "fuzz: skipped: <reason>" when clang or libFuzzer is not available.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
[ $# -gt 0 ] && shift
out=build-fuzz

cc=""
for c in clang clang-19 clang-18 clang-17 clang-16 clang-15 clang-14; do
  if command -v "$c" >/dev/null 2>&1; then cc=$c; break; fi
done
if [ -z "$cc" ]; then
  echo "fuzz: skipped: clang is not installed (apt-get install clang libclang-rt-dev)"
  exit 0
fi
mkdir -p "$out"
probe="$out/probe.c"
echo 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { (void)d; (void)n; return 0; }' >"$probe"
if ! "$cc" -fsanitize=fuzzer,address,undefined "$probe" -o "$out/probe" >/dev/null 2>&1; then
  echo "fuzz: skipped: $cc cannot link libFuzzer (apt-get install libclang-rt-$("$cc" -dumpversion | cut -d. -f1)-dev)"
  exit 0
fi
# The reader as the library builds it: with zlib when its headers are there (as CMake finds it).
zlib=()
if [ -f /usr/include/zlib.h ]; then
  zlib=(-DGS_HAVE_ZLIB=1 -lz)
else
  echo "fuzz: zlib headers are not installed: fuzzing the reader without gzip support"
fi

srcs="fuzz/mm_read_fuzz.c io/mm.c io/mm_read.c io/mm_float.c io/mm_par.c core/coo_csr.c core/parallel.c core/error.c core/matrix.c"
# shellcheck disable=SC2086
"$cc" -std=c11 -g -O1 -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined \
  -fno-sanitize-recover=undefined -I include -I . $srcs -o "$out/mm_read_fuzz" ${zlib[@]+"${zlib[@]}"} \
  -lpthread -lm

mkdir -p "$out/corpus" "$out/seeds"
cp tests/data/ok/*.mtx tests/data/bad/*.mtx fuzz/seeds/*.mtx "$out/seeds/"
cd "$out"
set +e
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1} \
  ./mm_read_fuzz -max_total_time="$secs" -max_len=4096 -timeout=20 -rss_limit_mb=2048 \
  -dict=../fuzz/mm.dict \
  -print_final_stats=1 "$@" corpus seeds 2>&1 | tee fuzz.log | grep -v '^#[0-9]*.*\(NEW\|REDUCE\|pulse\)' 
rc=${PIPESTATUS[0]}
set -e
runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' fuzz.log | grep -o '[0-9]*$' | tail -1 || true)
if [ "$rc" -ne 0 ]; then
  echo "fuzz: FAILED after ${runs:-?} executions (exit $rc): input in $out/crash-* (see $out/fuzz.log)"
  exit 1
fi
echo "fuzz: ok: ${runs:-?} executions in ${secs} s, no crash"
