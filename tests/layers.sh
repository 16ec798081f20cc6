#!/bin/sh
# tests/layers.sh SOURCE_DIR: the library's folders include only their own headers, the public
# ones (gpusolve/) and those of the layers below them (docs/design.md "Layers and data flow"):
#   core < io < spmv < select, precond < solvers < batch, multigpu
# A file that includes a higher layer's internals fails the test with its line.
set -eu
cd "$1"
TMPDIR_LAYERS=$(mktemp -d)
trap 'rm -rf "$TMPDIR_LAYERS"' EXIT
allowed() { # the folders a layer's files may include from, besides gpusolve/
  case $1 in
    core) echo "core" ;;
    io) echo "core io" ;;
    spmv) echo "core spmv" ;;
    select) echo "core spmv select" ;;
    precond) echo "core spmv precond" ;;
    solvers) echo "core spmv select precond solvers" ;;
    batch) echo "core spmv solvers batch" ;;
    multigpu) echo "core spmv solvers multigpu" ;;
  esac
}
fail=0
n=0
for layer in core io spmv select precond solvers batch multigpu; do
  ok=$(allowed "$layer")
  if [ ! -d "$layer" ]; then # a renamed folder must be renamed here too, not go unchecked
    echo "layers: no folder $layer/ (renamed? update this list)"
    echo x >> "$TMPDIR_LAYERS/bad"
    continue
  fi
  for f in "$layer"/*.c "$layer"/*.h "$layer"/*.cu "$layer"/*.cuh; do
    [ -e "$f" ] || continue
    n=$((n + 1))
    grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f" | while IFS= read -r line; do
      inc=$(printf '%s\n' "$line" | sed 's/.*include[[:space:]]*"\([^"]*\)".*/\1/')
      top=${inc%%/*}
      [ "$top" = "$inc" ] && continue # a header beside the file
      [ "$top" = gpusolve ] && continue
      case " $ok " in *" $top "*) continue ;; esac
      echo "layers: $f:${line%%:*}: includes \"$inc\": $layer may include only $ok and gpusolve/"
      echo x >> "$TMPDIR_LAYERS/bad"
    done
  done
done
[ -s "$TMPDIR_LAYERS/bad" ] && fail=1
echo "layers: $n files checked"
exit $fail
