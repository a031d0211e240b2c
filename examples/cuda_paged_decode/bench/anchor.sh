#!/usr/bin/env bash
# Builds and runs bench/anchor.cu: the family's candidates 00, 02, 04, 07, 09 and 10, the copy rate
# and a same-bytes copy, and the implementations of any extra translation units.
#   bash anchor.sh BUILD_DIR [anchor args...]
#   ANCHOR_LANDED=<folder of <id>/paged_kernel.cuh> gives the candidates removed at landing
#   (default: from git, the commit before the landing).
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
# anchor_split(): the SPLIT family.json's heuristic gives a call, for the candidates from 06 on
# (the rules over the dispatch columns batch, ctx_max, head_size, mtp; else the default's).
python3 - "$family/family.json" >"$build/anchor_dispatch.hpp" <<'PY'
import json, re, sys
f = json.load(open(sys.argv[1]))
col = {"batch": "a.num_seqs", "ctx_max": "a.max_context_len", "head_size": "a.head_size",
       "mtp": "a.mtp"}
term = lambda t: "(" + " * ".join("(long long)" + col[c] for c in t.split("*")) + ")"
split = lambda k: int(re.search(r"_s(\d+)$", k).group(1))
print("inline int anchor_split(const PagedArgs &a) {")
for r in f["heuristic"]["rules"]:
    cond = " && ".join("%s %s %d" % (term(c), o, v) for c, o, v in r.get("if", [])) or "true"
    print("  if (%s) return %d;" % (cond, split(r["kernel"])))
print("  return %d;\n}" % split(f["default"]))
PY
# Candidates removed when BEST landed come from ANCHOR_LANDED (a folder of <id>/paged_kernel.cuh),
# else from the commit before the landing (ANCHOR_FROM, default the parent of the last "kopt: land
# candidate .. of cuda_paged_decode" commit); the baseline before it, 00, was that commit's family
# files. The landed BEST is the family's own files now.
from=${ANCHOR_FROM:-$(git -C "$family" log -1 --format=%H --grep='^kopt: land candidate .* of cuda_paged_decode' 2>/dev/null)^}
for id in 00 02 04 07 09 10; do
  header=$family/candidates/$id/paged_kernel.cuh
  # Removed at landing: no candidate.json (an empty folder left by a copy of the tree is no candidate).
  if [ ! -f "$family/candidates/$id/candidate.json" ]; then
    if [ -n "${ANCHOR_LANDED:-}" ]; then
      header=$ANCHOR_LANDED/$id/paged_kernel.cuh
      [ -f "$header" ] || { echo "anchor.sh: no $header (ANCHOR_LANDED)" >&2; exit 1; }
    else
      path=candidates/$id/paged_kernel.cuh
      [ "$id" != 00 ] || path=paged_kernel.cuh
      header=$build/landed/$id/paged_kernel.cuh
      mkdir -p "$(dirname "$header")"
      git -C "$family" show "$from:./$path" >"$header" ||
        { echo "anchor.sh: candidate $id is neither in the tree nor at $from (ANCHOR_FROM)" >&2; exit 1; }
    fi
  fi
  [ -f "$header" ] || header=$family/paged_kernel.cuh # the baseline: the family's own files
  dispatch=()
  [ "$id" \< 06 ] || dispatch=(-DANCHOR_DISPATCH="\"$build/anchor_dispatch.hpp\"")
  "$nvcc" "${flags[@]}" -c "$here/anchor_kopt.cu" -o "$build/kopt_$id.o" "${dispatch[@]}" \
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
