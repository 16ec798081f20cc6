#!/bin/sh
# tests/exports.sh LIB INCLUDE_DIR [BUILD_INCLUDE_DIR]: libgpusolve.so exports exactly the functions
# that the public headers declare (the library is built with hidden visibility and the headers
# push default visibility): every exported symbol is a declared name, and every declared function
# is exported. Needs nm (binutils); exits 77 (skipped) without it.
set -eu
lib=$1
shift
command -v nm >/dev/null 2>&1 || { echo "exports: no nm: skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# the dynamic symbols the library defines (functions and data), without the toolchain's own
nm -D --defined-only "$lib" | awk '{print $3}' | sed 's/@.*//' |
  grep -v -E '^(_init|_fini|_edata|_end|__bss_start)$' | sort -u > "$tmp/exported"
# function names declared in the public headers: `name(` at a declaration, not a macro or a
# function-pointer type (`(*name)(`)
for d in "$@"; do find "$d" -name '*.h' -path '*gpusolve*'; done | sort -u > "$tmp/headers"
[ -s "$tmp/headers" ] || { echo "exports: no public headers under $*"; exit 1; }
xargs cat < "$tmp/headers" | sed 's|/\*.*\*/||g' | grep -v '^\s*#' |
  grep -o -E '\bgs_[a-z0-9_]+[[:space:]]*\(' | sed 's/[[:space:]]*($//' |
  grep -v '_t$' | sort -u > "$tmp/declared" # a type before a parenthesis is no function
fail=0
extra=$(comm -23 "$tmp/exported" "$tmp/declared")
missing=$(comm -13 "$tmp/exported" "$tmp/declared")
if [ -n "$extra" ]; then
  echo "exports: exported but not declared in a public header (internal names leaking):"
  echo "$extra" | sed 's/^/  /'
  fail=1
fi
if [ -n "$missing" ]; then
  echo "exports: declared in a public header but not exported:"
  echo "$missing" | sed 's/^/  /'
  fail=1
fi
echo "exports: $(wc -l < "$tmp/exported") symbols exported, $(wc -l < "$tmp/declared") declared"
exit $fail
