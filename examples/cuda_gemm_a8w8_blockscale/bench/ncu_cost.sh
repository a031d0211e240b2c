#!/usr/bin/env bash
# Where the time of a profiled benchmark run goes, on a GPU: the baseline's harness over all
# configs, alone and under ncu with each way of profiling, one timed process per line of
# $OUT/cost.csv (variant, seconds, profiled launches); then one side-by-side `kopt bench` of
# candidate 90 against BEST (the baseline), timed as the user runs it.
#   KOPT_PREFIX=<kopt install> bash examples/cuda_gemm_a8w8_blockscale/bench/ncu_cost.sh [ROUNDS] [REPEAT]
set -uo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
prefix=${KOPT_PREFIX:-$(k=$(command -v kopt) && dirname "$(dirname "$k")")} # the install of kopt on PATH
[ -n "$prefix" ] || { echo "set KOPT_PREFIX=<a kopt install>, or put its bin/kopt on PATH" >&2; exit 2; }
out=${OUT:-/tmp/kopt-out}
work=${KOPT_AA_WORK:-/tmp/kopt-cost}
family=cuda_gemm_a8w8_blockscale
mkdir -p "$out"
source "$root/examples/$family/bench/copy_family.sh"
copy_family "$root" "$work" "$prefix" "$out" "${1:-}" "${2:-}" || exit 1
b=$work/build
h=$(find "$b" -type f -name "candidate_$baseline" -perm -u+x | head -1)
configs=$work/src/configs.csv
ncu_base=(ncu --csv --print-units base --metrics gpu__time_duration.sum --clock-control none
  --nvtx -k regex:gemm_a8w8_blockscale)
"$h" --configs "$configs" --write-golden "$work/golden.bin" >"$out/golden.log" 2>&1
echo "variant,seconds,profiled_launches" >"$out/cost.csv"
run() { # NAME CMD...: one timed run, its launches counted from ncu's CSV rows
  local name=$1; shift
  local s e
  s=$(date +%s.%N)
  "$@" >"$work/$name.out" 2>&1
  local rc=$?
  e=$(date +%s.%N)
  local n
  n=$(grep -c '"gpu__time_duration.sum"\|gemm_a8w8_blockscale' "$work/$name.out")
  echo "$name,$(awk "BEGIN{printf \"%.2f\", $e - $s}"),$n,rc=$rc" | tee -a "$out/cost.csv"
  { echo "=== $name: $*"; head -5 "$work/$name.out"; tail -3 "$work/$name.out"; } >>"$out/cost.log"
}
bench=(--configs "$configs" --benchmark --out "$work/r.csv")
run plain_w2r5 "$h" "${bench[@]}" --warmup 2 --repeat 5
run plain_w2r5_golden "$h" "${bench[@]}" --warmup 2 --repeat 5 --golden "$work/golden.bin"
run ncu_all_w2r5 "${ncu_base[@]}" "$h" "${bench[@]}" --warmup 2 --repeat 5
run ncu_timed_w2r5 "${ncu_base[@]}" --profile-from-start off "$h" "${bench[@]}" --warmup 2 --repeat 5
run ncu_timed_w2r1 "${ncu_base[@]}" --profile-from-start off "$h" "${bench[@]}" --warmup 2 --repeat 1
run ncu_timed_nocache_w2r5 "${ncu_base[@]}" --cache-control none --profile-from-start off "$h" "${bench[@]}" --warmup 2 --repeat 5
run ncu_timed_app_w2r5 "${ncu_base[@]}" --replay-mode application --profile-from-start off "$h" "${bench[@]}" --warmup 2 --repeat 5
run ncu_timed_w2r5_golden "${ncu_base[@]}" --profile-from-start off "$h" "${bench[@]}" --warmup 2 --repeat 5 --golden "$work/golden.bin"
state=(--spec "$work/src/family.json" --state-dir "$b/kopt/$family")
s=$(date +%s.%N)
"$prefix/bin/kopt" bench "${state[@]}" --candidate 90 >>"$out/kopt_bench.log" 2>&1
e=$(date +%s.%N)
echo "kopt_bench_side_by_side,$(awk "BEGIN{printf \"%.2f\", $e - $s}"),," | tee -a "$out/cost.csv"
"$prefix/bin/kopt" decide "${state[@]}" --candidate 90 >>"$out/kopt_bench.log" 2>&1
tail -25 "$out/kopt_bench.log"
