#!/usr/bin/env bash
# The main job on the host example: build kopt, then every candidate of examples/host_gemm;
# benchmark each, decide it against BEST (the per-class verdict table), record it in the
# ledger, and finish with the correctness and keep tests as ctest runs them.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/install-deps.sh"
build=${KOPT_BUILD_DIR:-$root/build}
example=$build/examples/host_gemm
state=$example/kopt/host_gemm
kopt=$build/src/kopt

echo "== building kopt in $build (log: $build/kopt-build.log)"
mkdir -p "$build"
{ cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DKOPT_BUILD_TESTS=OFF &&
  cmake --build "$build"; } >"$build/kopt-build.log" 2>&1 || { tail -40 "$build/kopt-build.log"; exit 1; }
cmake -S "$root/examples/host_gemm" -B "$example" -G Ninja -DKernelOpt_DIR="$build" >/dev/null
family=(--spec "$root/examples/host_gemm/family.json" --state-dir "$state")
# Each run of the demo starts a fresh loop: results, golden and ledger of a previous run go.
rm -rf "$state/results" "$state/golden" "$state/ledger"

echo "== baseline 00"
cmake --build "$example" --target candidate_00_bench
"$kopt" decide "${family[@]}" --candidate 00 >/dev/null # BEST against itself: the baseline row
"$kopt" record "${family[@]}" --candidate 00
for id in 01 02 03; do
  echo "== candidate $id: $(grep -o '"hypothesis": *"[^"]*"' "$root/examples/host_gemm/candidates/$id/candidate.json" | cut -d'"' -f4)"
  cmake --build "$example" --target "candidate_${id}_bench"
  "$kopt" decide "${family[@]}" --candidate "$id" || true
  "$kopt" record "${family[@]}" --candidate "$id"
done

echo "== ctest -L correctness (02 is wrong on purpose)"
ctest --test-dir "$example" -L correctness --output-on-failure || true
best=$("$kopt" status "${family[@]}" --json | grep -o '"best": *"[0-9]*"' | head -1 | cut -d'"' -f4)
echo "== ctest -L keep (BEST $best passes; a candidate passes only if it beats BEST)"
ctest --test-dir "$example" -L keep || true
echo "== ledger"
"$kopt" status "${family[@]}"
"$kopt" log "${family[@]}"
echo "performance.md: $state/ledger/performance.md"
cmake --build "$example" --target host_gemm_report >/dev/null
echo "report (open it in a browser): $state/report.html"
