#!/usr/bin/env bash
# The kopt loop on a GPU machine, as a user runs it: configure this family against a kopt
# install, `cmake --build --target candidate_01_bench`, then ctest's correctness and keep tests
# with one GPU per test from `kopt resources`. Logs and results go to $OUT (or /tmp/kopt-out).
#   KOPT_PREFIX=<kopt install> bash examples/cuda_gemm_a8w8_blockscale/bench/kopt_loop.sh
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
start=$(date +%s)
cmake --build "$build" --target candidate_01_bench -j "$(nproc)" >"$out/bench01.log" 2>&1
echo "candidate_01_bench: rc=$? in $(( $(date +%s) - start )) s"; tail -12 "$out/bench01.log"

"$prefix/bin/kopt" resources --out "$build/gpus.json"
spec=(--resource-spec-file "$build/gpus.json" --output-on-failure)
state=(--spec "$root/examples/$family/family.json" --state-dir "$build/kopt/$family")
start=$(date +%s)
ctest --test-dir "$build" -L correctness "${spec[@]}" >"$out/ctest.log" 2>&1
echo "ctest -L correctness: rc=$?"
# The loop: 01 against BEST 00, recorded; then 02 against the new BEST 01.
for id in 01 02; do
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
