#!/usr/bin/env bash
# Builds and runs bench/anchor.cu: the family's candidates 00, 02, 03, 04 and 05, the copy rate
# and a same-bytes copy, and the implementations of any extra translation units.
#   bash anchor.sh BUILD_DIR [anchor args...]
#   ANCHOR_EXTRA="a.o b.o" (objects defining paged_anchor::add_external_impls; anchor_none.cu's
#   empty one without) and ANCHOR_NVCC_FLAGS (more nvcc flags for the link) are optional.
# Objects are compiled in parallel (nproc), for sm_90a.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
family=$(cd "$here/.." && pwd)
build=${1:?usage: anchor.sh BUILD_DIR [anchor args]}
shift
mkdir -p "$build"
nvcc=${NVCC:-nvcc}
flags=(-O3 -std=c++17 -arch=sm_90a -I"$family")
pids=()
for id in 00 02 03 04 05; do
  header=$family/candidates/$id/paged_kernel.cuh
  [ -f "$header" ] || header=$family/paged_kernel.cuh # 00: the family's own files
  "$nvcc" "${flags[@]}" -c "$here/anchor_kopt.cu" -o "$build/kopt_$id.o" \
    -DANCHOR_HEADER="\"$header\"" -DANCHOR_ENTRY=anchor_kopt_$id \
    -Dpaged=paged_c$id -Dpaged_decode_attention=paged_decode_attention_c$id &
  pids+=($!)
done
"$nvcc" "${flags[@]}" -c "$here/anchor.cu" -o "$build/anchor.o" & pids+=($!)
extra=${ANCHOR_EXTRA:-}
if [ -z "$extra" ]; then
  "$nvcc" "${flags[@]}" -c "$here/anchor_none.cu" -o "$build/anchor_none.o" & pids+=($!)
  extra=$build/anchor_none.o
fi
for p in "${pids[@]}"; do wait "$p"; done
# shellcheck disable=SC2086
"$nvcc" "${flags[@]}" ${ANCHOR_NVCC_FLAGS:-} "$build"/kopt_*.o "$build/anchor.o" $extra -o "$build/anchor"
[ $# -eq 0 ] || "$build/anchor" "$@"
