#!/usr/bin/env bash
# The application beside the kernel verdict on a GPU, through the user's flow. A copy of this
# family (copy_family: candidate 90 is the baseline plus one comment line) gets the candidate
# folder given as 01 (e.g. candidate 01 of the commit before the landing, with base 17); the
# baseline's application (app/app.cu, a decode-and-prefill loop) is captured, and its shapes and
# call counts become the configs, weighed by traffic. Then:
#   1. 01's keep test against BEST (the baseline): its traffic rows predict the application
#   2. the application A/B of 01 against BEST (`cmake --build --target candidate_01_app`)
#   3. N A/As: 90's keep test and the A/B of 90 against BEST (`candidate_90_app`)
# Each A/B's app.json, the decisions and a summary (summary.txt) go to $OUT.
#   KOPT_PREFIX=<kopt install> bash examples/cuda_gemm_a8w8_blockscale/bench/app_ab.sh <folder of 01> [N]
set -uo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
folder=${1:?give the folder of the candidate to measure as 01 (candidate.json and its files)}
n=${2:-3}
prefix=${KOPT_PREFIX:-$(k=$(command -v kopt) && dirname "$(dirname "$k")")}
[ -n "$prefix" ] || { echo "set KOPT_PREFIX=<a kopt install>, or put its bin/kopt on PATH" >&2; exit 2; }
out=${OUT:-/tmp/kopt-out}
work=${KOPT_APP_WORK:-/tmp/kopt-app}
family=cuda_gemm_a8w8_blockscale
mkdir -p "$out"
kopt=$prefix/bin/kopt
source "$root/examples/$family/bench/copy_family.sh"
copy_family "$root" "$work" "$prefix" "$out" || exit 1
b=$work/build
state=$b/kopt/$family
args=(--spec "$work/src/family.json" --state-dir "$state")
cp -r "$folder" "$work/src/candidates/01"
summary=$out/summary.txt
: >"$summary"
stamp() { echo "$(date -u +%H:%M:%S) $*" | tee -a "$summary"; }

stamp "capture: the baseline's application under KOPT_CAPTURE"
cmake --build "$b" --target "candidate_${baseline}_application" -j "$(nproc)" >"$out/build_app.log" 2>&1 ||
  { tail -30 "$out/build_app.log"; exit 1; }
KOPT_CAPTURE=$work/app.capture "$state/bin/app/candidate_$baseline" --steps 1500 --prefill 4 \
  >"$out/capture_run.txt" 2>&1 || { cat "$out/capture_run.txt"; exit 1; }
"$kopt" capture merge "$work/app.capture" --spec "$work/src/family.json" \
  --out "$work/src/app_configs.csv" >"$out/merge.txt" 2>&1 || { cat "$out/merge.txt"; exit 1; }
cp "$work/src/app_configs.csv" "$out/"
python3 - "$work/src/family.json" <<'PY'
import json, sys
spec = json.load(open(sys.argv[1]))
spec["configs"] = "app_configs.csv"
spec["keep"] = {"weighting": "traffic"}
json.dump(spec, open(sys.argv[1], "w"), indent=2)
PY
cat "$work/src/app_configs.csv" >>"$summary"

stamp "BEST: the baseline $baseline on the captured configs"
cmake --build "$b" --target candidate_01 candidate_90 "candidate_${baseline}" -j "$(nproc)" \
  >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
{ "$kopt" bench "${args[@]}" --best && "$kopt" decide "${args[@]}" --candidate "$baseline" &&
  "$kopt" record "${args[@]}" --candidate "$baseline"; } >"$out/best.log" 2>&1 ||
  { tail -30 "$out/best.log"; exit 1; }

stamp "1. the keep test of 01 against BEST $baseline"
cmake --build "$b" --target candidate_01_bench >"$out/bench_01.log" 2>&1
"$kopt" decide "${args[@]}" --candidate 01 >"$out/decide_01.txt" 2>&1
cat "$out/decide_01.txt" >>"$summary"
cp "$state/results/01/decision.json" "$out/decision_01.json"

stamp "2. the application A/B of 01 against BEST $baseline"
cmake --build "$b" --target candidate_01_app -j "$(nproc)" >"$out/app_01.log" 2>&1
stamp "candidate_01_app: rc=$?"
grep -A8 "^application A/B" "$out/app_01.log" >>"$summary"
cp "$state/results/01/app.json" "$out/app_01.json"

for i in $(seq 1 "$n"); do
  stamp "3.$i an A/A: 90 (the baseline plus a comment) against BEST $baseline"
  cmake --build "$b" --target candidate_90_bench >"$out/bench_90.log" 2>&1
  ctest --test-dir "$b" -L keep -R '^candidate_90\.' >/dev/null 2>&1
  "$kopt" decide "${args[@]}" --candidate 90 2>&1 | grep -E "^verdict|kernel time" >>"$summary"
  cmake --build "$b" --target candidate_90_app -j "$(nproc)" >"$out/app_90_$i.log" 2>&1
  stamp "candidate_90_app: rc=$?"
  grep -A8 "^application A/B" "$out/app_90_$i.log" >>"$summary"
  cp "$state/results/90/app.json" "$out/app_90_$i.json"
done
"$kopt" report "${args[@]}" --out "$out/report.html" >/dev/null 2>&1
cat "$summary"
