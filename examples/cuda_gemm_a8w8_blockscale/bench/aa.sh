#!/usr/bin/env bash
# An A/A through the user's flow on a GPU: a copy of this family with candidate 90, a copy of
# the baseline 00 plus one comment line (same machine code, another content hash), decided
# against BEST 00 N times: `cmake --build --target candidate_90_bench`, then
# `ctest -L keep -R candidate_90`, then `kopt record`. One line per decision goes to
# $OUT/aa.csv (verdict, per-class change and interval, seconds), the ledger's counter last.
#   KOPT_PREFIX=<kopt install> bash examples/cuda_gemm_a8w8_blockscale/bench/aa.sh [N] [ROUNDS] [REPEAT]
set -uo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
n=${1:-20}
prefix=${KOPT_PREFIX:-$root/.carry/kopt}
out=${OUT:-/tmp/kopt-out}
work=${KOPT_AA_WORK:-/tmp/kopt-aa}
family=cuda_gemm_a8w8_blockscale
mkdir -p "$out"
for d in /opt/nvidia/nsight-compute/*/; do [ -x "$d/ncu" ] && PATH=$PATH:$d; done
export PATH=$PATH:/usr/local/cuda/bin
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; ncu --version | tail -1; } >"$out/machine.txt" 2>&1
rm -rf "$work" && mkdir -p "$work"
cp -r "$root/examples/$family" "$work/src"
python3 - "$work/src/family.json" "${2:-}" "${3:-}" <<'PY'
import json, sys
path, rounds, repeat = sys.argv[1:4]
spec = json.load(open(path))
if rounds: spec["bench"]["rounds"] = int(rounds)
if repeat: spec["bench"]["repeat"] = int(repeat)
json.dump(spec, open(path, "w"), indent=2)
print("bench:", spec["bench"])
PY
mkdir -p "$work/src/candidates/90"
echo '{"id": "90", "base": "00", "hypothesis": "A/A: the baseline plus one comment line", "target": "global"}' \
  >"$work/src/candidates/90/candidate.json"
{ cat "$work/src/gemm_kernel.cuh"; echo "// A/A: this comment changes the content hash, not the code"; } \
  >"$work/src/candidates/90/gemm_kernel.cuh"
b=$work/build
cmake -S "$work/src" -B "$b" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_CUDA_ARCHITECTURES=90a \
  -DKOPT_USE_CCACHE=OFF >"$out/configure.log" 2>&1 || { tail -30 "$out/configure.log"; exit 1; }
cmake --build "$b" --target candidate_00 candidate_90 -j "$(nproc)" >"$out/build.log" 2>&1 ||
  { tail -30 "$out/build.log"; exit 1; }
state=(--spec "$work/src/family.json" --state-dir "$b/kopt/$family")
"$prefix/bin/kopt" bench "${state[@]}" --best >"$out/best.log" 2>&1
"$prefix/bin/kopt" decide "${state[@]}" --candidate 00 >>"$out/best.log" 2>&1
"$prefix/bin/kopt" record "${state[@]}" --candidate 00 >>"$out/best.log" 2>&1
echo "i,verdict,bench_s,keep_s,overall,classes" >"$out/aa.csv"
for i in $(seq 1 "$n"); do
  s=$(date +%s.%N)
  cmake --build "$b" --target candidate_90_bench >"$work/bench.log" 2>&1
  m=$(date +%s.%N)
  ctest --test-dir "$b" -L keep -R '^candidate_90\.' >"$work/ctest.log" 2>&1
  { echo "=== decision $i"; cat "$work/bench.log" "$work/ctest.log"; } >>"$out/runs.log"
  e=$(date +%s.%N)
  "$prefix/bin/kopt" record "${state[@]}" --candidate 90 >>"$out/record.log" 2>&1
  python3 - "$b/kopt/$family/results/90/decision.json" "$i" "$(awk "BEGIN{print $m - $s}")" "$(awk "BEGIN{print $e - $m}")" >>"$out/aa.csv" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
row = lambda r: "%s %+.3f%% [%+.3f, %+.3f] %s" % (r["class"], 100 * r["change"], 100 * (r["low"] or 0), 100 * (r["high"] or 0), r["state"])
print("%s,%s,%.1f,%.1f,%s,%s" % (sys.argv[2], d["verdict"], float(sys.argv[3]), float(sys.argv[4]),
      row(d["overall"]), " | ".join(row(r) for r in d["classes"])))
PY
  tail -1 "$out/aa.csv"
done
"$prefix/bin/kopt" status "${state[@]}" | tee "$out/status.txt"
