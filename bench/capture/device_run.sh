#!/usr/bin/env bash
# Issue 9 on a GPU machine: for the CUDA blockscale family, build candidates 00 and 01, read
# their resource usage (cuobjdump), run `kopt analyze` on both, and check that shape capture on a
# harness run merges into a configs file with the harness's shapes and counts. Logs go to $OUT.
#   KOPT_PREFIX=<kopt install> bash bench/capture/device_run.sh
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
prefix=${KOPT_PREFIX:-$(k=$(command -v kopt) && dirname "$(dirname "$k")")} # the install of kopt on PATH
[ -n "$prefix" ] || { echo "set KOPT_PREFIX=<a kopt install>, or put its bin/kopt on PATH" >&2; exit 2; }
out=${OUT:-/tmp/kopt-out}
build=/tmp/kopt-p9
family=cuda_gemm_a8w8_blockscale
spec=$root/examples/$family/family.json
state=$build/kopt/$family
kopt=$prefix/bin/kopt
mkdir -p "$out"
for d in /opt/nvidia/nsight-compute/*/; do [ -x "$d/ncu" ] && PATH=$PATH:$d; done
export PATH=$PATH:/usr/local/cuda/bin
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv; ncu --version | tail -1; } 2>&1
cmake -S "$root/examples/$family" -B "$build" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_CUDA_ARCHITECTURES=90a -DKOPT_USE_CCACHE=OFF >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
start=$(date +%s)
cmake --build "$build" --target candidate_00 candidate_01 -j "$(nproc)" >>"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
echo "build 00+01: $(( $(date +%s) - start )) s"
{
  cuobjdump --dump-resource-usage "$state/bin/candidate_00" >"$out/cuobjdump_00.txt" 2>&1
  "$kopt" resource-usage --spec "$spec" --state-dir "$state"
  "$kopt" resource-usage --spec "$spec" --state-dir "$state" --json >"$build/ru.json"; echo "json rc=$?"
} >"$out/resource_usage.txt" 2>&1
echo "== capture"
rm -f "$build"/cap*.csv
# Two harness runs, as two processes would be in production: counts must come out 2 per shape.
for run in 1 2; do
  KOPT_CAPTURE=$build/cap$run.csv "$state/bin/candidate_00" --configs "$root/examples/$family/configs.csv" \
    --benchmark --warmup 0 --repeat 1 --out "$build/h$run.csv" >"$build/h$run.log" 2>&1 || echo "harness run $run failed"
done
"$kopt" capture merge "$build/cap1.csv" "$build/cap2.csv" --spec "$spec" --out "$build/captured.csv"
head -4 "$build/cap1.csv"; head -3 "$build/captured.csv"
# The harness's shapes, each with count 2, against the merge.
{ echo "M,N,K,count"; tail -n +2 "$root/examples/$family/configs.csv" | sed 's/$/,2/' | sort -t, -k1,1n -k2,2n -k3,3n -u; } >"$build/expected.csv"
if diff <(sort "$build/expected.csv") <(sort "$build/captured.csv") >"$build/capture_diff.txt"; then
  echo "capture merge reproduces the harness's $(($(wc -l <"$build/expected.csv") - 1)) shapes, count 2 each"
else echo "capture merge DIFFERS"; head "$build/capture_diff.txt"; fi
echo "== analyze"
for id in 00 01; do
  start=$(date +%s)
  "$kopt" analyze --spec "$spec" --state-dir "$state" --candidate $id --gpu-wait-min 1 >"$out/analyze_$id.txt" 2>&1
  echo "analyze $id: rc=$? in $(( $(date +%s) - start )) s"; cat "$out/analyze_$id.txt"
  cp "$state/results/$id/analyze/ncu_details.csv" "$out/ncu_details_$id.csv" 2>/dev/null
done
"$kopt" analyze --spec "$spec" --state-dir "$state" --candidate 01 --json --ncu-output "$out/ncu_details_01.csv" >"$build/an.json" 2>&1; echo "analyze --json rc=$?"
