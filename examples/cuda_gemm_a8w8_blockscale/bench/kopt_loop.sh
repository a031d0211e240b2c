#!/usr/bin/env bash
# The kopt loop on a GPU machine, as a user runs it: configure this family against a kopt
# install, `cmake --build --target candidate_<first>_bench`, then ctest's correctness and keep
# tests with one GPU per test from `kopt resources`, `kopt decide` and `kopt record` for each
# candidate in turn. Logs and results go to $OUT (or /tmp/kopt-out).
#   KOPT_PREFIX=<kopt install> bash examples/cuda_gemm_a8w8_blockscale/bench/kopt_loop.sh
# KOPT_LOOP_IDS="01 03" picks the candidates (default "01 02"; correctness is checked for these);
# KOPT_LOOP_ANALYZE=<id> runs `kopt analyze` on that candidate at the end. KOPT_LOOP_REBASE="<why>"
# runs `kopt rebase --reason "<why>"` before the first keep test (a restored ledger whose BEST's
# content changed through family.json since it was kept).
# The build folder (KOPT_LOOP_BUILD, default /tmp/kopt-cuda-loop) holds the ledger: a second run in the
# same folder continues it (every candidate against the BEST the first run left); a new folder starts
# from 00.
set -uo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
prefix=${KOPT_PREFIX:-$(k=$(command -v kopt) && dirname "$(dirname "$k")")} # the install of kopt on PATH
[ -n "$prefix" ] || { echo "set KOPT_PREFIX=<a kopt install>, or put its bin/kopt on PATH" >&2; exit 2; }
out=${OUT:-/tmp/kopt-out}
build=${KOPT_LOOP_BUILD:-/tmp/kopt-cuda-loop}
family=cuda_gemm_a8w8_blockscale
mkdir -p "$out"
for d in /opt/nvidia/nsight-compute/*/; do [ -x "$d/ncu" ] && PATH=$PATH:$d; done
export PATH=$PATH:/usr/local/cuda/bin
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv; command -v ncu; ncu --version | tail -1; } >"$out/machine.txt" 2>&1

cmake -S "$root/examples/$family" -B "$build" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_CUDA_ARCHITECTURES=90a -DKOPT_USE_CCACHE=OFF >"$out/configure.log" 2>&1 ||
  { tail -30 "$out/configure.log"; exit 1; }
ids=(${KOPT_LOOP_IDS:-01 02})
state=(--spec "$root/examples/$family/family.json" --state-dir "$build/kopt/$family")
if [ -n "${KOPT_LOOP_REBASE:-}" ]; then # before the bench build, which refuses a changed BEST
  "$prefix/bin/kopt" rebase "${state[@]}" --reason "$KOPT_LOOP_REBASE"
  echo "kopt rebase: rc=$?"
fi
start=$(date +%s)
cmake --build "$build" --target "candidate_${ids[0]}_bench" -j "$(nproc)" >"$out/bench${ids[0]}.log" 2>&1
echo "candidate_${ids[0]}_bench: rc=$? in $(( $(date +%s) - start )) s"; tail -12 "$out/bench${ids[0]}.log"

"$prefix/bin/kopt" resources --out "$build/gpus.json"
spec=(--resource-spec-file "$build/gpus.json" --output-on-failure)
start=$(date +%s)
pattern=$(IFS='|'; echo "${ids[*]}")
ctest --test-dir "$build" -L correctness -R "^candidate_(${pattern})\\." "${spec[@]}" >"$out/ctest.log" 2>&1
echo "ctest -L correctness -R candidate_(${pattern}): rc=$?"
# The loop: each candidate against BEST at its turn (00 first), decided and recorded.
for id in "${ids[@]}"; do
  ctest --test-dir "$build" -L keep -R "^candidate_${id}\\." "${spec[@]}" >>"$out/ctest.log" 2>&1
  echo "ctest -L keep -R candidate_$id: rc=$?"
  "$prefix/bin/kopt" decide "${state[@]}" --candidate "$id" >>"$out/decide.log" 2>&1
  "$prefix/bin/kopt" record "${state[@]}" --candidate "$id" >>"$out/decide.log" 2>&1
done
echo "ctest runs took $(( $(date +%s) - start )) s"
grep -E "Test +#|tests passed" "$out/ctest.log"
cat "$out/decide.log"
"$prefix/bin/kopt" status "${state[@]}"
cp "$build/kopt/$family/ledger/performance.md" "$out/" 2>/dev/null
tar -C "$build/kopt/$family" -czf "$out/results.tgz" results ledger golden/golden.json 2>/dev/null
if [ -n "${KOPT_LOOP_ANALYZE:-}" ]; then
  start=$(date +%s)
  "$prefix/bin/kopt" analyze "${state[@]}" --candidate "$KOPT_LOOP_ANALYZE" --gpu-wait-min 1 \
    >"$out/analyze_$KOPT_LOOP_ANALYZE.txt" 2>&1
  echo "kopt analyze $KOPT_LOOP_ANALYZE: rc=$? in $(( $(date +%s) - start )) s"
  cat "$out/analyze_$KOPT_LOOP_ANALYZE.txt"
fi
