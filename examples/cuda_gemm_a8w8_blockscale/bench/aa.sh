#!/usr/bin/env bash
# An A/A through the user's flow on a GPU: a copy of this family with candidate 90, a copy of
# the baseline (17 since the landing) plus one comment line (same machine code, another content
# hash), decided against that BEST N times: `cmake --build --target candidate_90_bench`, then
# `ctest -L keep -R candidate_90`, then `kopt record`. One line per decision goes to
# $OUT/aa.csv (verdict, per-class change and interval, seconds), the ledger's counter last.
#   KOPT_PREFIX=<kopt install> bash examples/cuda_gemm_a8w8_blockscale/bench/aa.sh [N] [ROUNDS] [REPEAT]
# KOPT_AA_CONTINUE=1 adds N decisions to the last run's (same work folder, BEST kept).
set -uo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
n=${1:-20}
prefix=${KOPT_PREFIX:-$(k=$(command -v kopt) && dirname "$(dirname "$k")")} # the install of kopt on PATH
[ -n "$prefix" ] || { echo "set KOPT_PREFIX=<a kopt install>, or put its bin/kopt on PATH" >&2; exit 2; }
out=${OUT:-/tmp/kopt-out}
work=${KOPT_AA_WORK:-/tmp/kopt-aa}
family=cuda_gemm_a8w8_blockscale
mkdir -p "$out"
b=$work/build
state=(--spec "$work/src/family.json" --state-dir "$b/kopt/$family")
first=1
if [ -n "${KOPT_AA_CONTINUE:-}" ] && [ -f "$work/aa.csv" ]; then
  first=$(($(wc -l <"$work/aa.csv")))  # decisions so far, plus one for the header
else
  source "$root/examples/$family/bench/copy_family.sh"
  copy_family "$root" "$work" "$prefix" "$out" "${2:-}" "${3:-}" || exit 1
  "$prefix/bin/kopt" bench "${state[@]}" --best >"$work/best.log" 2>&1
  "$prefix/bin/kopt" decide "${state[@]}" --candidate "$baseline" >>"$work/best.log" 2>&1
  "$prefix/bin/kopt" record "${state[@]}" --candidate "$baseline" >>"$work/best.log" 2>&1
  echo "i,verdict,arrangement,bench_s,keep_s,overall,classes" >"$work/aa.csv"
fi
for d in /opt/nvidia/nsight-compute/*/; do [ -x "$d/ncu" ] && PATH=$PATH:$d; done
export PATH=$PATH:/usr/local/cuda/bin
for i in $(seq "$first" $((first + n - 1))); do
  s=$(date +%s.%N)
  cmake --build "$b" --target candidate_90_bench >"$work/bench.log" 2>&1
  m=$(date +%s.%N)
  ctest --test-dir "$b" -L keep -R '^candidate_90\.' >"$work/ctest.log" 2>&1
  { echo "=== decision $i"; cat "$work/bench.log" "$work/ctest.log"; } >>"$work/runs.log"
  e=$(date +%s.%N)
  "$prefix/bin/kopt" record "${state[@]}" --candidate 90 >>"$work/record.log" 2>&1
  # Both sides' samples of this decision, for the per-round differences by order and by side.
  mkdir -p "$out/samples/$i"
  cp "$b/kopt/$family/results/90/"{measurement,best_measurement,decision}.json "$out/samples/$i/" 2>/dev/null
  python3 - "$b/kopt/$family/results/90/decision.json" "$i" "$(awk "BEGIN{print $m - $s}")" "$(awk "BEGIN{print $e - $m}")" >>"$work/aa.csv" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
row = lambda r: "%s %+.3f%% [%+.3f, %+.3f] %s" % (r["class"], 100 * r["change"], 100 * (r["low"] or 0), 100 * (r["high"] or 0), r["state"])
print("%s,%s,%s,%.1f,%.1f,%s,%s" % (sys.argv[2], d["verdict"], d.get("arrangement", ""), float(sys.argv[3]),
      float(sys.argv[4]), row(d["overall"]), " | ".join(row(r) for r in d["classes"])))
PY
  tail -1 "$work/aa.csv"
  cp "$work/aa.csv" "$out/" # kept as it grows: a call cut short loses no decision
done
"$prefix/bin/kopt" status "${state[@]}" | tee "$out/status.txt"
cp "$work/aa.csv" "$work/best.log" "$out/"
gzip -c "$work/runs.log" >"$out/runs.log.gz"
