#!/usr/bin/env bash
# The application beside the kernel verdict on a GPU, through the user's flow, in one call:
#   KOPT_DEPS=<prefix with include/{nlohmann,CLI,xxhash.h}> bash examples/cuda_paged_decode/bench/app_ab.sh [N]
# 1. kopt built and installed from this tree into .device/kopt (skipped when KOPT_PREFIX names
#    an install); a copy of the family under $KOPT_APP_WORK (/tmp/kopt-paged-app) with N A/A
#    candidates 91.. (the candidate's kernel header plus one comment line, based on it),
#    configured (sm_90a); the candidate is KOPT_APP_ID (default: the first with a kernel of its
#    own), written 02 below;
# 2. capture: the baseline's application (app/app.cu, the decode loop, family.json's command)
#    under KOPT_CAPTURE; `kopt capture merge` gives the dispatch columns and the counts, and the
#    columns the harness needs besides (the app's model: pages of 16, 32 / 8 heads; ctx_min the
#    app's spread below ctx_max, 2048) are joined in; they become the configs, weighed by traffic;
# 3. kopt round of the baseline alone (00, or the landed BEST; recorded as BEST), written 00 below;
# 4. 02's keep test against BEST 00 (candidate_02_bench, kopt decide): its traffic rows predict
#    the application; the application A/B of 02 against BEST 00 (candidate_02_app); then 02's
#    decision recorded (kopt record: BEST 02);
# 5. N A/As (N = 2; one more only while under 300 s): kopt round 91.. against BEST 02, then its
#    application A/B (candidate_9i_app).
# Results: $OUT/summary.txt (each A/B's lines and bench/app_summary.py's table) and $OUT/app.tgz
# (app_<id>.json, the decisions and rounds, the capture and configs, machine.txt, logs/: the
# device returns few files).
set -uo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
family=cuda_paged_decode
n=${1:-2}
cand=${KOPT_APP_ID:-}
out=${OUT:-/tmp/kopt-out}/app
logs=$out/logs
work=${KOPT_APP_WORK:-/tmp/kopt-paged-app}
prefix=${KOPT_PREFIX:-$root/.device/kopt}
export PATH=$PATH:/usr/local/cuda/bin
mkdir -p "$logs"
summary=$out/summary.txt
: >"$summary"
stamp() { echo "$(date -u +%H:%M:%S) [$SECONDS s] $*" | tee -a "$summary"; }
finish() {
  local up
  up=$(dirname "$out")
  cp "$summary" "$up/"
  tar czf "$up/app.tgz" -C "$out" . 2>/dev/null && rm -rf "$out"
  cat "$up/summary.txt"
}
trap finish EXIT
{ date -u; nvidia-smi --query-gpu=index,name,driver_version,clocks.sm,clocks.mem --format=csv
  nvcc --version | tail -1; nproc; echo "tree: ${KOPT_TREE_COMMIT:-$(git -C "$root" log -1 --format=%H 2>/dev/null)}"; } \
  >"$out/machine.txt" 2>&1
cat "$out/machine.txt" >>"$summary"
if [ ! -x "$prefix/bin/kopt" ]; then
  stamp "building kopt"
  { cmake -S "$root" -B "$root/.device/kopt-build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DKOPT_BUILD_TESTS=OFF -DCMAKE_PREFIX_PATH="${KOPT_DEPS:?set KOPT_DEPS}" &&
    cmake --build "$root/.device/kopt-build" -j "$(nproc)" &&
    cmake --install "$root/.device/kopt-build" --prefix "$prefix" --strip; } >"$logs/kopt-build.log" 2>&1 ||
    { tail -30 "$logs/kopt-build.log"; exit 1; }
fi
kopt=$prefix/bin/kopt
rm -rf "$work" && mkdir -p "$work"
cp -r "$root/examples/$family" "$work/src"
# The baseline (00, or the landed BEST): the candidate whose candidate.json names no base.
base=$(bash "$root/examples/$family/bench/baseline_id.sh" "$work/src/candidates" | head -1)
[ -n "$cand" ] || cand=$(cd "$work/src/candidates" && for id in *; do [ ! -f "$id/paged_kernel.cuh" ] || echo "$id"; done | head -1)
[ -f "$work/src/candidates/$cand/paged_kernel.cuh" ] || { echo "KOPT_APP_ID: candidate '$cand' has no paged_kernel.cuh of its own"; exit 1; }
aa_ids=
for i in $(seq 1 "$n"); do
  id=9$i dir=$work/src/candidates/9$i
  mkdir -p "$dir"
  { cat "$work/src/candidates/$cand/paged_kernel.cuh"
    echo "// A/A $i: this comment changes the content hash, not the code"; } >"$dir/paged_kernel.cuh"
  echo '{"id": "'"$id"'", "base": "'"$cand"'", "hypothesis": "A/A of '"$cand"'", "target": "global"}' >"$dir/candidate.json"
  aa_ids+="$id "
done
b=$work/build
state=$b/kopt/$family
args=(--spec "$work/src/family.json" --state-dir "$state")
stamp "configure and build the baseline's application"
{ cmake -S "$work/src" -B "$b" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_CUDA_ARCHITECTURES=90a \
    -DKOPT_USE_CCACHE=OFF && cmake --build "$b" --target "candidate_${base}_application" -j "$(nproc)"; } \
  >"$logs/build_app.log" 2>&1 || { tail -30 "$logs/build_app.log"; exit 1; }

stamp "capture: the baseline's application under KOPT_CAPTURE"
command=$(python3 -c 'import json,sys; print(" ".join(json.load(open(sys.argv[1]))["app"]["command"][1:]))' \
  "$work/src/family.json")
# shellcheck disable=SC2086 # the command's arguments, one word each
KOPT_CAPTURE=$work/app.capture "$state/bin/app/candidate_$base" $command >"$out/capture_run.txt" 2>&1 ||
  { cat "$out/capture_run.txt"; exit 1; }
cp "$work/app.capture" "$out/app.capture"
"$kopt" capture merge "$work/app.capture" --spec "$work/src/family.json" \
  --out "$work/merged.csv" >"$logs/merge.txt" 2>&1 || { cat "$logs/merge.txt"; exit 1; }
python3 - "$work/merged.csv" "$work/src/app_configs.csv" "$work/src/family.json" <<'PY'
import csv, json, sys
merged, configs, spec_path = sys.argv[1:4]
rows = list(csv.DictReader(open(merged)))
columns = ["model", "batch", "ctx_min", "ctx_max", "block_size", "mtp", "head_size",
           "num_q_heads", "num_kv_heads", "count"]
with open(configs, "w", newline="") as f:
    w = csv.DictWriter(f, columns, lineterminator="\n")
    w.writeheader()
    for r in rows:  # the app's model: pages of 16 tokens, 32 query and 8 KV heads
        w.writerow({"model": "app-llama3.1-8b", "batch": r["batch"],
                    "ctx_min": max(1, int(r["ctx_max"]) - 2048), "ctx_max": r["ctx_max"],
                    "block_size": 16, "mtp": r["mtp"], "head_size": r["head_size"],
                    "num_q_heads": 32, "num_kv_heads": 8, "count": r["count"]})
spec = json.load(open(spec_path))
spec["configs"] = "app_configs.csv"
spec["keep"] = dict(spec.get("keep", {}), weighting="traffic")
json.dump(spec, open(spec_path, "w"), indent=2)
PY
cp "$work/src/app_configs.csv" "$out/"
cat "$out/capture_run.txt" "$work/src/app_configs.csv" >>"$summary"

stamp "build $base, $cand and the A/As' harnesses and applications"
# shellcheck disable=SC2046 # one target per candidate
cmake --build "$b" -j "$(nproc)" --target $(printf 'candidate_%s candidate_%s_application ' "$base" "$cand" $aa_ids) \
  >"$logs/build.log" 2>&1 || { tail -30 "$logs/build.log"; exit 1; }
cd "$b" || exit 1

stamp "round $base: BEST"
"$kopt" round "${args[@]}" --id "$base" --json >"$out/round_$base.json" 2>"$logs/round_$base.log"
stamp "round $base: rc $?"

stamp "$cand's keep test against BEST $base"
cmake --build "$b" --target "candidate_${cand}_bench" >"$logs/bench_$cand.log" 2>&1
stamp "candidate_${cand}_bench: rc $?"
"$kopt" decide "${args[@]}" --candidate "$cand" >"$out/decide_$cand.txt" 2>&1
stamp "decide $cand: rc $?"
cat "$out/decide_$cand.txt" >>"$summary"
cp "$state/results/$cand/decision.json" "$out/decision_$cand.json"

stamp "the application A/B of $cand against BEST $base"
cmake --build "$b" --target "candidate_${cand}_app" >"$logs/app_$cand.log" 2>&1
stamp "candidate_${cand}_app: rc $?"
grep -A8 "^application A/B" "$logs/app_$cand.log" >>"$summary"
cp "$state/results/$cand/app.json" "$out/app_$cand.json"
"$kopt" record "${args[@]}" --candidate "$cand" >"$logs/record_$cand.txt" 2>&1
stamp "record $cand: rc $? ($(head -1 "$logs/record_$cand.txt"))"

for id in $aa_ids; do
  [ "$id" = 91 ] || [ $SECONDS -lt 300 ] || { stamp "A/A $id skipped: $SECONDS s used"; continue; }
  stamp "A/A $id: kopt round against BEST $cand, then its application A/B"
  "$kopt" round "${args[@]}" --id "$id" --json >"$out/round_$id.json" 2>"$logs/round_$id.log"
  stamp "round $id: rc $? ($(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("verdict"))' "$out/round_$id.json" 2>/dev/null))"
  cmake --build "$b" --target "candidate_${id}_app" >"$logs/app_$id.log" 2>&1
  stamp "candidate_${id}_app: rc $?"
  grep -A8 "^application A/B" "$logs/app_$id.log" >>"$summary"
  cp "$state/results/$id/app.json" "$out/app_$id.json"
done
"$kopt" status "${args[@]}" >"$out/status.txt" 2>&1
cp -r "$state/results" "$state/ledger" "$out/" 2>/dev/null
python3 "$root/examples/$family/bench/app_summary.py" "$out"/app_*.json | tee -a "$summary" >/dev/null
stamp "done"
